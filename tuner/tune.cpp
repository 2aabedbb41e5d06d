#include "tuner/tune.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <ostream>
#include <set>

#include <fmt/format.h>

#include "core/atomic_file.hpp"
#include "core/clock.hpp"
#include "core/error.hpp"
#include "core/launch.hpp"
#include "core/results.hpp"
#include "core/stats.hpp"
#include "core/units.hpp"
#include "core/version.hpp"
#include "topology/analyze.hpp"
#include "topology/probe.hpp"
#include "tuner/journal.hpp"
#include "tuner/strategy.hpp"

namespace railkit::tuner {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;
using ojson = nlohmann::ordered_json;

constexpr std::string_view kCollNames[] = {"all_reduce", "all_gather", "reduce_scatter", "broadcast",
                                           "reduce", "alltoall", "sendrecv"};

/// Removes every occurrence of an option (and its value) from args; returns the last value.
std::optional<std::string> take_option(std::vector<std::string>& args, std::initializer_list<std::string_view> names) {
  std::optional<std::string> value;
  std::vector<std::string> kept;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    bool matched = false;
    for (auto n : names) {
      if (a == n) {
        if (i + 1 >= args.size()) throw UsageError(std::string(n) + ": missing value in the bench arguments");
        value = args[++i];
        matched = true;
        break;
      }
      if (n.size() == 2 && a.size() > 2 && a.rfind(n, 0) == 0 && a[1] != '-') {  // -n5, as CLI11 reads it
        value = a.substr(2);
        matched = true;
        break;
      }
      const std::string eq = std::string(n) + "=";
      if (n.size() > 2 && a.rfind(eq, 0) == 0) {  // --iters=20
        value = a.substr(eq.size());
        matched = true;
        break;
      }
    }
    if (!matched) kept.push_back(a);
  }
  args = std::move(kept);
  return value;
}

std::vector<std::string> split_commas(const std::string& s) {
  std::vector<std::string> out;
  size_t p = 0;
  while (p <= s.size()) {
    const size_t c = s.find(',', p);
    std::string item = s.substr(p, c == std::string::npos ? std::string::npos : c - p);
    if (!item.empty()) out.push_back(item);
    if (c == std::string::npos) break;
    p = c + 1;
  }
  return out;
}

json buckets_json(const std::map<BucketKey, double>& b) {
  json a = json::array();
  for (const auto& [k, v] : b) a.push_back({{"coll", k.coll}, {"bytes", k.lower_bytes}, {"busbw_GBps", v}});
  return a;
}

std::map<BucketKey, double> buckets_from(const json& a) {
  std::map<BucketKey, double> b;
  if (!a.is_array()) return b;
  for (const auto& x : a) b[{x.at("coll").get<std::string>(), x.at("bytes").get<std::uint64_t>()}] = x.at("busbw_GBps").get<double>();
  return b;
}

json sizes_json(const std::map<std::pair<std::string, std::uint64_t>, double>& s) {
  json a = json::array();
  for (const auto& [k, v] : s) a.push_back({{"coll", k.first}, {"bytes", k.second}, {"busbw_GBps", v}});
  return a;
}

std::map<std::pair<std::string, std::uint64_t>, double> sizes_from(const json& a) {
  std::map<std::pair<std::string, std::uint64_t>, double> s;
  if (!a.is_array()) return s;
  for (const auto& x : a) s[{x.at("coll").get<std::string>(), x.at("bytes").get<std::uint64_t>()}] = x.at("busbw_GBps").get<double>();
  return s;
}

json launcher_to_json(const LauncherOptions& l) {
  return json{{"kind", launch::launcher_name(l.kind)}, {"np", l.np}, {"ppn", l.ppn}, {"hostfile", l.hostfile}, {"args", l.args},
              {"as_root", l.as_root}, {"cpus", l.cpus}};
}

LauncherOptions launcher_from_json(const json& j) {
  LauncherOptions l;
  l.kind = launch::parse_launcher(j.at("kind").get<std::string>());
  l.np = j.at("np").get<int>();
  l.ppn = j.at("ppn").get<int>();
  l.hostfile = j.at("hostfile").get<std::string>();
  l.args = j.at("args").get<std::vector<std::string>>();
  l.as_root = j.at("as_root").get<bool>();
  l.cpus = j.at("cpus").get<int>();
  return l;
}

