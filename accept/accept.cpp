#include "accept/accept.hpp"

#include <algorithm>
#include <chrono>
#include <ostream>

#include <fmt/format.h>

#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "core/units.hpp"

namespace railkit::accept {
namespace fs = std::filesystem;
using ojson = nlohmann::ordered_json;

namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

/// The report being built, and the launches so far (for the pair stage's estimate).
struct Run {
  AcceptReport report;
  int launches = 0;
  double bench_seconds = 0;
  double per_launch_s() const { return launches > 0 ? bench_seconds / launches : 0; }

  /// Adds what a stage found: its checks (in the order made), commands and launches.
  void add(const StageResult& r) {
    for (const auto& [i, c] : r.node_checks) report.nodes[i].checks.push_back(c);
    for (const auto& [name, c] : r.cluster_checks) report.cluster_entity(name).checks.push_back(c);
    report.commands.insert(report.commands.end(), r.commands.begin(), r.commands.end());
    launches += r.launches;
    bench_seconds += r.bench_seconds;
  }

  /// Runs one stage (unless the suite skips it: then its result is empty), records its status,
  /// launches and duration, and adds what it found.
  template <class Stage, class Body>
  Stage stage(const AcceptSuite& suite, const std::string& name, Body&& body) {
    ojson s;
    s["stage"] = name;
    if (!suite.runs(name)) {
      s["status"] = "skipped";
      s["reason"] = "skipped by the suite";
      report.stages.push_back(s);
      return Stage{};
    }
    const auto t0 = std::chrono::steady_clock::now();
    Stage out = body();
    s["status"] = out.skipped.empty() ? "ran" : "skipped";
    if (!out.skipped.empty()) s["reason"] = out.skipped;
    s["launches"] = out.launches;
    s["seconds"] = seconds_since(t0);
    report.stages.push_back(s);
    add(out);
    return out;
  }
};

Run start(const AcceptOptions& o, const std::string& fraction_why) {
  Run run;
  for (const AcceptNode& n : o.nodes) run.report.nodes.push_back(AcceptEntity{n.name, {}});
  run.report.rules = {{"peer_fraction", o.suite.peer_fraction},
                      {"peer_fraction_why", fraction_why},
                      {"statistic", o.suite.statistic},
                      {"rdma_fraction", o.suite.rdma_fraction},
                      {"profile", o.profile ? ojson(o.profile->name) : ojson(nullptr)}};
  return run;
}

}  // namespace

AcceptReport run_stages(const AcceptOptions& o, const std::string& fraction_why, BenchRunner& bench, char* const* envp,
                        std::ostream& progress) {
  const auto t0 = std::chrono::steady_clock::now();
  Run run = start(o, fraction_why);
  const AcceptSuite& suite = o.suite;
  const NodeTools tools{o.launcher, o.emulated_rpn > 0, o.railkit, o.out_dir, o.timeout_s, envp};
  const BenchStages stages{bench, suite, progress};
  const std::vector<std::string> names = node_names(o.nodes);
  const auto n = names.size();
  const int rpn = static_cast<int>(o.nodes.front().ranks.size());
  const std::string coll = pair_coll(suite);

  const TopoStage topo = run.stage<TopoStage>(suite, "topo", [&] { return topo_stage(tools, o.nodes); });
  run.stage<StageResult>(suite, "rdma", [&] {
    return rdma_stage(tools, o.nodes, suite.runs("topo") ? topo.nics : sysfs_nics(o.nodes), suite, progress);
  });
  run.stage<StageResult>(suite, "node", [&] { return node_stage(stages, n, rpn); });
  run.stage<StageResult>(suite, "rail", [&] { return rail_stage(stages, n, rpn); });
  const PairStage pairs =
      run.stage<PairStage>(suite, "pair", [&] { return pair_stage(stages, names, coll, run.per_launch_s()); });
  run.report.pairs = pairs_json(pairs, names, coll);
  const AllStage all = run.stage<AllStage>(suite, "all", [&] { return all_stage(stages, o.profile); });
  const IsolateStage iso = run.stage<IsolateStage>(
      suite, "isolate", [&] { return isolate_stage(stages, names, coll, pairs, all.failed); });
  run.report.isolation = iso.isolation;
  explain_rails(run.report);
  progress << fmt::format("railkit accept: finished in {}\n", format_duration(seconds_since(t0))) << std::flush;
  return std::move(run.report);
}

namespace {

void validate(const AcceptOptions& o) {
  if (o.nodes.empty()) throw UsageError("railkit accept: no node (give --hostfile, or --np with --ranks-per-node)");
  o.launcher.validate();
  const size_t rpn = o.nodes.front().ranks.size();
  for (const auto& n : o.nodes)
    if (n.ranks.size() != rpn) throw UsageError("railkit accept: every node needs as many ranks");
  for (const auto& [name, root] : o.suite.topo_roots)
    if (std::none_of(o.nodes.begin(), o.nodes.end(), [&](const AcceptNode& n) { return n.name == name; }))
      throw UsageError("--suite: topo_roots names node '" + name + "', which is not one of the nodes under test");
}

/// The suite as judged: emulated nodes with more ranks than CPUs use oversubscribed_peer_fraction
/// unless the suite gave peer_fraction. `why` says which and why.
AcceptSuite judged_suite(const AcceptOptions& o, std::string& why, std::ostream& progress) {
  AcceptSuite s = o.suite;
  why = s.peer_fraction_set ? "the suite's peer_fraction" : "default";
  if (o.emulated_rpn > 0 && o.launcher.np > o.launcher.cpus && !s.peer_fraction_set) {
    s.peer_fraction = s.oversubscribed_peer_fraction;
    why = fmt::format("{} ranks on {} CPUs: scheduling noise spreads the groups several-fold, so the peers rule "
                      "uses oversubscribed_peer_fraction",
                      o.launcher.np, o.launcher.cpus);
    progress << fmt::format("railkit accept: note: {} ({:g} x the peers' median)\n", why, s.peer_fraction) << std::flush;
  }
  return s;
}

}  // namespace

int run_accept(const AcceptOptions& o, BenchRunner& bench, char* const* envp, std::ostream& out, std::ostream& progress) {
  validate(o);
  std::error_code ec;
  fs::create_directories(o.out_dir / "bench", ec);
  if (ec) throw IoError("--out " + o.out_dir.string() + ": " + ec.message());

  AcceptOptions eff = o;
  std::string why;
  eff.suite = judged_suite(o, why, progress);
  const AcceptReport rep = run_stages(eff, why, bench, envp, progress);

  out << render_accept_table(rep) << std::flush;
  write_file_atomic(o.out_dir / "accept.json", to_json(rep).dump(2) + "\n");
  write_file_atomic(o.out_dir / "accept.prom", render_prometheus(rep));
  write_file_atomic(o.out_dir / "good-hosts", render_good_hosts(rep));
  if (!o.junit.empty()) write_file_atomic(o.junit, render_junit(rep));
  return rep.passed() ? 0 : exit_code(ErrorCode::CheckFailed);
}

int run_accept(const AcceptOptions& o, char* const* envp, std::ostream& out, std::ostream& progress) {
  launch::LaunchContext ctx;
  ctx.launcher = o.launcher;
  ctx.bench = o.bench;
  ctx.bench_args = stage_bench_args(o.bench_args, o.emulated_rpn > 0, o.suite.colls);
  ctx.out_dir = o.out_dir;
  ctx.timeout_s = o.timeout_s;
  LaunchBenchRunner bench(ctx, o.emulated_rpn, envp, progress);
  return run_accept(o, bench, envp, out, progress);
}

}  // namespace railkit::accept
