// The bench arguments `railkit tune` reads (-n, --coll).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "core/results.hpp"
#include "core/tunables.hpp"
#include "test_util.hpp"
#include "tuner_test_util.hpp"
#include "tuner/tune.hpp"

namespace railkit::tuner {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;
using ScratchDir = railkit::test::TempDir;
using railkit::test::usage_error_of;

// ---------------------------------------------------------------- tune: bench arguments

using Args = std::vector<std::string>;

TEST(TuneArgs, TakeItersRemovesAndReturns) {
  Args a = {"-b", "8", "-n", "5", "-e", "1M"};
  EXPECT_EQ(take_iters(a), 5);
  EXPECT_EQ(a, (Args{"-b", "8", "-e", "1M"}));
  a = {"--iters", "7", "-c", "1"};
  EXPECT_EQ(take_iters(a), 7);
  EXPECT_EQ(a, (Args{"-c", "1"}));
  a = {"--iters=9"};
  EXPECT_EQ(take_iters(a), 9);
  EXPECT_TRUE(a.empty());
  a = {"-n", "3", "--iters", "4"};  // every occurrence goes, the last wins
  EXPECT_EQ(take_iters(a), 4);
  EXPECT_TRUE(a.empty());
  a = {"-b", "8"};
  EXPECT_EQ(take_iters(a), std::nullopt);
  EXPECT_EQ(a, (Args{"-b", "8"}));
}

TEST(TuneArgs, TakeItersErrors) {
  const Args bad[] = {{"-n"}, {"-b", "8", "--iters"}, {"-n", "abc"}, {"-n", "5x"}, {"--iters="},
                      {"-n", "0"}, {"-n", "-3"}, {"-J", "out.json"}, {"--output_file", "o.json"},
                      {"-n", "5", "--output_file=o.json"}};
  for (Args a : bad) {
    std::string shown;
    for (const auto& x : a) shown += x + " ";
    EXPECT_THROW(take_iters(a), UsageError) << shown;
  }
  Args j = {"-n", "5", "-J", "x"};
  EXPECT_NE(usage_error_of([&] { take_iters(j); }).find("-J"), std::string::npos);
}

TEST(TuneArgs, TakeItersAttachedShortValue) {
  // railkit-bench (CLI11) reads "-n5" as "-n 5"; left in the bench arguments it meets the tuner's
  // own "-n N" and every trial fails with "--iters: At Most 1 required but received 2".
  Args a = {"-b", "8", "-n5"};
  EXPECT_EQ(take_iters(a), 5);
  EXPECT_EQ(a, (Args{"-b", "8"}));
}

TEST(TuneArgs, BenchCollectives) {
  EXPECT_EQ(bench_collectives({}), (Args{"all_reduce"}));
  EXPECT_EQ(bench_collectives({"-b", "8", "-e", "1M"}), (Args{"all_reduce"}));
  EXPECT_EQ(bench_collectives({"--coll", "all_reduce,all_gather"}), (Args{"all_reduce", "all_gather"}));
  EXPECT_EQ(bench_collectives({"--coll=all_gather", "-n", "5"}), (Args{"all_gather"}));
  const Args all = bench_collectives({"--coll", "all"});
  EXPECT_EQ(all, (Args{"all_reduce", "all_gather", "reduce_scatter", "broadcast", "reduce", "alltoall", "sendrecv"}));
  EXPECT_EQ(bench_collectives({"--coll", "broadcast,all"}).size(), 7u);
}


}  // namespace
}  // namespace railkit::tuner
