#include <gtest/gtest.h>

#include "bench/harness.hpp"

using namespace railkit::bench;
using railkit::ResultRecord;

TEST(Harness, ReduceAcrossRanks) {
  const std::vector<double> v{4, 1, 7};
  EXPECT_DOUBLE_EQ(reduce_across_ranks(v, Average::Rank0), 4);
  EXPECT_DOUBLE_EQ(reduce_across_ranks(v, Average::Avg), 4);
  EXPECT_DOUBLE_EQ(reduce_across_ranks(v, Average::Min), 1);
  EXPECT_DOUBLE_EQ(reduce_across_ranks(v, Average::Max), 7);
}

TEST(Harness, RecordUsesNcclTestsFormulas) {
  BenchOptions o;
  o.iters = 2;
  o.average = Average::Avg;
  const CollSizes s = coll_sizes(Coll::AllReduce, 1 << 20, 4, 4);
  // per rank: loop time per op, wrong elements, then two per-iteration times
  const std::vector<double> g{10, 0, 9, 11, 12, 1, 11, 13, 10, 0, 9, 11, 8, 2, 7, 9};
  const std::vector<int> members{0, 1, 2, 3};
  const std::vector<std::string> hosts{"a", "b", "c", "d"};
  const ResultRecord r = make_record(Coll::AllReduce, s, o, false, 0, g, members, true, hosts);
  EXPECT_DOUBLE_EQ(r.time_us.avg, (10 + 12 + 10 + 8) / 4.0);
  EXPECT_DOUBLE_EQ(r.algbw_GBps, (1 << 20) / r.time_us.avg / 1e3);
  EXPECT_DOUBLE_EQ(r.busbw_GBps, r.algbw_GBps * 2 * 3 / 4);
  EXPECT_DOUBLE_EQ(r.ranks.time_us_max, 12);
  EXPECT_DOUBLE_EQ(r.ranks.time_us_min, 8);
  EXPECT_EQ(r.ranks.slowest_rank, 1);
  EXPECT_EQ(r.ranks.slowest_host, "b");
  EXPECT_EQ(r.wrong, 3);
  // per-iteration series averaged across ranks: iter0 (9+11+9+7)/4 = 9, iter1 (11+13+11+9)/4 = 11
  EXPECT_DOUBLE_EQ(r.time_us.min, 9);
  EXPECT_DOUBLE_EQ(r.time_us.max, 11);
  EXPECT_EQ(r.redop, "sum");
  EXPECT_EQ(r.root, -1);
  EXPECT_EQ(r.count, 262144u);
}

TEST(Harness, RecordForGatherHasNoRedopAndPerRankCount) {
  BenchOptions o;
  o.iters = 1;
  o.average = Average::Max;
  const CollSizes s = coll_sizes(Coll::AllGather, 4096, 4, 2);
  const std::vector<double> g{5, 0, 5, 20, 0, 20};
  const std::vector<int> members{1, 3};  // a group of world ranks 1 and 3
  const ResultRecord r = make_record(Coll::AllGather, s, o, true, 1, g, members, false, {"w", "x", "y", "z"});
  EXPECT_EQ(r.redop, "none");
  EXPECT_EQ(r.count, 512u);
  EXPECT_EQ(r.bytes, 4096u);
  EXPECT_DOUBLE_EQ(r.time_us.avg, 20);
  EXPECT_DOUBLE_EQ(r.busbw_GBps, r.algbw_GBps * 0.5);
  EXPECT_FALSE(r.wrong.has_value());
  EXPECT_TRUE(r.in_place);
  EXPECT_EQ(r.cycle, 1);
  EXPECT_EQ(r.ranks.slowest_rank, 3);
  EXPECT_EQ(r.ranks.slowest_host, "z");
}

TEST(Harness, PlanSizesBuffersAndNotes) {
  BenchOptions o;
  o.min_bytes = 8;
  o.max_bytes = 1 << 20;
  o.step_factor = 4;
  o.colls = {Coll::AllReduce, Coll::AllGather};
  const Plan p = make_plan(o, 3);
  EXPECT_EQ(p.sizes.front(), 8u);
  EXPECT_EQ(p.sizes.back(), 1u << 19);
  EXPECT_EQ(p.buffer_bytes, 1u << 19);
  ASSERT_EQ(p.notes.size(), 2u);
  // nccl-tests' rule: per-rank blocks of whole 16 B, so 3 ranks take multiples of 48 B.
  EXPECT_NE(p.notes[0].find("all_gather: 7 sizes rounded down to a multiple of 48 B (3 ranks x 16 B"), std::string::npos)
      << p.notes[0];
  EXPECT_NE(p.notes[1].find("all_gather: 2 sizes below 48 B skipped: less than 16 B per rank"), std::string::npos)
      << p.notes[1];
}
