// The bench stages over a fake railkit-bench (fake_bench.hpp): confirmation relaunches of the
// node and rail stages, the pair rounds and their confirmation, the whole set against a profile,
// isolation from pairs and bisection. Which launches run, with which --split, and what is concluded.
#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>

#include "accept/stages.hpp"
#include "fake_bench.hpp"

using namespace railkit::accept;
using railkit::Verdict;
using railkit::test::FakeBench;

namespace {

const std::vector<std::string> kNames{"h:0", "h:1", "h:2", "h:3"};

/// The fake, the suite and the stage inputs of 4 nodes of 2 ranks (or `nodes` x `rpn`).
struct Fixture {
  explicit Fixture(int nodes = 4, int rpn = 2) : bench(nodes, rpn) {}
  FakeBench bench;
  AcceptSuite suite;
  std::ostringstream progress;
  BenchStages stages() { return BenchStages{bench, suite, progress}; }
};

/// The checks of node `i` (by index) in a stage result.
std::vector<AcceptCheck> of_node(const StageResult& r, std::size_t i) {
  std::vector<AcceptCheck> out;
  for (const auto& [k, c] : r.node_checks)
    if (k == i) out.push_back(c);
  return out;
}

std::vector<std::string> names(int n) {
  std::vector<std::string> out;
  for (int i = 0; i < n; ++i) out.push_back("h:" + std::to_string(i));
  return out;
}

}  // namespace

// ---------------------------------------------------------------------------- node, rail

TEST(AcceptNodeStage, ACleanRunIsOneLaunch) {
  Fixture f;
  const StageResult r = node_stage(f.stages(), 4, 2);
  EXPECT_EQ(f.bench.names(), (std::vector<std::string>{"node"}));
  EXPECT_EQ(f.bench.calls[0].stage, "node");
  EXPECT_EQ(f.bench.calls[0].config.args, (std::vector<std::string>{"--split", "node"}));
  EXPECT_EQ(r.launches, 1);
  EXPECT_EQ(r.commands.size(), 1u);
  ASSERT_EQ(r.node_checks.size(), 8u);  // 4 nodes x 2 collectives, collective by collective
  EXPECT_EQ(r.node_checks[0].first, 0u);
  EXPECT_EQ(r.node_checks[0].second.check, "node.all_reduce");
  EXPECT_EQ(r.node_checks[4].second.check, "node.all_gather");
  for (const auto& [i, c] : r.node_checks) EXPECT_EQ(c.verdict, Verdict::Pass) << c.check;
  EXPECT_EQ(r.node_checks[0].second.evidence, "all_reduce inside the node at 16 KiB (--split node, group node0, p50 time)");
  EXPECT_TRUE(r.cluster_checks.empty());
}

TEST(AcceptNodeStage, ASlowNodeFailsBothLaunches) {
  Fixture f;
  f.bench.slow_ranks = {5};  // node 2
  const StageResult r = node_stage(f.stages(), 4, 2);
  EXPECT_EQ(f.bench.names(), (std::vector<std::string>{"node", "node-confirm"}));
  EXPECT_EQ(f.bench.split_of("node-confirm"), "node");
  EXPECT_EQ(r.launches, 2);
  EXPECT_NE(f.progress.str().find("node: a group is suspect; confirming with a second launch"), std::string::npos);
  for (const AcceptCheck& c : of_node(r, 2)) {
    EXPECT_EQ(c.verdict, Verdict::Fail);
    EXPECT_EQ(c.rule, "peers");
    EXPECT_NE(c.evidence.find("; confirmation launch: 1.000 GB/s (>= 9.000 GB/s (0.9 x peers' median 10.000))"),
              std::string::npos)
        << c.evidence;
  }
  for (std::size_t i : {0u, 1u, 3u})
    for (const AcceptCheck& c : of_node(r, i)) EXPECT_EQ(c.verdict, Verdict::Pass);
}

