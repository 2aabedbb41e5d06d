// The profiler plugin's overhead (not a test; scripts/perf/monitor_plugin_overhead.sh runs it):
// ns per callback through the dlopened libnccl-profiler-railkit.so for each event kind, called as
// NCCL calls it, and memory: the RSS a communicator's init adds and the RSS growth over 1e6
// events (must be 0: no allocation after init).
#include <stdlib.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <stdexcept>
#include <fstream>
#include <string>

#include <benchmark/benchmark.h>

#include "plugin_drive.hpp"

namespace {

namespace abi = railkit::nccl_prof_abi;
using railkit::plugin_drive::descr;
using railkit::plugin_drive::Plugin;

extern "C" void quiet_log(abi::LogLevel, unsigned long, const char*, int, const char*, ...) {}

struct Fixture {
  Plugin plugin{RAILKIT_PROFILER_PLUGIN_PATH, "v5"};
  void* ctx = nullptr;
  void* coll = nullptr;  // an open collective that proxy and kernel events hang under
  void* op = nullptr;
  void* step = nullptr;
  std::uint64_t seq = 1;

  Fixture() {
    int mask = 0;
    plugin.init(&ctx, 0x1234, &mask, "bench", 1, 8, 0, quiet_log);
    if (!ctx) throw std::runtime_error("init failed (RAILKIT_MONITOR_DIR?)");
    auto c = coll_descr(0);
    plugin.start(ctx, &coll, c);
    auto o = descr(abi::kProxyOp, coll);
    o.proxyOp = {getpid(), 0, 1, 8, 131072, 1};
    plugin.start(ctx, &op, o);
    auto s = descr(abi::kProxyStep, op);
    plugin.start(ctx, &step, s);
  }
  abi::EventDescrV5 coll_descr(std::uint64_t s) {
    auto c = descr(abi::kColl, nullptr);
    c.coll.seqNumber = s;
    c.coll.func = "AllReduce";
    c.coll.count = 1 << 18;
    c.coll.datatype = "ncclFloat32";
    c.coll.nChannels = 1;
    c.coll.algo = "RING";
    c.coll.proto = "SIMPLE";
    return c;
  }
};

Fixture& fx() {
  static Fixture f;
  return f;
}

/// One collective's whole life: Coll start/stop, KernelCh start, KernelChStop, stop (5 callbacks).
void BM_Collective(benchmark::State& state) {
  Fixture& f = fx();
  std::uint64_t t = 1000;
  for (auto _ : state) {
    void* h = nullptr;
    auto c = f.coll_descr(f.seq++);
    f.plugin.start(f.ctx, &h, c);
    f.plugin.stop(h);
    void* k = nullptr;
    auto kd = descr(abi::kKernelCh, h);
    kd.kernelCh = {0, t};
    f.plugin.start(f.ctx, &k, kd);
    abi::StateArgsV5 a{};
    a.kernelCh.pTimer = t + 500;
    f.plugin.record(k, abi::kKernelChStop, &a);
    f.plugin.stop(k);
    t += 1000;
  }
  state.SetItemsProcessed(state.iterations() * 5);
}

/// ProxyOp start and stop under an open collective (2 callbacks).
void BM_ProxyOp(benchmark::State& state) {
  Fixture& f = fx();
  const pid_t pid = getpid();  // NCCL stores it once; a system call here would be timed too
  for (auto _ : state) {
    void* h = nullptr;
    auto d = descr(abi::kProxyOp, f.coll);
    d.proxyOp = {pid, 1, 2, 4, 65536, 0};
    f.plugin.start(f.ctx, &h, d);
    f.plugin.stop(h);
  }
  state.SetItemsProcessed(state.iterations() * 2);
}

/// ProxyStep start, two states with transSize, stop (4 callbacks).
void BM_ProxyStep(benchmark::State& state) {
  Fixture& f = fx();
  for (auto _ : state) {
    void* h = nullptr;
    auto d = descr(abi::kProxyStep, f.op);
    f.plugin.start(f.ctx, &h, d);
    abi::StateArgsV5 a{};
    a.proxyStep.transSize = 65536;
    f.plugin.record(h, abi::kProxyStepSendGPUWait, &a);
    f.plugin.record(h, abi::kProxyStepSendWait, &a);
    f.plugin.stop(h);
  }
  state.SetItemsProcessed(state.iterations() * 4);
}

/// An IB work request: NetPlugin start and stop under an open step (2 callbacks).
void BM_NetPlugin(benchmark::State& state) {
  Fixture& f = fx();
  abi::NetIbDescrV1 ib{};
  ib.type = abi::kNetIbQp;
  ib.qp = {3, 1, 0, 100, 65536};
  for (auto _ : state) {
    void* h = nullptr;
    auto d = descr(abi::kNetPlugin, f.step);
    d.netPlugin = {abi::kNetTypeIb | abi::kNetIbVersion, &ib};
    f.plugin.start(f.ctx, &h, d);
    f.plugin.stop(h);
  }
  state.SetItemsProcessed(state.iterations() * 2);
}

/// An API event the plugin does not keep (GroupApi start: a null handle, 1 callback).
void BM_IgnoredApiEvent(benchmark::State& state) {
  Fixture& f = fx();
  for (auto _ : state) {
    void* h = nullptr;
    auto d = descr(abi::kGroupApi, nullptr);
    f.plugin.start(f.ctx, &h, d);
    benchmark::DoNotOptimize(h);
  }
  state.SetItemsProcessed(state.iterations());
}

BENCHMARK(BM_Collective);
BENCHMARK(BM_ProxyOp);
BENCHMARK(BM_ProxyStep);
BENCHMARK(BM_ProxyStep)->Threads(2);  // two threads on one communicator: the lock contended
BENCHMARK(BM_NetPlugin);
BENCHMARK(BM_IgnoredApiEvent);

long rss_bytes() {
  std::ifstream in("/proc/self/statm");
  long size = 0, resident = 0;
  in >> size >> resident;
  return resident * sysconf(_SC_PAGESIZE);
}

/// RSS that one more communicator's init adds, and RSS growth over 1e6 events after warm-up.
void memory_report(Fixture& f) {
  const long before_init = rss_bytes();
  void* ctx = nullptr;
  int mask = 0;
  f.plugin.init(&ctx, 0x5678, &mask, "bench2", 1, 8, 0, quiet_log);
  const long after_init = rss_bytes();
  auto cycle = [&](int n) {
    for (int i = 0; i < n; ++i) {
      void* h = nullptr;
      auto c = f.coll_descr(f.seq++);
      f.plugin.start(f.ctx, &h, c);
      f.plugin.stop(h);
      void* k = nullptr;
      auto kd = descr(abi::kKernelCh, h);
      kd.kernelCh = {0, 1000};
      f.plugin.start(f.ctx, &k, kd);
      abi::StateArgsV5 a{};
      a.kernelCh.pTimer = 1500;
      f.plugin.record(k, abi::kKernelChStop, &a);
      f.plugin.stop(k);
    }
  };
  cycle(20000);  // warm-up: every slot and table touched
  const long before = rss_bytes();
  cycle(200000);  // 5 callbacks each: 1e6 events
  const long after = rss_bytes();
  std::printf("memory: communicator_init_rss_bytes=%ld rss_growth_per_1e6_events_bytes=%ld\n", after_init - before_init,
              after - before);
  f.plugin.finalize(ctx);
}

}  // namespace

int main(int argc, char** argv) {
  std::string dir = (std::filesystem::temp_directory_path() / "railkit-plugin-bench-XXXXXX").string();
  if (!mkdtemp(dir.data())) return 2;
  setenv("RAILKIT_MONITOR_DIR", dir.c_str(), 1);
  setenv("RAILKIT_MONITOR_WINDOW_S", "3600", 1);
  memory_report(fx());
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  fx().plugin.finalize(fx().ctx);
  std::filesystem::remove_all(dir);
  return 0;
}
