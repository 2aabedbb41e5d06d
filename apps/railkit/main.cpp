// `railkit`: the control-plane command. Each subcommand is one entry in kSubcommands: a name,
// a one-line help, and a function that registers its flags into a plain options struct and
// returns the action to run. Errors are caught once, in guarded_main.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <functional>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "apps/railkit/subcommands.hpp"
#include "core/error.hpp"
#include "core/main_guard.hpp"
#include "core/version.hpp"
#include "topology/command.hpp"

namespace {

using Action = std::function<int()>;

/// Registers a subcommand's flags on `app` and returns what to run once parsed.
using Setup = Action (*)(CLI::App& app);

struct Subcommand {
  const char* name;
  const char* help;
  Setup setup;
};

Action setup_topo(CLI::App& app) {
  auto o = std::make_shared<railkit::topo::TopoOptions>();
  auto root = std::make_shared<std::string>("/");
  auto nvsmi = std::make_shared<std::string>();
  auto compare = std::make_shared<std::vector<std::string>>();
  app.add_option("--root", *root, "directory holding the node's sys/ (and proc/): a capture or fixture")
      ->capture_default_str();
  app.add_option("--format", o->format, "table | json | nccl-xml")
      ->check(CLI::IsMember({"table", "json", "nccl-xml"}))
      ->capture_default_str();
  app.add_option("--priority", o->priority, "RoCE traffic priority for the ECN/PFC checks")
      ->check(CLI::Range(0, 7))
      ->capture_default_str();
  app.add_option("--nvidia-smi-topo", *nvsmi, "captured output of `nvidia-smi topo -m` (NVLink source)");
  app.add_option("--compare", *compare, "topology JSON documents of several nodes: report what differs from the majority");
  app.add_flag("--lint", o->lint, "print the findings; exit 10 when any is an error");
  return [o, root, nvsmi, compare] {
    o->root = *root;
    if (!nvsmi->empty()) o->nvidia_smi_topo = *nvsmi;
    for (const auto& c : *compare) o->compare.emplace_back(c);
    return railkit::topo::run_topo(*o, std::cout);
  };
}

constexpr Subcommand kSubcommands[] = {
    {"accept",
     "acceptance of a set of nodes: topo lint, RDMA loopback per NIC and between the nodes of each pair, per-node, per-rail, pair (circle "
     "method) and whole-set busbw, isolation of the guilty node or link; JUnit, Prometheus, good-hosts, bad-hosts, drain and cordon scripts",
     railkit::app::setup_accept},
    {"dcqcn", "show, apply (validated, originals saved, rolled back on failure) or restore DCQCN attributes",
     railkit::app::setup_dcqcn},
    {"history",
     "results over time in an SQLite file: add documents and sweeps, show a collective and size over time, check "
     "results against the run-to-run band of the last comparable runs (exit 10 on a regression), rebuild",
     railkit::app::setup_history},
    {"import",
     "nccl-tests (text or -J JSON), IMB-MPI1 and OSU logs as railkit.results/1 documents (--out DIR), for report "
     "and compare beside new runs",
     railkit::app::setup_import},
    {"job",
     "write a Slurm batch script (sbatch) or a Kubeflow MPIJob manifest that runs railkit-bench (arguments after --) "
     "or railkit accept on N nodes",
     railkit::app::setup_job},
    {"monitor",
     "watch a running job and its nodes: node counters as rates with derived signals (pause storm, CNP surge, link "
     "flap...) as Prometheus metrics; judge the profiler plugin's windows to name the late rank, lagging NIC or hung "
     "communicator",
     railkit::app::setup_monitor},
    {"nccl-log",
     "summarise NCCL debug logs (NCCL_DEBUG=INFO): network, NICs, PXN relays, GDR, graph patterns, tuner plugin; "
     "--env checks contradictions",
     railkit::app::setup_nccl_log},
    {"profile",
     "use a profile: show, check it against this node, print its environment (env), run a command with it (exec), "
     "export it for Kubernetes, Slurm, nccl.conf, NCCL's example tuner or Open MPI",
     railkit::app::setup_profile},
    {"rdma-loopback",
     "RDMA write bandwidth of every NIC of this node (perftest's ib_write_bw, server and client on the NIC, all NICs "
     "at once, NUMA-pinned, GPU memory) against its line rate",
     railkit::app::setup_rdma_loopback},
    {"rdma-pair",
     "one node's side of ib_write_bw between two nodes (server, or client measuring against the partner), NICs "
     "given in rail order; what accept's rdma-pair stage runs on each node of a pair",
     railkit::app::setup_rdma_pair},
    {"report", "compare results documents or sweep directories: busbw per size vs a baseline, winners; --plot",
     railkit::app::setup_report},
    {"sweep", "run railkit-bench once per configuration of a matrix (bench arguments after --) and compare them",
     railkit::app::setup_sweep},
    {"tune",
     "search NCCL, Open MPI or DCQCN settings with railkit-bench trials (bench arguments after --), validate the best "
     "against the baseline and write a profile; --resume continues",
     railkit::app::setup_tune},
    {"topo", "probe the node: GPUs, RDMA NICs, PCIe paths, rails, RoCE settings, lint", setup_topo},
};

/// Edit distance (insertions, deletions, substitutions) between a and b.
std::size_t distance(const std::string& a, const std::string& b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diag = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}

/// Refuses a first argument that is no command, offering the closest one ("topp": topo).
void check_command(int argc, char** argv) {
  std::string names;
  for (const auto& s : kSubcommands) names += (names.empty() ? "" : ", ") + std::string(s.name);
  if (argc < 2) throw railkit::UsageError("a command is required: " + names + " (railkit --help)");
  const std::string first = argv[1];
  if (first.empty() || first[0] == '-') return;
  const Subcommand* best = nullptr;
  std::size_t best_d = 0;
  for (const auto& s : kSubcommands) {
    if (first == s.name) return;
    const std::size_t d = distance(first, s.name);
    if (!best || d < best_d) best = &s, best_d = d;
  }
  const bool close = best && best_d <= std::max<std::size_t>(2, first.size() / 3);
  throw railkit::UsageError("unknown command '" + first + "'" +
                            (close ? "; did you mean '" + std::string(best->name) + "'?" : "") + " (commands: " +
                            names + ")");
}

int run(int argc, char** argv) {
  check_command(argc, argv);
  CLI::App app{"railkit: measure, explain and tune collective communication on GPU clusters"};
  app.set_version_flag("--version", std::string("railkit ") + railkit::kVersion);
  app.require_subcommand(1);
  std::vector<std::pair<CLI::App*, Action>> actions;
  for (const auto& s : kSubcommands) {
    CLI::App* sub = app.add_subcommand(s.name, s.help);
    actions.emplace_back(sub, s.setup(*sub));
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::Success& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    // One line naming the argument (CLI11's own text, without its "Run with --help" line).
    std::cerr << "railkit: error: " << e.what() << " (railkit " << (argc > 1 ? argv[1] : "") << " --help)\n";
    return railkit::exit_code(railkit::ErrorCode::Usage);
  }
  for (const auto& [sub, action] : actions)
    if (sub->parsed()) return action();
  return railkit::exit_code(railkit::ErrorCode::Usage);
}

}  // namespace

int main(int argc, char** argv) {
  return railkit::guarded_main("railkit", [&] { return run(argc, argv); });
}
