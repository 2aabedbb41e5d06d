// The nccl backend's rules that need no GPU (bench/nccl/nccl_rules.hpp): which GPUs a process
// drives, how many ranks share a GPU's memory, and what NCCL makes of NCCL_COMM_BLOCKING.
#include "bench/nccl/nccl_rules.hpp"

#include <gtest/gtest.h>

namespace railkit::bench::nccl {
namespace {

NcclSetup setup(int local_rank, int gpus, std::optional<int> device = std::nullopt) {
  NcclSetup s;
  s.local_rank = local_rank;
  s.gpus = gpus;
  s.device = device;
  return s;
}

TEST(NcclRules, FirstDeviceFollowsNcclTests) {
  EXPECT_EQ(first_device(setup(0, 1), 8), 0);
  EXPECT_EQ(first_device(setup(9, 1), 8), 1);  // one GPU per process wraps
  EXPECT_EQ(first_device(setup(1, 4), 8), 4);  // -g 4: local rank 1 drives 4..7
  EXPECT_EQ(first_device(setup(3, 2, 5), 8), 5);
  EXPECT_THROW(first_device(setup(2, 4), 8), UsageError);
  EXPECT_THROW(first_device(setup(0, 1, 8), 8), UsageError);
  EXPECT_THROW(first_device(setup(0, 0), 8), UsageError);
}

TEST(NcclRules, RanksOnDeviceCountsEveryProcessThatSharesIt) {
  // 4 processes of one GPU each on 2 visible GPUs: local ranks 0 and 2 on GPU 0, 1 and 3 on GPU 1.
  EXPECT_EQ(ranks_on_device(setup(0, 1), 2, 4, 0), 2);
  EXPECT_EQ(ranks_on_device(setup(1, 1), 2, 4, 1), 2);
  // 3 processes on 2 GPUs: GPU 0 holds local ranks 0 and 2.
  EXPECT_EQ(ranks_on_device(setup(0, 1), 2, 3, 0), 2);
  EXPECT_EQ(ranks_on_device(setup(1, 1), 2, 3, 1), 1);
  // --device 0 for every process: all of them on GPU 0.
  EXPECT_EQ(ranks_on_device(setup(0, 1, 0), 8, 8, 0), 8);
  // -g 4, 2 processes on 8 GPUs: one rank per GPU.
  EXPECT_EQ(ranks_on_device(setup(0, 4), 8, 2, 3), 1);
  EXPECT_EQ(ranks_on_device(setup(1, 4), 8, 2, 7), 1);
  // A process whose range does not fit (local rank 2 of -g 4 on 8 GPUs) is not counted.
  EXPECT_EQ(ranks_on_device(setup(0, 4), 8, 3, 0), 1);
}

TEST(NcclRules, CommBlockingOverridesTheConfigAsNcclParsesIt) {
  EXPECT_TRUE(effective_blocking(true, nullptr).blocking);
  EXPECT_FALSE(effective_blocking(true, nullptr).overridden);
  EXPECT_FALSE(effective_blocking(false, "").blocking);  // empty: ignored
  const BlockingMode zero = effective_blocking(true, "0");
  EXPECT_FALSE(zero.blocking);
  EXPECT_TRUE(zero.overridden);
  EXPECT_TRUE(effective_blocking(false, "1").blocking);
  EXPECT_TRUE(effective_blocking(false, "0x1").overridden);  // strtoll base 0
  EXPECT_FALSE(effective_blocking(true, "abc").blocking);    // no digits read as 0, as NCCL reads them
  EXPECT_TRUE(effective_blocking(true, "2").blocking);       // neither 0 nor 1: the config stands
  EXPECT_FALSE(effective_blocking(true, "2").overridden);
  EXPECT_TRUE(effective_blocking(true, "99999999999999999999").blocking);  // range error: ignored
  EXPECT_FALSE(effective_blocking(false, "0").overridden);  // same as asked
}

TEST(NcclRules, BlockingFactSaysWhatNcclUsedAndWhy) {
  EXPECT_EQ(blocking_fact(BlockingMode{true, false}, true, ""), "blocking");
  EXPECT_EQ(blocking_fact(effective_blocking(true, "0"), true, "0"),
            "non-blocking (NCCL_COMM_BLOCKING=0 overrode the blocking config railkit-bench asked for)");
  EXPECT_EQ(blocking_fact(BlockingMode{false, true}, true, ""),
            "non-blocking (NCCL's init returned ncclInProgress, overriding the blocking config railkit-bench asked for)");
}

}  // namespace
}  // namespace railkit::bench::nccl
