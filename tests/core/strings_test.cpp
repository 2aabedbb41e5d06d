// core/strings, core/enums and format_duration: the helpers every folder shares.
#include "core/strings.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "core/enums.hpp"
#include "core/error.hpp"
#include "core/units.hpp"

namespace railkit {
namespace {

using Strings = std::vector<std::string>;

TEST(Strings, SplitKeepsEmptyFieldsSplitNonemptyDropsThem) {
  EXPECT_EQ(split("a,,b", ','), (Strings{"a", "", "b"}));
  EXPECT_EQ(split("", ','), (Strings{""}));
  EXPECT_EQ(split("a,b,", ','), (Strings{"a", "b", ""}));
  EXPECT_EQ(split_nonempty(",a,,b,", ','), (Strings{"a", "b"}));
  EXPECT_EQ(split_ws("  mpirun\t-np  4\n"), (Strings{"mpirun", "-np", "4"}));
  EXPECT_TRUE(split_ws(" \t ").empty());
}

TEST(Strings, TrimJoinLower) {
  EXPECT_EQ(trim("  400 Gb/sec (4X NDR)\n"), "400 Gb/sec (4X NDR)");
  EXPECT_EQ(trim(std::string("1\0", 2)), "1");
  EXPECT_EQ(trim(" \t"), "");
  EXPECT_EQ(join(Strings{"a", "b", "c"}, ", "), "a, b, c");
  EXPECT_EQ(join(std::set<std::string>{"y", "x"}, ","), "x,y");
  EXPECT_EQ(join(Strings{}, ","), "");
  EXPECT_EQ(to_lower("RoCE v2"), "roce v2");
}

TEST(Strings, NaturalOrder) {
  std::vector<std::string> v{"mlx5_10", "mlx5_3", "mlx5_11", "mlx5_0", "mlx5_1", "GPU10", "GPU2"};
  std::sort(v.begin(), v.end(), [](const std::string& a, const std::string& b) { return natural_less(a, b); });
  EXPECT_EQ(v, (Strings{"GPU2", "GPU10", "mlx5_0", "mlx5_1", "mlx5_3", "mlx5_10", "mlx5_11"}));
  EXPECT_TRUE(natural_less("mlx5_01", "mlx5_1") != natural_less("mlx5_1", "mlx5_01"));  // a strict order still
  EXPECT_FALSE(natural_less("a", "a"));
}

TEST(Strings, ParseIntNamesTheInput) {
  EXPECT_EQ(parse_int("--np", "16", 1, 1024), 16);
  try {
    parse_int("--np", "16x", 1, 1024);
    FAIL();
  } catch (const UsageError& e) {
    EXPECT_STREQ(e.what(), "--np '16x': expected an integer");
  }
  try {
    parse_int("--np", "0", 1, 1024);
    FAIL();
  } catch (const UsageError& e) {
    EXPECT_STREQ(e.what(), "--np '0': must be between 1 and 1024");
  }
  EXPECT_EQ(to_int("-3"), -3);
  EXPECT_FALSE(to_int("").has_value());
  EXPECT_FALSE(to_int(" 3").has_value());
  EXPECT_EQ(to_double("2.5"), 2.5);
  EXPECT_FALSE(to_double("2.5x").has_value());
}

TEST(Enums, NamesRoundTrip) {
  for (TrialStatus s : {TrialStatus::Ok, TrialStatus::Failed, TrialStatus::Timeout, TrialStatus::Interrupted})
    EXPECT_EQ(parse_trial_status(name(s)), s);
  for (Verdict v : {Verdict::Pass, Verdict::Fail, Verdict::Skipped, Verdict::Explained, Verdict::Reported}) EXPECT_EQ(parse_verdict(name(v)), v);
  EXPECT_EQ(name(TrialStatus::Ok), "ok");
  EXPECT_EQ(name(Verdict::Skipped), "skipped");
  EXPECT_FALSE(parse_trial_status("weird").has_value());
}

TEST(Format, SlugAndDuration) {
  EXPECT_EQ(slug("NCCL_ALGO=Ring,NCCL_PROTO=LL"), "NCCL_ALGO=Ring_NCCL_PROTO=LL");
  EXPECT_EQ(slug("a/b c"), "a_b_c");
  EXPECT_EQ(slug(".hidden"), "_.hidden");
  EXPECT_EQ(slug(std::string(200, 'x')).size(), 80u);
  EXPECT_EQ(format_duration(3.3), "3.3 s");
  EXPECT_EQ(format_duration(42), "42 s");
  EXPECT_EQ(format_duration(185), "3 min 05 s");
  EXPECT_EQ(format_duration(3720), "1 h 02 min");
}

}  // namespace
}  // namespace railkit
