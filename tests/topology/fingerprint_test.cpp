// Fingerprint stability and the multi-node comparison.
#include <gtest/gtest.h>

#include <algorithm>

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

size_t index_of(const CompareReport& rep, const std::string& fact) {
  for (size_t i = 0; i < rep.diffs.size(); ++i)
    if (rep.diffs[i].fact == fact) return i;
  ADD_FAILURE() << "no difference " << fact;
  return rep.diffs.size();
}

TEST(TopoCompare, NoMajorityStillRanksFactsAndNeverListsTheHealthyNode) {
  // One healthy node and three broken ones, each in its own way: four fingerprints, no majority,
  // whichever node comes first (each fixture probed once).
  const std::vector<NodeFacts> probed = {facts("dgx-h100", "healthy-node"), facts("dgx-missing-nic", "no-nic-node"),
                                         facts("dgx-nic-link-down", "link-node"), facts("dgx-rate-mismatch", "rate-node")};
  for (size_t rot = 0; rot < 4; ++rot) {
    std::vector<NodeFacts> nodes = probed;
    std::rotate(nodes.begin(), nodes.begin() + static_cast<long>(rot), nodes.end());
    SCOPED_TRACE("first node " + nodes[0].node);
    const auto rep = compare_nodes(nodes);
    EXPECT_TRUE(rep.tie);
    EXPECT_FALSE(rep.all_equal());
    auto odd = rep.odd_nodes;
    std::sort(odd.begin(), odd.end());
    EXPECT_EQ(odd, (std::vector<std::string>{"link-node", "no-nic-node", "rate-node"}));
    for (const auto& d : rep.diffs)
      for (const auto& [node, v] : d.nodes) EXPECT_NE(node, "healthy-node") << d.fact;
    // The absent NIC first, then counts, then device facts, then rails, then paths.
    ASSERT_FALSE(rep.diffs.empty());
    EXPECT_EQ(rep.diffs[0].fact, "mlx5_0");
    EXPECT_EQ(rep.diffs[0].nodes, (std::vector<std::pair<std::string, std::string>>{{"no-nic-node", "absent"}}));
    EXPECT_LT(index_of(rep, "mlx5_0"), index_of(rep, "nic.count"));
    EXPECT_LT(index_of(rep, "nic.count"), index_of(rep, "mlx5_6.link"));
    EXPECT_LT(index_of(rep, "mlx5_6.link"), index_of(rep, "GPU0.rail"));
    EXPECT_LT(index_of(rep, "GPU0.rail"), index_of(rep, "GPU0.nic_paths"));
    EXPECT_LT(index_of(rep, "GPU0.nic_paths"), index_of(rep, "GPU7.nic_paths"));
    const std::string text = render_compare_table(rep);
    EXPECT_EQ(text.find("healthy-node"), std::string::npos) << text;
    const auto absent = text.find("  mlx5_0: absent on 1 node(s)\n    no-nic-node: absent\n");
    ASSERT_NE(absent, std::string::npos) << text;
    EXPECT_LT(absent, text.find("nic.count"));
    EXPECT_LT(text.find("nic.count"), text.find("GPU0.nic_paths"));
    // A path list shows only what differs.
    EXPECT_NE(text.find("    no-nic-node: mlx5_0 PXB -> absent\n"), std::string::npos) << text;
  }
}

