#include "tuner/evidence.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include <fmt/format.h>

#include "core/stats.hpp"
#include "core/strings.hpp"
#include "core/tunables.hpp"
#include "core/version.hpp"
#include "launch/sim_bench.hpp"
#include "tuner/validate.hpp"

namespace railkit::tuner {
namespace {

using json = nlohmann::json;

const TrialRecord* best_trial(const std::vector<TrialRecord>& trials) {
  const TrialRecord* b = nullptr;
  for (const auto& t : trials)
    if (t.objective && (!b || *t.objective > *b->objective)) b = &t;
  return b;
}

/// The paired comparison of one candidate with the baseline in one bucket.
struct Cmp {
  PairedRatio pr;
  std::vector<int> rounds;          ///< the rounds both measured, in order
  std::vector<double> base, tuned;  ///< per such round
};

/// round -> busbw of bucket k in the successful validation runs of `role`.
std::map<int, double> series(const std::vector<ValidationRecord>& runs, const std::string& role, const BucketKey& k) {
  std::map<int, double> v;
  for (const auto& r : runs)
    if (r.role == role && r.status == TrialStatus::Ok) {
      auto it = r.buckets.find(k);
      if (it != r.buckets.end() && it->second > 0) v[r.round] = it->second;
    }
  return v;
}

/// The validation's comparisons: every bucket measured, and per candidate the buckets where
/// it and the baseline have a round in common.
struct Comparisons {
  std::set<BucketKey> keys;
  std::vector<std::map<BucketKey, Cmp>> per_candidate;
};

Comparisons compare_runs(const std::vector<ValidationRecord>& runs, std::size_t ncandidates) {
  Comparisons c;
  for (const auto& r : runs)
    for (const auto& [k, v] : r.buckets) c.keys.insert(k);
  c.per_candidate.resize(ncandidates);
  for (std::size_t ci = 0; ci < ncandidates; ++ci)
    for (const auto& k : c.keys) {
      const auto b = series(runs, validation_role(0), k);
      const auto t = series(runs, validation_role(ci + 1), k);
      Cmp x;
      for (const auto& [round, v] : b)
        if (auto it = t.find(round); it != t.end()) {
          x.rounds.push_back(round);
          x.base.push_back(v);
          x.tuned.push_back(it->second);
        }
      if (!x.base.empty()) {
        x.pr = paired_ratio(x.base, x.tuned);
        c.per_candidate[ci][k] = std::move(x);
      }
    }
  return c;
}

/// Whether a simulated gain is more than the seeds' spread: the interval above 1 and every seed
/// gaining. A gain some seeds do not show is noise (issue 29).
bool gain_beyond_seed_spread(const Cmp& x) {
  if (x.pr.lo <= 1.0 || x.base.empty()) return false;
  for (std::size_t i = 0; i < x.base.size(); ++i)
    if (x.tuned[i] <= x.base[i]) return false;
  return true;
}

/// A significant gain: the interval above 1, and on the simulator on every held-out seed too.
bool significant_gain(const Cmp& x, bool simulated) { return simulated ? gain_beyond_seed_spread(x) : x.pr.lo > 1.0; }

/// Per bucket, the best candidate against the baseline seed by seed: each held-out seed's busbw
/// and ratio, the spread of the ratios, how many seeds gain, and the verdict.
json seed_spread_json(const std::vector<ValidationRecord>& runs, const Comparisons& c) {
  json out = json::array();
  if (c.per_candidate.empty()) return out;
  std::map<int, std::uint64_t> seed_of_round;
  for (const auto& r : runs)
    if (r.sim_seed) seed_of_round[r.round] = *r.sim_seed;
  for (const auto& [k, x] : c.per_candidate[0]) {  // compare_runs keeps buckets with a round in common only
    json seeds = json::array();
    int gains = 0;
    double lo = INFINITY, hi = 0;
    for (std::size_t i = 0; i < x.rounds.size(); ++i) {
      const double ratio = x.tuned[i] / x.base[i];
      gains += ratio > 1.0 ? 1 : 0;
      lo = std::min(lo, ratio);
      hi = std::max(hi, ratio);
      const auto seed = seed_of_round.find(x.rounds[i]);
      seeds.push_back({{"round", x.rounds[i]}, {"seed", seed != seed_of_round.end() ? json(seed->second) : json(nullptr)},
                       {"baseline_busbw_GBps", x.base[i]}, {"best_busbw_GBps", x.tuned[i]}, {"ratio", ratio}});
    }
    const int n = static_cast<int>(seeds.size());
    const std::string verdict =
        gain_beyond_seed_spread(x) ? "gain beyond the seed spread"
        : (x.pr.hi < 1.0 && gains == 0) ? "loss beyond the seed spread"
                                         : fmt::format("noise: within the seed spread (gain in {} of {} seeds)", gains, n);
    out.push_back({{"coll", k.coll}, {"bucket_lower_bytes", k.lower_bytes}, {"seeds", seeds}, {"ratio_min", lo},
                   {"ratio_max", hi}, {"seeds_with_gain", gains}, {"ratio", x.pr.ratio},
                   {"ci95", {x.pr.lo, x.pr.hi}}, {"verdict", verdict}});
  }
  return out;
}

/// What a simulated session's evidence says: the simulation (cluster file and hash, fidelity,
/// seeds) and that it is never validated.
json simulated_json(const TuneOptions& o, const SessionEvidence& e) {
  json s = o.sim ? json::parse(launch::to_json(*o.sim).dump()) : json{{"backend", "sim"}, {"simulated", true}};
  if (!s.contains("fidelity") || s["fidelity"].is_null()) {  // railkit-bench's default: what its documents say
    const std::string f = e.cluster_doc ? launch::simulated_fidelity(*e.cluster_doc) : "";
    s["fidelity"] = f.empty() ? json(nullptr) : json(f);
  }
  std::set<std::uint64_t> seeds;
  for (const auto& r : e.runs)
    if (r.sim_seed) seeds.insert(*r.sim_seed);
  s["validation_seeds"] = std::vector<std::uint64_t>(seeds.begin(), seeds.end());
  s["expectations"] = "none: simulated busbw is no expectation for a real fabric";
  s["reason"] = "simulated numbers can never validate a profile: try these settings on the real fabric with the same "
                "railkit tune command on the real backend";
  return s;
}

/// The evidence's header: what was searched and how, and whether the validation counts.
void fill_evidence(const TuneOptions& o, const SessionEvidence& e, const Comparisons& c, const std::string& now,
                   ProfileEvidence& ev) {
  int baseline_rounds = 0, best_rounds = 0;
  bool real_backend = true;
  for (const auto& r : e.runs) {
    if (r.status != TrialStatus::Ok) continue;
    if (r.role == validation_role(0)) ++baseline_rounds;
    if (r.role == validation_role(1)) ++best_rounds;
    if (r.backend != "mpi" && r.backend != "nccl") real_backend = false;
  }
  const int pairs_done = std::min(baseline_rounds, best_rounds);
  const bool simulated = simulated_session(o, e);
  // A simulated number can never validate a profile, whatever else holds (DESIGN.md).
  ev.validated = !simulated && o.validate && real_backend && pairs_done >= std::min(o.pairs, 2) && !c.keys.empty();
  if (simulated) {
    ev.extra["simulated"] = simulated_json(o, e);
    ev.extra["simulated"]["seed_spread"] = seed_spread_json(e.runs, c);
  }
  if (const auto target = measured_target(e)) {
    const auto inert = session_inert_knobs(o, *target);
    if (!inert.empty()) {
      ev.validated = false;
      std::vector<std::string> reaches;
      for (const auto& k : inert) reaches.push_back(k + ": " + reach_text(*knob_reach(k)));
      ev.extra["inert"] = {{"knobs", inert},
                           {"backend", target->backend},
                           {"crosses_fabric", target->crosses_fabric},
                           {"reaches", reaches},
                           {"reason", fmt::format("{} cannot reach the {} backend{}: the trials and the validation measured "
                                                  "noise; never validated",
                                                  join(inert, ", "), target->backend,
                                                  target->crosses_fabric ? "" : " on one node")}};
    }
  }
  ev.validated_at = ev.validated ? now : "";
  ev.railkit_version = kVersion;
  ev.strategy = o.strategy;
  ev.space = o.space.name;
  ev.trials = static_cast<int>(e.trials.size());
  ev.pairs = pairs_done;
  ev.max_regression = o.max_regression;
  ev.baseline_env = o.baseline_env;
  ev.tune_dir = o.out_dir.string();
  ev.extra["search"] = {{"best_objective_GBps", e.best_objective_GBps},
                        {"baseline_objective_GBps", e.baseline_objective_GBps},
                        {"weights", o.weights_path ? json(*o.weights_path) : json("equal")},
                        {"iters", o.iters},
                        {"seed", o.seed},
                        {"budget", o.budget},
                        {"launcher", launcher_to_json(o.launcher)},
                        {"bench_args", o.bench_args}};
}

/// The single environment: the best candidate when it wins somewhere and regresses nowhere,
/// else the baseline's. `decide`: the comparison may decide (validated, or compared on the
/// simulator). Returns whether the best candidate was taken.
bool choose_single_env(const TuneOptions& o, const std::vector<Config>& candidates, const Comparisons& c, bool decide,
                       ProfileDocument& p) {
  const Settings best = settings_of(o.space, candidates.front());
  const bool simulated = p.evidence.extra.contains("simulated");
  bool best_ok = decide && !c.per_candidate.empty() && !c.per_candidate[0].empty();
  bool best_gains = false;
  if (best_ok)
    for (const auto& [k, x] : c.per_candidate[0]) {
      if (x.pr.ratio < 1.0 - o.max_regression) best_ok = false;
      if (significant_gain(x, simulated)) best_gains = true;
    }
  const bool take = best_ok && best_gains;
  p.env = take ? best.env : o.baseline_env;
  const int priority = o.dcqcn ? o.dcqcn->priority : o.sim ? o.sim->nic_priority : 3;
  if (take && !best.dcqcn.empty()) p.dcqcn[std::to_string(priority)] = best.dcqcn;
  if (take) p.switch_ecn = best.switch_settings;  // advice for the switches; only a simulated session has them
  std::string reason = take ? "significant gain in at least one bucket, no bucket below 1 - max_regression"
                       : !decide ? (simulated ? "the simulated comparison is incomplete" : "not validated")
                       : !best_gains ? (simulated ? "no bucket whose gain exceeds the seed spread (evidence.simulated.seed_spread)"
                                                  : "no bucket with a significant gain")
                                     : "a bucket regresses more than max_regression";
  if (simulated) reason += " (on the simulator: never validated)";
  p.evidence.extra["single_env"] = {{"candidate", config_label(o.space, candidates.front())}, {"taken", take}, {"reason", reason}};
  return take;
}

/// The candidate whose interval in bucket k lies above 1 with the highest ratio (two rounds at
/// least; on the simulator also a gain on every seed), or -1.
int bucket_winner(const Comparisons& c, const BucketKey& k, bool simulated) {
  int chosen = -1;
  double chosen_ratio = 1;
  for (std::size_t ci = 0; ci < c.per_candidate.size(); ++ci) {
    auto it = c.per_candidate[ci].find(k);
    if (it == c.per_candidate[ci].end() || it->second.base.size() < 2) continue;
    if (significant_gain(it->second, simulated) && it->second.pr.ratio > chosen_ratio) {
      chosen = static_cast<int>(ci);
      chosen_ratio = it->second.pr.ratio;
    }
  }
  return chosen;
}

/// Bucket k's decision and (when compared) its evidence row. Returns the validation role whose
/// runs measured the decision's settings.
std::string decide_bucket(const TuneOptions& o, const SessionEvidence& e, const Comparisons& c, const BucketKey& k,
                          bool decide, ProfileDocument& p) {
  const int chosen = decide ? bucket_winner(c, k, p.evidence.extra.contains("simulated")) : -1;
  ProfileDecision d;
  d.coll = k.coll;
  d.min_bytes = k.lower_bytes;
  d.max_bytes = k.lower_bytes * 4 - 1;
  const Cmp* x = nullptr;
  const std::string role = validation_role(chosen >= 0 ? static_cast<std::size_t>(chosen) + 1 : 0);
  if (chosen >= 0) {
    const Config& cfg = e.candidates[static_cast<std::size_t>(chosen)];
    x = &c.per_candidate[static_cast<std::size_t>(chosen)].at(k);
    d.env = settings_of(o.space, cfg).env;
    d.config = config_label(o.space, cfg);
    d.significant = true;
  } else {
    d.env = o.baseline_env;
    d.config = "baseline";
    if (!c.per_candidate.empty())
      if (auto it = c.per_candidate[0].find(k); it != c.per_candidate[0].end()) x = &it->second;  // for the record
  }
  std::vector<double> base;
  for (const auto& [round, v] : series(e.runs, validation_role(0), k)) base.push_back(v);
  d.baseline_busbw_GBps = base.empty() ? 0 : median(base);
  d.busbw_GBps = chosen >= 0 ? median(x->tuned) : d.baseline_busbw_GBps;
  if (x) {
    d.ratio = x->pr.ratio;
    d.ratio_lo = x->pr.lo;
    d.ratio_hi = x->pr.hi;
    ProfileEvidenceRow row;
    row.coll = k.coll;
    row.bytes = k.lower_bytes;
    row.baseline_busbw_GBps = x->base;
    row.tuned_busbw_GBps = x->tuned;
    row.ratio = x->pr.ratio;
    row.ratio_lo = x->pr.lo;
    row.ratio_hi = x->pr.hi;
    p.evidence.rows.push_back(std::move(row));
  }
  p.decisions.push_back(std::move(d));
  return role;
}

/// Per measured size, the median busbw of the runs that measured the settings chosen there: the
/// role of the decision whose bucket holds the size (`roles`), else `env_role` (the settings the
/// profile's env holds); with a tolerance of 1.5x the measured spread clamped to [0.05, 0.5]. An
/// expectation measured with other settings than settings.env says which (env, config).
std::vector<ProfileExpectation> expectations(const std::vector<ValidationRecord>& runs, const ProfileDocument& p,
                                             const std::map<BucketKey, std::string>& roles, const std::string& env_role) {
  const auto role_of = [&](const std::pair<std::string, std::uint64_t>& size) {
    const auto it = roles.find(BucketKey{size.first, bucket_of(size.second)});
    return it == roles.end() ? env_role : it->second;
  };
  std::map<std::pair<std::string, std::uint64_t>, std::vector<double>> per_size;
  for (const auto& r : runs)
    if (r.status == TrialStatus::Ok)
      for (const auto& [k, v] : r.sizes)
        if (r.role == role_of(k)) per_size[k].push_back(v);
  std::vector<ProfileExpectation> out;
  for (const auto& [k, vals] : per_size) {
    ProfileExpectation x;
    x.coll = k.first;
    x.bytes = k.second;
    if (role_of(k) != env_role)
      for (const auto& d : p.decisions)
        if (d.coll == k.first && d.min_bytes <= k.second && k.second <= d.max_bytes) {
          x.env = d.env;
          x.config = d.config;
        }
    x.busbw_GBps = median(vals);
    const double lo = *std::min_element(vals.begin(), vals.end());
    const double spread = x.busbw_GBps > 0 ? 1.0 - lo / x.busbw_GBps : 0.0;
    x.tolerance = std::clamp(1.5 * spread, 0.05, 0.5);
    out.push_back(x);
  }
  return out;
}

void fill_fingerprint(const FingerprintFacts& f, ProfileCluster& c) {
  const FingerprintVerdict v = judge(f);
  c.fingerprint = v.hash;
  c.nic_models = v.nic_models;
  // The facts behind the hash, so that `railkit profile check` can name those that differ.
  if (!v.hash.empty())
    for (const auto& n : f.nodes)
      if (n.hash == v.hash && !n.facts.empty()) {
        c.fingerprint_facts = n.facts;
        break;
      }
  c.extra["fingerprint_source"] = f.source;
  if (!f.root.empty()) c.extra["topo_root"] = f.root;
  json nodes = json::array();
  for (const auto& n : f.nodes) {
    json x = {{"host", n.host}, {"fingerprint", n.hash.empty() ? json(nullptr) : json(n.hash)}};
    if (!n.error.empty()) x["error"] = n.error;
    nodes.push_back(std::move(x));
  }
  c.extra["fingerprint_nodes"] = std::move(nodes);
  if (!v.problem.empty()) c.extra["fingerprint_error"] = v.problem;
}

}  // namespace

bool simulated_session(const TuneOptions& o, const SessionEvidence& e) {
  if (o.sim) return true;
  for (const auto& r : e.runs)
    if (r.backend == "sim") return true;
  return e.cluster_doc && launch::is_simulated(*e.cluster_doc);
}

std::vector<std::string> session_inert_knobs(const TuneOptions& o, const RunTarget& t) {
  std::vector<std::string> names;
  for (const auto& k : o.space.knobs) names.push_back(k.name);
  for (const auto& [k, v] : o.space.fixed_env) names.push_back(k);
  for (const auto& [k, v] : o.baseline_env) names.push_back(k);
  return inert_knobs(names, t);
}

std::optional<RunTarget> measured_target(const SessionEvidence& e) {
  RunTarget t;
  for (const auto& r : e.runs)
    if (r.status == TrialStatus::Ok && !r.backend.empty()) {
      t.backend = r.backend;
      break;
    }
  if (t.backend.empty() && e.cluster_doc) t.backend = e.cluster_doc->run.backend;
  if (t.backend.empty()) return std::nullopt;
  t.crosses_fabric = e.cluster_doc && e.cluster_doc->run.nnodes > 1;
  if (e.cluster_doc) t.sim_fidelity = launch::simulated_fidelity(*e.cluster_doc);
  return t;
}

std::vector<Config> choose_candidates(const Space& space, const std::vector<TrialRecord>& trials) {
  const TrialRecord* best = best_trial(trials);
  if (!best) return {};
  std::vector<Config> out{best->proposal.config};
  std::set<BucketKey> keys;
  for (const auto& t : trials)
    for (const auto& [k, v] : t.buckets) keys.insert(k);
  std::map<Config, int> wins;
  for (const auto& k : keys) {
    const TrialRecord* w = nullptr;
    for (const auto& t : trials) {
      if (t.status != TrialStatus::Ok) continue;
      auto it = t.buckets.find(k);
      if (it != t.buckets.end() && (!w || it->second > w->buckets.at(k))) w = &t;
    }
    if (w && w->proposal.config != out.front()) ++wins[w->proposal.config];
  }
  std::vector<std::pair<int, Config>> ranked;
  for (const auto& [c, n] : wins)
    if (c != baseline_config(space)) ranked.emplace_back(n, c);
  std::stable_sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  for (std::size_t i = 0; i < ranked.size() && out.size() < 3; ++i) out.push_back(ranked[i].second);
  return out;
}

ProfileCluster build_cluster(const std::optional<ResultsDocument>& doc, const FingerprintFacts& fingerprint) {
  ProfileCluster c;
  if (doc) {
    const RunInfo& ri = doc->run;
    c.nodes = ri.nnodes;
    c.ranks = ri.nranks;
    c.ranks_per_node = ri.nnodes > 0 ? ri.nranks / ri.nnodes : 0;
    c.backend = ri.backend;
    c.backend_version = ri.backend_version;
    c.hosts = ri.hosts;
    if (doc->observed.contains("ranks")) {
      std::set<std::string> gpus;
      for (const auto& r : doc->observed["ranks"])
        if (r.contains("device") && r["device"].is_object() && r["device"].contains("name"))
          gpus.insert(r["device"]["name"].get<std::string>());
      c.gpu_models.assign(gpus.begin(), gpus.end());
    }
    for (const char* key : {"nccl_version", "cuda_driver_version", "cuda_runtime_version"})
      if (doc->observed.contains(key)) c.extra[key] = doc->observed[key];
  }
  fill_fingerprint(fingerprint, c);
  return c;
}

ProfileDocument build_profile(const TuneOptions& o, const SessionEvidence& e, const std::string& now) {
  ProfileDocument p;
  p.name = o.profile_name.empty() ? o.out_dir.filename().string() : o.profile_name;
  p.created = now;
  p.cluster = build_cluster(e.cluster_doc, e.fingerprint);
  const Comparisons c = compare_runs(e.runs, e.candidates.size());
  fill_evidence(o, e, c, now, p.evidence);
  // Decisions come from a validation on a real backend or, never validated, from the same A/B
  // comparison on the simulator (held-out seeds), so a simulated profile carries the settings to
  // try on the real fabric.
  const bool simulated = simulated_session(o, e);
  const bool decide = p.evidence.validated || (simulated && o.validate && p.evidence.pairs >= std::min(o.pairs, 2) &&
                                               !c.keys.empty() && !p.evidence.extra.contains("inert"));
  if (simulated) p.cluster.extra["sim_cluster"] = o.sim ? o.sim->cluster : std::string();
  const bool take_best = choose_single_env(o, e.candidates, c, decide, p);
  std::map<BucketKey, std::string> roles;
  for (const auto& k : c.keys) roles[k] = decide_bucket(o, e, c, k, decide, p);
  if (p.evidence.validated && p.evidence.rows.empty()) p.evidence.validated = false;
  if (simulated) p.evidence.validated = false;  // whatever the above said
  if (!simulated) p.expectations = expectations(e.runs, p, roles, validation_role(take_best ? 1 : 0));
  return p;
}

}  // namespace railkit::tuner
