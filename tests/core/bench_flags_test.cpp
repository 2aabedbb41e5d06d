// core's table of railkit-bench flags and the argv functions over it (the bench side holds the
// table to its CLI11 options: tests/bench/options_test.cpp).
#include "core/bench_flags.hpp"

#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "test_util.hpp"

namespace railkit {
namespace {

using Args = std::vector<std::string>;

TEST(BenchFlags, SpellingsAreUniqueAndWellFormed) {
  std::set<std::string_view> seen;
  for (const BenchFlagSpec& s : bench_flags()) {
    EXPECT_TRUE(s.long_name.starts_with("--") && s.long_name.size() > 3) << s.long_name;
    EXPECT_TRUE(s.short_name.empty() || (s.short_name.size() == 2 && s.short_name[0] == '-')) << s.long_name;
    EXPECT_FALSE(s.control.empty()) << s.long_name;
    for (std::string_view n : {s.short_name, s.long_name, s.negation})
      if (!n.empty()) {
        EXPECT_TRUE(seen.insert(n).second) << n << " twice";
      }
    EXPECT_EQ(&bench_flag(s.flag), &s);
  }
  EXPECT_EQ(bench_flag_name(BenchFlag::OutputFile), "-J");
  EXPECT_EQ(bench_flag_name(BenchFlag::Coll), "--coll");
  EXPECT_EQ(bench_flag_names(BenchFlag::RunCycles), "-N/--run_cycles");
  EXPECT_EQ(bench_flag_args(BenchFlag::Iters, "5"), (Args{"-n", "5"}));
}

TEST(BenchFlags, FindsEveryFormCli11Reads) {
  EXPECT_TRUE(sets_bench_flag({"-n", "5"}, BenchFlag::Iters));
  EXPECT_TRUE(sets_bench_flag({"-n5"}, BenchFlag::Iters));
  EXPECT_TRUE(sets_bench_flag({"--iters=5"}, BenchFlag::Iters));
  EXPECT_FALSE(sets_bench_flag({"--itersx"}, BenchFlag::Iters));
  EXPECT_FALSE(sets_bench_flag({"--nonblocking"}, BenchFlag::Iters));
  EXPECT_TRUE(sets_bench_flag({"--no-observe"}, BenchFlag::Observe));
  EXPECT_EQ(bench_flag_values({"--sim-set", "a=1", "--sim-set=b=2", "--sim-set"}, BenchFlag::SimSet),
            (Args{"a=1", "b=2"}));
  EXPECT_EQ(last_bench_flag_value({"--backend", "mpi", "--backend=sim"}, BenchFlag::Backend), "sim");
  EXPECT_EQ(last_bench_flag_value({"--backend"}, BenchFlag::Backend), std::nullopt);
  // A value is never read as a flag of its own; a switch never takes the next argument.
  EXPECT_EQ(bench_flag_values({"--label", "--label", "x"}, BenchFlag::Label), (Args{"--label"}));
  EXPECT_EQ(find_bench_flag({"--sync", "-n"}, BenchFlag::Sync).front().span, 1u);
}

TEST(BenchFlags, TakeDropAndEdit) {
  Args a{"-n", "3", "-b", "8", "--iters=4"};
  EXPECT_EQ(take_bench_flag(a, BenchFlag::Iters), "4");
  EXPECT_EQ(a, (Args{"-b", "8"}));
  Args missing{"-b", "8", "--iters"};
  EXPECT_EQ(test::usage_error_of([&] { take_bench_flag(missing, BenchFlag::Iters); }),
            "--iters: missing value in the bench arguments");
  const BenchFlag drop[] = {BenchFlag::MinBytes, BenchFlag::Coll};
  EXPECT_EQ(without_bench_flags({"-b4K", "-e", "8K", "--coll=x", "-b", "1", "--coll"}, drop), (Args{"-e", "8K"}));
  Args c{"--sim-cluster", "a", "--sim-cluster=b", "-n5"};
  edit_bench_flag_values(c, BenchFlag::SimCluster, [](const std::string& v) { return "/x/" + v; });
  EXPECT_EQ(c, (Args{"--sim-cluster", "/x/a", "--sim-cluster=/x/b", "-n5"}));
}

}  // namespace
}  // namespace railkit