TEST(AcceptNodeStage, NoiseInTheFirstLaunchConvictsNobody) {
  Fixture f;
  f.bench.slow_in["node"] = {2};  // node 1, first launch only
  const StageResult r = node_stage(f.stages(), 4, 2);
  EXPECT_EQ(f.bench.names(), (std::vector<std::string>{"node", "node-confirm"}));
  for (const AcceptCheck& c : of_node(r, 1)) {
    EXPECT_EQ(c.verdict, Verdict::Pass);
    EXPECT_EQ(c.busbw_GBps, 1.0);  // the first launch's measurement is reported
    EXPECT_NE(c.evidence.find("confirmation launch: 10.000 GB/s"), std::string::npos);
    EXPECT_NE(c.evidence.find(": passed, the first launch was noise"), std::string::npos);
  }
}

TEST(AcceptNodeStage, FailedLaunchesAreClusterFailures) {
  Fixture f;
  f.bench.slow_ranks = {5};
  f.bench.failing = {"node-confirm"};
  const StageResult r = node_stage(f.stages(), 4, 2);
  ASSERT_EQ(r.cluster_checks.size(), 1u);
  EXPECT_EQ(r.cluster_checks[0].first, "stage:node");
  const AcceptCheck& c = r.cluster_checks[0].second;
  EXPECT_EQ(c.check, "node.launch");
  EXPECT_EQ(c.verdict, Verdict::Fail);
  EXPECT_EQ(c.evidence, "confirmation: exit code 1: rank 3: error: boom");
  // Without a confirmation the first launch's verdict stands.
  for (const AcceptCheck& n2 : of_node(r, 2)) EXPECT_EQ(n2.verdict, Verdict::Fail);

  Fixture g;
  g.bench.failing = {"node"};
  const StageResult first = node_stage(g.stages(), 4, 2);
  EXPECT_TRUE(first.node_checks.empty());
  ASSERT_EQ(first.cluster_checks.size(), 1u);
  EXPECT_EQ(first.cluster_checks[0].second.evidence, "exit code 1: rank 3: error: boom");
  EXPECT_EQ(first.launches, 1);
}

TEST(AcceptNodeStage, SkippedWithoutTwoRanksOrTwoNodes) {
  Fixture f;
  EXPECT_EQ(node_stage(f.stages(), 4, 1).skipped, "one rank per node: nothing to measure inside a node");
  EXPECT_EQ(rail_stage(f.stages(), 1, 2).skipped, "one node: a rail needs two");
  EXPECT_TRUE(f.bench.calls.empty());
}

TEST(AcceptRailStage, TheSlowRanksRailFailsOnTheClusterEntity) {
  Fixture f;
  f.bench.slow_ranks = {5};  // rank 1 of node 2: rail 1
  const StageResult r = rail_stage(f.stages(), 4, 2);
  EXPECT_EQ(f.bench.names(), (std::vector<std::string>{"rail", "rail-confirm"}));
  EXPECT_TRUE(r.node_checks.empty());
  ASSERT_EQ(r.cluster_checks.size(), 4u);  // 2 rails x 2 collectives
  for (const auto& [entity, c] : r.cluster_checks) {
    EXPECT_EQ(c.verdict, entity == "rail1" ? Verdict::Fail : Verdict::Pass) << entity << " " << c.check;
    EXPECT_TRUE(c.check == "rail.all_reduce" || c.check == "rail.all_gather");
  }
}

// ---------------------------------------------------------------------------- pair

TEST(AcceptPairStage, RoundsThenConfirmationOfTheSuspectPairsOnly) {
  Fixture f;
  f.bench.slow_ranks = {5};  // node 2: pairs 1+2 (round 0), 0+2 (round 1), 2+3 (round 2)
  const PairStage p = pair_stage(f.stages(), kNames, "all_reduce", 2.0);
  EXPECT_EQ(f.bench.names(), (std::vector<std::string>{"pair-round0", "pair-round1", "pair-round2", "pair-round0-confirm",
                                                       "pair-round1-confirm", "pair-round2-confirm"}));
  EXPECT_EQ(f.bench.split_of("pair-round0"), "nodes:0+3,1+2");
  EXPECT_EQ(f.bench.split_of("pair-round1"), "nodes:0+2,1+3");
  EXPECT_EQ(f.bench.split_of("pair-round0-confirm"), "nodes:1+2");  // the round's other pair sits out
  EXPECT_EQ(f.bench.split_of("pair-round2-confirm"), "nodes:2+3");
  EXPECT_NE(f.progress.str().find("pair stage: 4 nodes, 3 rounds of 2 concurrent pairs (circle method), estimated 6.0 s"),
            std::string::npos)
      << f.progress.str();
  ASSERT_EQ(p.pairs.size(), 6u);
  EXPECT_EQ(p.bytes, 16384u);
  EXPECT_EQ(p.rule, "peers");
  for (const PairRecord& pr : p.pairs) {
    const bool slow = pr.pair.a == 2 || pr.pair.b == 2;
    EXPECT_EQ(pr.pair.suspect, slow) << pr.pair.a << "+" << pr.pair.b;
    EXPECT_EQ(pr.confirm_GBps.has_value(), slow);
  }
  EXPECT_EQ(p.launches, 6);
  const auto j = pairs_json(p, kNames, "all_reduce");
  ASSERT_EQ(j.size(), 6u);
  EXPECT_EQ(j[1]["nodes"], nlohmann::ordered_json({"h:1", "h:2"}));
  EXPECT_EQ(j[1]["round"], 0);
  EXPECT_EQ(j[1]["verdict"], "suspect");
  EXPECT_EQ(j[1]["confirm_busbw_GBps"], 1.0);
  EXPECT_EQ(j[0]["verdict"], "pass");
  EXPECT_TRUE(j[0]["confirm_busbw_GBps"].is_null());
}

