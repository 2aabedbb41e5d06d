// `railkit accept`: parses the flags into AcceptCli and runs accept::run_accept.
#include <unistd.h>

#include <climits>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "apps/railkit/launcher_flags.hpp"
#include "apps/railkit/subcommands.hpp"
#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "core/launch.hpp"
#include "core/profile.hpp"
#include "core/strings.hpp"
#include "accept/accept.hpp"
#include "launch/bench_run.hpp"
#include "launch/preflight.hpp"

extern char** environ;

namespace railkit::app {
namespace {

/// Flags of `railkit accept`, as given.
struct AcceptCli {
  std::string hostfile;
  int np = 0;
  int ppn = 0;
  int ranks_per_node = 0;
  std::string launcher = "mpirun";
  std::string profile;
  std::string suite;
  std::string out;
  std::string junit;
  std::string bench_args;
  std::string bench;
  double timeout_s = 600;
  bool report_only = false;
  bool allow_inert = false;
  bool force = false;
};

std::string hostname() {
  char buf[HOST_NAME_MAX + 1] = {};
  if (::gethostname(buf, sizeof buf - 1) != 0 || buf[0] == '\0') return "localhost";
  return buf;
}

int run(const AcceptCli& cli) {
  accept::AcceptOptions o;
  o.launcher.kind = launch::parse_launcher(cli.launcher);
  if (o.launcher.kind == launch::LauncherKind::Local)
    throw UsageError("--launcher local: acceptance needs several ranks; use mpirun or srun");
  if (!cli.hostfile.empty() && cli.ranks_per_node > 0)
    throw UsageError("--hostfile and --ranks-per-node: give real nodes (--hostfile) or emulated ones (--ranks-per-node)");
  if (!cli.hostfile.empty()) {
    std::string hosts;
    try {
      hosts = read_input_file(cli.hostfile, "--hostfile");  // a FIFO is refused, never waited on
    } catch (const IoError&) {
      throw UsageError("--hostfile " + cli.hostfile + ": cannot read the file");
    }
    const int ppn = cli.ppn > 0 ? cli.ppn : 1;
    o.nodes = accept::hostfile_nodes(hosts, ppn);
    o.launcher.hostfile = cli.hostfile;
    o.launcher.ppn = ppn;
    o.launcher.np = static_cast<int>(o.nodes.size()) * ppn;
    if (cli.np > 0 && cli.np != o.launcher.np)
      throw UsageError("--np " + std::to_string(cli.np) + ": the hostfile's " + std::to_string(o.nodes.size()) +
                       " hosts x --ppn " + std::to_string(ppn) + " make " + std::to_string(o.launcher.np) + " ranks");
  } else {
    if (cli.np <= 0) throw UsageError("--np: give the rank count (with --ranks-per-node), or --hostfile");
    const int k = cli.ranks_per_node > 0 ? cli.ranks_per_node : (cli.ppn > 0 ? cli.ppn : cli.np);
    o.nodes = accept::emulated_nodes(hostname(), cli.np, k);
    if (o.nodes.size() == 1)
      std::cerr << "railkit accept: note: --np " << cli.np << " without --ranks-per-node: the " << cli.np
                << " ranks form one emulated node (" << o.nodes.front().name
                << "), which has no peers to be compared with; --ranks-per-node K makes np/K nodes\n";
    o.emulated_rpn = k;
    o.launcher.np = cli.np;
  }
  o.launcher.as_root = ::geteuid() == 0;
  o.launcher.cpus = online_cpus();
  o.bench = sibling_program(cli.bench, "railkit-bench", "--bench");
  o.railkit = sibling_program("", "railkit", "");
  o.bench_args = split_ws(cli.bench_args);
  o.out_dir = std::filesystem::absolute(cli.out);
  o.junit = cli.junit;
  o.timeout_s = cli.timeout_s;
  o.report_only = cli.report_only;
  o.force = cli.force;
  if (!cli.suite.empty()) o.suite = accept::load_suite(cli.suite);
  if (!cli.profile.empty()) o.profile = load_profile(cli.profile);
  for (auto& n : o.nodes)
    if (const auto it = o.suite.topo_roots.find(n.name); it != o.suite.topo_roots.end()) n.topo_root = it->second;
  (void)accept::merge_bench_args(o.bench_args, o.emulated_rpn > 0);  // refuses what accept sets itself before anything runs
  o.allow_inert = cli.allow_inert;
  if (o.profile) {
    const launch::ExpectedBackend eb = launch::expected_backend(o.bench, o.bench_args, o.launcher, environ);
    o.expected_backend = eb.backend;
    o.expected_backend_how = eb.how;
  }
  launch::preflight(o.launcher, environ);  // the launcher can start the job: before anything runs
  return accept::run_accept(o, environ, std::cout, std::cerr);
}

}  // namespace

std::function<int()> setup_accept(CLI::App& app) {
  auto cli = std::make_shared<AcceptCli>();
  app.add_option("--hostfile", cli->hostfile, "real nodes: one host per line (mpirun --hostfile, srun --nodefile)");
  app.add_option("--np", cli->np, "ranks in all (with --ranks-per-node: emulated nodes on this machine)")
      ->check(positive());
  app.add_option("--ppn", cli->ppn, "ranks per node on real nodes (mpirun -N)")->check(positive());
  app.add_option("--ranks-per-node", cli->ranks_per_node,
                 "emulated nodes: ranks [iK, (i+1)K) form node i, named <hostname>:<i>")
      ->check(positive());
  app.add_option("--launcher", cli->launcher, "mpirun | srun")
      ->check(CLI::IsMember({"mpirun", "srun", "local"}))
      ->capture_default_str();
  app.add_option("--profile", cli->profile, "profile whose expectations judge the whole-set stage (railkit.profile/1)");
  app.add_option("--suite", cli->suite, "suite file: stages to skip, thresholds, topo roots (railkit.accept-suite/1)");
  app.add_option("--out", cli->out,
                 "output directory: accept.json, accept.prom, good-hosts, results and logs (absent or empty, or --force)")
      ->required();
  app.add_flag("--allow-inert", cli->allow_inert,
               "use a --profile whose settings cannot reach the backend that runs (NCCL_* on mpi ...); a note says so");
  app.add_flag("--force", cli->force, "use a non-empty --out: replace railkit accept's outputs there");
  app.add_flag("--report-only", cli->report_only,
               "a run that judges nothing (no profile, threshold or peers) exits 0 instead of 11; failures still exit 10");
  app.add_option("--junit", cli->junit, "write JUnit XML here (one testcase per node and check)");
  app.add_option("--bench-args", cli->bench_args, "extra railkit-bench arguments, split at spaces (override the defaults)");
  app.add_option("--bench", cli->bench, "railkit-bench to run (default: the one next to railkit)");
  app.add_option("--timeout-s", cli->timeout_s, "wall-clock limit per launch in seconds")
      ->check(positive())
      ->capture_default_str();
  return [cli] { return run(*cli); };
}

}  // namespace railkit::app
