// The drive (plugin_drive.hpp). Call order and descriptor contents follow NCCL v2.28.9-1:
// src/enqueue.cc (ncclEnqueueCheck: GroupApi start, GroupStartApiStop, CollApi start/stop;
// hostStreamPlanTask: Group start, Coll start with parentObj = CollApi handle and parentGroup =
// Group handle, Coll stop, Group stop; ncclLaunchKernel: KernelLaunch start/stop), src/group.cc
// (GroupEndApiStart, GroupApi stop) and src/plugin/profiler.cc (the proxy's ProxyOp with pid and
// parent = the Coll handle, ProxyStep with transSize on each state, the IB net plugin's
// NetPlugin events under a step, KernelCh start with pTimer, then KernelChStop and stop).
// GPU timers are synthesized from the iteration's common start, so kernel times are exact:
// a rank's kernel runs from its own start to the last rank's start plus --xfer-us.
#include "plugin_drive.hpp"

#include <dlfcn.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <barrier>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <vector>

namespace railkit::plugin_drive {

nccl_prof_abi::EventDescrV5 descr(std::uint64_t type, void* parent, int rank) {
  nccl_prof_abi::EventDescrV5 d;
  std::memset(&d, 0, sizeof d);
  d.type = type;
  d.parentObj = parent;
  d.rank = rank;
  return d;
}

namespace {

namespace abi = nccl_prof_abi;

std::atomic<int> g_warns{0};
std::mutex g_warn_mu;
std::string g_first_warn;

/// The logger NCCL passes (ncclDebugLog): prints as NCCL prints, counts WARN lines.
extern "C" void drive_log(abi::LogLevel level, unsigned long /*flags*/, const char* /*file*/, int /*line*/,
                          const char* fmt, ...) {
  char buf[2048];
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  std::fprintf(stderr, "drive NCCL %s %s\n", level == abi::kLogWarn ? "WARN" : "INFO", buf);
  if (level == abi::kLogWarn) {
    std::lock_guard lk(g_warn_mu);
    if (g_warns++ == 0) g_first_warn = buf;
  }
}

std::int64_t now_unix_ns() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return std::int64_t{ts.tv_sec} * 1000000000 + ts.tv_nsec;
}

void sleep_until_unix_ns(std::int64_t t) {
  timespec ts{static_cast<time_t>(t / 1000000000), static_cast<long>(t % 1000000000)};
  while (clock_nanosleep(CLOCK_REALTIME, TIMER_ABSTIME, &ts, nullptr) != 0) {
  }
}

void sleep_us(double us) { sleep_until_unix_ns(now_unix_ns() + static_cast<std::int64_t>(us * 1e3)); }

/// Handles NCCL keeps for one call: the API events and the task.
struct Call {
  void* group_api = nullptr;
  void* api = nullptr;
  void* group = nullptr;
  void* task = nullptr;
};

/// One rank: its contexts and what it needs to make events.
struct Rank {
  const Plugin* p;
  const Options* o;
  int rank = 0;
  void* comm_a = nullptr;
  void* comm_b = nullptr;
  std::uint64_t seq_a = 0;
};

/// ncclEnqueueCheck up to the task: GroupApi, GroupStartApiStop, CollApi or P2pApi start and stop.
void api_begin(const Rank& r, void* ctx, Call& c, bool p2p, const char* func, std::size_t count, int depth) {
  auto g = descr(abi::kGroupApi, nullptr, r.rank);
  g.groupApi.groupDepth = depth;
  if (!c.group_api) {
    r.p->start(ctx, &c.group_api, g);
    r.p->record(c.group_api, abi::kGroupStartApiStop, nullptr);
  }
  auto a = descr(p2p ? abi::kP2pApi : abi::kCollApi, c.group_api, r.rank);
  if (p2p) {
    a.p2pApi = {func, count, "ncclFloat32", nullptr, false};
  } else {
    a.collApi = {func, count, "ncclFloat32", 0, nullptr, false};
  }
  r.p->start(ctx, &c.api, a);
  if (c.api) r.p->stop(c.api);  // NCCL keeps the stopped handle as the task's parent
}

/// hostStreamPlanTask and the launch: Group, the task (Coll or P2p) start and stop, KernelLaunch.
void plan_and_launch(const Rank& r, void* ctx, Call& c, abi::EventDescrV5& task) {
  r.p->record(c.group_api, abi::kGroupEndApiStart, nullptr);
  auto g = descr(abi::kGroup, nullptr, r.rank);
  r.p->start(ctx, &c.group, g);
  if (task.type == abi::kColl) {
    task.coll.parentGroup = c.group;
  } else {
    task.p2p.parentGroup = c.group;
  }
  r.p->start(ctx, &c.task, task);
  if (c.task) r.p->stop(c.task);  // enqueued
  if (c.group) r.p->stop(c.group);
  void* launch = nullptr;
  auto k = descr(abi::kKernelLaunch, c.group_api, r.rank);
  r.p->start(ctx, &launch, k);
  if (launch) r.p->stop(launch);
}

void api_end(const Rank& r, Call& c) {
  if (c.group_api) r.p->stop(c.group_api);
}

/// The proxy's view of one channel direction: ProxyOp, its steps, one IB work request per step.
void proxy_op(const Rank& r, void* ctx, void* task, int channel, int peer, bool send, int steps,
              std::size_t step_bytes, bool finish) {
  auto d = descr(abi::kProxyOp, task, r.rank);
  d.proxyOp = {getpid(), static_cast<std::uint8_t>(channel), peer, steps, static_cast<int>(step_bytes), send ? 1 : 0};
  void* op = nullptr;
  r.p->start(ctx, &op, d);
  if (!finish) return;  // a hung collective: the op never ends
  // The slow NIC moves a third of the bytes per work request in the same real time: its rate is a
  // third of its peers' whatever a loaded machine adds to every sleep (a 3x longer sleep was not:
  // scheduling delays of a few ms brought it back near the median).
  const std::size_t wr_bytes = r.rank == r.o->slow_nic ? step_bytes / 3 : step_bytes;
  const double wr_us = r.o->wr_us;
  for (int s = 0; s < steps; ++s) {
    auto sd = descr(abi::kProxyStep, op, r.rank);
    sd.proxyStep.step = s;
    void* step = nullptr;
    r.p->start(ctx, &step, sd);
    abi::StateArgsV5 a{};
    a.proxyStep.transSize = step_bytes;
    r.p->record(step, send ? abi::kProxyStepSendGPUWait : abi::kProxyStepRecvWait, &a);
    abi::NetIbDescrV1 ib{};
    ib.type = abi::kNetIbQp;
    ib.qp = {r.rank, static_cast<std::uint64_t>(s), send ? 0 : 1, 100 + channel, wr_bytes};
    auto nd = descr(abi::kNetPlugin, step, r.rank);
    nd.netPlugin = {abi::kNetTypeIb | abi::kNetIbVersion, &ib};
    void* net = nullptr;
    r.p->start(ctx, &net, nd);
    sleep_us(wr_us);
    r.p->stop(net);  // NCCL's ncclProfilerCallback stops without checking the handle
    r.p->record(step, send ? abi::kProxyStepSendWait : abi::kProxyStepRecvFlushWait, &a);
    if (step) r.p->stop(step);
  }
  if (op) r.p->stop(op);
}

struct Kernel {
  std::uint64_t start_ns, stop_ns;
};

/// The kernel's channels: KernelCh start with the GPU timer, KernelChStop with the end, stop.
std::vector<void*> kernel_start(const Rank& r, void* ctx, void* task, int channels, std::uint64_t start_ns) {
  std::vector<void*> hs(channels, nullptr);
  for (int c = 0; c < channels; ++c) {
    auto d = descr(abi::kKernelCh, task, r.rank);
    d.kernelCh = {static_cast<std::uint8_t>(c), start_ns};
    r.p->start(ctx, &hs[c], d);
  }
  return hs;
}

void kernel_stop(const Rank& r, const std::vector<void*>& hs, std::uint64_t stop_ns) {
  for (void* h : hs) {
    if (!h) continue;
    abi::StateArgsV5 a{};
    a.kernelCh.pTimer = stop_ns;
    r.p->record(h, abi::kKernelChStop, &a);
    r.p->stop(h);
  }
}

constexpr int kChannels = 2;
constexpr int kSteps = 2;

/// One AllReduce of `count` floats on `ctx`. `kernel`: the synthesized GPU times; finish=false
/// leaves it hung (enqueued, kernel and proxy started, nothing ends).
void allreduce(Rank& r, void* ctx, std::uint64_t seq, std::size_t count, Kernel kernel, bool finish) {
  Call c;
  api_begin(r, ctx, c, false, "AllReduce", count, 1);
  auto t = descr(abi::kColl, c.api, r.rank);
  t.coll.seqNumber = seq;
  t.coll.func = "AllReduce";
  t.coll.count = count;
  t.coll.datatype = "ncclFloat32";
  t.coll.nChannels = kChannels;
  t.coll.nWarps = 16;
  t.coll.algo = "RING";
  t.coll.proto = "SIMPLE";
  plan_and_launch(r, ctx, c, t);
  api_end(r, c);
  const int n = r.o->ranks;
  const auto per_op = static_cast<std::size_t>(2.0 * (n - 1) / n * double(count) * 4 / kChannels);
  const auto hs = kernel_start(r, ctx, c.task, kChannels, kernel.start_ns);
  for (int ch = 0; ch < kChannels; ++ch) {
    proxy_op(r, ctx, c.task, ch, (r.rank + 1) % n, true, kSteps, per_op / kSteps, finish);
    proxy_op(r, ctx, c.task, ch, (r.rank + n - 1) % n, false, kSteps, per_op / kSteps, finish);
  }
  if (finish) kernel_stop(r, hs, kernel.stop_ns);
}

/// A grouped Send to the next rank and Recv from the previous one, 64 Ki floats each.
void sendrecv(Rank& r, std::uint64_t kernel_start_ns) {
  const int n = r.o->ranks;
  constexpr std::size_t count = 1 << 16;
  Call group;  // one user group (depth 2) around both
  for (const bool send : {true, false}) {
    Call c;
    c.group_api = group.group_api;
    api_begin(r, r.comm_a, c, true, send ? "Send" : "Recv", count, 2);
    group.group_api = c.group_api;
    auto t = descr(abi::kP2p, c.api, r.rank);
    t.p2p.func = send ? "Send" : "Recv";
    t.p2p.count = count;
    t.p2p.datatype = "ncclFloat32";
    t.p2p.peer = send ? (r.rank + 1) % n : (r.rank + n - 1) % n;
    t.p2p.nChannels = 1;
    plan_and_launch(r, r.comm_a, c, t);
    const auto hs = kernel_start(r, r.comm_a, c.task, 1, kernel_start_ns);
    proxy_op(r, r.comm_a, c.task, 0, t.p2p.peer, send, 1, count * 4, true);
    kernel_stop(r, hs, kernel_start_ns + 100000);
  }
  api_end(r, group);
}

}  // namespace

