// The schedule: circle-method rounds, isolation from pair results, bisection steps.
#include <gtest/gtest.h>

#include <set>

#include "accept/schedule.hpp"

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

}  // namespace

TEST(AcceptSchedule, CircleMethodEvenAndOdd) {
  for (int n = 2; n <= 11; ++n) expect_valid_schedule(n);
  EXPECT_TRUE(circle_rounds(1).empty());
  EXPECT_TRUE(circle_rounds(0).empty());
  const auto four = circle_rounds(4);
  ASSERT_EQ(four.size(), 3u);  // n - 1 rounds of n / 2 concurrent pairs
  EXPECT_EQ(four[0], (std::vector<std::pair<int, int>>{{0, 3}, {1, 2}}));
  EXPECT_EQ(four[1], (std::vector<std::pair<int, int>>{{0, 2}, {1, 3}}));
  EXPECT_EQ(four[2], (std::vector<std::pair<int, int>>{{0, 1}, {2, 3}}));
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

TEST(AcceptIsolation, TheNodeInEverySuspectPair) {
  // 4 nodes, node 2 slow: its three pairs are suspect.
  std::vector<PairResult> p{{0, 1, 10, false}, {2, 3, 1, true}, {0, 2, 1, true},
                            {1, 3, 10, false}, {0, 3, 10, false}, {1, 2, 1, true}};
  const Isolation iso = isolate_pairs(p, {"a", "b", "c", "d"});
  EXPECT_EQ(iso.guilty_nodes, (std::vector<int>{2}));
  EXPECT_TRUE(iso.guilty_links.empty());
  EXPECT_EQ(iso.evidence.at(2),
            "suspect in all 3 of its pairs: c+d 1.000 GB/s; a+c 1.000 GB/s; b+c 1.000 GB/s");
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
  // A node in 2 of 3 suspect pairs whose partners pass everything else is guilty; without names
  // the evidence uses the node indices.
  std::vector<PairResult> mostly{{0, 1, 10, false}, {0, 2, 10, false}, {0, 3, 1, true},
                                 {1, 2, 10, false}, {1, 3, 1, true}, {2, 3, 10, false}};
  const Isolation m = isolate_pairs(mostly, {});
  EXPECT_EQ(m.guilty_nodes, (std::vector<int>{3}));
  EXPECT_TRUE(m.guilty_links.empty());
  EXPECT_EQ(m.evidence.at(3),
            "suspect in 2 of 3 pairs whose partners pass their other pairs: 0+3 1.000 GB/s; 1+3 1.000 GB/s");
}

TEST(AcceptIsolation, OnePairIsNoEvidenceAgainstANode) {
  // Two nodes, their one pair suspect: neither node took part in two pairs; the link is named.
  const Isolation iso = isolate_pairs({{0, 1, 1, true}}, {"a", "b"});
  EXPECT_TRUE(iso.guilty_nodes.empty());
  EXPECT_EQ(iso.guilty_links, (std::vector<std::pair<int, int>>{{0, 1}}));
}

TEST(AcceptBisection, HalvesAndTheOddNodeOut) {
  const Halves even = halve({0, 1, 2, 3});
  EXPECT_EQ(even.a, (std::vector<int>{0, 1}));
  EXPECT_EQ(even.b, (std::vector<int>{2, 3}));
  EXPECT_EQ(even.left, -1);
  const Halves odd = halve({4, 5, 6});
  EXPECT_EQ(odd.a, (std::vector<int>{4}));
  EXPECT_EQ(odd.b, (std::vector<int>{5}));
  EXPECT_EQ(odd.left, 6);
  EXPECT_EQ(node_list({2, 3}), "2+3");
  EXPECT_EQ(node_list({7}), "7");
}

TEST(AcceptBisection, IntoTheSlowerHalfElseTheOddNodeOut) {
  const Halves even = halve({0, 1, 2, 3});
  EXPECT_EQ(next_bisection_set(even, 1, 10, 0.9), (std::vector<int>{0, 1}));
  EXPECT_EQ(next_bisection_set(even, 10, 1, 0.9), (std::vector<int>{2, 3}));
  EXPECT_FALSE(next_bisection_set(even, 10, 9.5, 0.9));  // alike, nobody left over: stop
  const Halves odd = halve({0, 1, 2, 3, 4});
  EXPECT_EQ(next_bisection_set(odd, 10, 9.5, 0.9), (std::vector<int>{4}));
  // The bar is the fraction: 2 vs 10 is alike at 0.1.
  EXPECT_FALSE(next_bisection_set(even, 2, 10, 0.1));
}
