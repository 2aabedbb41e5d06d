// The rdma-pair stage's judging: runs against the lower line rate of the two ports, a node slow
// with all its partners convicted, a single slow pair named as its link, rails from topology
// documents.
#include <gtest/gtest.h>

#include <algorithm>

#include "accept/rdma_pair.hpp"

using namespace railkit::accept;
using nlohmann::json;
using railkit::Verdict;

namespace {

const std::vector<std::string> kPairNodes{"n0", "n1", "n2", "n3"};

/// The runs of the circle rounds of 4 nodes on one rail (mlx5_0, 100 Gb/s both ends), each at
/// `fast` Gb/s except the pairs listed in `slow`.
std::vector<RdmaPairRun> runs(const std::vector<std::pair<int, int>>& slow, double fast = 99, const std::string& rail = "GPU0",
                              const std::string& nic = "mlx5_0") {
  std::vector<RdmaPairRun> out;
  int round = 0;
  for (const auto& round_pairs : circle_rounds(4)) {
    for (const auto& [a, b] : round_pairs) {
      const bool s = std::count(slow.begin(), slow.end(), std::pair<int, int>{a, b}) > 0;
      out.push_back(RdmaPairRun{round, a, b, rail, nic, nic, s ? 20.0 : fast, 100.0, 100.0, "", ""});
    }
    ++round;
  }
  return out;
}

const AcceptCheck* check_of(const RdmaPairStage& s, std::size_t node, const std::string& name) {
  for (const auto& [i, c] : s.node_checks)
    if (i == node && c.check == name) return &c;
  return nullptr;
}

}  // namespace

TEST(AcceptRdmaPair, ASingleSlowPairNamesItsLink) {
  const RdmaPairStage s = judge_rdma_pairs(runs({{1, 2}}), kPairNodes, 0.9);
  ASSERT_EQ(s.node_checks.size(), 4u);
  for (std::size_t i : {1u, 2u}) {
    const AcceptCheck* c = check_of(s, i, "rdma.pair.mlx5_0");
    ASSERT_TRUE(c);
    EXPECT_EQ(c->verdict, Verdict::Fail);
    EXPECT_EQ(c->rule, "line rate + isolation");
    EXPECT_NE(c->evidence.find("guilty link n1:mlx5_0 <-> n2:mlx5_0"), std::string::npos) << c->evidence;
    EXPECT_EQ(c->measured, "20.00 Gb/s (lowest of 3 partners)");
    EXPECT_EQ(c->expected, ">= 90.0 Gb/s (0.9 x line rate 100 Gb/s)");
  }
  for (std::size_t i : {0u, 3u}) EXPECT_EQ(check_of(s, i, "rdma.pair.mlx5_0")->verdict, Verdict::Pass);
  ASSERT_EQ(s.isolation["guilty_links"].size(), 1u);
  EXPECT_EQ(s.isolation["guilty_links"][0]["link"], "n1:mlx5_0 <-> n2:mlx5_0");
  EXPECT_EQ(s.isolation["guilty_links"][0]["rail"], "GPU0");
  EXPECT_TRUE(s.isolation["guilty_nodes"].empty());
  ASSERT_EQ(s.pairs.size(), 6u);
  EXPECT_EQ(std::count_if(s.pairs.begin(), s.pairs.end(), [](const auto& p) { return p["verdict"] == "slow"; }), 1);
}

TEST(AcceptRdmaPair, ANodeSlowWithAllItsPartnersIsGuiltyAndTheyPass) {
  const RdmaPairStage s = judge_rdma_pairs(runs({{0, 3}, {1, 3}, {2, 3}}), kPairNodes, 0.9);
  const AcceptCheck* bad = check_of(s, 3, "rdma.pair.mlx5_0");
  ASSERT_TRUE(bad);
  EXPECT_EQ(bad->verdict, Verdict::Fail);
  EXPECT_EQ(bad->evidence.rfind("guilty: below the line rate with all 3 partners on n3:mlx5_0", 0), 0u) << bad->evidence;
  for (std::size_t i : {0u, 1u, 2u}) {
    const AcceptCheck* c = check_of(s, i, "rdma.pair.mlx5_0");
    EXPECT_EQ(c->verdict, Verdict::Pass) << c->evidence;
    EXPECT_NE(c->evidence.find("explained by a guilty partner"), std::string::npos) << c->evidence;
    EXPECT_NE(c->evidence.find("with n3:mlx5_0 20.00 Gb/s (slow: the partner is guilty)"), std::string::npos)
        << c->evidence;
    EXPECT_EQ(c->measured, "99.00 Gb/s (lowest of 2 partners, a guilty one aside)");
  }
  EXPECT_EQ(bad->measured, "20.00 Gb/s (lowest of 3 partners)");
  ASSERT_EQ(s.isolation["guilty_nodes"].size(), 1u);
  EXPECT_EQ(s.isolation["guilty_nodes"][0]["node"], "n3");
  EXPECT_EQ(s.isolation["guilty_nodes"][0]["nic"], "mlx5_0");
  EXPECT_TRUE(s.isolation["guilty_links"].empty());
}