Plugin::Plugin(const std::string& so, const std::string& abi_name) {
  lib_ = dlopen(so.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!lib_) throw std::runtime_error("cannot load " + so + ": " + dlerror());
  if (abi_name == "v5") {
    v5_ = static_cast<const abi::ProfilerV5*>(dlsym(lib_, "ncclProfiler_v5"));
  } else if (abi_name == "v4") {
    v4_ = static_cast<const abi::ProfilerV4*>(dlsym(lib_, "ncclProfiler_v4"));
  }
  if (!v5_ && !v4_) throw std::runtime_error(so + ": no ncclProfiler_" + abi_name);
}

Plugin::~Plugin() {
  if (lib_) dlclose(lib_);
}

abi::Result Plugin::init(void** ctx, std::uint64_t comm, int* mask, const char* name, int nnodes, int nranks, int rank,
                         abi::Logger log) const {
  if (v5_) return v5_->init(ctx, comm, mask, name, nnodes, nranks, rank, log);
  return v4_->init(ctx, mask, name, comm, nnodes, nranks, rank, log);
}

void Plugin::start(void* ctx, void** handle, abi::EventDescrV5& d) const {
  if (v5_) {
    v5_->startEvent(ctx, handle, &d);
    return;
  }
  // NCCL 2.28's profiler_v4.cc: v5-only types are not passed; Coll and P2p take the group as parent.
  *handle = nullptr;
  abi::EventDescrV4 d4;
  std::memset(&d4, 0, sizeof d4);
  d4.type = static_cast<std::uint8_t>(d.type);
  d4.parentObj = d.parentObj;
  d4.rank = d.rank;
  switch (d.type) {
    case abi::kGroup: break;
    case abi::kColl:
      d4.coll = {d.coll.seqNumber, d.coll.func, d.coll.sendBuff, d.coll.recvBuff, d.coll.count, d.coll.root,
                 d.coll.datatype, d.coll.nChannels, d.coll.nWarps, d.coll.algo, d.coll.proto};
      d4.parentObj = d.coll.parentGroup;
      break;
    case abi::kP2p:
      d4.p2p = {d.p2p.func, d.p2p.buff, d.p2p.datatype, d.p2p.count, d.p2p.peer, d.p2p.nChannels};
      d4.parentObj = d.p2p.parentGroup;
      break;
    case abi::kProxyOp: d4.proxyOp = d.proxyOp; break;
    case abi::kProxyStep: d4.proxyStep = d.proxyStep; break;
    case abi::kKernelCh: d4.kernelCh = d.kernelCh; break;
    case abi::kNetPlugin: d4.netPlugin = d.netPlugin; break;
    default: return;
  }
  v4_->startEvent(ctx, handle, &d4);
}

