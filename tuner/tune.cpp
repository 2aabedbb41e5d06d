#include "tuner/tune.hpp"

#include <unistd.h>

#include <algorithm>
#include <limits>
#include <ostream>

#include <fmt/format.h>

#include "core/atomic_file.hpp"
#include "core/bench_flags.hpp"
#include "core/clock.hpp"
#include "core/collectives.hpp"
#include "core/error.hpp"
#include "core/strings.hpp"
#include "core/version.hpp"
#include "core/tunables.hpp"
#include "tuner/evidence.hpp"
#include "tuner/journal.hpp"
#include "tuner/session.hpp"
#include "tuner/strategy.hpp"

namespace railkit::tuner {
namespace {

namespace fs = std::filesystem;


/// Switch settings reach no host: only the simulator takes them, as one set (Kmin, Kmax, Pmax).
void check_switch_knobs(const Space& space, bool sim) {
  std::vector<std::string> names;
  for (const auto& k : space.knobs)
    if (k.tunable->scope == TunableScope::Switch) names.push_back(k.name);
  if (names.empty()) return;
  if (!sim) throw UsageError(switch_refusal(space.name, names));
  for (const auto n : kSwitchEcnKnobs)
    if (std::find(names.begin(), names.end(), n) == names.end())
      throw UsageError(fmt::format("space {}: has {} but not {}: the simulator takes switch ECN Kmin, Kmax and Pmax "
                                   "together (switch.ecn.kmin_bytes, kmax_bytes, pmax)",
                                   space.name, join(names, ", "), n));
}

void check_new_options(const TuneOptions& o) {
  if (std::find(std::begin(kStrategies), std::end(kStrategies), o.strategy) == std::end(kStrategies))
    throw UsageError("--strategy " + o.strategy + ": not one of " + strategy_names());
  if (o.budget < 0 || o.budget > kMaxBudget)
    throw UsageError(fmt::format("--budget {}: must be between 0 and {} trials", o.budget, kMaxBudget));
  if (o.iters < 1) throw UsageError(fmt::format("-n {}: must be >= 1", o.iters));
  if (o.pairs < 2) throw UsageError(fmt::format("--pairs {}: at least 2 pairs are needed for an interval (5 recommended)", o.pairs));
  if (o.max_regression < 0 || o.max_regression >= 1)
    throw UsageError(fmt::format("--max-regression {}: must be in [0, 1)", o.max_regression));
  if (o.timeout_s < 0) throw UsageError(fmt::format("--timeout-s {}: must be >= 0", o.timeout_s));
  o.launcher.validate();
  launch::check_bench_args(o.bench_args, "tune");
  if (::access(o.bench.c_str(), X_OK) != 0 || fs::is_directory(o.bench))
    throw UsageError("--bench " + o.bench + ": not an executable file");
  const bool sim = launch::is_sim(o.bench_args);
  if (sim) (void)launch::launcher_for_bench(o.launcher, true, o.bench_args);  // one local process, or refused
  check_switch_knobs(o.space, sim);
  const bool has_dcqcn = std::any_of(o.space.knobs.begin(), o.space.knobs.end(),
                                     [](const Knob& k) { return k.tunable->scope == TunableScope::Dcqcn; });
  if (sim && o.dcqcn)
    throw UsageError("--dcqcn-root " + o.dcqcn->root + ": with --backend sim the DCQCN knobs go to the simulated NICs "
                     "(--sim-set nic.dcqcn.*) and no node is written; leave --dcqcn-root out");
  if (sim && !o.topo.root.empty())
    throw UsageError("--topo-root " + o.topo.root + ": a simulated session measures no node (its cluster is the "
                     "--sim-cluster file) and its profile records no fingerprint; leave --topo-root out");
  if (has_dcqcn && !o.dcqcn && !sim)
    throw UsageError("space " + o.space.name + " has DCQCN knobs: say where they apply (--dcqcn-root)");
  for (const auto& [k, v] : o.baseline_env)
    if (const Tunable* t = find_tunable(k)) validate_tunable_value(*t, v, "--baseline-env");
  if (!o.topo.root.empty() && !fs::is_directory(o.topo.root))
    throw UsageError("--topo-root " + o.topo.root + ": not a directory (a captured or fixture tree holding sys/)");
}

/// Refuses, before anything runs, knobs that cannot reach the backend when it is known now.
void check_reach(const TuneOptions& o, char* const* envp) {
  const launch::ExpectedBackend expected = launch::expected_backend(o.bench, o.bench_args, o.launcher, envp);
  if (expected.backend.empty() || o.allow_inert) return;
  // DCQCN attributes reach the fabric between nodes: known now only when every rank runs here.
  TuneOptions env_only = o;
  if (!launch::single_host(o.launcher))
    std::erase_if(env_only.space.knobs, [](const Knob& k) { return k.tunable->scope == TunableScope::Dcqcn; });
  const auto inert = session_inert_knobs(env_only, RunTarget{expected.backend, false, {}});
  if (!inert.empty()) throw UsageError(inert_refusal(inert, expected.backend, expected.how));
}

std::string budget_text(int budget) { return budget > 0 ? std::to_string(budget) : std::string("all"); }

}  // namespace

std::string switch_refusal(const std::string& space, const std::vector<std::string>& knobs) {
  std::vector<std::string> others(knobs.begin() + 1, knobs.end());
  return fmt::format("space {}: {}{} {} a setting of the fabric's switches: no host reaches a switch, so railkit tunes "
                     "it only on the simulator (-- --backend sim --sim-cluster FILE) and a profile records the winner as "
                     "advice to configure on the switches",
                     space, knobs.front(), others.empty() ? "" : " (and " + join(others, ", ") + ")",
                     others.empty() ? "is" : "are each");
}

std::string inert_refusal(const std::vector<std::string>& knobs, const std::string& backend, const std::string& how) {
  const auto reach = knob_reach(knobs.front());
  std::vector<std::string> others(knobs.begin() + 1, knobs.end());
  return fmt::format("space knob {}{} cannot reach the {} backend that runs this session ({} reaches {}; {}): every "
                     "trial would differ by noise alone; pass --allow-inert to measure it anyway (the profile says inert "
                     "and is never validated)",
                     knobs.front(), others.empty() ? "" : " (and " + join(others, ", ") + ")", backend, knobs.front(),
                     reach ? reach_text(*reach) : std::string("?"), how);
}

std::optional<int> take_iters(std::vector<std::string>& bench_args) {
  if (const auto j = find_bench_flag(bench_args, BenchFlag::OutputFile); !j.empty())
    throw UsageError("bench arguments: " + bench_args[j.front().index] + " is set by railkit tune itself");
  const auto v = take_bench_flag(bench_args, BenchFlag::Iters);
  if (!v) return std::nullopt;
  const auto n = to_int(*v);
  if (!n || *n > std::numeric_limits<int>::max()) throw UsageError("bench arguments: -n " + *v + ": not an integer");
  if (*n < 1) throw UsageError("bench arguments: -n " + *v + ": must be >= 1");
  return static_cast<int>(*n);
}

std::vector<std::string> bench_collectives(const std::vector<std::string>& bench_args) {
  std::vector<std::string> args = bench_args;
  const auto v = take_bench_flag(args, BenchFlag::Coll);
  if (!v) return {"all_reduce"};
  std::vector<std::string> out;
  for (const auto& c : split_nonempty(*v, ',')) {
    if (c == "all") {
      std::vector<std::string> all;
      for (const Collective& x : collectives()) all.emplace_back(x.name);
      return all;
    }
    out.push_back(c);
  }
  return out;
}

TuneOutcome run_tune(const TuneOptions& opts, char* const* envp, std::ostream& progress, bool tty, bool quiet) {
  check_new_options(opts);
  check_reach(opts, envp);
  std::optional<launch::SimEvidence> sim;  // the cluster file must be there before anything is written
  if (launch::is_sim(opts.bench_args)) sim = launch::sim_evidence(opts.bench_args);
  std::error_code ec;
  fs::create_directories(opts.out_dir, ec);
  if (ec || !fs::is_directory(opts.out_dir)) throw UsageError("--out " + opts.out_dir.string() + ": cannot create the directory");
  const fs::path journal = opts.out_dir / "journal.jsonl";
  if (fs::exists(journal))
    throw UsageError("--out " + opts.out_dir.string() +
                     " already holds a tuning session (journal.jsonl): continue it with `railkit tune --resume " +
                     opts.out_dir.string() + "`, or choose another directory");
  check_writable(journal, "--out");
  if (opts.emit_ompi_rules) check_writable(*opts.emit_ompi_rules, "--emit-ompi-rules");
  SessionRecord session;
  if (opts.weights_path) session.weights = load_weights(*opts.weights_path);
  const auto colls = bench_collectives(opts.bench_args);
  for (const auto& [k, w] : session.weights)
    if (std::find(colls.begin(), colls.end(), k.coll) == colls.end())
      throw UsageError(fmt::format("--weights {}: collective {} is not benchmarked (--coll)", *opts.weights_path, k.coll));
  TuneOptions& o = session.options = opts;
  o.out_dir = fs::absolute(opts.out_dir);
  o.sim = sim;
  if (sim) o.bench_args = launch::with_absolute_sim_cluster(o.bench_args);  // resumable from any directory
  if (o.profile_name.empty()) o.profile_name = o.out_dir.filename().string();
  if (!o.topo.root.empty()) o.topo.root = fs::absolute(o.topo.root).string();
  (void)make_strategy(o.strategy, o.space, o.budget, o.seed);  // bad budget or strategy: before anything is written
  session.created = utc_now_iso();
  session.railkit_version = kVersion;
  append_journal(journal, to_json(session));
  if (!quiet) {
    progress << fmt::format("railkit tune: space {} ({} knobs, {} configurations), strategy {}, budget {}, seed {}; journal {}\n",
                            o.space.name, o.space.knobs.size(), config_count(o.space), o.strategy, budget_text(o.budget),
                            o.seed, journal.string());
    progress.flush();
  }
  JournalRecords none;
  none.session = session;
  Session s(o, session.weights, opts.out_dir.string(), envp, Progress{progress, tty, quiet});
  return s.run(none);
}

namespace {

bool same_file(const std::string& a, const std::string& b) {
  std::error_code ec;
  return !a.empty() && !b.empty() && fs::equivalent(a, b, ec) && !ec;
}

/// Refuses a journal's bench that is not the railkit-bench next to this railkit, unless --bench names it again.
void check_resume_bench(const fs::path& journal, const std::string& recorded, const ResumeOptions& r) {
  if (!r.bench.empty()) {
    if (!same_file(r.bench, recorded))
      throw UsageError(fmt::format("--resume: --bench {} is not the bench the session ran ({}, {}:1); every trial of "
                                   "a session runs one bench",
                                   r.bench, recorded, journal.string()));
    return;
  }
  if (!same_file(recorded, r.default_bench))
    throw UsageError(fmt::format("--resume: {}:1 names bench {}, not the railkit-bench next to this railkit ({}); "
                                 "give --bench {} again to run it",
                                 journal.string(), recorded, r.default_bench.empty() ? "none found" : r.default_bench,
                                 recorded));
}

/// Refuses a new budget under which the strategy would not propose the journaled trials again.
void check_new_budget(const TuneOptions& o, const JournalRecords& records, int budget) {
  if (budget < 0 || budget > kMaxBudget)
    throw UsageError(fmt::format("--budget {}: must be between 0 and {} trials", budget, kMaxBudget));
  const auto strategy = make_strategy(o.strategy, o.space, budget, o.seed);
  for (const auto& t : records.trials) {
    const auto p = strategy->propose();
    if (!p || !(*p == t.proposal))
      throw UsageError(fmt::format("--budget {} with --resume: strategy {} would propose other trials than the {} "
                                   "journaled under budget {}; its budget cannot change once the session started",
                                   budget, o.strategy, records.trials.size(), budget_text(o.budget)));
    strategy->observe(*p, t.objective);
  }
}

}  // namespace

TuneOutcome resume_tune(const fs::path& dir, char* const* envp, std::ostream& progress, bool tty, bool quiet,
                        const ResumeOptions& r) {
  const fs::path journal = dir / "journal.jsonl";
  if (!fs::is_directory(dir)) throw UsageError("--resume " + dir.string() + ": no such directory");
  if (!fs::exists(journal)) throw UsageError("--resume " + dir.string() + ": no journal.jsonl there (not a tuning directory)");
  JournalRecords records = parse_journal(read_journal(journal), fs::absolute(dir));
  records.session.options.allow_inert = records.session.options.allow_inert || r.allow_inert;
  TuneOptions& o = records.session.options;
  check_resume_bench(journal, o.bench, r);
  if (::access(o.bench.c_str(), X_OK) != 0)
    throw UsageError("--resume: the session's bench " + o.bench + " is not executable any more");
  if (o.sim) {  // the trials so far simulated that cluster: another would not compare with them
    const launch::SimCluster now = launch::read_sim_cluster(o.sim->cluster);
    if (now.hash != o.sim->cluster_hash)
      throw UsageError(fmt::format("--resume: {} simulated {} ({}), which now hashes to {}: its trials would not compare "
                                   "with new ones; restore the file or start a new session",
                                   journal.string(), o.sim->cluster, o.sim->cluster_hash, now.hash));
  }
  if (r.budget && *r.budget != o.budget) {
    check_new_budget(o, records, *r.budget);
    append_journal(journal, nlohmann::ordered_json{{"type", "budget"}, {"budget", *r.budget}, {"was", o.budget}, {"set", utc_now_iso()}});
    o.budget = *r.budget;
  }
  progress << fmt::format("railkit tune: resuming {} with bench {}\n", journal.string(), o.bench);
  if (!quiet)
    progress << fmt::format("railkit tune: space {}, strategy {}, budget {}, seed {}\n", o.space.name, o.strategy,
                            budget_text(o.budget), o.seed);
  progress.flush();
  Session s(o, records.session.weights, dir.string(), envp, Progress{progress, tty, quiet});
  return s.run(records);
}

}  // namespace railkit::tuner
