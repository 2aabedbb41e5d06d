#include <gtest/gtest.h>

#include "bench/split.hpp"
#include "core/error.hpp"

using namespace railkit::bench;

TEST(Split, Parses) {
  EXPECT_EQ(parse_split("rail")->mode, SplitMode::Rail);
  EXPECT_EQ(parse_split("node")->mode, SplitMode::Node);
  EXPECT_EQ(parse_split("mod:8")->mod, 8);
  EXPECT_EQ(parse_split("none")->mode, SplitMode::None);
  EXPECT_FALSE(parse_split("mod:0"));
  EXPECT_FALSE(parse_split("mod:x"));
  EXPECT_FALSE(parse_split("rails"));
}

TEST(Split, RailsFromRanksPerNode) {
  // 2 nodes x 4 ranks: rail k = local index k on every node
  const NodeLayout l = node_layout(std::vector<int>(8, 0), 4);
  EXPECT_EQ(l.node_of_rank, (std::vector<int>{0, 0, 0, 0, 1, 1, 1, 1}));
  const auto g = make_groups(*parse_split("rail"), l);
  ASSERT_EQ(g.size(), 4u);
  EXPECT_EQ(g[0].name, "rail0");
  EXPECT_EQ(g[0].ranks, (std::vector<int>{0, 4}));
  EXPECT_EQ(g[3].ranks, (std::vector<int>{3, 7}));
  EXPECT_EQ(group_of(g, 6), 2);
}

TEST(Split, NodesFromTheLauncherAndMod) {
  const NodeLayout l = node_layout({0, 0, 1, 1, 2, 2}, 0);
  EXPECT_EQ(l.local_of_rank, (std::vector<int>{0, 1, 0, 1, 0, 1}));
  const auto nodes = make_groups(*parse_split("node"), l);
  ASSERT_EQ(nodes.size(), 3u);
  EXPECT_EQ(nodes[2].ranks, (std::vector<int>{4, 5}));
  const auto mod = make_groups(*parse_split("mod:2"), l);
  ASSERT_EQ(mod.size(), 2u);
  EXPECT_EQ(mod[1].name, "mod2:1");
  EXPECT_EQ(mod[1].ranks, (std::vector<int>{1, 3, 5}));
  const auto none = make_groups(SplitSpec{}, l);
  ASSERT_EQ(none.size(), 1u);
  EXPECT_EQ(none[0].ranks.size(), 6u);
  EXPECT_TRUE(none[0].name.empty());
}

TEST(Split, UnequalGroupsAreRefused) {
  const NodeLayout l = node_layout(std::vector<int>(5, 0), 2);  // nodes of 2, 2, 1 ranks
  EXPECT_THROW(make_groups(*parse_split("rail"), l), railkit::UsageError);
}

TEST(Split, ExplicitNodeGroupsLeaveTheOthersOut) {
  const auto s = parse_split("nodes:0+3,1+2");
  ASSERT_TRUE(s);
  EXPECT_EQ(s->mode, SplitMode::Nodes);
  EXPECT_EQ(s->nodes, (std::vector<std::vector<int>>{{0, 3}, {1, 2}}));
  EXPECT_EQ(split_name(*s), "nodes:0+3,1+2");
  EXPECT_FALSE(parse_split("nodes:"));
  EXPECT_FALSE(parse_split("nodes:0+"));
  EXPECT_FALSE(parse_split("nodes:0,0"));
  EXPECT_FALSE(parse_split("nodes:1+x"));
  EXPECT_FALSE(parse_split("nodes:-1"));
  // 5 nodes of 2 ranks: node 4 sits out.
  const NodeLayout l = node_layout(std::vector<int>(10, 0), 2);
  const auto g = make_groups(*s, l);
  ASSERT_EQ(g.size(), 2u);
  EXPECT_EQ(g[0].name, "nodes0+3");
  EXPECT_EQ(g[0].ranks, (std::vector<int>{0, 1, 6, 7}));
  EXPECT_EQ(g[1].ranks, (std::vector<int>{2, 3, 4, 5}));
  EXPECT_EQ(group_of(g, 8), -1);
  EXPECT_THROW(make_groups(*parse_split("nodes:0+1,2"), l), railkit::UsageError);  // sizes differ
  EXPECT_THROW(make_groups(*parse_split("nodes:0+5"), l), railkit::UsageError);    // no node 5
}
