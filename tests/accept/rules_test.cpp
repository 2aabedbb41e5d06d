// Judging: thresholds, peers and profile expectations; which busbw of a document is judged;
// groups of a split launch; failed rails explained by a failed node.
#include <gtest/gtest.h>

#include "accept/rules.hpp"
#include "results_util.hpp"

using namespace railkit::accept;
using railkit::Verdict;
using railkit::test::make_doc;
using railkit::test::Rec;

TEST(AcceptRules, Peers) {
  AcceptSuite s;
  Judgement j = judge(s, "node", "all_reduce", 1 << 20, 8.9, {10, 10, 1});
  EXPECT_EQ(j.verdict, Verdict::Fail);  // below 0.9 x median 10
  EXPECT_EQ(j.rule, "peers");
  EXPECT_NEAR(*j.expected_GBps, 9.0, 1e-12);
  EXPECT_EQ(j.expected, ">= 9.000 GB/s (0.9 x peers' median 10.000)");
  EXPECT_EQ(judge(s, "node", "all_reduce", 1 << 20, 9.0, {10, 10, 1}).verdict, Verdict::Pass);
  // An even number of peers: the mean of the middle two.
  EXPECT_NEAR(*judge(s, "node", "all_reduce", 1 << 20, 1, {4, 1, 3, 2}).expected_GBps, 0.9 * 2.5, 1e-12);
  // No threshold and no peer: measured, judged by no rule: reported, never a pass.
  j = judge(s, "all", "all_reduce", 1 << 20, 0.001, {});
  EXPECT_EQ(j.verdict, Verdict::Reported);
  EXPECT_FALSE(j.failed());
  EXPECT_EQ(j.rule, "none");
  EXPECT_EQ(j.expected, "-");
  EXPECT_FALSE(j.expected_GBps);
}

TEST(AcceptRules, SuiteThresholdWinsOverPeers) {
  AcceptSuite s;
  s.peer_fraction = 0.5;
  s.thresholds = {{"node", "all_reduce", 1 << 20, 20}, {"", "all_gather", 1024, 1}};
  Judgement j = judge(s, "node", "all_reduce", 1 << 20, 19, {1, 1});
  EXPECT_EQ(j.rule, "suite");
  EXPECT_EQ(j.verdict, Verdict::Fail);
  EXPECT_EQ(j.expected, ">= 20.000 GB/s");
  // Not the threshold's stage, or not its size: peers judge (0.5 x median).
  EXPECT_EQ(judge(s, "pair", "all_reduce", 1 << 20, 19, {30, 30}).rule, "peers");
  EXPECT_EQ(judge(s, "node", "all_reduce", 1 << 21, 19, {30, 30}).rule, "peers");
  // A threshold without a stage applies to every stage.
  EXPECT_EQ(judge(s, "all", "all_gather", 1024, 2, {}).rule, "suite");
}

TEST(AcceptRules, ProfileExpectation) {
  railkit::ProfileExpectation e{"all_reduce", 1 << 20, 10, 0.05};
  EXPECT_EQ(judge_expectation(e, 9.5).verdict, Verdict::Pass);
  EXPECT_EQ(judge_expectation(e, 9.4).verdict, Verdict::Fail);
  EXPECT_EQ(judge_expectation(e, 9.4).rule, "profile");
  EXPECT_EQ(judge_expectation(e, 9.4).expected, ">= 9.500 GB/s (10.000 - 5%)");
}

TEST(AcceptRules, MeasuredTakesTheLargestSizeOutOfPlaceFirst) {
  railkit::ResultsDocument d = make_doc("x", {{"all_reduce", 4096, false, 1.0, 0, "node0"},
                                              {"all_reduce", 16384, true, 2.0, 0, "node0"},
                                              {"all_reduce", 16384, false, 3.0, 0, "node0"},
                                              {"all_gather", 16384, true, 4.0, 0, "node1"},
                                              {"all_reduce", 16384, false, 5.0}});
  const Measured m = measured_of(d, "avg");
  EXPECT_EQ(m.bytes.at("all_reduce"), 16384u);
  EXPECT_EQ(m.of("node0", "all_reduce"), 3.0);  // out-of-place wins over in-place
  EXPECT_EQ(m.of("node1", "all_gather"), 4.0);  // in-place when that is all there is
  EXPECT_EQ(m.of("all", "all_reduce"), 5.0);    // no --split group: "all"
  EXPECT_FALSE(m.of("node1", "all_reduce"));
  // p50: busbw from the median iteration (loop time avg 10 us, median 5 us: twice the busbw).
  d.results[2].time_us.p50 = 5;
  EXPECT_EQ(measured_of(d, "p50").of("node0", "all_reduce"), 6.0);
  EXPECT_EQ(measured_of(d, "avg").of("node0", "all_reduce"), 3.0);
}

