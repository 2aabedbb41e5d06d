// Unit tests of `railkit accept`'s pure parts: the circle-method schedule, the judging rules,
// isolation on synthetic pair results, suite parsing, bench arguments and the report escaping.
#include <gtest/gtest.h>

#include <set>

#include "core/error.hpp"
#include "accept/accept.hpp"

using namespace railkit::accept;

namespace {

void expect_valid_schedule(int n) {
  const auto rounds = circle_rounds(n);
  ASSERT_EQ(static_cast<int>(rounds.size()), n % 2 == 0 ? n - 1 : n) << "n=" << n;
  std::set<std::pair<int, int>> seen;
  for (const auto& round : rounds) {
    std::set<int> busy;
    EXPECT_EQ(static_cast<int>(round.size()), n / 2) << "n=" << n;
    for (const auto& [a, b] : round) {
      EXPECT_LT(a, b);
      EXPECT_GE(a, 0);
      EXPECT_LT(b, n);
      EXPECT_TRUE(busy.insert(a).second) << "node " << a << " twice in a round, n=" << n;
      EXPECT_TRUE(busy.insert(b).second) << "node " << b << " twice in a round, n=" << n;
      EXPECT_TRUE(seen.insert({a, b}).second) << "pair " << a << "+" << b << " twice, n=" << n;
    }
  }
  EXPECT_EQ(static_cast<int>(seen.size()), n * (n - 1) / 2) << "n=" << n;
}

AcceptReport sample_report() {
  AcceptReport r;
  r.nodes.push_back(AcceptEntity{"h:0", {AcceptCheck{"node.all_reduce", "5.000 GB/s", 5.0, ">= 4", "peers", "pass", ""}}});
  r.nodes.push_back(AcceptEntity{
      "we\"ird<&>'\\\nnode",
      {AcceptCheck{"node.all_reduce", "1.000 GB/s", 1.0, ">= 4", "peers", "fail", "slow <3 & \"quoted\""}}});
  return r;
}

}  // namespace

TEST(AcceptSchedule, CircleMethodEvenAndOdd) {
  for (int n = 2; n <= 11; ++n) expect_valid_schedule(n);
  EXPECT_TRUE(circle_rounds(1).empty());
  EXPECT_TRUE(circle_rounds(0).empty());
  const auto four = circle_rounds(4);
  ASSERT_EQ(four.size(), 3u);  // n - 1 rounds of n / 2 concurrent pairs
  EXPECT_EQ(four[0].size(), 2u);
}

TEST(AcceptSchedule, OddGetsAByeEachRound) {
  const auto rounds = circle_rounds(5);
  std::set<int> sat_out;
  for (const auto& round : rounds) {
    std::set<int> busy;
    for (const auto& [a, b] : round) busy.insert({a, b});
    ASSERT_EQ(busy.size(), 4u);
    for (int v = 0; v < 5; ++v)
      if (!busy.count(v)) sat_out.insert(v);
  }
  EXPECT_EQ(sat_out.size(), 5u);  // every node sits out exactly one round
}

TEST(AcceptRules, MedianAndPeers) {
  EXPECT_DOUBLE_EQ(median({}), 0);
  EXPECT_DOUBLE_EQ(median({3, 1, 2}), 2);
  EXPECT_DOUBLE_EQ(median({4, 1, 3, 2}), 2.5);
  AcceptSuite s;
  Judgement j = judge(s, "node", "all_reduce", 1 << 20, 8.9, {10, 10, 1});
  EXPECT_FALSE(j.pass);  // below 0.9 x median 10
  EXPECT_EQ(j.rule, "peers");
  EXPECT_NEAR(*j.expected_GBps, 9.0, 1e-12);
  EXPECT_TRUE(judge(s, "node", "all_reduce", 1 << 20, 9.0, {10, 10, 1}).pass);
  j = judge(s, "all", "all_reduce", 1 << 20, 0.001, {});
  EXPECT_TRUE(j.pass);
  EXPECT_EQ(j.rule, "none (reported)");
}

