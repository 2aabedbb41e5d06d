#include "tuner/session.hpp"

#include <algorithm>
#include <chrono>
#include <functional>
#include <ostream>
#include <set>

#include <fmt/format.h>

#include "core/bench_flags.hpp"
#include "core/clock.hpp"
#include "core/error.hpp"
#include "core/launch.hpp"
#include "core/units.hpp"
#include "launch/sim_bench.hpp"
#include "tuner/evidence.hpp"
#include "tuner/fingerprint.hpp"

namespace railkit::tuner {
namespace {

namespace fs = std::filesystem;

std::string fmt_obj(std::optional<double> v) { return v ? fmt::format("{:.3f} GB/s", *v) : std::string("-"); }

int max_fidelity(const std::vector<TrialRecord>& trials) {
  int f = 1;
  for (const auto& t : trials) f = std::max(f, t.proposal.fidelity);
  return f;
}

}  // namespace

Session::Session(TuneOptions o, BucketWeights weights, std::string shown_dir, char* const* envp, Progress progress)
    : o_(std::move(o)), weights_(std::move(weights)), shown_dir_(std::move(shown_dir)), envp_(envp), progress_(progress) {
  dir_ = fs::absolute(o_.out_dir);
  journal_ = dir_ / "journal.jsonl";
  ctx_.launcher = o_.launcher;
  ctx_.bench = o_.bench;
  ctx_.bench_args = o_.bench_args;
  ctx_.out_dir = dir_;
  ctx_.timeout_s = o_.timeout_s;
  ctx_.kill_grace_s = o_.kill_grace_s;
  has_dcqcn_ = !o_.sim && std::any_of(o_.space.knobs.begin(), o_.space.knobs.end(),
                                      [](const Knob& k) { return k.tunable->scope == TunableScope::Dcqcn; });
  strategy_ = make_strategy(o_.strategy, o_.space, o_.budget, o_.seed);
}

void Session::say(const std::string& line) {
  if (progress_.quiet) return;
  if (progress_.tty) progress_.out << "\r\033[K";
  progress_.out << line << "\n" << std::flush;
}

bool Session::run_dcqcn(const std::string& verb, const std::map<std::string, std::string>& values, std::string& error) {
  std::vector<std::string> cmd{o_.dcqcn->railkit, "dcqcn", verb, "--root", o_.dcqcn->root};
  for (const auto& n : o_.dcqcn->netdevs) cmd.insert(cmd.end(), {"--netdev", n});
  for (const auto& [k, v] : values) cmd.insert(cmd.end(), {"--set", k + "=" + v});
  LaunchSpec spec;
  spec.argv = launch::per_node_argv(o_.launcher, cmd);
  spec.stdout_path = dir_ / "dcqcn.log";
  spec.stderr_path = dir_ / "dcqcn.err.log";
  spec.timeout_s = 120;
  const LaunchResult r = run_process(spec, envp_);
  if (r.ok()) return true;
  error = "railkit dcqcn " + verb + ": " + r.describe() + ": " + launch::telling_stderr_line(file_tail(spec.stderr_path, 20));
  return false;
}

bool Session::restore_dcqcn(std::string& error) { return !o_.dcqcn || run_dcqcn("restore", {}, error); }

bool Session::set_dcqcn(const std::map<std::string, std::string>& values, std::string& error) {
  if (!restore_dcqcn(error)) return false;  // "" knobs mean the NIC's own values
  return values.empty() || run_dcqcn("apply", values, error);
}

void Session::finish_dcqcn() {
  std::string err;
  if (has_dcqcn_ && !restore_dcqcn(err)) say("railkit tune: warning: " + err);
}

void Session::interrupted(int signal, const std::string& head) {
  say(head + ": interrupted; not recorded");
  finish_dcqcn();
  throw InterruptedError(signal, fmt::format("interrupted after {} trials; continue with `railkit tune --resume {}`",
                                             trials_.size(), shown_dir_));
}

Session::Launched Session::launch(const std::string& base, const std::string& label, const Settings& s, int iters,
                                  bool validation, const std::string& head, std::optional<std::uint64_t> sim_seed) {
  Launched out;
  if (has_dcqcn_) {
    std::string err;
    if (!set_dcqcn(s.dcqcn, err)) {
      out.status = TrialStatus::Failed;
      out.error = err;
      return out;
    }
  }
  launch::BenchConfig c;
  c.name = label;
  c.env = s.env;
  c.args = bench_flag_args(BenchFlag::Iters, std::to_string(iters));
  launch::LaunchContext ctx = ctx_;
  if (o_.sim) {  // DCQCN and switch settings go to the simulated fabric, after the bench arguments' own
    const auto sets = launch::sim_set_args(s.dcqcn, s.switch_settings);
    c.args.insert(c.args.end(), sets.begin(), sets.end());
    if (sim_seed) {
      const auto seed = launch::sim_seed_args(*sim_seed);
      c.args.insert(c.args.end(), seed.begin(), seed.end());
    }
  } else if (validation) {  // data checks on (the simulator moves no data)
    (void)take_bench_flag(ctx.bench_args, BenchFlag::Check);
    const auto check = bench_flag_args(BenchFlag::Check, "1");
    c.args.insert(c.args.end(), check.begin(), check.end());
  }
  std::function<void(double)> tick;
  if (progress_.tty && !progress_.quiet)
    tick = [&](double el) { progress_.out << "\r\033[K" << head << " running " << format_duration(el) << std::flush; };
  launch::TrialRun tr = launch::run_config(ctx, c, base, envp_, tick);
  if (tr.launch.end == LaunchResult::End::Interrupted) {
    out.signal = tr.launch.signal;
    return out;
  }
  out.status = tr.record.status;
  out.error = tr.record.error;
  out.elapsed_s = tr.record.elapsed_s;
  out.results_rel = tr.record.results;
  if (!out.results_rel.empty()) {
    try {
      out.doc = load_results((dir_ / out.results_rel).string());
      // A trial's document must be railkit-bench's own: an imported log never counts as evidence.
      refuse_imported(*out.doc, (dir_ / out.results_rel).string(), "tune trial");
      if (!first_doc_) first_doc_ = out.doc;
    } catch (const Error& e) {
      out.status = TrialStatus::Failed;
      out.error = e.what();
    }
  }
  return out;
}

void Session::replay(const std::vector<TrialRecord>& trials) {
  for (const auto& t : trials) {
    const auto p = strategy_->propose();
    if (!p || !(*p == t.proposal))
      throw UsageError(fmt::format("--resume: {}: trial {} is not what strategy {} (seed {}) proposes on replay; "
                                   "the journal was edited or written by another railkit version",
                                   journal_.string(), t.id, o_.strategy, o_.seed));
    strategy_->observe(*p, t.objective);
    trials_.push_back(t);
  }
  if (!trials_.empty()) say(fmt::format("railkit tune: {} trials already in {}, replayed", trials_.size(), journal_.string()));
}

void Session::check_reach(const ResultsDocument& doc, const std::string& what) {
  if (reach_checked_) return;
  reach_checked_ = true;
  if (o_.allow_inert) return;
  const std::string fidelity = launch::simulated_fidelity(doc);
  const auto inert = session_inert_knobs(o_, RunTarget{doc.run.backend, doc.run.nnodes > 1, fidelity});
  if (inert.empty()) return;
  finish_dcqcn();
  const std::string backend = fidelity == "flow" ? doc.run.backend + " (flow fidelity: no congestion control, ECN or PFC "
                                                                     "modelled; --fidelity packet models them)"
                                                 : doc.run.backend;
  throw UsageError(inert_refusal(inert, backend,
                                 fmt::format("{} ran on it ({} node{}); the session stopped there, journaled in {}", what,
                                             doc.run.nnodes, doc.run.nnodes == 1 ? "" : "s", journal_.string())));
}

TrialRecord Session::run_trial(const Proposal& p, const std::string& head) {
  TrialRecord t;
  t.id = static_cast<int>(trials_.size()) + 1;
  t.proposal = p;
  t.label = config_label(o_.space, p.config);
  t.iters = o_.iters * p.fidelity;
  t.settings = settings_of(o_.space, p.config);
  t.started = utc_now_iso();
  if (const std::string why = infeasible_reason(t.settings); !why.empty()) {  // nothing to launch
    t.status = TrialStatus::Failed;
    t.infeasible = true;
    t.error = "infeasible: " + why + "; not run";
    append_journal(journal_, to_json(o_.space, t));
    return t;
  }
  if (progress_.tty && !progress_.quiet) progress_.out << "\r\033[K" << head << " running" << std::flush;
  Launched l = launch(fmt::format("trials/t{:04d}", t.id), t.label, t.settings, t.iters, false, head);
  if (l.status == TrialStatus::Interrupted) interrupted(l.signal, head);
  t.status = l.status;
  t.elapsed_s = l.elapsed_s;
  t.results = l.results_rel;
  t.error = l.error;
  if (l.doc) {
    t.buckets = bucket_busbw(*l.doc).busbw_GBps;
    if (t.status == TrialStatus::Ok) {
      t.objective = objective_GBps(t.buckets, weights_);
      if (!t.objective) {
        t.status = TrialStatus::Failed;
        const bool zero = std::any_of(t.buckets.begin(), t.buckets.end(), [](const auto& kv) { return !(kv.second > 0); });
        t.error = zero ? "busbw 0 in a size bucket (with one rank nothing crosses between ranks)"
                       : "its results miss a size bucket of the weights";
      }
    }
  }
  append_journal(journal_, to_json(o_.space, t));
  if (l.doc) check_reach(*l.doc, fmt::format("trial {}", t.id));
  return t;
}

void Session::search() {
  const std::size_t total = o_.budget > 0 ? static_cast<std::size_t>(o_.budget) : config_count(o_.space);
  const auto t0 = std::chrono::steady_clock::now();
  int ran_now = 0;
  fs::create_directories(dir_ / "trials");
  while (const auto p = strategy_->propose()) {
    const int id = static_cast<int>(trials_.size()) + 1;
    const std::string head =
        fmt::format("[{}/{}] {}{}", id, total, config_label(o_.space, p->config), p->fidelity > 1 ? fmt::format(" (x{})", p->fidelity) : "");
    TrialRecord t = run_trial(*p, head);
    strategy_->observe(*p, t.objective);
    ++ran_now;
    trials_.push_back(std::move(t));
    const TrialRecord& done = trials_.back();
    const TrialRecord* best = nullptr;
    for (const auto& x : trials_)
      if (x.objective && (!best || *x.objective > *best->objective)) best = &x;
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const std::size_t left = total > static_cast<std::size_t>(id) ? total - static_cast<std::size_t>(id) : 0;
    std::string msg = fmt::format("{}: {}", head, done.status == TrialStatus::Ok ? fmt_obj(done.objective)
                                                  : done.infeasible              ? done.error
                                                      : std::string(name(done.status)) + " (" + done.error + ")");
    msg += fmt::format(" | best {} ({})", fmt_obj(best ? best->objective : std::nullopt), best ? best->label : "-");
    msg += fmt::format(" | {}", format_duration(elapsed));
    if (left > 0) msg += ", ETA <= " + format_duration(elapsed / ran_now * static_cast<double>(left));
    say(msg);
  }
}

ValidationRecord Session::run_validation(int round, std::size_t ci, const std::vector<Config>& candidates, int iters,
                                         const std::string& head) {
  ValidationRecord r;
  r.round = round;
  r.role = validation_role(ci);
  if (ci > 0) r.config = candidates[ci - 1];
  if (ci == 0) r.settings.env = o_.baseline_env;
  else r.settings = settings_of(o_.space, candidates[ci - 1]);
  r.iters = iters;
  const std::string label = ci == 0 ? "baseline" : config_label(o_.space, candidates[ci - 1]);
  if (o_.sim) r.sim_seed = launch::sim_replica_seed(o_.sim->seed, round);  // held-out seeds
  Launched l = launch(fmt::format("validation/r{:02d}-{}", round, r.role), label, r.settings, iters, true, head, r.sim_seed);
  if (l.status == TrialStatus::Interrupted) interrupted(l.signal, head);
  r.status = l.status;
  r.results = l.results_rel;
  r.elapsed_s = l.elapsed_s;
  r.error = l.error;
  if (l.doc) {
    const BucketValues bv = bucket_busbw(*l.doc);
    r.buckets = bv.busbw_GBps;
    r.sizes = bv.size_busbw_GBps;
    r.backend = l.doc->run.backend;
    if (l.doc->summary.errors > 0) {
      r.status = TrialStatus::Failed;
      r.error = fmt::format("{} wrong values in the data check", l.doc->summary.errors);
    }
  }
  append_journal(journal_, to_json(o_.space, r));
  return r;
}

void Session::validate(const std::vector<Config>& candidates) {
  fs::create_directories(dir_ / "validation");
  const int iters = o_.validate_iters > 0 ? o_.validate_iters : 2 * o_.iters * max_fidelity(trials_);
  std::set<std::pair<int, std::string>> have;
  for (const auto& r : runs_) have.insert({r.round, r.role});
  const int nruns = o_.pairs * static_cast<int>(1 + candidates.size());
  int k = static_cast<int>(runs_.size());
  for (int round = 1; round <= o_.pairs; ++round)
    for (std::size_t ci = 0; ci <= candidates.size(); ++ci) {
      const std::string role = validation_role(ci);
      if (have.count({round, role})) continue;
      const std::string label = ci == 0 ? "baseline" : config_label(o_.space, candidates[ci - 1]);
      const std::string head = fmt::format("[validate {}/{}] round {} {} ({})", ++k, nruns, round, role, label);
      runs_.push_back(run_validation(round, ci, candidates, iters, head));
      const ValidationRecord& r = runs_.back();
      say(fmt::format("{}: {}", head, r.status == TrialStatus::Ok ? fmt_obj(objective_GBps(r.buckets, weights_))
                                                                   : std::string(name(r.status)) + " (" + r.error + ")"));
    }
}

std::optional<ResultsDocument> Session::cluster_doc() {
  for (const auto& t : trials_) {  // a resumed session that launched nothing: a document it wrote before
    if (first_doc_) break;
    if (t.status == TrialStatus::Ok && !t.results.empty() && fs::exists(dir_ / t.results)) {
      try {
        first_doc_ = load_results((dir_ / t.results).string());
        refuse_imported(*first_doc_, (dir_ / t.results).string(), "tune session");
      } catch (const Error&) {
        first_doc_.reset();
      }
    }
  }
  return first_doc_;
}

FingerprintFacts Session::fingerprint(const std::optional<FingerprintFacts>& journaled) {
  if (journaled && std::all_of(journaled->nodes.begin(), journaled->nodes.end(),
                               [](const NodeFingerprint& n) { return !n.hash.empty(); }))
    return *journaled;  // a resumed session does not probe again, unless a probe failed: then the same way
  FingerprintFacts f;
  if (o_.sim) {  // no node was measured: the cluster is the --sim-cluster file
    f.source = "sim";
    f.probed = utc_now_iso();
  } else if (!o_.topo.root.empty()) {
    f = probe_topo_root(o_.topo.root);
  } else {
    NodeProbe probe;
    probe.launcher = o_.launcher;
    probe.railkit = o_.topo.railkit.empty() ? (self_exe_dir() / "railkit").string() : o_.topo.railkit;
    probe.dir = dir_;
    probe.kill_grace_s = o_.kill_grace_s;
    const auto doc = cluster_doc();
    try {
      f = probe_nodes(probe, doc ? doc->run.hosts : std::vector<std::string>{}, envp_);
    } catch (const InterruptedError& e) {
      interrupted(e.signal(), "[topology]");
    }
  }
  append_journal(journal_, to_json(f));
  return f;
}

TuneOutcome Session::finish(const std::vector<Config>& candidates, const std::optional<FingerprintFacts>& journaled) {
  SessionEvidence e;
  e.trials = trials_;
  e.candidates = candidates;
  e.runs = runs_;
  e.fingerprint = fingerprint(journaled);
  e.cluster_doc = cluster_doc();
  for (const auto& t : trials_) {
    if (t.proposal.config == baseline_config(o_.space) && t.objective) e.baseline_objective_GBps = *t.objective;
    if (t.objective) e.best_objective_GBps = std::max(e.best_objective_GBps, *t.objective);
  }
  const FingerprintVerdict v = judge(e.fingerprint);
  if (!v.problem.empty() && e.fingerprint.source != "sim")
    say("railkit tune: warning: " + v.problem + "; the profile records no fingerprint");
  TuneOutcome out;
  out.profile = build_profile(o_, e, utc_now_iso());
  out.profile_path = dir_ / "profile.json";
  write_profile(out.profile_path, *out.profile);
  append_journal(journal_, to_json(DoneRecord{"profile.json", out.profile->evidence.validated, utc_now_iso()}));
  out.best_objective_GBps = e.best_objective_GBps;
  out.baseline_objective_GBps = e.baseline_objective_GBps;
  out.emit_ompi_rules = o_.emit_ompi_rules;
  return out;
}

TuneOutcome Session::run(const JournalRecords& earlier) {
  const InterruptHold hold;  // a Ctrl-C between two trials ends the next one as interrupted
  replay(earlier.trials);
  runs_ = earlier.validations;
  if (has_dcqcn_) {  // an interrupted session may have left the NICs at a trial's values
    std::string err;
    if (!restore_dcqcn(err)) throw IoError(err);
  }
  const std::size_t replayed = trials_.size();
  if (const auto doc = cluster_doc()) check_reach(*doc, "an earlier trial");
  search();
  const std::vector<Config> candidates = choose_candidates(o_.space, trials_);
  if (candidates.empty()) {
    finish_dcqcn();
    throw Error(ErrorCode::CheckFailed, fmt::format("none of the {} trials succeeded (see {})", trials_.size(), journal_.string()));
  }
  if (o_.validate && !earlier.done) validate(candidates);
  finish_dcqcn();
  TuneOutcome out = finish(candidates, earlier.topology);
  out.trials_total = static_cast<int>(trials_.size());
  out.trials_run = static_cast<int>(trials_.size() - replayed);
  for (const auto& t : trials_) {
    out.trials_failed += t.status != TrialStatus::Ok;
    out.trials_infeasible += t.infeasible;
  }
  return out;
}

}  // namespace railkit::tuner
