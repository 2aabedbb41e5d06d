// The tuner ABI declared in profiles/plugin/nccl_tuner_abi.h against the numbers NCCL's own headers
// give. Source of every expected value: a probe compiled (g++ 12, x86_64 Linux) against NCCL
// v2.28.9-1 src/include/plugin/nccl_tuner.h + plugin/tuner/tuner_v{4,5}.h + nccl_common.h and the
// installed CUDA 13 nccl.h 2.28.9, printing sizeof/alignof/offsetof and the enum values.
#include <cstddef>
#include <type_traits>

#include <gtest/gtest.h>

#include "profiles/plugin/nccl_tuner_abi.h"

namespace {

namespace abi = railkit::nccl_abi;

TEST(TunerAbi, StructLayoutsMatchNccl2289) {
  // ncclTuner_v5_t: name, init, getCollInfo, finalize
  EXPECT_EQ(sizeof(abi::TunerV5), 32u);
  EXPECT_EQ(alignof(abi::TunerV5), 8u);
  EXPECT_EQ(offsetof(abi::TunerV5, name), 0u);
  EXPECT_EQ(offsetof(abi::TunerV5, init), 8u);
  EXPECT_EQ(offsetof(abi::TunerV5, getCollInfo), 16u);
  EXPECT_EQ(offsetof(abi::TunerV5, finalize), 24u);
  // ncclTuner_v4_t: name, init, getCollInfo, destroy
  EXPECT_EQ(sizeof(abi::TunerV4), 32u);
  EXPECT_EQ(offsetof(abi::TunerV4, name), 0u);
  EXPECT_EQ(offsetof(abi::TunerV4, init), 8u);
  EXPECT_EQ(offsetof(abi::TunerV4, getCollInfo), 16u);
  EXPECT_EQ(offsetof(abi::TunerV4, destroy), 24u);
  // ncclNvlDomainInfo_v5_t
  EXPECT_EQ(sizeof(abi::NvlDomainInfoV5), 12u);
  EXPECT_EQ(alignof(abi::NvlDomainInfoV5), 4u);
  EXPECT_EQ(offsetof(abi::NvlDomainInfoV5, nNvlDomains), 0u);
  EXPECT_EQ(offsetof(abi::NvlDomainInfoV5, minRanksPerNvlDomain), 4u);
  EXPECT_EQ(offsetof(abi::NvlDomainInfoV5, maxRanksPerNvlDomain), 8u);
  // ncclTunerConstants_v5_t
  EXPECT_EQ(sizeof(abi::TunerConstantsV5), 1152u);
  EXPECT_EQ(offsetof(abi::TunerConstantsV5, baseLatencies), 0u);
  EXPECT_EQ(offsetof(abi::TunerConstantsV5, hwLatencies), 168u);
  EXPECT_EQ(offsetof(abi::TunerConstantsV5, llMaxBws), 672u);
  EXPECT_EQ(offsetof(abi::TunerConstantsV5, perChMaxRingLL128Bws), 768u);
  EXPECT_EQ(offsetof(abi::TunerConstantsV5, perChMaxTreeLL128Bws), 864u);
  EXPECT_EQ(offsetof(abi::TunerConstantsV5, perChMaxTreeBws), 960u);
  EXPECT_EQ(offsetof(abi::TunerConstantsV5, perChMaxNVLSTreeBws), 1056u);
}

TEST(TunerAbi, EnumsAndConstantsMatchNccl2289) {
  // ncclResult_t, ncclFunc_t, ncclDebugLogLevel are C enums of 4 bytes.
  EXPECT_EQ(sizeof(abi::Result), 4u);
  EXPECT_EQ(sizeof(abi::Func), 4u);
  EXPECT_EQ(sizeof(abi::LogLevel), 4u);
  EXPECT_EQ(abi::kSuccess, 0);
  EXPECT_EQ(abi::kInternalError, 3);
  EXPECT_EQ(abi::kLogWarn, 2);
  EXPECT_EQ(abi::kLogInfo, 3);
  EXPECT_EQ(abi::kLogTrace, 5);
  EXPECT_EQ(abi::kSubsysInit, 0x1ul);
  EXPECT_EQ(abi::kSubsysTuning, 0x40ul);
  EXPECT_EQ(abi::kFuncBroadcast, 0);
  EXPECT_EQ(abi::kFuncReduce, 1);
  EXPECT_EQ(abi::kFuncAllGather, 2);
  EXPECT_EQ(abi::kFuncReduceScatter, 3);
  EXPECT_EQ(abi::kFuncAllReduce, 4);
  EXPECT_EQ(abi::kNumAlgorithms, 7);
  EXPECT_EQ(abi::kNumProtocols, 3);
  EXPECT_EQ(abi::kAlgoTree, 0);
  EXPECT_EQ(abi::kAlgoRing, 1);
  EXPECT_EQ(abi::kAlgoCollNetDirect, 2);
  EXPECT_EQ(abi::kAlgoCollNetChain, 3);
  EXPECT_EQ(abi::kAlgoNvls, 4);
  EXPECT_EQ(abi::kAlgoNvlsTree, 5);
  EXPECT_EQ(abi::kAlgoPat, 6);
  EXPECT_EQ(abi::kProtoLL, 0);
  EXPECT_EQ(abi::kProtoLL128, 1);
  EXPECT_EQ(abi::kProtoSimple, 2);
  EXPECT_EQ(abi::kIgnore, -1.0f);
}

// The function signatures, parameter by parameter, as tuner_v5.h / tuner_v4.h declare them.
static_assert(std::is_same_v<decltype(abi::TunerV5::init),
                             abi::Result (*)(void**, std::uint64_t, std::size_t, std::size_t, abi::Logger,
                                             abi::NvlDomainInfoV5*, abi::TunerConstantsV5*)>);
static_assert(std::is_same_v<decltype(abi::TunerV4::init),
                             abi::Result (*)(std::size_t, std::size_t, abi::Logger, void**)>);
static_assert(std::is_same_v<abi::GetCollInfoFn, abi::Result (*)(void*, abi::Func, std::size_t, int, float**, int, int,
                                                                 int, int*)>);
static_assert(std::is_same_v<abi::Logger, void (*)(abi::LogLevel, unsigned long, const char*, int, const char*, ...)>);

}  // namespace
