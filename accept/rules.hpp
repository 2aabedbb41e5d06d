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
  bool pass = true;
  std::string rule;       ///< "profile" | "suite" | "peers" | "none (reported)"
  std::string expected;   ///< ">= 12.30 GB/s (0.9 x peers' median 13.67)"
  std::optional<double> expected_GBps;
};

/// Against the suite's threshold for (stage, coll, bytes) when there is one, else against the
/// median of `peers` (below fraction x median fails), else no rule (passes, "none (reported)").
Judgement judge(const AcceptSuite& suite, std::string_view stage, std::string_view coll, std::uint64_t bytes,
                double measured_GBps, const std::vector<double>& peers);

/// Against a profile expectation: passes at or above busbw x (1 - tolerance).
Judgement judge_expectation(const ProfileExpectation& e, double measured_GBps);

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
