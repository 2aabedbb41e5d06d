#pragma once
// The stages of `railkit accept` that launch railkit-bench: node, rail, pair, all and isolate.
// Each is a function of what it needs (the injected BenchRunner, the suite, the nodes and what
// earlier stages found) that returns what it found; run_stages (accept.hpp) calls them in order
// and adds their checks to the report. The topo and rdma stages are in topo_rdma.hpp.
#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "accept/reports.hpp"
#include "accept/rules.hpp"
#include "accept/runner.hpp"
#include "accept/schedule.hpp"
#include "accept/suite.hpp"
#include "core/profile.hpp"

namespace railkit::accept {

/// Stage names, in run order (run_stages, accept/accept.cpp), as the suite's `skip` spells them.
/// A stage is declared here (or in the header of its own file: topo_rdma.hpp, rdma_pair.hpp).
inline constexpr std::string_view kAcceptStages[] = {"topo", "rdma", "rdma-pair", "node", "rail", "pair", "all", "isolate"};

/// What one stage found and ran. Checks are in the order they were made; a cluster check names
/// its entity ("rail0", "all", "stage:pair" for a failed launch).
struct StageResult {
  std::vector<std::pair<std::size_t, AcceptCheck>> node_checks;      ///< (node index, check)
  std::vector<std::pair<std::string, AcceptCheck>> cluster_checks;   ///< (entity, check)
  std::vector<CommandRecord> commands;
  int launches = 0;          ///< as accept.json's `stages[].launches` counts them
  double bench_seconds = 0;  ///< time spent in railkit-bench launches
  std::string skipped;       ///< why the stage did not apply; "" when it ran
};

/// What every bench stage uses: the runner, the suite's rules and collectives, where progress goes.
struct BenchStages {
  BenchRunner& runner;
  const AcceptSuite& suite;
  std::ostream& progress;
  /// Every launch's environment: the profile's settings.env, as the job that uses it would run
  /// (an expectation measured with other settings gets its own launch with exactly those).
  std::map<std::string, std::string> env = {};
};

/// `--split node`: each node's busbw per collective against the other nodes'; a failed group is
/// confirmed by a second launch (it fails only when it fails both). Skipped with one rank per node.
StageResult node_stage(const BenchStages& s, std::size_t nodes, int ranks_per_node);

/// `--split rail`: each rail (rail0 ...) against the other rails, confirmed as node_stage; the
/// checks go to the cluster entities "rail<i>". Skipped with one node.
StageResult rail_stage(const BenchStages& s, std::size_t nodes, int ranks_per_node);

/// One pair of the pair stage with its round, judgement and confirmation.
struct PairRecord {
  int round = 0;
  PairResult pair;  ///< suspect: still below the bar after confirmation
  Judgement judgement;
  std::optional<double> confirm_GBps;  ///< busbw of the confirmation launch, when there was one
};

/// The fewest nodes the pair stage isolates with: with two, the only pair is all there is to
/// compare it with, and a slow pair of two cannot say which of them is slow.
inline constexpr int kPairStageMinNodes = 3;

/// What the pair stage found: every measured pair, judged against the median of all pairs.
struct PairStage : StageResult {
  std::vector<PairRecord> pairs;
  std::uint64_t bytes = 0;  ///< the size judged (the largest measured)
  std::string rule = "none";
  std::string expected = "-";
  std::vector<PairResult> results() const;
};

/// The circle method's rounds, one launch each (`--split nodes:0+3,1+2`), busbw of `coll`;
/// suspect pairs of a round are launched again (the round's other pairs sit out) and stay
/// suspect only when below the same bar again. `per_launch_s` (mean launch time so far, 0 =
/// unknown) feeds the estimate printed first. Skipped with one node; skipped below
/// kPairStageMinNodes with a skipped `pair.<coll>` check per node saying why.
PairStage pair_stage(const BenchStages& s, const std::vector<std::string>& names, const std::string& coll,
                     double per_launch_s);

/// accept.json's `pairs`: round, node names, coll, bytes, busbw, confirmation, expected, rule, verdict.
nlohmann::ordered_json pairs_json(const PairStage& p, const std::vector<std::string>& names, const std::string& coll);

/// What the whole-set stage found.
struct AllStage : StageResult {
  /// overall_verdict of its checks (entity "all"): Fail runs bisection when no pair is suspect;
  /// Skipped when nothing was measured.
  Verdict verdict = Verdict::Skipped;
};

/// The whole set: one launch of every rank at the bench sizes ("all"), then one launch per size
/// of the profile's expectations that it did not measure ("all-<bytes>": `-b S -e S --coll` the
/// expectations' collectives at S), so that every expectation is measured at its own size.
/// Judged: each expectation (rule "profile"; when the profile was measured at another scale than
/// `run` (other_scale), Verdict::Reported with rule "profile (other scale)": not applied), then
/// the largest size of each suite collective that the profile did not judge, by the suite's
/// thresholds or no rule (Verdict::Reported). Checks on entity "all".
AllStage all_stage(const BenchStages& s, const std::optional<ProfileDocument>& profile, const Scale& run);

/// What the isolation stage found.
struct IsolateStage : StageResult {
  nlohmann::ordered_json isolation = nlohmann::ordered_json::object();  ///< accept.json's `isolation`
};

/// Suspect pairs: isolate_pairs on them. None, but the whole set failed (`whole_set` Fail):
/// bisection (halves at once, into the slower half). Either way every node that had pairs gets
/// its `pair.<coll>` check (the median of its pairs; failed when convicted or on a guilty link).
/// Skipped ("nothing to isolate") when no pair is suspect and the whole set did not fail; the
/// reason says whether it passed, was judged by no rule, or was not measured.
IsolateStage isolate_stage(const BenchStages& s, const std::vector<std::string>& names, const std::string& coll,
                           const PairStage& pairs, Verdict whole_set);

}  // namespace railkit::accept