TEST(AcceptRules, SuiteThresholdWinsOverPeers) {
  AcceptSuite s = suite_from_json(nlohmann::json::parse(R"({"schema":"railkit.accept-suite/1",
      "peer_fraction":0.5,"skip":["rail"],
      "thresholds":[{"stage":"node","coll":"all_reduce","bytes":"1M","busbw_GBps":20},
                    {"coll":"all_gather","bytes":1024,"busbw_GBps":1}],
      "topo_roots":{"h:1":"/fixtures/broken"}})"),
                                  "s.json");
  EXPECT_FALSE(s.runs("rail"));
  EXPECT_TRUE(s.runs("pair"));
  EXPECT_EQ(s.topo_roots.at("h:1"), "/fixtures/broken");
  Judgement j = judge(s, "node", "all_reduce", 1 << 20, 19, {1, 1});
  EXPECT_EQ(j.rule, "suite");
  EXPECT_FALSE(j.pass);
  // Not the threshold's stage: peers judge (0.5 x median).
  j = judge(s, "pair", "all_reduce", 1 << 20, 19, {30, 30});
  EXPECT_EQ(j.rule, "peers");
  EXPECT_TRUE(j.pass);
  // A threshold without a stage applies to every stage.
  EXPECT_EQ(judge(s, "all", "all_gather", 1024, 2, {}).rule, "suite");
  railkit::ProfileExpectation e{"all_reduce", 1 << 20, 10, 0.05};
  EXPECT_TRUE(judge_expectation(e, 9.5).pass);
  EXPECT_FALSE(judge_expectation(e, 9.4).pass);
  EXPECT_EQ(judge_expectation(e, 9.4).rule, "profile");
}