void Plugin::stop(void* handle) const { (v5_ ? v5_->stopEvent : v4_->stopEvent)(handle); }

void Plugin::record(void* handle, abi::EventState s, abi::StateArgsV5* args) const {
  if (!handle) return;  // NCCL checks the handle before recording
  if (v5_) {
    v5_->recordEventState(handle, s, args);
  } else if (s != abi::kGroupStartApiStop && s != abi::kGroupEndApiStart) {
    abi::StateArgsV4 a4 = args ? *args : abi::StateArgsV4{};
    v4_->recordEventState(handle, s, &a4);
  }
}

void Plugin::finalize(void* ctx) const {
  if (ctx) (v5_ ? v5_->finalize : v4_->finalize)(ctx);
}

namespace {

/// The GPU start and stop of rank `rank`'s AllReduce in an iteration starting at `t0`.
Kernel kernel_times(const Options& o, int rank, std::int64_t t0) {
  auto start_of = [&](int q) { return t0 + (q == o.delay_rank ? std::int64_t(o.delay_us * 1e3) : 0) + q * 1000; };
  std::int64_t last = 0;
  for (int q = 0; q < o.ranks; ++q) last = std::max(last, start_of(q));
  return Kernel{std::uint64_t(start_of(rank)), std::uint64_t(last + std::int64_t(o.xfer_us * 1e3))};
}

/// The barrier's completion: the next iteration starts 300 us from now on every rank.
struct SetStart {
  std::atomic<std::int64_t>* t0;
  void operator()() noexcept { t0->store(now_unix_ns() + 300000); }
};
using Sync = std::barrier<SetStart>;

void run_rank(Rank& r, Sync& sync, const std::atomic<std::int64_t>& t0, std::atomic<int>& init_failed) {
  const Options& o = *r.o;
  int mask = 0;
  const int nnodes = std::max(1, o.ranks / 4);
  if (r.p->init(&r.comm_a, 0xa11ce5a11ce5a11cULL, &mask, "commA", nnodes, o.ranks, r.rank, drive_log) != abi::kSuccess)
    ++init_failed;
  if (o.hang &&
      r.p->init(&r.comm_b, 0xb0bb0bb0bb0bb0bbULL, &mask, "commB", nnodes, o.ranks, r.rank, drive_log) != abi::kSuccess)
    ++init_failed;
  sync.arrive_and_wait();
  if (o.hang && r.comm_b) {
    const std::int64_t now = now_unix_ns();
    allreduce(r, r.comm_b, 0, 1024, Kernel{std::uint64_t(now), 0}, false);
  }
  for (int i = 0; i < o.iters; ++i) {
    sync.arrive_and_wait();  // the completion step set t0 for this iteration
    const std::int64_t base = t0.load();
    const Kernel k = kernel_times(o, r.rank, base);
    sleep_until_unix_ns(std::int64_t(k.start_ns));  // the delayed rank enqueues later
    if (r.comm_a) {
      allreduce(r, r.comm_a, r.seq_a++, o.bytes / 4, k, true);
      sendrecv(r, k.stop_ns + 10000);
    }
  }
  sync.arrive_and_wait();
  const double tail = o.tail_s >= 0 ? o.tail_s : 3 * o.window_s;
  sleep_us(tail * 1e6);
  r.p->finalize(r.comm_a);
  r.p->finalize(r.comm_b);
}

}  // namespace