ojson session_json(const TuneOptions& o, const std::string& created, const BucketWeights& weights) {
  ojson j;
  j["type"] = "session";
  j["schema"] = kJournalSchema;
  j["created"] = created;
  j["railkit_version"] = kVersion;
  j["space"] = space_to_json(o.space);
  j["strategy"] = o.strategy;
  j["budget"] = o.budget;
  j["seed"] = o.seed;
  j["bench"] = o.bench;
  j["bench_args"] = o.bench_args;
  j["iters"] = o.iters;
  j["launcher"] = launcher_to_json(o.launcher);
  j["timeout_s"] = o.timeout_s;
  j["kill_grace_s"] = o.kill_grace_s;
  ojson w = ojson::array();
  for (const auto& [k, v] : weights) w.push_back({{"coll", k.coll}, {"bytes", k.lower_bytes}, {"weight", v}});
  j["weights"] = o.weights_path ? ojson{{"path", *o.weights_path}, {"buckets", w}} : ojson(nullptr);
  j["validation"] = {{"enabled", o.validate}, {"pairs", o.pairs}, {"iters", o.validate_iters},
                     {"max_regression", o.max_regression}, {"baseline_env", o.baseline_env}};
  j["dcqcn"] = o.dcqcn ? ojson{{"railkit", o.dcqcn->railkit}, {"root", o.dcqcn->root}, {"netdevs", o.dcqcn->netdevs},
                               {"priority", o.dcqcn->priority}}
                       : ojson(nullptr);
  j["emit_ompi_rules"] = o.emit_ompi_rules ? ojson(*o.emit_ompi_rules) : ojson(nullptr);
  j["profile_name"] = o.profile_name;
  return j;
}

TuneOptions options_from_session(const json& j, const fs::path& dir, BucketWeights& weights) {
  TuneOptions o;
  try {
    o.space = parse_space(j.at("space"), (dir / "journal.jsonl").string() + ": space");
    o.strategy = j.at("strategy").get<std::string>();
    o.budget = j.at("budget").get<int>();
    o.seed = j.at("seed").get<std::uint64_t>();
    o.bench = j.at("bench").get<std::string>();
    o.bench_args = j.at("bench_args").get<std::vector<std::string>>();
    o.iters = j.at("iters").get<int>();
    o.launcher = launcher_from_json(j.at("launcher"));
    o.timeout_s = j.at("timeout_s").get<double>();
    o.kill_grace_s = j.at("kill_grace_s").get<double>();
    if (!j.at("weights").is_null()) {
      o.weights_path = j["weights"].at("path").get<std::string>();
      for (const auto& b : j["weights"].at("buckets"))
        weights[{b.at("coll").get<std::string>(), b.at("bytes").get<std::uint64_t>()}] = b.at("weight").get<double>();
    }
    const json& v = j.at("validation");
    o.validate = v.at("enabled").get<bool>();
    o.pairs = v.at("pairs").get<int>();
    o.validate_iters = v.at("iters").get<int>();
    o.max_regression = v.at("max_regression").get<double>();
    o.baseline_env = v.at("baseline_env").get<std::map<std::string, std::string>>();
    if (!j.at("dcqcn").is_null()) {
      DcqcnOnNodes d;
      d.railkit = j["dcqcn"].at("railkit").get<std::string>();
      d.root = j["dcqcn"].at("root").get<std::string>();
      d.netdevs = j["dcqcn"].at("netdevs").get<std::vector<std::string>>();
      d.priority = j["dcqcn"].at("priority").get<int>();
      o.dcqcn = d;
    }
    if (!j.at("emit_ompi_rules").is_null()) o.emit_ompi_rules = j["emit_ompi_rules"].get<std::string>();
    o.profile_name = j.at("profile_name").get<std::string>();
  } catch (const json::exception& e) {
    throw UsageError((dir / "journal.jsonl").string() + ": its session line is incomplete: " + e.what());
  }
  o.out_dir = dir;
  return o;
}

/// A journaled status (ok, failed, timeout). Throws UsageError naming the journal.
TrialStatus status_from_json(const json& j, const std::string& source) {
  const auto st = j.is_string() ? parse_trial_status(j.get<std::string>()) : std::nullopt;
  if (!st || *st == TrialStatus::Interrupted) throw UsageError(source + ": unknown status " + j.dump());
  return *st;
}

/// One finished search trial, as journaled.
struct TrialRec {
  int id = 0;
  Proposal proposal;
  std::string label;
  TrialStatus status = TrialStatus::Interrupted;
  std::optional<double> objective;
  std::map<BucketKey, double> buckets;
  double elapsed_s = 0;
};

/// One finished validation run.
struct RunRec {
  int round = 0;
  std::string role;  ///< "baseline" | "candidate-1" ...
  TrialStatus status = TrialStatus::Interrupted;
  std::map<BucketKey, double> buckets;
  std::map<std::pair<std::string, std::uint64_t>, double> sizes;
  std::string backend;
};

/// The state of a session while it runs.
class Session {
 public:
  Session(TuneOptions o, BucketWeights w, char* const* envp, std::ostream& progress, bool tty, bool quiet)
      : o_(std::move(o)), weights_(std::move(w)), envp_(envp), progress_(progress), tty_(tty), quiet_(quiet) {
    dir_ = fs::absolute(o_.out_dir);
    journal_ = dir_ / "journal.jsonl";
    ctx_.launcher = o_.launcher;
    ctx_.bench = o_.bench;
    ctx_.out_dir = dir_;
    ctx_.timeout_s = o_.timeout_s;
    ctx_.kill_grace_s = o_.kill_grace_s;
    has_dcqcn_ = std::any_of(o_.space.knobs.begin(), o_.space.knobs.end(),
                             [](const Knob& k) { return k.tunable->scope == TunableScope::Dcqcn; });
  }