TEST(AcceptRules, AProfileMeasuredAtAnotherScaleDoesNotApply) {
  railkit::ProfileDocument p;
  p.name = "lab";
  p.cluster.nodes = 1;
  p.cluster.ranks = 4;
  p.cluster.ranks_per_node = 4;
  EXPECT_EQ(profile_scale(p).describe(), "1 node x 4 ranks per node (4 ranks)");
  EXPECT_FALSE(other_scale(p, Scale{1, 4, 4}));
  EXPECT_EQ(other_scale(p, Scale{2, 2, 4}),
            "profile 'lab' was measured on 1 node x 4 ranks per node (4 ranks); this run is 2 nodes x 2 ranks per "
            "node (4 ranks)");
  EXPECT_TRUE(other_scale(p, Scale{1, 8, 8}));  // more ranks on the same node count: another scale too
  // Only what the profile records is compared; a profile recording nothing has no scale to differ.
  p.cluster = {};
  p.cluster.ranks = 8;
  EXPECT_EQ(profile_scale(p).describe(), "8 ranks");
  EXPECT_FALSE(other_scale(p, Scale{4, 2, 8}));
  EXPECT_TRUE(other_scale(p, Scale{4, 1, 4}));
  p.cluster.ranks = 0;
  EXPECT_EQ(profile_scale(p).describe(), "an unrecorded scale");
  EXPECT_FALSE(other_scale(p, Scale{64, 8, 512}));
}

TEST(AcceptRules, GroupsAreJudgedAgainstTheOtherGroups) {
  AcceptSuite s;
  const Measured m = measured_of(make_doc("node", {{"all_reduce", 16384, false, 10, 0, "node0"},
                                                   {"all_reduce", 16384, false, 10, 0, "node1"},
                                                   {"all_reduce", 16384, false, 1, 0, "node2"},
                                                   {"all_gather", 16384, false, 10, 0, "node0"}}),
                                 s.statistic);
  const auto checks = judge_groups(s, "node", m, {"node0", "node1", "node2", "node3"});
  ASSERT_EQ(checks.size(), 4u);  // node3 measured nothing; all_gather only node0 (no peers)
  EXPECT_EQ(checks[0].group, "node0");
  EXPECT_EQ(checks[0].j.verdict, Verdict::Pass);
  EXPECT_EQ(checks[2].group, "node2");
  EXPECT_EQ(checks[2].j.verdict, Verdict::Fail);
  EXPECT_EQ(checks[2].j.expected, ">= 9.000 GB/s (0.9 x peers' median 10.000)");
  EXPECT_EQ(checks[3].coll, "all_gather");
  EXPECT_EQ(checks[3].j.rule, "none");
  EXPECT_EQ(checks[3].j.verdict, Verdict::Reported);
}

TEST(AcceptRules, FailedRailsAreExplainedByAFailedNode) {
  const AcceptCheck fail{"rail.all_reduce", "1.000 GB/s", 1.0, ">= 9", "peers", Verdict::Fail, "slow"};
  const AcceptCheck pass{"node.all_reduce", "10.000 GB/s", 10.0, ">= 9", "peers", Verdict::Pass, ""};
  AcceptReport r;
  r.nodes = {AcceptEntity{"a", {pass}}, AcceptEntity{"b", {pass}}};
  r.cluster = {AcceptEntity{"rail1", {fail}}, AcceptEntity{"stage:pair", {fail}}};
  explain_rails(r);  // no node failed: the rail's failure stands
  EXPECT_EQ(r.cluster[0].checks[0].verdict, Verdict::Fail);
  r.nodes[1].checks.push_back(AcceptCheck{"pair.all_reduce", "", 1.0, "", "peers", Verdict::Fail, ""});
  explain_rails(r);
  EXPECT_EQ(r.cluster[0].checks[0].verdict, Verdict::Explained);
  EXPECT_EQ(r.cluster[0].checks[0].evidence, "slow; explained by the failed node b");
  EXPECT_EQ(r.cluster[1].checks[0].verdict, Verdict::Fail);  // only rails are explained
  EXPECT_EQ(r.cluster[0].verdict(), Verdict::Pass);
  r.nodes[0].checks.push_back(AcceptCheck{"node.all_reduce", "", 1.0, "", "peers", Verdict::Fail, ""});
  r.cluster.push_back(AcceptEntity{"rail0", {fail}});
  explain_rails(r);
  EXPECT_EQ(r.cluster[2].checks[0].evidence, "slow; explained by the failed nodes a, b");
}
