#include "accept/accept.hpp"

#include <algorithm>
#include <chrono>
#include <ostream>

#include <fmt/format.h>

#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "core/json_text.hpp"
#include "core/strings.hpp"
#include "core/tunables.hpp"
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

/// Whether the run's traffic crosses a fabric between nodes: real nodes, more than one.
bool crosses_fabric(const AcceptOptions& o) { return o.emulated_rpn == 0 && o.nodes.size() > 1; }

/// The scale of the run: its nodes and ranks per node.
Scale run_scale(const AcceptOptions& o) {
  const int n = static_cast<int>(o.nodes.size());
  const int rpn = static_cast<int>(o.nodes.front().ranks.size());
  return Scale{n, rpn, n * rpn};
}

ojson scale_json(const Scale& s) {
  return {{"nodes", s.nodes}, {"ranks_per_node", s.ranks_per_node}, {"ranks", s.ranks}};
}

/// accept.json's `rules.profile`: the profile, its scale against the run's, and whether its
/// expectations are applied; a note when they are not, or when the profile records no scale.
ojson profile_rules(const AcceptOptions& o, std::vector<std::string>& notes) {
  if (!o.profile) return nullptr;
  const ProfileDocument& p = *o.profile;
  const Scale run = run_scale(o), ps = profile_scale(p);
  const std::optional<std::string> other = other_scale(p, run);
  const bool recorded = ps.nodes > 0 || ps.ranks_per_node > 0 || ps.ranks > 0;
  std::string why;
  if (other) {
    why = fmt::format("{}{}: a profile measured at another scale is no evidence for this one, so its expectations "
                      "are measured and reported at their sizes, not applied",
                      *other, o.emulated_rpn > 0 ? " (emulated nodes on one machine)" : "");
  } else if (!recorded) {
    why = fmt::format("profile '{}' records no scale (cluster nodes, ranks, ranks_per_node are 0): its expectations "
                      "are applied as if it had been measured at this run's scale, {}",
                      p.name, run.describe());
  } else {
    why = fmt::format("profile '{}' was measured at this run's scale, {}: its expectations are applied", p.name,
                      ps.describe());
  }
  if (o.suite.runs("all") && (other || !recorded)) notes.push_back(why);
  ojson inert = nullptr;
  if (const auto knobs = profile_inert_knobs(p, o.expected_backend, crosses_fabric(o)); !knobs.empty()) {
    const std::string line = fmt::format("profile '{}' sets {}, which cannot reach the {} backend that ran "
                                         "(--allow-inert): its settings changed nothing here",
                                         p.name, join(knobs, ", "), o.expected_backend);
    notes.push_back(line);
    inert = {{"knobs", knobs}, {"backend", o.expected_backend}, {"why", line}};
  }
  return {{"name", p.name},
          {"settings_env", p.env},
          {"inert", inert},
          {"scale", scale_json(ps)},
          {"run_scale", scale_json(run)},
          {"same_scale", !other.has_value()},
          {"expectations_applied", !other.has_value()},
          {"why", why}};
}

Run start(const AcceptOptions& o, const std::string& fraction_why) {
  Run run;
  for (const AcceptNode& n : o.nodes) run.report.nodes.push_back(AcceptEntity{n.name, {}});
  run.report.rules = {{"peer_fraction", o.suite.peer_fraction},
                      {"peer_fraction_why", fraction_why},
                      {"statistic", o.suite.statistic},
                      {"rdma_fraction", o.suite.rdma_fraction},
                      {"profile", profile_rules(o, run.report.notes)}};
  return run;
}

/// The NICs of each node's root by name (sys/class/infiniband), for when the topo stage was skipped.
std::vector<std::vector<RailNic>> named_nics(const std::vector<AcceptNode>& nodes) {
  std::vector<std::vector<RailNic>> out;
  for (const auto& names : sysfs_nics(nodes)) out.push_back(named_rail_nics(names));
  return out;
}

/// A note for each bench stage that could not apply to this set of nodes (not one the suite skipped).
void stage_notes(AcceptReport& r) {
  for (std::size_t i = 0; i < r.stages.size(); ++i) {
    const auto& s = r.stages[i];
    const std::string where = fmt::format("accept report: stages[{}]", i);
    const std::string stage = field_or(s, "stage", "", where);
    const std::string reason = field_or(s, "reason", "", where);
    if ((stage == "node" || stage == "rail" || stage == "pair") && field_or(s, "status", "", where) == "skipped" &&
        reason != "skipped by the suite")
      r.notes.push_back(fmt::format("stage {} skipped: {}", stage, reason));
  }
}

}  // namespace