  TuneOutcome run(const std::vector<json>& earlier);

 private:
  struct Launched {
    TrialStatus status = TrialStatus::Interrupted;  ///< Interrupted: not recorded
    std::string results_rel;
    std::optional<ResultsDocument> doc;
    std::string error;
    double elapsed_s = 0;
    int signal = 0;
  };

  Launched launch(const std::string& base, const std::string& label, const Settings& s, int iters, bool validation,
                  const std::string& head);
  bool set_dcqcn(const std::map<std::string, std::string>& values, std::string& error);
  bool restore_dcqcn(std::string& error);
  /// Runs `railkit dcqcn VERB` once per node through the launcher.
  bool run_dcqcn(const std::string& verb, const std::map<std::string, std::string>& values, std::string& error);
  void say(const std::string& line);
  ProfileDocument make_profile(const std::vector<TrialRec>& trials, const std::vector<Config>& candidates,
                               const std::vector<RunRec>& runs, TuneOutcome& out);

  TuneOptions o_;
  BucketWeights weights_;
  char* const* envp_;
  std::ostream& progress_;
  bool tty_, quiet_;
  fs::path dir_, journal_;
  launch::LaunchContext ctx_;
  bool has_dcqcn_ = false;
  std::optional<ResultsDocument> first_doc_;  ///< a results document of this session, for the cluster facts
};

void Session::say(const std::string& line) {
  if (quiet_) return;
  if (tty_) progress_ << "\r\033[K";
  progress_ << line << "\n" << std::flush;
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

Session::Launched Session::launch(const std::string& base, const std::string& label, const Settings& s, int iters,
                                  bool validation, const std::string& head) {
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
  c.args = {"-n", std::to_string(iters)};
  launch::LaunchContext ctx = ctx_;
  ctx.bench_args = o_.bench_args;
  if (validation) {  // data checks on
    (void)take_option(ctx.bench_args, {"-c", "--check"});
    c.args.insert(c.args.end(), {"-c", "1"});
  }
  std::function<void(double)> tick;
  if (tty_ && !quiet_)
    tick = [&](double el) { progress_ << "\r\033[K" << head << " running " << format_duration(el) << std::flush; };
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
      if (!first_doc_) first_doc_ = out.doc;
    } catch (const Error& e) {
      out.status = TrialStatus::Failed;
      out.error = e.what();
    }
  }
  return out;
}

int max_fidelity(const std::vector<TrialRec>& trials) {
  int f = 1;
  for (const auto& t : trials) f = std::max(f, t.proposal.fidelity);
  return f;
}

std::string fmt_obj(std::optional<double> v) { return v ? fmt::format("{:.3f} GB/s", *v) : std::string("-"); }

