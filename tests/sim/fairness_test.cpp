#include <gtest/gtest.h>

#include "sim/fairness.hpp"

namespace rs = railkit::sim;

TEST(SimFairness, JainIndex) {
  EXPECT_DOUBLE_EQ(rs::jain_index({5, 5, 5, 5}), 1.0);
  EXPECT_DOUBLE_EQ(rs::jain_index({1, 0, 0, 0}), 0.25);
  EXPECT_DOUBLE_EQ(rs::jain_index({}), 1.0);
  EXPECT_NEAR(rs::jain_index({1, 2}), 9.0 / 10.0, 1e-12);
}

TEST(SimFairness, MaxMinByProgressiveFilling) {
  // Links 0 (cap 10) and 1 (cap 4): flow A on both, B on 0 only, C on 1 only.
  // Link 1 limits A and C to 2 each; B takes what is left of link 0: 8.
  const auto r = rs::maxmin_rates({{0, 1}, {0}, {1}}, {10, 4});
  ASSERT_EQ(r.size(), 3u);
  EXPECT_NEAR(r[0], 2, 1e-9);
  EXPECT_NEAR(r[1], 8, 1e-9);
  EXPECT_NEAR(r[2], 2, 1e-9);
}

TEST(SimFairness, IncastSharesTheBottleneck) {
  std::vector<std::vector<int>> paths;
  for (int i = 0; i < 16; ++i) paths.push_back({i, 16});  // own uplink, shared downlink
  std::vector<double> cap(17, 100.0);
  for (double r : rs::maxmin_rates(paths, cap)) EXPECT_NEAR(r, 6.25, 1e-9);
}
