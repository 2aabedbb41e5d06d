#pragma once
// How `railkit accept` judges a measurement: the suite's absolute thresholds, the median of the
// peers, a profile's expectation; which busbw of a results document is judged; and how a failed
// rail is explained by a failed node. Pure functions.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "accept/reports.hpp"
#include "accept/suite.hpp"
#include "core/profile.hpp"
#include "core/results.hpp"

namespace railkit::accept {

/// How one measurement was judged.
struct Judgement {
  Verdict verdict = Verdict::Reported;  ///< Pass | Fail; Reported when no rule judged it
  std::string rule;       ///< "profile" | "suite" | "peers" | "none"
  std::string expected;   ///< ">= 12.30 GB/s (0.9 x peers' median 13.67)"
  std::optional<double> expected_GBps;
  bool failed() const { return verdict == Verdict::Fail; }
};

/// Against the suite's threshold for (stage, coll, bytes) when there is one, else against the
/// median of `peers` (below fraction x median fails), else no rule: Verdict::Reported, rule
/// "none", expected "-" (measured, never a pass).
Judgement judge(const AcceptSuite& suite, std::string_view stage, std::string_view coll, std::uint64_t bytes,
                double measured_GBps, const std::vector<double>& peers);

/// Against a profile expectation: passes at or above busbw x (1 - tolerance).
Judgement judge_expectation(const ProfileExpectation& e, double measured_GBps);

/// The scale of a run or a profile: nodes and ranks per node (0 = not recorded).
struct Scale {
  int nodes = 0;
  int ranks_per_node = 0;
  int ranks = 0;
  /// "1 node x 4 ranks (4 ranks)", "4 nodes x 2 ranks (8 ranks)"; parts not recorded are left out.
  std::string describe() const;
};

/// The scale a profile was measured at (its `cluster` block).
Scale profile_scale(const ProfileDocument& p);

/// Why a profile's expectations do not apply to a run at `run`: the profile records a scale
/// (nodes, ranks per node, ranks; each figure it records) that differs. nullopt when they agree
/// or the profile records none. Same rule as the NCCL tuner plugin's: a profile measured at
/// another scale is no evidence for this one.
std::optional<std::string> other_scale(const ProfileDocument& p, const Scale& run);

/// busbw at the largest size of each (group, coll) of a results document: out-of-place when
/// measured, else in-place. Results without a --split group are the group "all".
struct Measured {
  std::map<std::string, std::map<std::string, double>> busbw;  ///< group -> coll -> GB/s
  std::map<std::string, std::uint64_t> bytes;                  ///< coll -> largest size
  /// busbw of `coll` in `group`, when measured.
  std::optional<double> of(const std::string& group, const std::string& coll) const;
};

/// `statistic` "p50": busbw from the median iteration; "avg": from the loop time (the document's busbw).
Measured measured_of(const ResultsDocument& doc, const std::string& statistic);

/// One group's check of a split launch (node, rail), before confirmation.
struct GroupCheck {
  std::string group, coll;
  double busbw_GBps = 0;
  Judgement j;
};

/// Judges every group of a split launch, per suite collective in suite order, against the suite
/// or its peers (the other groups' busbw of that collective).
std::vector<GroupCheck> judge_groups(const AcceptSuite& suite, std::string_view stage, const Measured& m,
                                     const std::vector<std::string>& groups);

/// "12.345 GB/s".
std::string format_GBps(double v);

/// A failed rail is explained when a node failed (every node has a rank on every rail): its
/// failed checks become Verdict::Explained, naming the failed nodes.
void explain_rails(AcceptReport& r);

}  // namespace railkit::accept
