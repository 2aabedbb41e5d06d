#pragma once
// From a session's measurements to its profile: the candidates the validation re-measures,
// and the profile (cluster, settings, per-bucket decisions, expectations, evidence) built from
// the journaled trials and validation runs, a results document of the session and the
// fingerprint facts. Pure functions: everything they use is an argument.
#include <optional>
#include <string>
#include <vector>

#include "core/profile.hpp"
#include "core/results.hpp"
#include "core/tunables.hpp"
#include "tuner/fingerprint.hpp"
#include "tuner/journal.hpp"
#include "tuner/space.hpp"
#include "tuner/tune.hpp"

namespace railkit::tuner {

/// What the validation re-measures against the baseline: the configuration with the best
/// objective, then up to two more that won the most buckets (best busbw among ok trials), never
/// the baseline. Empty when no trial has an objective.
std::vector<Config> choose_candidates(const Space& space, const std::vector<TrialRecord>& trials);

/// What a session measured: the input of its profile.
struct SessionEvidence {
  std::vector<TrialRecord> trials;
  std::vector<Config> candidates;          ///< choose_candidates(); the best first
  std::vector<ValidationRecord> runs;      ///< the validation runs, in journal order
  std::optional<ResultsDocument> cluster_doc;  ///< a results document of the session: the cluster's facts
  FingerprintFacts fingerprint;
  double best_objective_GBps = 0;
  double baseline_objective_GBps = 0;
};

/// Whether a session's measurements were simulated: it ran --backend sim (o.sim), or a validation
/// run or its cluster document says backend sim. Such a profile is never validated.
bool simulated_session(const TuneOptions& o, const SessionEvidence& e);

/// The knobs of a session (its space's knobs and fixed variables, and the baseline's settings)
/// that cannot change a measurement on `t` (core/tunables: knob_reach), each once.
std::vector<std::string> session_inert_knobs(const TuneOptions& o, const RunTarget& t);

/// What the session's measurements ran on: the backend of its validation runs (else of its
/// cluster document), and whether their traffic crossed nodes (the cluster document's nnodes > 1).
/// nullopt when nothing says.
std::optional<RunTarget> measured_target(const SessionEvidence& e);

/// The profile of a session with options `o` (its name, tune_dir and validation settings),
/// created and validated at `now` (UTC ISO 8601). `e.candidates` must not be empty. A session
/// with knobs that cannot reach measured_target() is never validated: `evidence.extra.inert`
/// says which knobs and why. A simulated session (simulated_session) is never validated either:
/// its decisions and settings come from the same A/B comparison on the simulator,
/// `evidence.extra.simulated` holds the simulation (cluster file and hash, fidelity, seeds), the
/// switch ECN winner goes to settings.switch_ecn (advice), and it has no expectations.
ProfileDocument build_profile(const TuneOptions& o, const SessionEvidence& e, const std::string& now);

/// The cluster of a profile: nodes, ranks, backend, hosts, GPU models and versions from a
/// results document; the fingerprint and NIC models from the facts when every probed node
/// agrees, else an empty fingerprint and `extra.fingerprint_error`; `extra.fingerprint_source`
/// (nodes | topo-root), `extra.topo_root`, and per node `extra.fingerprint_nodes`.
ProfileCluster build_cluster(const std::optional<ResultsDocument>& doc, const FingerprintFacts& fingerprint);

}  // namespace railkit::tuner