TuneOutcome Session::run(const std::vector<json>& earlier) {
  TuneOutcome out;
  const Space& sp = o_.space;
  // Earlier lines of a resumed session.
  std::vector<TrialRec> trials;
  std::vector<RunRec> runs;
  bool done_before = false;
  auto strategy = make_strategy(o_.strategy, sp, o_.budget, o_.seed);
  for (const auto& line : earlier) {
    const std::string type = line.value("type", "");
    if (type == "trial") {
      TrialRec t;
      t.id = line.at("trial").get<int>();
      t.proposal.config = config_from_json(sp, line.at("config"), journal_.string() + ": trial " + std::to_string(t.id));
      t.proposal.fidelity = line.at("fidelity").get<int>();
      t.label = line.value("label", "");
      t.status = status_from_json(line.at("status"), journal_.string());
      if (!line.at("objective").is_null()) t.objective = line["objective"].get<double>();
      t.buckets = buckets_from(line.at("buckets"));
      t.elapsed_s = line.value("elapsed_s", 0.0);
      const auto p = strategy->propose();
      if (!p || !(*p == t.proposal))
        throw UsageError(fmt::format("--resume: {}: trial {} is not what strategy {} (seed {}) proposes on replay; "
                                     "the journal was edited or written by another railkit version",
                                     journal_.string(), t.id, o_.strategy, o_.seed));
      strategy->observe(*p, t.objective);
      trials.push_back(std::move(t));
    } else if (type == "validation") {
      RunRec r;
      r.round = line.at("round").get<int>();
      r.role = line.at("role").get<std::string>();
      r.status = status_from_json(line.at("status"), journal_.string());
      r.buckets = buckets_from(line.at("buckets"));
      r.sizes = sizes_from(line.at("sizes"));
      r.backend = line.value("backend", "");
      runs.push_back(std::move(r));
    } else if (type == "done") {
      done_before = true;
    }
  }
  if (!trials.empty() && !quiet_)
    say(fmt::format("railkit tune: {} trials already in {}, replayed", trials.size(), journal_.string()));
  if (has_dcqcn_) {  // an interrupted session may have left the NICs at a trial's values
    std::string err;
    if (!restore_dcqcn(err)) throw IoError(err);
  }

  auto finish_dcqcn = [&] {
    std::string err;
    if (has_dcqcn_ && !restore_dcqcn(err)) say("railkit tune: warning: " + err);
  };

  // ---- search
  const std::size_t total = o_.budget > 0 ? static_cast<std::size_t>(o_.budget) : config_count(sp);
  const auto t0 = std::chrono::steady_clock::now();
  double spent_s = 0;
  int ran_now = 0;
  std::optional<double> best;
  std::string best_label;
  for (const auto& t : trials)
    if (t.objective && (!best || *t.objective > *best)) {
      best = t.objective;
      best_label = t.label;
    }
  fs::create_directories(dir_ / "trials");
  while (true) {
    const auto p = strategy->propose();
    if (!p) break;
    TrialRec t;
    t.id = static_cast<int>(trials.size()) + 1;
    t.proposal = *p;
    t.label = config_label(sp, p->config);
    const int iters = o_.iters * p->fidelity;
    const std::string head = fmt::format("[{}/{}] {}{}", t.id, total, t.label, p->fidelity > 1 ? fmt::format(" (x{})", p->fidelity) : "");
    if (tty_ && !quiet_) progress_ << "\r\033[K" << head << " running" << std::flush;
    const Settings s = settings_of(sp, p->config);
    const auto started = utc_now_iso();
    Launched l = launch(fmt::format("trials/t{:04d}", t.id), t.label, s, iters, false, head);
    if (l.status == TrialStatus::Interrupted) {
      out.interrupted_by = l.signal;
      say(head + ": interrupted; not recorded");
      finish_dcqcn();
      out.trials_total = static_cast<int>(trials.size());
      return out;
    }
    t.status = l.status;
    t.elapsed_s = l.elapsed_s;
    std::string why = l.error;
    if (l.doc) {
      t.buckets = bucket_busbw(*l.doc).busbw_GBps;
      if (t.status == TrialStatus::Ok) {
        t.objective = objective_GBps(t.buckets, weights_);
        if (!t.objective) {
          t.status = TrialStatus::Failed;
          const bool zero = std::any_of(t.buckets.begin(), t.buckets.end(), [](const auto& kv) { return !(kv.second > 0); });
          why = zero ? "busbw 0 in a size bucket (with one rank nothing crosses between ranks)"
                     : "its results miss a size bucket of the weights";
        }
      }
    }
    ojson line;
    line["type"] = "trial";
    line["trial"] = t.id;
    line["config"] = config_to_json(sp, p->config);
    line["label"] = t.label;
    line["fidelity"] = p->fidelity;
    line["iters"] = iters;
    line["env"] = s.env;
    line["dcqcn"] = s.dcqcn;
    line["status"] = name(t.status);
    line["results"] = l.results_rel;
    line["objective"] = t.objective ? ojson(*t.objective) : ojson(nullptr);
    line["buckets"] = buckets_json(t.buckets);
    line["elapsed_s"] = t.elapsed_s;
    line["started"] = started;
    if (!why.empty()) line["error"] = why;
    append_journal(journal_, line);
    strategy->observe(*p, t.objective);
    ++ran_now;
    spent_s += t.elapsed_s;
    if (t.objective && (!best || *t.objective > *best)) {
      best = t.objective;
      best_label = t.label;
    }
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const std::size_t left = total > static_cast<std::size_t>(t.id) ? total - static_cast<std::size_t>(t.id) : 0;
    std::string msg = fmt::format("{}: {}", head, t.status == TrialStatus::Ok ? fmt_obj(t.objective) : std::string(name(t.status)) + " (" + why + ")");
    msg += fmt::format(" | best {} ({})", fmt_obj(best), best.has_value() ? best_label : "-");
    msg += fmt::format(" | {}", format_duration(elapsed));
    if (left > 0 && ran_now > 0) msg += ", ETA <= " + format_duration(elapsed / ran_now * static_cast<double>(left));
    say(msg);
    trials.push_back(std::move(t));
  }
  out.trials_total = static_cast<int>(trials.size());
  out.trials_run = ran_now;
  for (const auto& t : trials) out.trials_failed += t.status != TrialStatus::Ok;
  if (!best) {
    finish_dcqcn();
    throw Error(ErrorCode::CheckFailed, fmt::format("none of the {} trials succeeded (see {})", trials.size(),
                                                     journal_.string()));
  }

  // ---- candidates: the best single configuration, then per-bucket winners (at most two more)
  std::vector<Config> candidates;
  {
    const TrialRec* b = nullptr;
    for (const auto& t : trials)
      if (t.objective && (!b || *t.objective > *b->objective)) b = &t;
    candidates.push_back(b->proposal.config);
    std::map<Config, int> wins;
    std::set<BucketKey> keys;
    for (const auto& t : trials)
      for (const auto& [k, v] : t.buckets) keys.insert(k);
    for (const auto& k : keys) {
      const TrialRec* w = nullptr;
      for (const auto& t : trials) {
        if (t.status != TrialStatus::Ok) continue;
        auto it = t.buckets.find(k);
        if (it != t.buckets.end() && (!w || it->second > w->buckets.at(k))) w = &t;
      }
      if (w && w->proposal.config != candidates.front()) ++wins[w->proposal.config];
    }
    std::vector<std::pair<int, Config>> ranked;
    for (const auto& [c, n] : wins)
      if (c != baseline_config(sp)) ranked.emplace_back(n, c);
    std::stable_sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b2) { return a.first > b2.first; });
    for (size_t i = 0; i < ranked.size() && candidates.size() < 3; ++i) candidates.push_back(ranked[i].second);
  }
  for (const auto& t : trials)
    if (t.proposal.config == baseline_config(sp) && t.objective) out.baseline_objective_GBps = *t.objective;
  out.best_objective_GBps = *best;

  // ---- validation: baseline and candidates interleaved, round after round
  if (o_.validate && !done_before) {
    fs::create_directories(dir_ / "validation");
    const int viters = o_.validate_iters > 0 ? o_.validate_iters : 2 * o_.iters * max_fidelity(trials);
    Settings base_settings;
    base_settings.env = o_.baseline_env;
    std::set<std::pair<int, std::string>> have;
    for (const auto& r : runs) have.insert({r.round, r.role});
    const int nruns = o_.pairs * static_cast<int>(1 + candidates.size());
    int k = static_cast<int>(runs.size());
    for (int round = 1; round <= o_.pairs; ++round) {
      for (size_t ci = 0; ci <= candidates.size(); ++ci) {
        const std::string role = ci == 0 ? "baseline" : fmt::format("candidate-{}", ci);
        if (have.count({round, role})) continue;
        ++k;
        const Settings s = ci == 0 ? base_settings : settings_of(sp, candidates[ci - 1]);
        const std::string label = ci == 0 ? "baseline" : config_label(sp, candidates[ci - 1]);
        const std::string head = fmt::format("[validate {}/{}] round {} {} ({})", k, nruns, round, role, label);
        Launched l = launch(fmt::format("validation/r{:02d}-{}", round, role), label, s, viters, true, head);
        if (l.status == TrialStatus::Interrupted) {
          out.interrupted_by = l.signal;
          say(head + ": interrupted; not recorded");
          finish_dcqcn();
          return out;
        }
        RunRec r;
        r.round = round;
        r.role = role;
        r.status = l.status;
        if (l.doc) {
          const BucketValues bv = bucket_busbw(*l.doc);
          r.buckets = bv.busbw_GBps;
          r.sizes = bv.size_busbw_GBps;
          r.backend = l.doc->run.backend;
          if (l.doc->summary.errors > 0) {
            r.status = TrialStatus::Failed;
            l.error = fmt::format("{} wrong values in the data check", l.doc->summary.errors);
          }
        }
        ojson line;
        line["type"] = "validation";
        line["round"] = round;
        line["role"] = role;
        line["config"] = ci == 0 ? ojson(nullptr) : config_to_json(sp, candidates[ci - 1]);
        line["env"] = s.env;
        line["dcqcn"] = s.dcqcn;
        line["iters"] = viters;
        line["status"] = name(r.status);
        line["results"] = l.results_rel;
        line["backend"] = r.backend;
        line["buckets"] = buckets_json(r.buckets);
        line["sizes"] = sizes_json(r.sizes);
        line["elapsed_s"] = l.elapsed_s;
        if (!l.error.empty()) line["error"] = l.error;
        append_journal(journal_, line);
        say(fmt::format("{}: {}", head, r.status == TrialStatus::Ok ? fmt_obj(objective_GBps(r.buckets, weights_)) : std::string(name(r.status)) + " (" + l.error + ")"));
        runs.push_back(std::move(r));
      }
    }
  }
  finish_dcqcn();

  ProfileDocument prof = make_profile(trials, candidates, runs, out);
  const fs::path ppath = dir_ / "profile.json";
  write_profile(ppath, prof);
  append_journal(journal_, ojson{{"type", "done"}, {"profile", "profile.json"}, {"validated", prof.evidence.validated},
                                 {"finished", utc_now_iso()}});
  out.profile = std::move(prof);
  out.profile_path = ppath;
  out.emit_ompi_rules = o_.emit_ompi_rules;
  return out;
}