TEST(AcceptRules, SuiteErrorsNameTheField) {
  const auto bad = [](const char* text) {
    try {
      suite_from_json(nlohmann::json::parse(text), "s.json");
    } catch (const railkit::UsageError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(bad(R"({"schema":"x"})").find("schema"), std::string::npos);
  EXPECT_NE(bad(R"({"schema":"railkit.accept-suite/1","skip":["nope"]})").find("unknown stage 'nope'"), std::string::npos);
  EXPECT_NE(bad(R"({"schema":"railkit.accept-suite/1","peer_fraction":2})").find("peer_fraction"), std::string::npos);
  EXPECT_NE(bad(R"({"schema":"railkit.accept-suite/1","thresholds":[{"coll":"all_reduce"}]})").find("thresholds[0]"),
            std::string::npos);
  EXPECT_NE(bad(R"({"schema":"railkit.accept-suite/1","extra":1})").find("extra: unknown field"), std::string::npos);
  EXPECT_NE(bad(R"({"schema":"railkit.accept-suite/1","rdma_fraction":0})").find("rdma_fraction"), std::string::npos);
  EXPECT_NE(bad(R"({"schema":"railkit.accept-suite/1","rdma_duration_s":1.5})").find("rdma_duration_s"), std::string::npos);
  EXPECT_NE(bad(R"({"schema":"railkit.accept-suite/1","ib_write_bw":""})").find("ib_write_bw"), std::string::npos);
}

TEST(AcceptRules, SuiteRdmaKeys) {
  AcceptSuite d;
  EXPECT_EQ(d.rdma_fraction, 0.9);
  EXPECT_EQ(d.rdma_duration_s, 5);
  EXPECT_TRUE(d.ib_write_bw.empty());
  const AcceptSuite s = suite_from_json(nlohmann::json::parse(R"({"schema":"railkit.accept-suite/1",
      "rdma_fraction":0.8,"rdma_duration_s":3,"ib_write_bw":"/opt/perftest/bin/ib_write_bw"})"),
                                        "s.json");
  EXPECT_EQ(s.rdma_fraction, 0.8);
  EXPECT_EQ(s.rdma_duration_s, 3);
  EXPECT_EQ(s.ib_write_bw, "/opt/perftest/bin/ib_write_bw");
}

TEST(AcceptIsolation, TheNodeInEverySuspectPair) {
  // 4 nodes, node 2 slow: its three pairs are suspect.
  std::vector<PairResult> p{{0, 1, 10, false}, {2, 3, 1, true}, {0, 2, 1, true},
                            {1, 3, 10, false}, {0, 3, 10, false}, {1, 2, 1, true}};
  const Isolation iso = isolate_pairs(p, {"a", "b", "c", "d"});
  EXPECT_EQ(iso.guilty_nodes, (std::vector<int>{2}));
  EXPECT_TRUE(iso.guilty_links.empty());
  EXPECT_NE(iso.evidence.at(2).find("all 3 of its pairs"), std::string::npos);
  EXPECT_NE(iso.evidence.at(2).find("c+d 1.000 GB/s"), std::string::npos);
}

TEST(AcceptIsolation, TwoSlowNodesAndASlowLink) {
  // Nodes 1 and 2 slow: node 0 and 3 are in two suspect pairs each, but their partners fail elsewhere.
  std::vector<PairResult> two{{0, 1, 1, true}, {0, 2, 1, true}, {0, 3, 10, false},
                              {1, 2, 1, true}, {1, 3, 1, true}, {2, 3, 1, true}};
  EXPECT_EQ(isolate_pairs(two, {}).guilty_nodes, (std::vector<int>{1, 2}));
  EXPECT_TRUE(isolate_pairs(two, {}).guilty_links.empty());
  // One slow link 0-3: no node is guilty, the link is named.
  std::vector<PairResult> link{{0, 1, 10, false}, {0, 2, 10, false}, {0, 3, 1, true},
                               {1, 2, 10, false}, {1, 3, 10, false}, {2, 3, 10, false}};
  const Isolation iso = isolate_pairs(link, {});
  EXPECT_TRUE(iso.guilty_nodes.empty());
  EXPECT_EQ(iso.guilty_links, (std::vector<std::pair<int, int>>{{0, 3}}));
  // A node in 2 of 3 suspect pairs whose partners pass everything else is guilty.
  std::vector<PairResult> mostly{{0, 1, 10, false}, {0, 2, 10, false}, {0, 3, 1, true},
                                 {1, 2, 10, false}, {1, 3, 1, true}, {2, 3, 10, false}};
  EXPECT_EQ(isolate_pairs(mostly, {}).guilty_nodes, (std::vector<int>{3}));
  EXPECT_TRUE(isolate_pairs(mostly, {}).guilty_links.empty());
}

TEST(AcceptNodes, EmulatedAndHostfile) {
  const auto n = emulated_nodes("h", 8, 2);
  ASSERT_EQ(n.size(), 4u);
  EXPECT_EQ(n[2].name, "h:2");
  EXPECT_EQ(n[2].ranks, (std::vector<int>{4, 5}));
  EXPECT_THROW(emulated_nodes("h", 7, 2), railkit::UsageError);
  const auto hf = hostfile_nodes("# rack 1\nnode-a slots=8\n\nnode-b\nnode-a\n", 4);
  ASSERT_EQ(hf.size(), 2u);
  EXPECT_EQ(hf[1].name, "node-b");
  EXPECT_EQ(hf[1].ranks, (std::vector<int>{4, 5, 6, 7}));
  EXPECT_THROW(hostfile_nodes("# nothing\n", 1), railkit::UsageError);
}

TEST(AcceptBenchArgs, UserOverridesDefaultsAndCannotSetWhatAcceptSets) {
  const auto a = merge_bench_args({"-b", "64K", "-n5", "--inject-delay-us", "5:3000"}, false);
  const auto has = [&](const std::string& s) { return std::find(a.begin(), a.end(), s) != a.end(); };
  EXPECT_TRUE(has("64K"));
  EXPECT_FALSE(has("16M"));  // default -b dropped
  EXPECT_TRUE(has("-e"));    // default -e kept
  EXPECT_FALSE(has("-n"));   // -n5 overrides -n
  EXPECT_THROW(merge_bench_args({"--split", "rail"}, true), railkit::UsageError);
  EXPECT_THROW(merge_bench_args({"-J", "x.json"}, true), railkit::UsageError);
  EXPECT_THROW(merge_bench_args({"--ranks-per-node", "2"}, false), railkit::UsageError);
}

TEST(AcceptReports, EscapingInJunitAndPrometheus) {
  EXPECT_EQ(xml_escape("a<b>&\"c\"'d'\x01"), "a&lt;b&gt;&amp;&quot;c&quot;&apos;d&apos;?");
  EXPECT_EQ(prom_escape("a\\b\"c\nd"), "a\\\\b\\\"c\\nd");
  const AcceptReport r = sample_report();
  EXPECT_FALSE(r.passed());
  const std::string junit = render_junit(r);
  EXPECT_NE(junit.find("tests=\"2\" failures=\"1\""), std::string::npos);
  EXPECT_NE(junit.find("classname=\"we&quot;ird&lt;&amp;&gt;&apos;\\\nnode\""), std::string::npos);
  EXPECT_NE(junit.find("<failure message=\"node.all_reduce: measured 1.000 GB/s"), std::string::npos);
  EXPECT_NE(junit.find("slow &lt;3 &amp; &quot;quoted&quot;"), std::string::npos);
  const std::string prom = render_prometheus(r);
  EXPECT_NE(prom.find("# TYPE railkit_accept_check_pass gauge"), std::string::npos);
  EXPECT_NE(prom.find("railkit_accept_check_pass{node=\"h:0\",check=\"node.all_reduce\"} 1"), std::string::npos);
  EXPECT_NE(prom.find("railkit_accept_check_pass{node=\"we\\\"ird<&>'\\\\\\nnode\",check=\"node.all_reduce\"} 0"),
            std::string::npos);
  EXPECT_NE(prom.find("railkit_accept_busbw_gbps{node=\"h:0\",check=\"node.all_reduce\"} 5"), std::string::npos);
  EXPECT_EQ(render_good_hosts(r), "h:0\n");
  const auto j = to_json(r);
  EXPECT_EQ(j["schema"], "railkit.accept/1");
  EXPECT_EQ(j["nodes"][1]["verdict"], "fail");
  EXPECT_EQ(j["nodes"][0]["checks"][0]["rule"], "peers");
}
