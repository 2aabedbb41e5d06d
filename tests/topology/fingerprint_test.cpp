// Fingerprint stability and the multi-node comparison.
#include <gtest/gtest.h>

#include "core/error.hpp"
#include "fixture_util.hpp"
#include "topology/compare.hpp"
#include "topology/render.hpp"

namespace railkit::topo {
namespace {

NodeFacts facts(const std::string& fixture, const std::string& node) {
  auto t = testing::probe_fixture(fixture);
  return NodeFacts{node, t.fingerprint.hash, t.fingerprint.facts};
}

TEST(TopoFingerprint, EqualForIdenticalNodesDifferentWhenHardwareDiffers) {
  const auto base = testing::probe_fixture("dgx-h100").fingerprint;
  EXPECT_EQ(base.hash, testing::probe_fixture("dgx-h100").fingerprint.hash);
  // Settings are not hardware: an MTU or ECN change keeps the fingerprint.
  EXPECT_EQ(base.hash, testing::probe_fixture("dgx-mtu-low").fingerprint.hash);
  EXPECT_EQ(base.hash, testing::probe_fixture("dgx-ecn-off").fingerprint.hash);
  // An idle GPU link (speed only) is not a different node either.
  EXPECT_EQ(base.hash, testing::probe_fixture("dgx-gpu-idle-speed").fingerprint.hash);
  // A missing NIC, a NIC link trained down, a slower port: different.
  EXPECT_NE(base.hash, testing::probe_fixture("dgx-missing-nic").fingerprint.hash);
  EXPECT_NE(base.hash, testing::probe_fixture("dgx-nic-link-down").fingerprint.hash);
  EXPECT_NE(base.hash, testing::probe_fixture("dgx-rate-mismatch").fingerprint.hash);
  EXPECT_EQ(base.facts.at("gpu.models"), "8x H100 SXM5 80GB");
  EXPECT_EQ(base.facts.at("GPU3.rail"), "mlx5_5 PXB");
  EXPECT_EQ(base.facts.at("mlx5_6.link"), "x16@32GT/s");
}

TEST(TopoCompare, NamesTheNodeThatDiffersFromTheMajority) {
  std::vector<NodeFacts> nodes = {facts("dgx-h100", "n1"), facts("dgx-h100", "n2"), facts("dgx-nic-link-down", "n3"),
                                  facts("dgx-h100", "n4")};
  const auto rep = compare_nodes(nodes);
  EXPECT_FALSE(rep.all_equal());
  EXPECT_EQ(rep.majority_count, 3);
  EXPECT_EQ(rep.odd_nodes, (std::vector<std::string>{"n3"}));
  ASSERT_EQ(rep.diffs.size(), 1u);
  EXPECT_EQ(rep.diffs[0].fact, "mlx5_6.link");
  EXPECT_EQ(rep.diffs[0].majority, "x16@32GT/s");
  ASSERT_EQ(rep.diffs[0].nodes.size(), 1u);
  EXPECT_EQ(rep.diffs[0].nodes[0], (std::pair<std::string, std::string>{"n3", "x8@16GT/s"}));
  const std::string text = render_compare_table(rep);
  EXPECT_NE(text.find("Nodes that differ: n3"), std::string::npos);
  EXPECT_EQ(compare_to_json(rep)["odd_nodes"], nlohmann::json({"n3"}));
}

TEST(TopoCompare, MissingNicShowsAsAbsentFacts) {
  const auto rep = compare_nodes({facts("dgx-h100", "a"), facts("dgx-missing-nic", "b"), facts("dgx-h100", "c")});
  EXPECT_EQ(rep.odd_nodes, (std::vector<std::string>{"b"}));
  bool saw_count = false, saw_absent = false;
  for (const auto& d : rep.diffs) {
    if (d.fact == "nic.count") {
      saw_count = true;
      EXPECT_EQ(d.majority, "12");
      EXPECT_EQ(d.nodes.at(0).second, "11");
    }
    if (d.fact == "mlx5_0.model") saw_absent = d.nodes.at(0).second == "<absent>";
  }
  EXPECT_TRUE(saw_count);
  EXPECT_TRUE(saw_absent);
}

TEST(TopoCompare, EqualNodesAndTies) {
  EXPECT_TRUE(compare_nodes({facts("dgx-h100", "a"), facts("dgx-h100", "b")}).all_equal());
  const auto tie = compare_nodes({facts("dgx-h100", "a"), facts("dgx-missing-nic", "b")});
  EXPECT_TRUE(tie.tie);
  EXPECT_EQ(tie.odd_nodes.size(), 2u);  // no majority: both are named
}

TEST(TopoCompare, ReadsBackItsOwnJson) {
  auto t = testing::probe_fixture("dgx-h100");
  auto n = node_facts_from_json(to_json(t).dump(), "x.json");
  EXPECT_EQ(n.node, "dgx-h100-01");
  EXPECT_EQ(n.hash, t.fingerprint.hash);
  EXPECT_EQ(n.facts, t.fingerprint.facts);
  EXPECT_THROW(node_facts_from_json("{not json", "bad.json"), UsageError);
  EXPECT_THROW(node_facts_from_json("{\"host\": \"x\"}", "nofp.json"), UsageError);
}

}  // namespace
}  // namespace railkit::topo
