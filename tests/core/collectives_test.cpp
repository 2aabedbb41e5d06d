// core's collectives table against the sources it transcribes: railkit-bench's --coll names,
// NCCL 2.28's ncclFunc_t (nccl_common.h) and ncclFuncStr, NVIDIA's example tuner CSV names,
// Open MPI 4.1's COLLTYPE (coll_base_functions.h) and nccl-tests' bus bandwidth factors.
#include "core/collectives.hpp"

#include <iterator>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace railkit {
namespace {

TEST(Collectives, NamesInRailkitBenchOrder) {
  std::vector<std::string> names;
  for (const Collective& c : collectives()) names.emplace_back(c.name);
  EXPECT_EQ(names, (std::vector<std::string>{"all_reduce", "all_gather", "reduce_scatter", "broadcast", "reduce",
                                             "alltoall", "sendrecv"}));
  EXPECT_EQ(collective_names(), "all_reduce, all_gather, reduce_scatter, broadcast, reduce, alltoall, sendrecv");
  EXPECT_EQ(find_collective("reduce_scatter")->nccl_name, "ReduceScatter");
  EXPECT_EQ(find_collective("allreduce"), nullptr);  // NCCL's and the CSV's spelling is not railkit-bench's
}

TEST(Collectives, TheFiveTheNcclTunerIsAskedAbout) {
  // ncclFuncBroadcast 0, Reduce 1, AllGather 2, ReduceScatter 3, AllReduce 4.
  const char* csv[] = {"broadcast", "reduce", "allgather", "reducescatter", "allreduce"};
  const char* bench[] = {"broadcast", "reduce", "all_gather", "reduce_scatter", "all_reduce"};
  for (int f = 0; f <= 4; ++f) {
    const Collective* c = collective_of_nccl_func(f);
    ASSERT_NE(c, nullptr) << f;
    EXPECT_EQ(c->tuner_csv, csv[f]);
    EXPECT_EQ(c->name, bench[f]);
  }
  EXPECT_EQ(collective_of_nccl_func(5)->name, "sendrecv");
  EXPECT_EQ(collective_of_nccl_func(-1), nullptr);
  EXPECT_EQ(collective_of_nccl_func(8), nullptr);
  EXPECT_EQ(find_collective("alltoall")->nccl_func, -1);
}

TEST(Collectives, OpenMpiIds) {
  EXPECT_EQ(find_collective("all_gather")->ompi_id, 0);
  EXPECT_EQ(find_collective("all_reduce")->ompi_id, 2);
  EXPECT_EQ(find_collective("alltoall")->ompi_id, 3);
  EXPECT_EQ(find_collective("broadcast")->ompi_id, 7);
  EXPECT_EQ(find_collective("broadcast")->ompi_name, "bcast");
  EXPECT_EQ(find_collective("reduce")->ompi_id, 11);
  EXPECT_EQ(find_collective("reduce_scatter")->ompi_id, 12);
  EXPECT_EQ(find_collective("sendrecv")->ompi_id, -1);
}

TEST(Collectives, BusbwFactorsAsNcclTests) {
  EXPECT_DOUBLE_EQ(busbw_factor(*find_collective("all_reduce"), 8), 2.0 * 7 / 8);
  EXPECT_DOUBLE_EQ(busbw_factor(*find_collective("all_gather"), 8), 7.0 / 8);
  EXPECT_DOUBLE_EQ(busbw_factor(*find_collective("reduce_scatter"), 4), 3.0 / 4);
  EXPECT_DOUBLE_EQ(busbw_factor(*find_collective("alltoall"), 2), 0.5);
  EXPECT_DOUBLE_EQ(busbw_factor(*find_collective("broadcast"), 8), 1.0);
  EXPECT_DOUBLE_EQ(busbw_factor(*find_collective("sendrecv"), 2), 1.0);
  EXPECT_DOUBLE_EQ(busbw_factor(*find_collective("all_reduce"), 0), 0.0);  // counts as 1 rank
  EXPECT_EQ(find_collective("all_gather")->per_rank, PerRankRule::Shared);
  EXPECT_EQ(find_collective("all_reduce")->per_rank, PerRankRule::Whole);
}

TEST(Collectives, OneRowPerKindInItsOrder) {
  ASSERT_EQ(collectives().size(), static_cast<std::size_t>(kCollKinds));
  for (std::size_t i = 0; i < collectives().size(); ++i) {
    const Collective& c = collectives()[i];
    EXPECT_EQ(static_cast<std::size_t>(c.kind), i) << c.name;
    EXPECT_EQ(&collective(c.kind), &c) << c.name;
    EXPECT_EQ(find_collective(c.name), &c) << c.name;
  }
}

TEST(Collectives, BuffersChecksAndPointToPointAsNcclTests) {
  struct Want {
    const char* name;
    Blocks blocks;
    ExpectRule expect;
    bool p2p;
  };
  const Want want[] = {
      {"all_reduce", Blocks::None, ExpectRule::Reduced, false},
      {"all_gather", Blocks::Recv, ExpectRule::RankBlocks, false},
      {"reduce_scatter", Blocks::Send, ExpectRule::ReducedOwnBlock, false},
      {"broadcast", Blocks::None, ExpectRule::RootInput, false},
      {"reduce", Blocks::None, ExpectRule::ReducedAtRoot, false},
      {"alltoall", Blocks::Both, ExpectRule::ExchangedBlocks, true},
      {"sendrecv", Blocks::None, ExpectRule::PreviousRank, true},
  };
  ASSERT_EQ(std::size(want), collectives().size());
  for (const Want& w : want) {
    const Collective* c = find_collective(w.name);
    ASSERT_NE(c, nullptr) << w.name;
    EXPECT_EQ(c->blocks, w.blocks) << w.name;
    EXPECT_EQ(c->per_rank == PerRankRule::Shared, w.blocks != Blocks::None) << w.name;
    EXPECT_EQ(c->expect, w.expect) << w.name;
    EXPECT_EQ(c->point_to_point, w.p2p) << w.name;
  }
}

TEST(Collectives, ExpectedSourceOfAnOutputElement) {
  // Rank 2 of 4, root 1, 10 elements per rank block, output element 23.
  auto src = [](ExpectRule r) { return expect_source(r, 23, 10, 2, 1, 4); };
  auto same = [](ExpectSource a, bool reduced, unsigned long long rank, unsigned long long index) {
    return a.reduced == reduced && (reduced || a.rank == rank) && a.index == index;
  };
  EXPECT_TRUE(same(src(ExpectRule::Reduced), true, 0, 23));
  EXPECT_TRUE(same(src(ExpectRule::ReducedAtRoot), true, 0, 23));
  EXPECT_TRUE(same(src(ExpectRule::ReducedOwnBlock), true, 0, 43));
  EXPECT_TRUE(same(src(ExpectRule::RootInput), false, 1, 23));
  EXPECT_TRUE(same(src(ExpectRule::RankBlocks), false, 2, 3));
  EXPECT_TRUE(same(src(ExpectRule::ExchangedBlocks), false, 2, 23));
  EXPECT_TRUE(same(src(ExpectRule::PreviousRank), false, 1, 23));
  EXPECT_TRUE(same(expect_source(ExpectRule::PreviousRank, 5, 10, 0, 1, 4), false, 3, 5));
  EXPECT_FALSE(has_expected_output(ExpectRule::ReducedAtRoot, 2, 1));
  EXPECT_TRUE(has_expected_output(ExpectRule::ReducedAtRoot, 1, 1));
  EXPECT_TRUE(has_expected_output(ExpectRule::RootInput, 2, 1));
}

TEST(Collectives, NamesJoined) {
  EXPECT_EQ(collective_names(" "), "all_reduce all_gather reduce_scatter broadcast reduce alltoall sendrecv");
}

}  // namespace
}  // namespace railkit
