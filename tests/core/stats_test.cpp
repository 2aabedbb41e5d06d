#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "core/stats.hpp"

TEST(Stats, SummaryOfKnownSamples) {
  const std::vector<double> v{4, 1, 3, 2, 5};
  const railkit::Summary s = railkit::summarize(v);
  EXPECT_DOUBLE_EQ(s.avg, 3.0);
  EXPECT_DOUBLE_EQ(s.min, 1.0);
  EXPECT_DOUBLE_EQ(s.max, 5.0);
  EXPECT_DOUBLE_EQ(s.p50, 3.0);
  EXPECT_NEAR(s.p99, 4.96, 1e-12);          // linear interpolation: 4 + 0.96
  EXPECT_NEAR(s.cv, std::sqrt(2.0) / 3.0, 1e-12);  // population stddev sqrt(2)
}

TEST(Stats, PercentileInterpolates) {
  const std::vector<double> v{10, 20};
  EXPECT_DOUBLE_EQ(railkit::percentile_sorted(v, 0), 10);
  EXPECT_DOUBLE_EQ(railkit::percentile_sorted(v, 50), 15);
  EXPECT_DOUBLE_EQ(railkit::percentile_sorted(v, 100), 20);
}

TEST(Stats, EmptyAndSingle) {
  EXPECT_DOUBLE_EQ(railkit::summarize(std::vector<double>{}).avg, 0.0);
  const railkit::Summary one = railkit::summarize(std::vector<double>{7});
  EXPECT_DOUBLE_EQ(one.p99, 7);
  EXPECT_DOUBLE_EQ(one.cv, 0);
  EXPECT_DOUBLE_EQ(railkit::median(std::vector<double>{3, 1, 2, 10}), 2.5);
}