ProfileDocument Session::make_profile(const std::vector<TrialRec>& trials, const std::vector<Config>& candidates,
                                      const std::vector<RunRec>& runs, TuneOutcome& out) {
  const Space& sp = o_.space;
  ProfileDocument p;
  p.name = o_.profile_name.empty() ? dir_.filename().string() : o_.profile_name;
  p.created = utc_now_iso();
  // ---- cluster
  if (!first_doc_) {  // a resumed session that launched nothing: read a document it wrote before
    for (const auto& t : trials)
      if (t.status == TrialStatus::Ok) {
        const fs::path rp = dir_ / fmt::format("trials/t{:04d}.json", t.id);
        if (fs::exists(rp)) {
          try {
            first_doc_ = load_results(rp.string());
            break;
          } catch (const Error&) {
          }
        }
      }
  }
  if (first_doc_) {
    const RunInfo& ri = first_doc_->run;
    p.cluster.nodes = ri.nnodes;
    p.cluster.ranks = ri.nranks;
    p.cluster.ranks_per_node = ri.nnodes > 0 ? ri.nranks / ri.nnodes : 0;
    p.cluster.backend = ri.backend;
    p.cluster.backend_version = ri.backend_version;
    p.cluster.hosts = ri.hosts;
    if (first_doc_->observed.contains("ranks")) {
      std::set<std::string> gpus;
      for (const auto& r : first_doc_->observed["ranks"])
        if (r.contains("device") && r["device"].is_object() && r["device"].contains("name")) gpus.insert(r["device"]["name"].get<std::string>());
      p.cluster.gpu_models.assign(gpus.begin(), gpus.end());
    }
    for (const char* key : {"nccl_version", "cuda_driver_version", "cuda_runtime_version"})
      if (first_doc_->observed.contains(key)) p.cluster.extra[key] = first_doc_->observed[key];
  }
  try {  // this node's topology fingerprint
    topo::ProbeOptions po;
    topo::Topology t = topo::probe_node(po);
    topo::analyze(t, topo::LintOptions{});
    p.cluster.fingerprint = t.fingerprint.hash;
    std::set<std::string> nics;
    for (const auto& n : t.nics) nics.insert(n.model);
    p.cluster.nic_models.assign(nics.begin(), nics.end());
  } catch (const Error& e) {
    p.cluster.extra["fingerprint_error"] = e.what();
  }

  // ---- evidence from the validation runs
  /// round -> busbw of bucket k in the successful validation runs of `role`.
  auto series = [&](const std::string& role, const BucketKey& k) {
    std::map<int, double> v;
    for (const auto& r : runs)
      if (r.role == role && r.status == TrialStatus::Ok) {
        auto it = r.buckets.find(k);
        if (it != r.buckets.end() && it->second > 0) v[r.round] = it->second;
      }
    return v;
  };
  std::set<BucketKey> keys;
  for (const auto& r : runs)
    for (const auto& [k, v] : r.buckets) keys.insert(k);
  const int nc = static_cast<int>(candidates.size());
  struct Cmp {
    PairedRatio pr;
    std::vector<double> base, tuned;
  };
  // per candidate, per bucket
  std::vector<std::map<BucketKey, Cmp>> cmp(static_cast<size_t>(nc));
  for (int ci = 0; ci < nc; ++ci)
    for (const auto& k : keys) {
      const auto b = series("baseline", k);
      auto t = series(fmt::format("candidate-{}", ci + 1), k);
      Cmp c;
      for (const auto& [rd, x] : b)
        if (t.count(rd)) {
          c.base.push_back(x);
          c.tuned.push_back(t[rd]);
        }
      if (!c.base.empty()) {
        c.pr = paired_ratio(c.base, c.tuned);
        cmp[static_cast<size_t>(ci)][k] = std::move(c);
      }
    }
  int baseline_rounds = 0, best_rounds = 0;
  bool real_backend = true;
  for (const auto& r : runs) {
    if (r.status != TrialStatus::Ok) continue;
    if (r.role == "baseline") ++baseline_rounds;
    if (r.role == "candidate-1") ++best_rounds;
    if (r.backend != "mpi" && r.backend != "nccl") real_backend = false;
  }
  const int pairs_done = std::min(baseline_rounds, best_rounds);
  p.evidence.validated = o_.validate && real_backend && pairs_done >= std::min(o_.pairs, 2) && !keys.empty();
  p.evidence.validated_at = p.evidence.validated ? utc_now_iso() : "";
  p.evidence.railkit_version = kVersion;
  p.evidence.strategy = o_.strategy;
  p.evidence.space = sp.name;
  p.evidence.trials = static_cast<int>(trials.size());
  p.evidence.pairs = pairs_done;
  p.evidence.max_regression = o_.max_regression;
  p.evidence.baseline_env = o_.baseline_env;
  p.evidence.tune_dir = dir_.string();
  p.evidence.extra["search"] = {{"best_objective_GBps", out.best_objective_GBps},
                                {"baseline_objective_GBps", out.baseline_objective_GBps},
                                {"weights", o_.weights_path ? json(*o_.weights_path) : json("equal")},
                                {"iters", o_.iters},
                                {"seed", o_.seed},
                                {"budget", o_.budget},
                                {"launcher", launcher_to_json(o_.launcher)},
                                {"bench_args", o_.bench_args}};

  // ---- the single environment: the best candidate when it wins somewhere and regresses nowhere
  const Settings best_settings = settings_of(sp, candidates.front());
  bool best_ok = p.evidence.validated && !cmp.empty() && !cmp[0].empty();
  bool best_gains = false;
  if (best_ok)
    for (const auto& [k, c] : cmp[0]) {
      if (c.pr.ratio < 1.0 - o_.max_regression) best_ok = false;
      if (c.pr.lo > 1.0) best_gains = true;
    }
  const bool take_best = best_ok && best_gains;
  p.env = take_best ? best_settings.env : o_.baseline_env;
  if (take_best && !best_settings.dcqcn.empty())
    p.dcqcn[std::to_string(o_.dcqcn ? o_.dcqcn->priority : 3)] = best_settings.dcqcn;
  p.evidence.extra["single_env"] = {
      {"candidate", config_label(sp, candidates.front())},
      {"taken", take_best},
      {"reason", take_best ? "significant gain in at least one bucket, no bucket below 1 - max_regression"
                 : !p.evidence.validated ? "not validated"
                 : !best_gains ? "no bucket with a significant gain"
                               : "a bucket regresses more than max_regression"}};

  // ---- per-bucket decisions and evidence rows
  for (const auto& k : keys) {
    int chosen = -1;
    double chosen_ratio = 1;
    if (p.evidence.validated)
      for (int ci = 0; ci < nc; ++ci) {
        auto it = cmp[static_cast<size_t>(ci)].find(k);
        if (it == cmp[static_cast<size_t>(ci)].end() || static_cast<int>(it->second.base.size()) < 2) continue;
        if (it->second.pr.lo > 1.0 && it->second.pr.ratio > chosen_ratio) {
          chosen = ci;
          chosen_ratio = it->second.pr.ratio;
        }
      }
    ProfileDecision d;
    d.coll = k.coll;
    d.min_bytes = k.lower_bytes;
    d.max_bytes = k.lower_bytes * 4 - 1;
    const Cmp* c = nullptr;
    if (chosen >= 0) {
      c = &cmp[static_cast<size_t>(chosen)].at(k);
      const Settings s = settings_of(sp, candidates[static_cast<size_t>(chosen)]);
      d.env = s.env;
      d.config = config_label(sp, candidates[static_cast<size_t>(chosen)]);
      d.significant = true;
    } else {
      d.env = o_.baseline_env;
      d.config = "baseline";
      if (!cmp.empty()) {
        auto it = cmp[0].find(k);
        if (it != cmp[0].end()) c = &it->second;
      }
    }
    std::vector<double> bvals;
    for (const auto& [rd, x] : series("baseline", k)) bvals.push_back(x);
    d.baseline_busbw_GBps = bvals.empty() ? 0 : median(bvals);
    if (c && chosen >= 0) {
      d.busbw_GBps = median(c->tuned);
      d.ratio = c->pr.ratio;
      d.ratio_lo = c->pr.lo;
      d.ratio_hi = c->pr.hi;
    } else {
      d.busbw_GBps = d.baseline_busbw_GBps;
      if (c) {  // the best candidate's figures, for the record
        d.ratio = c->pr.ratio;
        d.ratio_lo = c->pr.lo;
        d.ratio_hi = c->pr.hi;
      }
    }
    p.decisions.push_back(d);
    if (c) {
      ProfileEvidenceRow row;
      row.coll = k.coll;
      row.bytes = k.lower_bytes;
      row.baseline_busbw_GBps = c->base;
      row.tuned_busbw_GBps = c->tuned;
      row.ratio = c->pr.ratio;
      row.ratio_lo = c->pr.lo;
      row.ratio_hi = c->pr.hi;
      p.evidence.rows.push_back(row);
    }
  }
  if (p.evidence.validated && p.evidence.rows.empty()) p.evidence.validated = false;

  // ---- expectations: per measured size, the busbw of the settings the profile's env holds
  const std::string env_role = take_best ? "candidate-1" : "baseline";
  std::map<std::pair<std::string, std::uint64_t>, std::vector<double>> per_size;
  for (const auto& r : runs)
    if (r.role == env_role && r.status == TrialStatus::Ok)
      for (const auto& [k, v] : r.sizes) per_size[k].push_back(v);
  for (const auto& [k, vals] : per_size) {
    if (vals.empty()) continue;
    ProfileExpectation e;
    e.coll = k.first;
    e.bytes = k.second;
    e.busbw_GBps = median(vals);
    const double lo = *std::min_element(vals.begin(), vals.end());
    const double spread = e.busbw_GBps > 0 ? 1.0 - lo / e.busbw_GBps : 0.0;
    e.tolerance = std::clamp(1.5 * spread, 0.05, 0.5);
    p.expectations.push_back(e);
  }
  return p;
}