AcceptReport run_stages(const AcceptOptions& o, const std::string& fraction_why, BenchRunner& bench, char* const* envp,
                        std::ostream& progress) {
  const auto t0 = std::chrono::steady_clock::now();
  Run run = start(o, fraction_why);
  run.report.emulated = o.emulated_rpn > 0;
  const AcceptSuite& suite = o.suite;
  const NodeTools tools{o.launcher, o.emulated_rpn > 0, o.railkit, o.out_dir, o.timeout_s, envp};
  const BenchStages stages{bench, suite, progress, o.profile ? o.profile->env : std::map<std::string, std::string>{}};
  const std::vector<std::string> names = node_names(o.nodes);
  const auto n = names.size();
  const int rpn = static_cast<int>(o.nodes.front().ranks.size());
  const std::string coll = pair_coll(suite);

  const TopoStage topo = run.stage<TopoStage>(suite, "topo", [&] { return topo_stage(tools, o.nodes); });
  run.stage<StageResult>(suite, "rdma", [&] {
    return rdma_stage(tools, o.nodes, suite.runs("topo") ? topo.nics : sysfs_nics(o.nodes), suite, progress);
  });
  const RdmaPairStage rdma_pairs = run.stage<RdmaPairStage>(suite, "rdma-pair", [&] {
    return rdma_pair_stage(tools, o.nodes, suite.runs("topo") ? topo.rail_nics : named_nics(o.nodes), suite, progress);
  });
  run.report.rdma_pairs = rdma_pairs.pairs;
  run.report.rdma_isolation = rdma_pairs.isolation;
  run.stage<StageResult>(suite, "node", [&] { return node_stage(stages, n, rpn); });
  run.stage<StageResult>(suite, "rail", [&] { return rail_stage(stages, n, rpn); });
  const PairStage pairs =
      run.stage<PairStage>(suite, "pair", [&] { return pair_stage(stages, names, coll, run.per_launch_s()); });
  run.report.pairs = pairs_json(pairs, names, coll);
  const AllStage all = run.stage<AllStage>(suite, "all", [&] { return all_stage(stages, o.profile, run_scale(o)); });
  const IsolateStage iso = run.stage<IsolateStage>(
      suite, "isolate", [&] { return isolate_stage(stages, names, coll, pairs, all.verdict); });
  run.report.isolation = iso.isolation;
  explain_rails(run.report);
  stage_notes(run.report);
  run.report.finished_unix_s =
      std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  progress << fmt::format("railkit accept: finished in {}\n", format_duration(seconds_since(t0))) << std::flush;
  return std::move(run.report);
}