TEST(AcceptRdmaPair, FailedRunsAreSlowAndRailsAreJudgedApart) {
  std::vector<RdmaPairRun> all = runs({}, 99, "GPU0", "mlx5_0");
  for (RdmaPairRun r : runs({}, 99, "GPU1", "mlx5_3")) {
    if ((r.a == 0 && r.b == 1) || (r.a == 1 && r.b == 0)) {
      r.measured_Gbps.reset();
      r.error = "client on n1: Couldn't connect to n0:18516";
    }
    all.push_back(r);
  }
  const RdmaPairStage s = judge_rdma_pairs(all, kPairNodes, 0.9);
  EXPECT_EQ(check_of(s, 0, "rdma.pair.mlx5_0")->verdict, Verdict::Pass);
  const AcceptCheck* c = check_of(s, 0, "rdma.pair.mlx5_3");
  ASSERT_TRUE(c);
  EXPECT_EQ(c->verdict, Verdict::Fail);
  EXPECT_EQ(c->measured, "failed");
  EXPECT_NE(c->evidence.find("Couldn't connect"), std::string::npos) << c->evidence;
  EXPECT_EQ(s.isolation["guilty_links"][0]["link"], "n0:mlx5_3 <-> n1:mlx5_3");
}

TEST(AcceptRdmaPair, TheLowerLineRateJudgesAndUnknownRatesAreReported) {
  std::vector<RdmaPairRun> r{RdmaPairRun{0, 0, 1, "NIC0", "mlx5_0", "mlx5_0", 95.0, 400.0, 100.0, "", ""}};
  RdmaPairStage s = judge_rdma_pairs(r, {"a", "b"}, 0.9);
  EXPECT_EQ(check_of(s, 0, "rdma.pair.mlx5_0")->verdict, Verdict::Pass);
  EXPECT_EQ(check_of(s, 0, "rdma.pair.mlx5_0")->expected, ">= 90.0 Gb/s (0.9 x line rate 100 Gb/s)");
  r[0].measured_Gbps = 50.0;  // two nodes, one pair: the link is named, both ends fail
  s = judge_rdma_pairs(r, {"a", "b"}, 0.9);
  EXPECT_EQ(check_of(s, 1, "rdma.pair.mlx5_0")->verdict, Verdict::Fail);
  EXPECT_NE(check_of(s, 1, "rdma.pair.mlx5_0")->evidence.find("the only pair measured"), std::string::npos);
  r[0].rate_a_Gbps.reset();
  r[0].rate_b_Gbps.reset();
  s = judge_rdma_pairs(r, {"a", "b"}, 0.9);
  EXPECT_EQ(check_of(s, 0, "rdma.pair.mlx5_0")->verdict, Verdict::Reported);
  EXPECT_EQ(check_of(s, 0, "rdma.pair.mlx5_0")->rule, "none");
  r[0].measured_Gbps.reset();  // a run that failed is slow, line rate or not
  r[0].error = "client on b: railkit rdma-pair: exit code 1";
  s = judge_rdma_pairs(r, {"a", "b"}, 0.9);
  EXPECT_EQ(check_of(s, 0, "rdma.pair.mlx5_0")->verdict, Verdict::Fail);
  EXPECT_EQ(s.pairs[0]["verdict"], "failed");
  r[0].unavailable = "ib_write_bw not found in PATH: install perftest";
  s = judge_rdma_pairs(r, {"a", "b"}, 0.9);
  EXPECT_EQ(check_of(s, 0, "rdma.pair.mlx5_0")->verdict, Verdict::Skipped);
  EXPECT_EQ(s.pairs[0]["verdict"], "unavailable");
}

TEST(AcceptRdmaPair, RailsFromTheTopologyDocument) {
  const json doc = json::parse(R"({
    "gpus": [{"name": "GPU0", "index": 0}, {"name": "GPU1", "index": 1}, {"name": "GPU2", "index": 2}],
    "nics": [
      {"name": "mlx5_0", "gpus": ["GPU1", "GPU0"], "ports": [{"state": "ACTIVE", "link_layer": "Ethernet", "recommended_gid_index": 3}]},
      {"name": "mlx5_1", "gpus": [], "ports": [{"state": "ACTIVE", "link_layer": "InfiniBand", "recommended_gid_index": null}]},
      {"name": "mlx5_2", "gpus": ["GPU2"], "ports": [{"state": "DOWN", "link_layer": "Ethernet", "recommended_gid_index": 3}]},
      {"name": "mlx5_3", "gpus": [], "ports": [{"state": "ACTIVE", "link_layer": "Ethernet", "recommended_gid_index": null}]}
    ]})");
  const auto nics = rail_nics(doc);
  ASSERT_EQ(nics.size(), 4u);
  EXPECT_EQ(nics[0].rail, "GPU0");
  EXPECT_TRUE(nics[0].usable);
  EXPECT_EQ(nics[1].rail, "NIC0");
  EXPECT_TRUE(nics[1].usable);   // InfiniBand: no GID needed
  EXPECT_EQ(nics[2].rail, "GPU2");
  EXPECT_FALSE(nics[2].usable);  // port down
  EXPECT_EQ(nics[3].rail, "NIC1");
  EXPECT_FALSE(nics[3].usable);  // RoCE without a RoCE v2 GID
  EXPECT_TRUE(rail_nics(json::object()).empty());
  EXPECT_EQ(named_rail_nics({"mlx5_0"})[0].rail, "mlx5_0");
}