TEST(AcceptPairStage, ANoisyPairIsClearedByItsConfirmation) {
  Fixture f;
  f.bench.slow_in["pair-round1"] = {0};  // node 0 slow in round 1 only: pair 0+2
  const PairStage p = pair_stage(f.stages(), kNames, "all_reduce", 0);
  EXPECT_EQ(f.bench.names(), (std::vector<std::string>{"pair-round0", "pair-round1", "pair-round2", "pair-round1-confirm"}));
  EXPECT_EQ(f.bench.split_of("pair-round1-confirm"), "nodes:0+2");
  EXPECT_EQ(f.progress.str().find("estimated"), std::string::npos);  // no launch time known yet
  EXPECT_TRUE(std::none_of(p.pairs.begin(), p.pairs.end(), [](const PairRecord& pr) { return pr.pair.suspect; }));
  const auto noisy = std::find_if(p.pairs.begin(), p.pairs.end(),
                                  [](const PairRecord& pr) { return pr.pair.a == 0 && pr.pair.b == 2; });
  ASSERT_NE(noisy, p.pairs.end());
  EXPECT_EQ(noisy->pair.busbw_GBps, 1.0);
  EXPECT_EQ(noisy->confirm_GBps, 10.0);
  EXPECT_EQ(noisy->judgement.verdict, Verdict::Fail);  // the first judgement is kept for the record
}

TEST(AcceptPairStage, AFailedRoundIsAClusterFailureAndItsPairsAreMissing) {
  Fixture f;
  f.bench.failing = {"pair-round1"};
  const PairStage p = pair_stage(f.stages(), kNames, "all_reduce", 0);
  EXPECT_EQ(p.pairs.size(), 4u);
  ASSERT_EQ(p.cluster_checks.size(), 1u);
  EXPECT_EQ(p.cluster_checks[0].first, "stage:pair");
  EXPECT_EQ(p.cluster_checks[0].second.check, "pair.launch@round1");  // one check per lost launch
  EXPECT_EQ(p.cluster_checks[0].second.evidence, "round 1: exit code 1: rank 3: error: boom");
}

TEST(AcceptPairStage, OneNodeHasNoPair) {
  Fixture f(1, 2);
  const PairStage p = pair_stage(f.stages(), {"h:0"}, "all_reduce", 0);
  EXPECT_EQ(p.skipped, "one node: no pair");
  EXPECT_EQ(p.rule, "none");
  EXPECT_EQ(p.expected, "-");
  EXPECT_TRUE(f.bench.calls.empty());
}

