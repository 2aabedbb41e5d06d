// The v1 and v3 tables of libnccl-profiler-railkit.so (NCCL 2.23 and 2.25), loaded with dlopen in
// this process and called as those NCCL versions call them: init without communicator details,
// descriptors that carry the rank and comm hash, v1 with numbers for func and datatype.
#include <dlfcn.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "monitor/plugin/nccl_profiler_abi.h"
#include "temp_dir.hpp"

namespace {

namespace abi = railkit::nccl_prof_abi;
using nlohmann::json;

std::vector<json> read_lines(const std::filesystem::path& dir) {
  std::vector<json> out;
  for (const auto& e : std::filesystem::directory_iterator(dir))
    if (e.path().extension() == ".jsonl") {
      std::ifstream in(e.path());
      for (std::string l; std::getline(in, l);) out.push_back(json::parse(l));
    }
  return out;
}

template <class Table>
const Table* load(const char* symbol) {
  void* lib = dlopen(RAILKIT_PROFILER_PLUGIN_PATH, RTLD_NOW | RTLD_LOCAL);
  return lib ? static_cast<const Table*>(dlsym(lib, symbol)) : nullptr;
}

TEST(ProfilerPluginOldAbi, V1CompletesAtEnqueueAndKeepsProxyBytes) {
  railkit::test::TempDir dir("railkit-plugin-v1");
  setenv("RAILKIT_MONITOR_DIR", dir.path.c_str(), 1);
  setenv("RAILKIT_MONITOR_WINDOW_S", "0.05", 1);
  const auto* v1 = load<abi::ProfilerV1>("ncclProfiler_v1");
  ASSERT_NE(v1, nullptr);
  void* ctx = nullptr;
  int mask = 0;
  ASSERT_EQ(v1->init(&ctx, &mask), abi::kSuccess);
  EXPECT_EQ(mask, abi::kColl | abi::kP2p | abi::kProxyOp | abi::kProxyStep);
  abi::EventDescrV1 d;
  std::memset(&d, 0, sizeof d);
  d.type = abi::kColl;
  d.rank = 3;
  d.coll.commHash = 0x77;
  d.coll.seqNumber = 9;
  d.coll.func = 4;      // ncclFuncAllReduce
  d.coll.datatype = 7;  // ncclFloat32
  d.coll.count = 1024;
  d.coll.algo = 1;      // RING
  d.coll.proto = 2;     // SIMPLE
  void* coll = nullptr;
  v1->startEvent(ctx, &coll, &d);
  ASSERT_NE(coll, nullptr);
  v1->stopEvent(coll);  // no kernel events before v3: complete at enqueue
  abi::EventDescrV1 op;
  std::memset(&op, 0, sizeof op);
  op.type = abi::kProxyOp;
  op.parentObj = coll;  // NCCL passes the (stopped) task handle
  op.rank = 3;
  op.proxyOp = {getpid(), 1, 4, 2, 2048, 1};
  void* h = nullptr;
  v1->startEvent(ctx, &h, &op);
  ASSERT_NE(h, nullptr);
  abi::StateArgsV1 a{};
  a.proxyOp.transSize = 4096;
  v1->recordEventState(h, static_cast<abi::EventState>(3), &a);  // ProxyOpSendDone
  v1->stopEvent(h);
  v1->stopEvent(nullptr);  // tolerated
  v1->finalize(ctx);
  const auto lines = read_lines(dir.path);
  ASSERT_FALSE(lines.empty());
  const json& l = lines.back();
  EXPECT_EQ(l["abi"], "v1");
  EXPECT_EQ(l["rank"], 3);
  EXPECT_EQ(l["comm"], "0x0000000000000077");
  EXPECT_EQ(l["nranks"], 0);
  json colls = json::array(), proxy = json::array();
  for (const auto& x : lines) {
    for (const auto& c : x["colls"]) colls.push_back(c);
    for (const auto& p : x["proxy"]) proxy.push_back(p);
  }
  ASSERT_EQ(colls.size(), 1u);
  EXPECT_EQ(colls[0]["op"], "AllReduce");
  EXPECT_EQ(colls[0]["bytes"], 4096);
  EXPECT_EQ(colls[0]["algo"], "RING");
  EXPECT_EQ(colls[0]["timing"], "enqueue");
  EXPECT_TRUE(colls[0]["busbw_GBps"]["p50"].is_null());
  ASSERT_EQ(proxy.size(), 1u);
  EXPECT_EQ(proxy[0]["channel"], 1);
  EXPECT_EQ(proxy[0]["peer"], 4);
  EXPECT_EQ(proxy[0]["bytes"], 4096);
}

TEST(ProfilerPluginOldAbi, V3TimesCollectivesByTheProxysViewOfTheKernel) {
  railkit::test::TempDir dir("railkit-plugin-v3");
  setenv("RAILKIT_MONITOR_DIR", dir.path.c_str(), 1);
  setenv("RAILKIT_MONITOR_WINDOW_S", "0.05", 1);
  const auto* v3 = load<abi::ProfilerV3>("ncclProfiler_v3");
  ASSERT_NE(v3, nullptr);
  void* ctx = nullptr;
  int mask = 0;
  ASSERT_EQ(v3->init(&ctx, &mask), abi::kSuccess);
  abi::EventDescrV3 d;
  std::memset(&d, 0, sizeof d);
  d.type = abi::kColl;
  d.rank = 1;
  d.coll.commHash = 0x99;
  d.coll.func = "AllGather";
  d.coll.datatype = "ncclInt8";
  d.coll.count = 1 << 20;
  d.coll.nMaxChannels = 1;
  d.coll.algo = "RING";
  d.coll.proto = "LL128";
  void* coll = nullptr;
  v3->startEvent(ctx, &coll, &d);
  v3->stopEvent(coll);  // enqueued; waits for its kernel channel
  abi::EventDescrV3 k;
  std::memset(&k, 0, sizeof k);
  k.type = abi::kKernelCh;
  k.parentObj = coll;
  void* kh = nullptr;
  v3->startEvent(ctx, &kh, &k);
  ASSERT_NE(kh, nullptr);
  usleep(2000);
  v3->stopEvent(kh);
  v3->finalize(ctx);
  json colls = json::array();
  for (const auto& x : read_lines(dir.path))
    for (const auto& c : x["colls"]) colls.push_back(c);
  ASSERT_EQ(colls.size(), 1u);
  EXPECT_EQ(colls[0]["op"], "AllGather");
  EXPECT_EQ(colls[0]["bytes"], 1 << 20);  // no rank count before v4: bytes per rank
  EXPECT_EQ(colls[0]["timing"], "proxy");
  EXPECT_GE(colls[0]["time_us"]["p50"].get<double>(), 1500);
}

}  // namespace
