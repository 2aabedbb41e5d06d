// core's collectives table against the sources it transcribes: railkit-bench's --coll names,
// NCCL 2.28's ncclFunc_t (nccl_common.h) and ncclFuncStr, NVIDIA's example tuner CSV names,
// Open MPI 4.1's COLLTYPE (coll_base_functions.h) and nccl-tests' bus bandwidth factors.
#include "core/collectives.hpp"

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

}  // namespace
}  // namespace railkit