TEST(AcceptPairStage, TwoNodesCannotIsolate) {
  Fixture f(2, 2);
  const PairStage p = pair_stage(f.stages(), {"h:0", "h:1"}, "all_reduce", 0);
  EXPECT_TRUE(f.bench.calls.empty());  // the only pair is not measured against itself
  EXPECT_TRUE(p.pairs.empty());
  EXPECT_EQ(p.skipped.rfind("2 nodes: the pair stage needs at least 3 nodes to isolate", 0), 0u) << p.skipped;
  ASSERT_EQ(p.node_checks.size(), 2u);
  for (std::size_t i : {0u, 1u}) {
    const AcceptCheck c = of_node(p, i).at(0);
    EXPECT_EQ(c.check, "pair.all_reduce");
    EXPECT_EQ(c.verdict, Verdict::Skipped);
    EXPECT_EQ(c.evidence, p.skipped);
  }
  // Three nodes isolate: 3 rounds, one node sitting out each.
  Fixture g(3, 2);
  const PairStage three = pair_stage(g.stages(), names(3), "all_reduce", 0);
  EXPECT_TRUE(three.skipped.empty());
  EXPECT_EQ(three.pairs.size(), 3u);
}

// ---------------------------------------------------------------------------- all

/// A profile measured at the fixture's scale (4 nodes x 2 ranks) unless told otherwise.
railkit::ProfileDocument lab_profile(int nodes = 4, int rpn = 2) {
  railkit::ProfileDocument prof;
  prof.name = "lab";
  prof.cluster.nodes = nodes;
  prof.cluster.ranks_per_node = rpn;
  prof.cluster.ranks = nodes * rpn;
  return prof;
}

const Scale kRun{4, 2, 8};

TEST(AcceptAllStage, ProfileExpectationsAtTheirOwnSizesThenTheSuite) {
  Fixture f;
  railkit::ProfileDocument prof = lab_profile();
  prof.expectations = {{"all_reduce", 16384, 5, 0.1},     // met, at the size the first launch measures
                       {"all_reduce", 1 << 20, 5, 0.1},   // a size the first launch does not measure
                       {"broadcast", 1 << 20, 5, 0.1},    // a collective the suite does not run
                       {"all_gather", 65536, 50, 0.1}};   // another size, not met
  AllStage a = all_stage(f.stages(), prof, kRun);
  // The profile's sizes are measured, one launch per size, with the collectives expected there.
  EXPECT_EQ(f.bench.names(), (std::vector<std::string>{"all", "all-65536", "all-1048576"}));
  EXPECT_TRUE(f.bench.calls[0].config.args.empty());
  EXPECT_EQ(f.bench.calls[1].config.args,
            (std::vector<std::string>{"-b", "65536", "-e", "65536", "--coll", "all_gather"}));
  EXPECT_EQ(f.bench.calls[2].config.args,
            (std::vector<std::string>{"-b", "1048576", "-e", "1048576", "--coll", "all_reduce,broadcast"}));
  EXPECT_EQ(a.launches, 3);
  EXPECT_EQ(a.verdict, Verdict::Fail);
  ASSERT_EQ(a.cluster_checks.size(), 5u);
  for (const auto& [entity, c] : a.cluster_checks) EXPECT_EQ(entity, "all");
  const AcceptCheck& met = a.cluster_checks[0].second;
  EXPECT_EQ(met.check, "all.all_reduce@16 KiB");
  EXPECT_EQ(met.rule, "profile");
  EXPECT_EQ(met.verdict, Verdict::Pass);
  EXPECT_EQ(met.evidence, "whole set, expectation of profile 'lab'");
  const AcceptCheck& mib = a.cluster_checks[1].second;
  EXPECT_EQ(mib.check, "all.all_reduce@1 MiB");
  EXPECT_EQ(mib.verdict, Verdict::Pass);
  EXPECT_EQ(mib.measured, "10.000 GB/s");
  EXPECT_EQ(a.cluster_checks[2].second.check, "all.broadcast@1 MiB");
  EXPECT_EQ(a.cluster_checks[2].second.verdict, Verdict::Pass);
  const AcceptCheck& gather64 = a.cluster_checks[3].second;
  EXPECT_EQ(gather64.check, "all.all_gather@64 KiB");
  EXPECT_EQ(gather64.verdict, Verdict::Fail);
  // all_reduce at 16 KiB was judged by the profile; all_gather at 16 KiB has no rule: reported.
  const AcceptCheck& gather = a.cluster_checks[4].second;
  EXPECT_EQ(gather.check, "all.all_gather@16 KiB");
  EXPECT_EQ(gather.rule, "none");
  EXPECT_EQ(gather.verdict, Verdict::Reported);
  EXPECT_EQ(gather.evidence, "whole set");
}

