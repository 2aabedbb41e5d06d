// `railkit monitor node` (placeholder until monitor/node lands).
#include "apps/railkit/subcommands.hpp"
#include "core/error.hpp"

namespace railkit::app {

std::function<int()> setup_monitor_node(CLI::App&) {
  return []() -> int { throw UsageError("monitor node: not built yet"); };
}

}  // namespace railkit::app