void check_new_options(const TuneOptions& o) {
  if (std::find(std::begin(kStrategies), std::end(kStrategies), o.strategy) == std::end(kStrategies))
    throw UsageError("--strategy " + o.strategy + ": not one of grid, random, coordinate, halving");
  if (o.budget < 0) throw UsageError(fmt::format("--budget {}: must be >= 0", o.budget));
  if (o.iters < 1) throw UsageError(fmt::format("-n {}: must be >= 1", o.iters));
  if (o.pairs < 2) throw UsageError(fmt::format("--pairs {}: at least 2 pairs are needed for an interval (5 recommended)", o.pairs));
  if (o.max_regression < 0 || o.max_regression >= 1)
    throw UsageError(fmt::format("--max-regression {}: must be in [0, 1)", o.max_regression));
  if (o.timeout_s < 0) throw UsageError(fmt::format("--timeout-s {}: must be >= 0", o.timeout_s));
  o.launcher.validate();
  launch::check_bench_args(o.bench_args, "tune");
  if (::access(o.bench.c_str(), X_OK) != 0 || fs::is_directory(o.bench))
    throw UsageError("--bench " + o.bench + ": not an executable file");
  const bool has_dcqcn = std::any_of(o.space.knobs.begin(), o.space.knobs.end(),
                                     [](const Knob& k) { return k.tunable->scope == TunableScope::Dcqcn; });
  if (has_dcqcn && !o.dcqcn) throw UsageError("space " + o.space.name + " has DCQCN knobs: say where they apply (--dcqcn-root)");
  for (const auto& [k, v] : o.baseline_env)
    if (const Tunable* t = find_tunable(k)) validate_tunable_value(*t, v, "--baseline-env");
}

}  // namespace