TEST(AcceptAllStage, AnExpectationSizeThatWasNotMeasuredIsSkipped) {
  Fixture f;
  f.bench.failing = {"all-1048576"};
  railkit::ProfileDocument prof = lab_profile();
  prof.expectations = {{"all_reduce", 1 << 20, 5, 0.1}};
  const AllStage a = all_stage(f.stages(), prof, kRun);
  ASSERT_EQ(a.cluster_checks.size(), 4u);  // the failed launch, the expectation, 2 suite collectives
  EXPECT_EQ(a.cluster_checks[0].first, "stage:all");
  EXPECT_EQ(a.cluster_checks[0].second.check, "all.launch@1 MiB");
  EXPECT_EQ(a.cluster_checks[0].second.evidence, "the profile's expectations at 1 MiB: exit code 1: rank 3: error: boom");
  const AcceptCheck& x = a.cluster_checks[1].second;
  EXPECT_EQ(x.check, "all.all_reduce@1 MiB");
  EXPECT_EQ(x.verdict, Verdict::Skipped);
  EXPECT_EQ(x.measured, "not measured");
  EXPECT_EQ(a.verdict, Verdict::Reported);  // the "all" entity: measured (16 KiB) but nothing judged
}

TEST(AcceptAllStage, AProfileOfAnotherScaleIsReportedNotApplied) {
  Fixture f;
  railkit::ProfileDocument prof = lab_profile(1, 4);
  prof.expectations = {{"all_reduce", 16384, 100, 0.1}};  // would fail if applied
  const AllStage a = all_stage(f.stages(), prof, kRun);
  EXPECT_EQ(a.verdict, Verdict::Reported);
  ASSERT_EQ(a.cluster_checks.size(), 2u);  // the expectation, then all_gather (no rule)
  const AcceptCheck& c = a.cluster_checks[0].second;
  EXPECT_EQ(c.check, "all.all_reduce@16 KiB");
  EXPECT_EQ(c.verdict, Verdict::Reported);
  EXPECT_EQ(c.rule, "profile (other scale)");
  EXPECT_EQ(c.expected, "not applied: >= 90.000 GB/s (100.000 - 10%)");
  EXPECT_EQ(c.measured, "10.000 GB/s");
  EXPECT_EQ(c.evidence,
            "whole set, expectation of profile 'lab': profile 'lab' was measured on 1 node x 4 ranks per node (4 "
            "ranks); this run is 4 nodes x 2 ranks per node (8 ranks): a profile measured at another scale is no "
            "evidence for this one, so its expectation (>= 90.000 GB/s (100.000 - 10%)) is not applied: reported");
  EXPECT_EQ(a.cluster_checks[1].second.check, "all.all_gather@16 KiB");  // one check per collective and size
  EXPECT_EQ(a.cluster_checks[1].second.rule, "none");

  // A suite threshold at that size still judges it.
  Fixture t;
  t.suite.thresholds = {{"all", "all_reduce", 16384, 20}};
  const AllStage judged = all_stage(t.stages(), prof, kRun);
  EXPECT_EQ(judged.verdict, Verdict::Fail);
  ASSERT_EQ(judged.cluster_checks.size(), 2u);
  EXPECT_EQ(judged.cluster_checks[0].second.rule, "suite");
  EXPECT_EQ(judged.cluster_checks[0].second.verdict, Verdict::Fail);
  EXPECT_NE(judged.cluster_checks[0].second.evidence.find("is not applied; the suite's threshold judged it"),
            std::string::npos);

  // The same expectation at this run's scale is applied, and fails.
  Fixture g;
  const AllStage same = all_stage(g.stages(), [] {
    railkit::ProfileDocument p = lab_profile();
    p.expectations = {{"all_reduce", 16384, 100, 0.1}};
    return p;
  }(), kRun);
  EXPECT_EQ(same.verdict, Verdict::Fail);
  EXPECT_EQ(same.cluster_checks[0].second.rule, "profile");
}

TEST(AcceptAllStage, SuiteThresholdFailsTheWholeSet) {
  Fixture f;
  f.suite.thresholds = {{"all", "all_reduce", 16384, 1000}};
  const AllStage a = all_stage(f.stages(), std::nullopt, kRun);
  EXPECT_EQ(a.verdict, Verdict::Fail);
  ASSERT_EQ(a.cluster_checks.size(), 2u);
  EXPECT_EQ(a.cluster_checks[0].second.rule, "suite");
  EXPECT_EQ(a.cluster_checks[0].second.verdict, Verdict::Fail);
  EXPECT_EQ(a.cluster_checks[1].second.verdict, Verdict::Reported);  // all_gather: no threshold, no peer
}