void kernel_collective(const Plugin& p, void* ctx, int rank, const KernelColl& k) {
  Rank r{&p, nullptr, rank};
  Call c;
  api_begin(r, ctx, c, false, k.func, k.count, 1);
  auto t = descr(abi::kColl, c.api, rank);
  t.coll.seqNumber = k.seq;
  t.coll.func = k.func;
  t.coll.count = k.count;
  t.coll.datatype = k.datatype;
  t.coll.nChannels = static_cast<std::uint8_t>(k.channels);
  t.coll.nWarps = 16;
  t.coll.algo = k.algo;
  t.coll.proto = k.proto;
  plan_and_launch(r, ctx, c, t);
  api_end(r, c);
  kernel_stop(r, kernel_start(r, ctx, c.task, k.channels, k.start_ns), k.stop_ns);
}

Outcome drive(const Options& o) {
  if (!o.out.empty()) setenv("RAILKIT_MONITOR_DIR", o.out.c_str(), 1);
  if (o.window_s > 0) setenv("RAILKIT_MONITOR_WINDOW_S", std::to_string(o.window_s).c_str(), 1);
  setenv("RAILKIT_MONITOR_JOB", "drive", 0);
  Plugin plugin(o.so, o.abi);
  std::atomic<std::int64_t> t0{0};
  Sync sync(o.ranks, SetStart{&t0});
  std::atomic<int> init_failed{0};
  std::vector<Rank> ranks(o.ranks);
  std::vector<std::thread> threads;
  for (int q = 0; q < o.ranks; ++q) {
    ranks[q] = Rank{&plugin, &o, q};
    threads.emplace_back([&, q] {
      prctl(PR_SET_TIMERSLACK, 1UL);  // sleeps end on time: the NIC busy times stay close to --wr-us
      run_rank(ranks[q], sync, t0, init_failed);
    });
  }
  for (auto& t : threads) t.join();
  Outcome out;
  out.init_failed = init_failed.load();
  out.warn_lines = g_warns.load();
  out.first_warn = g_first_warn;
  return out;
}

}  // namespace railkit::plugin_drive