namespace {

/// Up to three entries of a directory, for a message: "accept.json, bench, good-hosts ...".
std::string some_entries(const fs::path& dir) {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  const bool more = names.size() > 3;
  names.resize(std::min<std::size_t>(names.size(), 3));
  return join(names, ", ") + (more ? " ..." : "");
}

/// --out: absent or an empty directory, or (o.force) a directory whose accept outputs are replaced.
void check_out_dir(const AcceptOptions& o) {
  std::error_code ec;
  if (!fs::exists(o.out_dir, ec)) return;
  if (!fs::is_directory(o.out_dir, ec)) throw UsageError("--out " + o.out_dir.string() + ": not a directory");
  if (fs::is_empty(o.out_dir, ec) || o.force) return;
  throw UsageError("--out " + o.out_dir.string() + " is not empty (" + some_entries(o.out_dir) +
                   "): pass --force to replace railkit accept's outputs there, or choose another directory");
}

/// Under --force: accept's own outputs of an earlier run are removed, so none of them outlives it.
void clear_outputs(const AcceptOptions& o) {
  if (!o.force) return;
  for (const char* name : kAcceptOutputs) {
    std::error_code ec;
    fs::remove_all(o.out_dir / name, ec);
    if (ec) throw IoError("--out " + (o.out_dir / name).string() + ": " + ec.message());
  }
}

/// A profile whose knobs cannot reach the backend that will run is refused unless allow_inert.
void check_profile_reach(const AcceptOptions& o) {
  if (!o.profile || o.allow_inert) return;
  const auto knobs = profile_inert_knobs(*o.profile, o.expected_backend, crosses_fabric(o));
  if (knobs.empty()) return;
  const auto reach = knob_reach(knobs.front());
  throw UsageError(fmt::format("--profile: '{}' sets {} ({} reaches {}), which cannot reach the {} backend that runs "
                               "this acceptance ({}): its expectations were measured with settings that change nothing "
                               "here; pass --allow-inert to use it anyway",
                               o.profile->name, join(knobs, ", "), knobs.front(), reach ? reach_text(*reach) : "?",
                               o.expected_backend, o.expected_backend_how));
}

void validate(const AcceptOptions& o) {
  if (o.nodes.empty()) throw UsageError("railkit accept: no node (give --hostfile, or --np with --ranks-per-node)");
  check_out_dir(o);
  check_profile_reach(o);
  o.launcher.validate();
  const size_t rpn = o.nodes.front().ranks.size();
  for (const auto& n : o.nodes)
    if (n.ranks.size() != rpn) throw UsageError("railkit accept: every node needs as many ranks");
  for (const auto& entry : o.suite.topo_roots) {
    const std::string& name = entry.first;
    if (std::none_of(o.nodes.begin(), o.nodes.end(), [&](const AcceptNode& n) { return n.name == name; }))
      throw UsageError("--suite: topo_roots names node '" + name + "', which is not one of the nodes under test");
  }
  for (const auto& entry : o.suite.rdma_addresses) {
    const std::string& name = entry.first;
    if (std::none_of(o.nodes.begin(), o.nodes.end(), [&](const AcceptNode& n) { return n.name == name; }))
      throw UsageError("--suite: rdma_addresses names node '" + name + "', which is not one of the nodes under test");
  }
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

/// A script of the lists to act on: written atomically, then made executable (never run here).
void write_script(const fs::path& path, const std::string& text) {
  write_file_atomic(path, text);
  std::error_code ec;
  fs::permissions(path, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                            fs::perms::others_read | fs::perms::others_exec, ec);
  if (ec) throw IoError(path.string() + ": cannot make it executable: " + ec.message());
}

}  // namespace

int run_accept(const AcceptOptions& o, BenchRunner& bench, char* const* envp, std::ostream& out, std::ostream& progress) {
  validate(o);
  clear_outputs(o);
  std::error_code ec;
  fs::create_directories(o.out_dir / "bench", ec);
  if (ec) throw IoError("--out " + o.out_dir.string() + ": " + ec.message());

  AcceptOptions eff = o;
  std::string why;
  eff.suite = judged_suite(o, why, progress);
  const AcceptReport rep = run_stages(eff, why, bench, envp, progress);

  out << render_accept_table(rep) << std::flush;
  write_file_atomic(o.out_dir / "accept.json", json_dump(to_json(rep), 2) + "\n");
  write_file_atomic(o.out_dir / "accept.prom", render_prometheus(rep));
  write_file_atomic(o.out_dir / "good-hosts", render_good_hosts(rep));
  write_file_atomic(o.out_dir / "bad-hosts", render_bad_hosts(rep));
  write_script(o.out_dir / "drain-slurm.sh", render_drain_slurm(rep));
  write_script(o.out_dir / "cordon-k8s.sh", render_cordon_k8s(rep));
  if (!o.junit.empty()) write_file_atomic(o.junit, render_junit(rep));
  switch (rep.verdict()) {
    case Verdict::Pass: return 0;
    case Verdict::Fail: return exit_code(ErrorCode::CheckFailed);
    default:
      progress << fmt::format("railkit accept: {}{}\n", rep.verdict_reason(),
                              o.report_only ? " (--report-only: exit 0)"
                                            : fmt::format("; exit {} (--report-only accepts a run that judges nothing)",
                                                          kExitNothingJudged))
               << std::flush;
      return o.report_only ? 0 : kExitNothingJudged;
  }
}

std::vector<std::string> profile_inert_knobs(const ProfileDocument& p, const std::string& backend, bool crosses_fabric) {
  if (backend.empty()) return {};
  std::vector<std::string> names;
  for (const auto& [k, v] : p.env) names.push_back(k);
  for (const auto& [prio, attrs] : p.dcqcn)
    for (const auto& [attr, v] : attrs) names.push_back(attr);
  return inert_knobs(names, RunTarget{backend, crosses_fabric, {}});
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