TEST(AcceptAllStage, NoRuleAtAllIsReportedNeverPassed) {
  Fixture f;
  const AllStage a = all_stage(f.stages(), std::nullopt, kRun);
  EXPECT_EQ(a.verdict, Verdict::Reported);
  ASSERT_EQ(a.cluster_checks.size(), 2u);
  for (const auto& [entity, c] : a.cluster_checks) {
    EXPECT_EQ(c.verdict, Verdict::Reported) << c.check;
    EXPECT_EQ(c.rule, "none");
  }
}

// ---------------------------------------------------------------------------- isolate

TEST(AcceptIsolateStage, PairEvidenceConvictsTheSlowNode) {
  Fixture f;
  f.bench.slow_ranks = {5};
  const PairStage p = pair_stage(f.stages(), kNames, "all_reduce", 0);
  const std::size_t launches = f.bench.calls.size();
  const IsolateStage iso = isolate_stage(f.stages(), kNames, "all_reduce", p, Verdict::Fail);
  EXPECT_EQ(f.bench.calls.size(), launches);  // pair evidence: no bisection launch
  EXPECT_EQ(iso.isolation["method"], "pairs");
  ASSERT_EQ(iso.isolation["guilty_nodes"].size(), 1u);
  EXPECT_EQ(iso.isolation["guilty_nodes"][0]["node"], "h:2");
  EXPECT_TRUE(iso.isolation["guilty_links"].empty());
  ASSERT_EQ(iso.node_checks.size(), 4u);  // every node's pair.all_reduce
  const AcceptCheck guilty = of_node(iso, 2).at(0);
  EXPECT_EQ(guilty.check, "pair.all_reduce");
  EXPECT_EQ(guilty.verdict, Verdict::Fail);
  EXPECT_EQ(guilty.rule, "peers + isolation");
  EXPECT_EQ(guilty.evidence.rfind("guilty: suspect in all 3 of its pairs: ", 0), 0u) << guilty.evidence;
  EXPECT_EQ(guilty.measured, "1.000 GB/s (median of its pairs)");
  const AcceptCheck partner = of_node(iso, 1).at(0);
  EXPECT_EQ(partner.verdict, Verdict::Pass);
  EXPECT_EQ(partner.evidence, "suspect pairs: h:1+h:2 1.000 GB/s");
  EXPECT_EQ(partner.measured, "10.000 GB/s (median of its pairs)");
}

TEST(AcceptIsolateStage, ASlowLinkFailsBothItsNodes) {
  Fixture f;
  f.bench.slow_links = {{1, 2}};
  const PairStage p = pair_stage(f.stages(), kNames, "all_reduce", 0);
  const IsolateStage iso = isolate_stage(f.stages(), kNames, "all_reduce", p, Verdict::Pass);
  EXPECT_TRUE(iso.isolation["guilty_nodes"].empty());
  EXPECT_EQ(iso.isolation["guilty_links"], nlohmann::ordered_json::array({{"h:1", "h:2"}}));
  for (std::size_t i : {1u, 2u}) {
    const AcceptCheck c = of_node(iso, i).at(0);
    EXPECT_EQ(c.verdict, Verdict::Fail);
    EXPECT_EQ(c.evidence.rfind("guilty link h:1 <-> h:2: suspect pair whose nodes pass their other pairs; suspect pairs: ", 0),
              0u)
        << c.evidence;
  }
  EXPECT_EQ(of_node(iso, 0).at(0).verdict, Verdict::Pass);
}