TEST(TopoCompare, DifferenceKindsAndFoldedDeviceFacts) {
  const auto rep = compare_nodes({facts("dgx-h100", "a"), facts("dgx-missing-nic", "b"), facts("dgx-h100", "c"),
                                  facts("dgx-rate-mismatch", "d"), facts("dgx-h100", "e")});
  EXPECT_FALSE(rep.tie);
  EXPECT_EQ(rep.majority_count, 3);
  EXPECT_EQ(rep.odd_nodes, (std::vector<std::string>{"b", "d"}));
  EXPECT_EQ(rep.node_names, (std::vector<std::string>{"a", "b", "c", "d", "e"}));
  for (size_t i = 1; i < rep.diffs.size(); ++i) EXPECT_LE(rep.diffs[i - 1].kind, rep.diffs[i].kind) << rep.diffs[i].fact;
  const auto& dev = rep.diffs.at(index_of(rep, "mlx5_0"));
  EXPECT_EQ(dev.kind, DiffKind::Device);
  EXPECT_EQ(dev.majority, "present");
  const auto& model = rep.diffs.at(index_of(rep, "mlx5_0.model"));
  EXPECT_EQ(model.kind, DiffKind::Property);
  EXPECT_EQ(model.device, "mlx5_0");
  EXPECT_TRUE(model.presence_only);
  EXPECT_EQ(rep.diffs.at(index_of(rep, "nic.count")).kind, DiffKind::Count);
  EXPECT_EQ(rep.diffs.at(index_of(rep, "GPU0.rail")).kind, DiffKind::Rail);
  EXPECT_EQ(rep.diffs.at(index_of(rep, "GPU3.nic_paths")).kind, DiffKind::Path);
  EXPECT_FALSE(rep.diffs.at(index_of(rep, "mlx5_9.rate_Gbps")).presence_only);
  const std::string text = render_compare_table(rep);
  EXPECT_EQ(text.find("mlx5_0.model"), std::string::npos) << text;  // folded into the device line
  EXPECT_NE(text.find("mlx5_9.rate_Gbps: majority '400'\n    d: 200\n"), std::string::npos) << text;
  const auto j = compare_to_json(rep);
  EXPECT_EQ(j["differences"][0]["kind"], "device");
  EXPECT_EQ(j["differences"][0]["fact"], "mlx5_0");
  EXPECT_EQ(j["node_names"].size(), 5u);
}

TEST(TopoCompare, AnExtraDeviceIsOneEntry) {
  // Two nodes without mlx5_0 against one with it: mlx5_0 is extra on that one.
  const auto rep = compare_nodes({facts("dgx-missing-nic", "a"), facts("dgx-h100", "b"), facts("dgx-missing-nic", "c")});
  ASSERT_FALSE(rep.diffs.empty());
  EXPECT_EQ(rep.diffs[0].fact, "mlx5_0");
  EXPECT_EQ(rep.diffs[0].majority, "absent");
  EXPECT_EQ(rep.diffs[0].nodes, (std::vector<std::pair<std::string, std::string>>{{"b", "present"}}));
  EXPECT_EQ(rep.odd_nodes, (std::vector<std::string>{"b"}));
  EXPECT_NE(render_compare_table(rep).find("  mlx5_0: extra on 1 node(s)\n    b: present\n"), std::string::npos);
}

TEST(TopoCompare, NodesAreNamedOneWay) {
  std::vector<NodeFacts> hosts = {{"n1", "h", {}}, {"n2", "h", {}}};
  name_nodes(hosts, {"a.json", "b.json"});
  EXPECT_EQ(hosts[0].node, "n1");
  EXPECT_EQ(hosts[1].node, "n2");
  // Two documents from one host: every node is named by its file, the first one too.
  std::vector<NodeFacts> same = {{"n1", "h", {}}, {"n1", "h", {}}, {"n2", "h", {}}};
  name_nodes(same, {"a.json", "b.json", "c.json"});
  EXPECT_EQ(same[0].node, "a.json");
  EXPECT_EQ(same[1].node, "b.json");
  EXPECT_EQ(same[2].node, "c.json");
  // A document without a host (named by its file already) names all by file.
  std::vector<NodeFacts> nohost = {{"n1", "h", {}}, {"b.json", "h", {}}};
  name_nodes(nohost, {"a.json", "b.json"});
  EXPECT_EQ(nohost[0].node, "a.json");
}

TEST(TopoCompare, ReadsBackItsOwnJson) {
  auto t = testing::probe_fixture("dgx-h100");
  auto n = node_facts_from_json(to_json(t).dump(), "x.json");
  EXPECT_EQ(n.node, "dgx-h100-01");
  EXPECT_EQ(n.hash, t.fingerprint.hash);
  EXPECT_EQ(n.facts, t.fingerprint.facts);
  EXPECT_THROW(node_facts_from_json("{not json", "bad.json"), UsageError);
  EXPECT_THROW(node_facts_from_json("{\"host\": \"x\"}", "nofp.json"), UsageError);
  // Issue 14: a host of another type is exit 6 naming the key, not silently the file name.
  try {
    node_facts_from_json(R"({"host": 5, "fingerprint": {"hash": "h", "facts": {}}})", "n1.json");
    ADD_FAILURE() << "a numeric host was read";
  } catch (const UsageError& e) {
    EXPECT_STREQ(e.what(), "n1.json: host must be a string, not number");
  }
}

}  // namespace
}  // namespace railkit::topo
