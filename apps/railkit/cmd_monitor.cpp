// `railkit monitor node|judge`: watching the nodes and a running job (monitor/README.md).
#include <memory>

#include "apps/railkit/subcommands.hpp"
#include "core/error.hpp"

namespace railkit::app {

std::function<int()> setup_monitor(CLI::App& app) {
  app.require_subcommand(1);
  CLI::App* node = app.add_subcommand(
      "node", "sample this node's RoCE, link, PCIe and GPU counters as rates and derived signals; Prometheus textfile "
              "and/or HTTP /metrics");
  CLI::App* judge = app.add_subcommand(
      "judge", "read the profiler plugin's windows of every rank and name the late rank, the lagging NIC or the hung "
               "communicator; verdict, bad-hosts, drain and cordon scripts");
  auto run_node = setup_monitor_node(*node);
  auto run_judge = setup_monitor_judge(*judge);
  return [node, judge, run_node, run_judge]() -> int {
    if (node->parsed()) return run_node();
    if (judge->parsed()) return run_judge();
    throw UsageError("monitor: give node or judge");
  };
}

}  // namespace railkit::app