TEST(AcceptIsolateStage, NothingToIsolate) {
  Fixture f;
  const PairStage p = pair_stage(f.stages(), kNames, "all_reduce", 0);
  const IsolateStage iso = isolate_stage(f.stages(), kNames, "all_reduce", p, Verdict::Pass);
  EXPECT_EQ(iso.skipped, "nothing to isolate");
  EXPECT_EQ(iso.isolation.dump(), R"({"method":"none","reason":"no suspect pair and the whole set passed"})");
  EXPECT_EQ(iso.node_checks.size(), 4u);  // the pair checks are still given
  EXPECT_EQ(iso.launches, 0);
  // The reason never says the whole set passed when no rule judged it, or when it was not measured.
  EXPECT_EQ(isolate_stage(f.stages(), kNames, "all_reduce", p, Verdict::Reported).isolation["reason"],
            "no suspect pair and the whole set was measured, but no rule judged it");
  EXPECT_EQ(isolate_stage(f.stages(), kNames, "all_reduce", p, Verdict::Skipped).isolation["reason"],
            "no suspect pair and the whole set was not measured");
}

TEST(AcceptIsolateStage, BisectionGoesIntoTheSlowHalf) {
  Fixture f;
  f.bench.slow_ranks = {5};  // node 2
  const IsolateStage iso = isolate_stage(f.stages(), kNames, "all_reduce", PairStage{}, Verdict::Fail);
  EXPECT_EQ(f.bench.names(), (std::vector<std::string>{"bisect-0", "bisect-1"}));
  EXPECT_EQ(f.bench.split_of("bisect-0"), "nodes:0+1,2+3");
  EXPECT_EQ(f.bench.split_of("bisect-1"), "nodes:2,3");
  EXPECT_EQ(f.bench.calls[0].stage, "isolate");
  EXPECT_EQ(iso.isolation["method"], "bisection");
  ASSERT_EQ(iso.isolation["steps"].size(), 2u);
  EXPECT_EQ(iso.isolation["steps"][0].dump(), R"({"halves":["0+1","2+3"],"busbw_GBps":[10.0,1.0]})");
  EXPECT_EQ(iso.isolation["guilty_nodes"][0]["node"], "h:2");
  EXPECT_EQ(iso.isolation["guilty_nodes"][0]["evidence"], "h:0+h:1 10.000 vs h:2+h:3 1.000 GB/s; h:2 1.000 vs h:3 10.000 GB/s");
  ASSERT_EQ(iso.node_checks.size(), 1u);  // no pairs: only the conviction
  EXPECT_EQ(iso.node_checks[0].first, 2u);
  const AcceptCheck& c = iso.node_checks[0].second;
  EXPECT_EQ(c.check, "isolation");
  EXPECT_EQ(c.verdict, Verdict::Fail);
  EXPECT_EQ(c.expected, "neither half below 0.9 x the other");
  EXPECT_EQ(c.evidence.rfind("bisection of the whole set: h:0+h:1 10.000 vs", 0), 0u);
}

TEST(AcceptIsolateStage, BisectionSuspectsTheOddNodeOutWhenTheHalvesAgree) {
  Fixture f(5, 2);
  f.bench.slow_ranks = {9};  // node 4, the odd one out
  const IsolateStage iso = isolate_stage(f.stages(), names(5), "all_reduce", PairStage{}, Verdict::Fail);
  EXPECT_EQ(f.bench.names(), (std::vector<std::string>{"bisect-0"}));
  EXPECT_EQ(f.bench.split_of("bisect-0"), "nodes:0+1,2+3");
  EXPECT_EQ(iso.isolation["guilty_nodes"][0]["node"], "h:4");
}

TEST(AcceptIsolateStage, BisectionStopsWhenTheHalvesAgree) {
  Fixture f;
  const IsolateStage iso = isolate_stage(f.stages(), kNames, "all_reduce", PairStage{}, Verdict::Fail);
  EXPECT_EQ(f.bench.names(), (std::vector<std::string>{"bisect-0"}));
  EXPECT_TRUE(iso.isolation["guilty_nodes"].empty());
  EXPECT_EQ(iso.isolation["reason"], "the halves measured alike: no single slow node");
  EXPECT_TRUE(iso.node_checks.empty());

  Fixture g;
  g.bench.failing = {"bisect-0"};
  const IsolateStage failed = isolate_stage(g.stages(), kNames, "all_reduce", PairStage{}, Verdict::Fail);
  ASSERT_EQ(failed.cluster_checks.size(), 1u);
  EXPECT_EQ(failed.cluster_checks[0].first, "stage:isolate");
  EXPECT_TRUE(failed.isolation["steps"].empty());
  EXPECT_TRUE(failed.isolation["guilty_nodes"].empty());
}