std::optional<int> take_iters(std::vector<std::string>& bench_args) {
  for (const auto& a : bench_args)
    if (a.rfind("-J", 0) == 0 || a == "--output_file" || a.rfind("--output_file=", 0) == 0)
      throw UsageError("bench arguments: " + a + " is set by railkit tune itself");
  const auto v = take_option(bench_args, {"-n", "--iters"});
  if (!v) return std::nullopt;
  int n = 0;
  try {
    size_t used = 0;
    n = std::stoi(*v, &used);
    if (used != v->size()) throw std::invalid_argument("trailing");
  } catch (const std::exception&) {
    throw UsageError("bench arguments: -n " + *v + ": not an integer");
  }
  if (n < 1) throw UsageError("bench arguments: -n " + *v + ": must be >= 1");
  return n;
}

std::vector<std::string> bench_collectives(const std::vector<std::string>& bench_args) {
  std::vector<std::string> args = bench_args;
  const auto v = take_option(args, {"--coll"});
  if (!v) return {"all_reduce"};
  std::vector<std::string> out;
  for (const auto& c : split_commas(*v)) {
    if (c == "all") return {std::begin(kCollNames), std::end(kCollNames)};
    out.push_back(c);
  }
  return out;
}


TuneOutcome run_tune(const TuneOptions& opts, char* const* envp, std::ostream& progress, bool tty, bool quiet) {
  check_new_options(opts);
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
  BucketWeights weights;
  if (opts.weights_path) weights = load_weights(*opts.weights_path);
  const auto colls = bench_collectives(opts.bench_args);
  for (const auto& [k, w] : weights)
    if (std::find(colls.begin(), colls.end(), k.coll) == colls.end())
      throw UsageError(fmt::format("--weights {}: collective {} is not benchmarked (--coll)", *opts.weights_path, k.coll));
  TuneOptions o = opts;
  o.out_dir = fs::absolute(opts.out_dir);
  if (o.profile_name.empty()) o.profile_name = o.out_dir.filename().string();
  (void)make_strategy(o.strategy, o.space, o.budget, o.seed);  // bad budget or strategy: before anything is written
  append_journal(journal, session_json(o, utc_now_iso(), weights));
  if (!quiet) {
    progress << fmt::format("railkit tune: space {} ({} knobs, {} configurations), strategy {}, budget {}, seed {}; journal {}\n",
                            o.space.name, o.space.knobs.size(), config_count(o.space), o.strategy,
                            o.budget > 0 ? std::to_string(o.budget) : std::string("all"), o.seed, journal.string());
    progress.flush();
  }
  Session s(o, weights, envp, progress, tty, quiet);
  return s.run({});
}

TuneOutcome resume_tune(const fs::path& dir, char* const* envp, std::ostream& progress, bool tty, bool quiet) {
  const fs::path journal = dir / "journal.jsonl";
  if (!fs::is_directory(dir)) throw UsageError("--resume " + dir.string() + ": no such directory");
  if (!fs::exists(journal)) throw UsageError("--resume " + dir.string() + ": no journal.jsonl there (not a tuning directory)");
  const std::vector<json> lines = read_journal(journal);
  BucketWeights weights;
  TuneOptions o = options_from_session(lines.front(), fs::absolute(dir), weights);
  if (::access(o.bench.c_str(), X_OK) != 0)
    throw UsageError("--resume: the session's bench " + o.bench + " is not executable any more");
  if (!quiet) {
    progress << fmt::format("railkit tune: resuming {} (space {}, strategy {}, budget {}, seed {})\n", journal.string(),
                            o.space.name, o.strategy, o.budget > 0 ? std::to_string(o.budget) : std::string("all"), o.seed);
    progress.flush();
  }
  Session s(o, weights, envp, progress, tty, quiet);
  return s.run(std::vector<json>(lines.begin() + 1, lines.end()));
}

}  // namespace railkit::tuner
