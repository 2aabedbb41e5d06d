// The profiler ABI as monitor/plugin/nccl_profiler_abi.h declares it, against the numbers NCCL
// v2.28.9-1's ext-profiler/example/nccl/profiler.h, profiler_v1.h .. profiler_v5.h, profiler_net.h
// and net_ib_v1.h give on x86-64 Linux: obtained by compiling a throwaway C program against those
// headers (sizeof and offsetof printed) and written here as constants.
#include <cstddef>

#include <gtest/gtest.h>

#include "monitor/plugin/nccl_profiler_abi.h"

namespace {

namespace abi = railkit::nccl_prof_abi;

TEST(ProfilerAbiLayout, V5DescriptorMatchesNccl) {
  EXPECT_EQ(sizeof(abi::EventDescrV5), 112u);
  EXPECT_EQ(offsetof(abi::EventDescrV5, parentObj), 8u);
  EXPECT_EQ(offsetof(abi::EventDescrV5, rank), 16u);
  EXPECT_EQ(offsetof(abi::EventDescrV5, groupApi.groupDepth), 28u);
  EXPECT_EQ(offsetof(abi::EventDescrV5, collApi.count), 32u);
  EXPECT_EQ(offsetof(abi::EventDescrV5, collApi.root), 48u);
  EXPECT_EQ(offsetof(abi::EventDescrV5, collApi.graphCaptured), 64u);
  EXPECT_EQ(offsetof(abi::EventDescrV5, coll.seqNumber), 24u);
  EXPECT_EQ(offsetof(abi::EventDescrV5, coll.func), 32u);
  EXPECT_EQ(offsetof(abi::EventDescrV5, coll.count), 56u);
  EXPECT_EQ(offsetof(abi::EventDescrV5, coll.datatype), 72u);
  EXPECT_EQ(offsetof(abi::EventDescrV5, coll.nChannels), 80u);
  EXPECT_EQ(offsetof(abi::EventDescrV5, coll.algo), 88u);
  EXPECT_EQ(offsetof(abi::EventDescrV5, coll.proto), 96u);
  EXPECT_EQ(offsetof(abi::EventDescrV5, coll.parentGroup), 104u);
  EXPECT_EQ(offsetof(abi::EventDescrV5, p2p.count), 48u);
  EXPECT_EQ(offsetof(abi::EventDescrV5, p2p.peer), 56u);
  EXPECT_EQ(offsetof(abi::EventDescrV5, p2p.nChannels), 60u);
  EXPECT_EQ(offsetof(abi::EventDescrV5, p2p.parentGroup), 64u);
  EXPECT_EQ(offsetof(abi::EventDescrV5, proxyOp.pid), 24u);
  EXPECT_EQ(offsetof(abi::EventDescrV5, proxyOp.channelId), 28u);
  EXPECT_EQ(offsetof(abi::EventDescrV5, proxyOp.peer), 32u);
  EXPECT_EQ(offsetof(abi::EventDescrV5, proxyOp.nSteps), 36u);
  EXPECT_EQ(offsetof(abi::EventDescrV5, proxyOp.chunkSize), 40u);
  EXPECT_EQ(offsetof(abi::EventDescrV5, proxyOp.isSend), 44u);
  EXPECT_EQ(offsetof(abi::EventDescrV5, proxyStep.step), 24u);
  EXPECT_EQ(offsetof(abi::EventDescrV5, kernelCh.channelId), 24u);
  EXPECT_EQ(offsetof(abi::EventDescrV5, kernelCh.pTimer), 32u);
  EXPECT_EQ(offsetof(abi::EventDescrV5, netPlugin.id), 24u);
  EXPECT_EQ(offsetof(abi::EventDescrV5, netPlugin.data), 32u);
  EXPECT_EQ(sizeof(abi::StateArgsV5), 8u);
  EXPECT_EQ(sizeof(abi::ProfilerV5), 48u);
  EXPECT_EQ(offsetof(abi::ProfilerV5, init), 8u);
  EXPECT_EQ(offsetof(abi::ProfilerV5, finalize), 40u);
}

TEST(ProfilerAbiLayout, V4DescriptorMatchesNccl) {
  EXPECT_EQ(sizeof(abi::EventDescrV4), 104u);
  EXPECT_EQ(offsetof(abi::EventDescrV4, parentObj), 8u);
  EXPECT_EQ(offsetof(abi::EventDescrV4, rank), 16u);
  EXPECT_EQ(offsetof(abi::EventDescrV4, coll.seqNumber), 24u);
  EXPECT_EQ(offsetof(abi::EventDescrV4, coll.nChannels), 80u);
  EXPECT_EQ(offsetof(abi::EventDescrV4, coll.algo), 88u);
  EXPECT_EQ(offsetof(abi::EventDescrV4, coll.proto), 96u);
  EXPECT_EQ(offsetof(abi::EventDescrV4, p2p.peer), 56u);
  EXPECT_EQ(offsetof(abi::EventDescrV4, p2p.nChannels), 60u);
  EXPECT_EQ(offsetof(abi::EventDescrV4, proxyOp.isSend), 44u);
  EXPECT_EQ(offsetof(abi::EventDescrV4, kernelCh.pTimer), 32u);
  EXPECT_EQ(offsetof(abi::EventDescrV4, netPlugin.data), 32u);
  EXPECT_EQ(sizeof(abi::StateArgsV4), 8u);
  EXPECT_EQ(sizeof(abi::ProfilerV4), 48u);
}

TEST(ProfilerAbiLayout, V1ToV3DescriptorsMatchNccl) {
  EXPECT_EQ(sizeof(abi::EventDescrV3), 120u);
  EXPECT_EQ(offsetof(abi::EventDescrV3, coll.commHash), 32u);
  EXPECT_EQ(offsetof(abi::EventDescrV3, coll.seqNumber), 40u);
  EXPECT_EQ(offsetof(abi::EventDescrV3, coll.count), 72u);
  EXPECT_EQ(offsetof(abi::EventDescrV3, coll.nMaxChannels), 96u);
  EXPECT_EQ(offsetof(abi::EventDescrV3, coll.algo), 104u);
  EXPECT_EQ(offsetof(abi::EventDescrV3, coll.proto), 112u);
  EXPECT_EQ(offsetof(abi::EventDescrV3, p2p.count), 64u);
  EXPECT_EQ(offsetof(abi::EventDescrV3, p2p.peer), 72u);
  EXPECT_EQ(offsetof(abi::EventDescrV3, proxyOp.isSend), 44u);
  EXPECT_EQ(offsetof(abi::EventDescrV3, kernelCh.channelId), 24u);
  EXPECT_EQ(offsetof(abi::EventDescrV3, netPlugin.data), 32u);
  EXPECT_EQ(sizeof(abi::StateArgsV1), 16u);
  EXPECT_EQ(sizeof(abi::EventDescrV2), 128u);
  EXPECT_EQ(offsetof(abi::EventDescrV2, coll.trafficBytes), 96u);
  EXPECT_EQ(offsetof(abi::EventDescrV2, coll.nMaxChannels), 104u);
  EXPECT_EQ(offsetof(abi::EventDescrV2, coll.algo), 112u);
  EXPECT_EQ(offsetof(abi::EventDescrV2, coll.proto), 120u);
  EXPECT_EQ(offsetof(abi::EventDescrV2, p2p.peer), 72u);
  EXPECT_EQ(sizeof(abi::EventDescrV1), 120u);
  EXPECT_EQ(offsetof(abi::EventDescrV1, coll.func), 48u);
  EXPECT_EQ(offsetof(abi::EventDescrV1, coll.count), 72u);
  EXPECT_EQ(offsetof(abi::EventDescrV1, coll.datatype), 84u);
  EXPECT_EQ(offsetof(abi::EventDescrV1, coll.op), 88u);
  EXPECT_EQ(offsetof(abi::EventDescrV1, coll.trafficBytes), 96u);
  EXPECT_EQ(offsetof(abi::EventDescrV1, coll.nMaxChannels), 104u);
  EXPECT_EQ(offsetof(abi::EventDescrV1, coll.algo), 106u);
  EXPECT_EQ(offsetof(abi::EventDescrV1, coll.proto), 107u);
  EXPECT_EQ(offsetof(abi::EventDescrV1, coll.isNvls), 112u);
  EXPECT_EQ(offsetof(abi::EventDescrV1, p2p.count), 64u);
  EXPECT_EQ(offsetof(abi::EventDescrV1, p2p.peer), 72u);
  EXPECT_EQ(offsetof(abi::EventDescrV1, proxyOp.isSend), 44u);
}

TEST(ProfilerAbiLayout, NetIbDescriptorAndValuesMatchNccl) {
  EXPECT_EQ(sizeof(abi::NetIbDescrV1), 40u);
  EXPECT_EQ(offsetof(abi::NetIbDescrV1, qp.device), 8u);
  EXPECT_EQ(offsetof(abi::NetIbDescrV1, qp.wr_id), 16u);
  EXPECT_EQ(offsetof(abi::NetIbDescrV1, qp.opcode), 24u);
  EXPECT_EQ(offsetof(abi::NetIbDescrV1, qp.qpNum), 28u);
  EXPECT_EQ(offsetof(abi::NetIbDescrV1, qp.length), 32u);
  EXPECT_EQ(abi::kNetTypeIb, 65536);
  EXPECT_EQ(abi::kNetIbVersion, 1);
  EXPECT_EQ(abi::kProxyStepSendGPUWait, 8);
  EXPECT_EQ(abi::kProxyStepSendWait, 9);
  EXPECT_EQ(abi::kProxyStepRecvWait, 10);
  EXPECT_EQ(abi::kProxyStepRecvFlushWait, 11);
  EXPECT_EQ(abi::kProxyStepRecvGPUWait, 12);
  EXPECT_EQ(abi::kProxyStepSendPeerWaitV4, 20);
  EXPECT_EQ(abi::kNetPluginUpdate, 21);
  EXPECT_EQ(abi::kKernelChStop, 22);
  EXPECT_EQ(abi::kKernelLaunch, 2048u);
}

}  // namespace
