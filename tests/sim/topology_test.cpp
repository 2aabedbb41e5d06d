#include <gtest/gtest.h>

#include "sim/topology.hpp"

namespace rs = railkit::sim;

namespace {
rs::TopologySpec spec(rs::TopologyKind k) {
  rs::TopologySpec t;
  t.kind = k;
  t.link_rate_bps = 100e9;
  t.fabric_delay_ps = t.link_delay_ps;
  return t;
}
}  // namespace

TEST(SimTopology, SingleSwitch) {
  auto t = spec(rs::TopologyKind::SingleSwitch);
  t.hosts = 4;
  const auto g = rs::build_fabric(t);
  EXPECT_EQ(g.nodes(), 5);
  EXPECT_EQ(g.ports[4].size(), 4u);
  for (int d = 0; d < 4; ++d) {
    ASSERT_EQ(g.routes[4][d].size(), 1u);
    EXPECT_EQ(g.ports[4][g.routes[4][d][0]].peer, d);
  }
  EXPECT_EQ(rs::route_path(g, 0, 3, 123, 1).size(), 2u);  // host uplink, switch downlink
}

TEST(SimTopology, LeafSpineEcmp) {
  auto t = spec(rs::TopologyKind::LeafSpine);
  t.leaves = 3;
  t.hosts_per_leaf = 4;
  t.spines = 2;
  t.fabric_rate_bps = 200e9;
  const auto g = rs::build_fabric(t);
  EXPECT_EQ(g.hosts, 12);
  EXPECT_EQ(g.nodes(), 12 + 3 + 2);
  EXPECT_EQ(g.names[12], "leaf0");
  EXPECT_EQ(g.names[15], "spine0");
  EXPECT_EQ(g.routes[12][11].size(), 2u);  // leaf0 to a host of leaf2: either spine
  EXPECT_EQ(g.routes[12][1].size(), 1u);   // a local host
  EXPECT_EQ(rs::route_path(g, 0, 11, 7, 1).size(), 4u);
  // Different flows spread over both spines.
  int via0 = 0;
  for (std::uint32_t f = 0; f < 200; ++f) {
    const auto p = rs::route_path(g, 0, 11, rs::flow_hash(0, 11, f, 1), 1);
    if (p[1] / 65536 == 12 && g.ports[12][p[1] % 65536].peer == 15) ++via0;
  }
  EXPECT_GT(via0, 60);
  EXPECT_LT(via0, 140);
}

TEST(SimTopology, RailOptimized) {
  auto t = spec(rs::TopologyKind::RailOptimized);
  t.nodes = 4;
  t.gpus_per_node = 8;
  t.spines = 2;
  t.fabric_rate_bps = 800e9;
  const auto g = rs::build_fabric(t);
  EXPECT_EQ(g.hosts, 32);
  EXPECT_EQ(g.names[9], "n1g1");
  const int rail1 = 32 + 1;
  EXPECT_EQ(g.names[rail1], "rail1");
  EXPECT_EQ(g.ports[9][0].peer, rail1);          // GPU 1 of node 1 on rail 1
  EXPECT_EQ(rs::route_path(g, 1, 9, 5, 1).size(), 2u);   // n0g1 -> n1g1: one leaf
  EXPECT_EQ(rs::route_path(g, 1, 10, 5, 1).size(), 4u);  // n0g1 -> n1g2: through a spine
}
