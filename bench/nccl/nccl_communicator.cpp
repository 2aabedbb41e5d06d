// The NCCL backend. Where it follows nccl-tests (v2.19.6, src/common.cu) or NCCL 2.28.9's own
// source, the comment names the place; README.md lists what it does differently, and why.
#include <cuda_runtime.h>
#include <nccl.h>

#include <algorithm>
#include <cstdlib>
#include <cstddef>
#include <map>
#include <span>
#include <vector>

#include <fmt/format.h>

#include "bench/nccl/cuda_check.hpp"
#include "bench/nccl/nccl_adapter.hpp"
#include "bench/nccl/nccl_backend.hpp"
#include "bench/nccl/nccl_kernels.hpp"
#include "core/collectives.hpp"
#include "core/error.hpp"

namespace railkit::bench::nccl {
namespace {

/// Finalize of non-blocking communicators at teardown, when no -T bounds it.
constexpr double kDefaultFinalizeDeadline_s = 60;

bool failed(ncclResult_t r) { return r != ncclSuccess && r != ncclInProgress; }

std::string nccl_text(ncclResult_t r, ncclComm_t comm) {
  const char* last = ncclGetLastError(comm);
  return fmt::format("{}{}{}", ncclGetErrorString(r), last && *last ? ": " : "", last ? last : "");
}

void nccl_check(ncclResult_t r, const char* what, ncclComm_t comm) {
  if (failed(r)) throw NcclError(fmt::format("{}: {}", what, nccl_text(r, comm)));
}

ncclDataType_t nccl_type(DType t) {
  switch (t) {
    case DType::Int8: return ncclInt8;
    case DType::Uint8: return ncclUint8;
    case DType::Int32: return ncclInt32;
    case DType::Uint32: return ncclUint32;
    case DType::Int64: return ncclInt64;
    case DType::Uint64: return ncclUint64;
    case DType::Half: return ncclFloat16;
    case DType::BFloat16: return ncclBfloat16;
    case DType::Float: return ncclFloat32;
    case DType::Double: return ncclFloat64;
  }
  return ncclFloat32;
}

ncclRedOp_t nccl_op(RedOp o) {
  switch (o) {
    case RedOp::Sum: return ncclSum;
    case RedOp::Prod: return ncclProd;
    case RedOp::Min: return ncclMin;
    case RedOp::Max: return ncclMax;
    case RedOp::Avg: return ncclAvg;
  }
  return ncclSum;
}

/// Makes `device` current for this thread (CUDA calls act on the current device).
void on_device(int device, const char* what) { cuda_check(cudaSetDevice(device), what); }

struct Slot {
  int device = 0;
  cudaStream_t stream = nullptr;
  ncclComm_t comm = nullptr;
  std::vector<cudaEvent_t> events;
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
};

/// The first asynchronous error of any communicator, as one line; empty when none.
std::string first_async_error(std::vector<Slot>& slots) {
  for (const Slot& sl : slots) {
    if (!sl.comm) continue;
    ncclResult_t st = ncclSuccess;
    const ncclResult_t r = ncclCommGetAsyncError(sl.comm, &st);
    if (failed(r)) return "ncclCommGetAsyncError: " + nccl_text(r, sl.comm);
    if (failed(st)) return fmt::format("GPU {}: {}", sl.device, nccl_text(st, sl.comm));
  }
  return {};
}

/// This process's GPUs: one slot per GPU (-g N), each its own NCCL rank, stream and
/// communicator. All NCCL calls of one operation go into one ncclGroupStart/End, as NCCL asks
/// of a thread that drives several GPUs. Every wait polls (streams, and every communicator's
/// asynchronous error, as nccl-tests' testStreamSynchronize), honours the watchdog's abort
/// signal, and aborts every communicator before an error leaves the backend.
class NcclCommunicator final : public Communicator, public EventTiming, public GraphCapture {
 public:
  NcclCommunicator(const NcclSetup& s, Bootstrap& group) : setup_(s), streams_(*this), comms_(*this) {
    try {
      init(group);
    } catch (...) {
      abort_all();  // communicators of a failed or timed-out init are aborted, not finalized
      teardown();
      throw;
    }
  }

  ~NcclCommunicator() override { teardown(); }

  int rank() const override { return first_rank_; }
  int size() const override { return size_; }
  int slots() const override { return static_cast<int>(slots_.size()); }
  std::string name() const override { return "nccl"; }
  std::string version() const override { return version_text(); }
  std::string device(int slot) const override {
    const int dev = at(slot).device;
    cudaDeviceProp p{};
    cudaGetDeviceProperties(&p, dev);
    return fmt::format("GPU {} {} [{:04x}:{:02x}:{:02x}.0]", dev, p.name, p.pciDomainID, p.pciBusID, p.pciDeviceID);
  }
  std::string unsupported_reason(DType, RedOp) const override { return {}; }
  std::vector<std::pair<std::string, std::string>> facts() const override {
    return {{"communicators", blocking_fact(blocking_, setup_.blocking, blocking_env_)},
            {"iteration_timing", "CUDA events at iteration boundaries (iters + 1 per GPU, as nccl-tests -I 1)"},
            {"buffers", nccl_buffers_ ? "ncclMemAlloc" : fmt::format("cudaMalloc ({})", mem_alloc_failure_)},
            {"alltoall", native_alltoall_ ? "ncclAlltoAll" : "grouped ncclSend/ncclRecv"},
            {"nvlink_centric_sched", kBuiltVersion >= NCCL_VERSION(2, 28, 0) ? "1" : "not in this NCCL"}};
  }

  void* allocate(int slot, std::uint64_t bytes) override {
    on_device(at(slot).device, "cudaSetDevice");
    const size_t n = bytes == 0 ? 1 : static_cast<size_t>(bytes);
    void* p = nullptr;
    if (nccl_buffers_) {
      const ncclResult_t r = mem_alloc(&p, n);
      if (!failed(r)) {
        from_nccl_[p] = true;
        return p;
      }
      // ncclMemAlloc needs cuMem (driver and device support); use cudaMalloc as nccl-tests
      // does before NCCL 2.19, and say so in the document.
      mem_alloc_failure_ = fmt::format("ncclMemAlloc failed: {}", ncclGetErrorString(r));
      nccl_buffers_ = false;
      p = nullptr;
    }
    cuda_check(cudaMalloc(&p, n), "cudaMalloc");
    from_nccl_[p] = false;
    return p;
  }
  void release(int slot, void* p) noexcept override {
    if (!p) return;
    cudaSetDevice(at(slot).device);
    const auto it = from_nccl_.find(p);
    if (it != from_nccl_.end() && it->second) mem_free(p);
    else cudaFree(p);
    if (it != from_nccl_.end()) from_nccl_.erase(it);
  }

  EventTiming* event_timing() override { return this; }
  GraphCapture* graph_capture() override { return this; }
  bool supports_in_place(Coll c) const override { return c != Coll::AllToAll && c != Coll::SendRecv; }

  void launch(std::span<const OpCall> calls) override {
    honour_signal("NCCL collective launch");
    abort_on_error(streams_, [&] { launch_unguarded(calls); });
  }

  void complete() override { poll_until_finished(streams_, "NCCL collective", 0, setup_.signal); }

  void start_event_timing(int iters) override {
    for (Slot& sl : slots_) {
      on_device(sl.device, "cudaSetDevice");  // an event belongs to the device current at its creation
      while (sl.events.size() < static_cast<size_t>(iters) + 1) {
        cudaEvent_t e;
        cuda_check(cudaEventCreate(&e), "cudaEventCreate");
        sl.events.push_back(e);
      }
    }
    timing_ = true;
    launches_timed_ = 0;
    timed_ = iters;
  }

  std::vector<std::vector<double>> event_times_us() override {
    std::vector<std::vector<double>> out;
    if (!timing_) return out;
    for (Slot& sl : slots_) {
      std::vector<double> times;
      on_device(sl.device, "cudaSetDevice");
      // Iteration i: from the boundary before its launch to the one after it (nccl-tests -I 1).
      for (int i = 0; i < launches_timed_; ++i) {
        float ms = 0;
        cuda_check(cudaEventElapsedTime(&ms, sl.events[static_cast<size_t>(i)], sl.events[static_cast<size_t>(i) + 1]),
                   "cudaEventElapsedTime");
        times.push_back(ms * 1000.0);
      }
      out.push_back(std::move(times));
    }
    timing_ = false;
    return out;
  }

  void begin_capture() override {
    honour_signal("CUDA graph capture");
    timing_ = false;
    drop_graphs();
    // As nccl-tests with -g (src/common.cu, benchTime): one capture per GPU's stream, in
    // thread-local mode (NCCL may allocate while connecting during the capture); the grouped
    // launches then record each GPU's part into its own stream's graph.
    abort_on_error(streams_, [&] {
      for (Slot& sl : slots_) {
        on_device(sl.device, "cudaSetDevice");
        cuda_check(cudaStreamBeginCapture(sl.stream, cudaStreamCaptureModeThreadLocal), "cudaStreamBeginCapture");
        ++capturing_;
      }
    });
  }
  void end_capture() override {
    abort_on_error(streams_, [&] {
      for (Slot& sl : slots_) {
        on_device(sl.device, "cudaSetDevice");
        --capturing_;
        cuda_check(cudaStreamEndCapture(sl.stream, &sl.graph), "cudaStreamEndCapture");
      }
      for (Slot& sl : slots_) {
        on_device(sl.device, "cudaSetDevice");
        cuda_check(cudaGraphInstantiate(&sl.exec, sl.graph, 0), "cudaGraphInstantiate");
      }
    });
  }
  void replay(int times) override {
    honour_signal("CUDA graph replay");
    abort_on_error(streams_, [&] {
      for (int i = 0; i < times; ++i)
        for (Slot& sl : slots_) {
          on_device(sl.device, "cudaSetDevice");
          cuda_check(cudaGraphLaunch(sl.exec, sl.stream), "cudaGraphLaunch");
        }
    });
  }
  /// As nccl-tests right after each -G measurement (src/common.cu, benchTime, "destroy cuda
  /// graph"): NCCL ties a persistent plan to the graph (enqueue.cc, localPersistentRefs += nPlans,
  /// released by the graph's destructor) and ncclCommFinalize/Abort wait for those references to
  /// reach 0 (init.cc, commDestroySync), so a graph alive at teardown hangs the exit.
  void drop_graphs() override {
    if (capturing_ > 0) return;  // only after end_capture (abort_all ends a capture first)
    for (Slot& sl : slots_) {
      cudaSetDevice(sl.device);
      if (sl.exec) cudaGraphExecDestroy(sl.exec);
      if (sl.graph) cudaGraphDestroy(sl.graph);
      sl.exec = nullptr;
      sl.graph = nullptr;
    }
  }

  void fill_input(int slot, void* dst, std::uint64_t count, const CheckSpec& spec) override {
    Slot& sl = at(slot);
    on_device(sl.device, "cudaSetDevice");
    gpu::fill_input(dst, count, args(spec), sl.stream);
  }
  void fill_sentinel(int slot, void* dst, std::uint64_t bytes) override {
    Slot& sl = at(slot);
    on_device(sl.device, "cudaSetDevice");
    cuda_check(cudaMemsetAsync(dst, 0xA5, bytes, sl.stream), "cudaMemsetAsync");
  }
  std::int64_t count_wrong(int slot, const void* out, const CheckSpec& spec) override {
    complete();
    Slot& sl = at(slot);
    on_device(sl.device, "cudaSetDevice");
    return gpu::count_wrong(out, args(spec), sl.stream);
  }

 private:
  /// Waits for every slot's stream; errors are every communicator's asynchronous errors.
  class StreamsDone final : public Pollable {
   public:
    explicit StreamsDone(NcclCommunicator& c) : c_(c) {}
    bool finished() override {
      for (Slot& sl : c_.slots_) {
        const cudaError_t q = cudaStreamQuery(sl.stream);
        if (q == cudaErrorNotReady) return false;
        cuda_check(q, "cudaStreamQuery");
      }
      return true;
    }
    std::string async_error() override { return first_async_error(c_.slots_); }
    void abort_all() noexcept override { c_.abort_all(); }

   private:
    NcclCommunicator& c_;
  };

  /// Waits until no communicator is in progress (after a non-blocking call returned ncclInProgress).
  class CommsReady final : public Pollable {
   public:
    explicit CommsReady(NcclCommunicator& c) : c_(c) {}
    bool finished() override {
      // A communicator whose init (or finalize) failed is not ready: async_error() names it, under
      // the call that failed, instead of the first launch.
      for (const Slot& sl : c_.slots_) {
        if (!sl.comm) continue;
        ncclResult_t st = ncclSuccess;
        if (ncclCommGetAsyncError(sl.comm, &st) != ncclSuccess || st != ncclSuccess) return false;
      }
      return true;
    }
    std::string async_error() override { return first_async_error(c_.slots_); }
    void abort_all() noexcept override { c_.abort_all(); }

   private:
    NcclCommunicator& c_;
  };

  void init(Bootstrap& group) {
    int ndev = 0;
    cuda_check(cudaGetDeviceCount(&ndev), "cudaGetDeviceCount");
    const int base = first_device(setup_, ndev);
    const int n = setup_.gpus;
    const int runtime = runtime_version();
    native_alltoall_ = has_native_alltoall(runtime);
    slots_.resize(static_cast<size_t>(n));
    for (int k = 0; k < n; ++k) {
      Slot& sl = slots_[static_cast<size_t>(k)];
      sl.device = base + k;
      on_device(sl.device, "cudaSetDevice");
      cuda_check(cudaStreamCreateWithFlags(&sl.stream, cudaStreamNonBlocking), "cudaStreamCreate");
    }

    first_rank_ = group.rank() * n;
    size_ = group.size() * n;
    ncclUniqueId id{};
    if (group.rank() == 0) nccl_check(ncclGetUniqueId(&id), "ncclGetUniqueId", nullptr);
    group.broadcast(std::as_writable_bytes(std::span<ncclUniqueId, 1>(&id, 1)), 0);

    // NCCL's pattern for one thread and several GPUs: each ncclCommInitRankConfig inside one
    // group, with its GPU current (nccl-tests src/common.cu, initComms). Blocking communicators
    // return from ncclGroupEnd when all are ready (the watchdog covers that wait); non-blocking
    // ones return ncclInProgress and are polled.
    std::vector<ncclConfig_t> configs(slots_.size(), comm_config(setup_.blocking));
    nccl_check(ncclGroupStart(), "ncclGroupStart", nullptr);
    ncclResult_t first_error = ncclSuccess;
    cudaError_t cuda_error = cudaSuccess;
    for (size_t k = 0; k < slots_.size(); ++k) {
      cuda_error = cudaSetDevice(slots_[k].device);
      if (cuda_error != cudaSuccess) break;
      const ncclResult_t r =
          ncclCommInitRankConfig(&slots_[k].comm, size_, id, first_rank_ + static_cast<int>(k), &configs[k]);
      if (failed(r)) {
        first_error = r;
        break;
      }
    }
    const ncclResult_t end = ncclGroupEnd();
    cuda_check(cuda_error, "cudaSetDevice");
    nccl_check(first_error, "ncclCommInitRankConfig", nullptr);
    nccl_check(end, "ncclCommInitRankConfig (ncclGroupEnd)", nullptr);
    poll_until_finished(comms_, "ncclCommInitRankConfig", setup_.poll_timeout_s, setup_.signal);
    // What NCCL made of the config: NCCL_COMM_BLOCKING overrides it (read now, with NCCL's
    // nccl.conf files applied to the environment); an init that returned ncclInProgress was
    // non-blocking whatever the rule says.
    const char* env = std::getenv("NCCL_COMM_BLOCKING");
    blocking_env_ = env ? env : "";
    blocking_ = effective_blocking(setup_.blocking, env);
    if (end == ncclInProgress && blocking_.blocking) blocking_ = BlockingMode{false, setup_.blocking};
  }

  /// Throws AbortedError (after aborting and acknowledging) when the watchdog asked.
  void honour_signal(const char* what) {
    if (!setup_.signal || !setup_.signal->requested()) return;
    abort_all();
    setup_.signal->acknowledge();
    throw AbortedError(fmt::format("{}: aborted at the watchdog's request", what));
  }

  /// Records every GPU's boundary event `index` on its stream.
  void record_boundary(size_t index) {
    for (Slot& sl : slots_) {
      on_device(sl.device, "cudaSetDevice");
      cuda_check(cudaEventRecord(sl.events[index], sl.stream), "cudaEventRecord");
    }
  }

  /// Whether one launch of `c` needs a group: several GPUs (NCCL's rule for one thread driving
  /// several), or several NCCL calls (sendrecv, alltoall before ncclAlltoAll). nccl-tests groups
  /// exactly then (src/common.cu, startColl; sendrecv.cu and alltoall.cu group their calls); a
  /// single call on one GPU goes without, as there.
  bool needs_group(const OpCall& c) const {
    return slots_.size() > 1 || c.coll == Coll::SendRecv || (c.coll == Coll::AllToAll && !native_alltoall_);
  }

  void launch_unguarded(std::span<const OpCall> calls) {
    if (calls.size() != slots_.size())
      throw Error(ErrorCode::Internal, fmt::format("nccl launch: {} calls for {} GPUs", calls.size(), slots_.size()));
    // As nccl-tests -I 1: one event per GPU before the first timed launch and one after each.
    const bool timed = timing_ && launches_timed_ < timed_;
    if (timed && launches_timed_ == 0) record_boundary(0);
    // In a group NCCL enqueues nothing until ncclGroupEnd, which must be reached even after a
    // failed call.
    const bool grouped = needs_group(calls[0]);
    if (grouped) nccl_check(ncclGroupStart(), "ncclGroupStart", nullptr);
    ncclResult_t first_error = ncclSuccess;
    ncclComm_t failed_comm = nullptr;
    bool in_progress = false;  // a non-blocking communicator's call outside a group
    for (size_t k = 0; k < slots_.size(); ++k) {
      const ncclResult_t r = enqueue(calls[k], slots_[k], first_rank_ + static_cast<int>(k));
      in_progress = in_progress || r == ncclInProgress;
      if (failed(r) && first_error == ncclSuccess) {
        first_error = r;
        failed_comm = slots_[k].comm;
      }
    }
    const ncclResult_t end = grouped ? ncclGroupEnd() : ncclSuccess;
    nccl_check(first_error, "NCCL collective launch", failed_comm);
    nccl_check(end, "NCCL collective launch (ncclGroupEnd)", nullptr);
    if (end == ncclInProgress || in_progress) poll_until_finished(comms_, "NCCL collective launch", 0, setup_.signal);
    if (timed) record_boundary(static_cast<size_t>(++launches_timed_));
  }

  /// Enqueues one slot's part of a collective; called inside the launch's group.
  ncclResult_t enqueue(const OpCall& c, const Slot& sl, int rank_of_slot) const {
    const ncclDataType_t t = nccl_type(c.dtype);
    const size_t n = static_cast<size_t>(c.count);
    const void* send = c.send;
    void* recv = c.recv;
    ncclComm_t comm = sl.comm;
    cudaStream_t st = sl.stream;
    const int nranks = size_;
    switch (c.coll) {
      case Coll::AllReduce: return ncclAllReduce(send, recv, n, t, nccl_op(c.op), comm, st);
      case Coll::AllGather: return ncclAllGather(send, recv, n, t, comm, st);
      case Coll::ReduceScatter: return ncclReduceScatter(send, recv, n, t, nccl_op(c.op), comm, st);
      case Coll::Broadcast: return ncclBroadcast(send, recv, n, t, c.root, comm, st);
      case Coll::Reduce: return ncclReduce(send, recv, n, t, nccl_op(c.op), c.root, comm, st);
      case Coll::AllToAll: {
        // nccl-tests src/alltoall.cu (AlltoAllRunColl): ncclAlltoAll from NCCL 2.28, else
        // grouped ncclSend/ncclRecv (n elements to and from each peer).
        if (native_alltoall_) return native_alltoall(send, recv, n, t, comm, st);
        const size_t bytes = n * info(c.dtype).size_bytes;
        for (int p = 0; p < nranks; ++p) {
          if (const ncclResult_t r = ncclSend(static_cast<const char*>(send) + p * bytes, n, t, p, comm, st); failed(r))
            return r;
          if (const ncclResult_t r = ncclRecv(static_cast<char*>(recv) + p * bytes, n, t, p, comm, st); failed(r))
            return r;
        }
        return ncclSuccess;
      }
      case Coll::SendRecv: {
        if (const ncclResult_t r = ncclSend(send, n, t, (rank_of_slot + 1) % nranks, comm, st); failed(r)) return r;
        return ncclRecv(recv, n, t, (rank_of_slot - 1 + nranks) % nranks, comm, st);
      }
    }
    return ncclInvalidArgument;
  }

  Slot& at(int slot) { return slots_.at(static_cast<size_t>(slot)); }
  const Slot& at(int slot) const { return slots_.at(static_cast<size_t>(slot)); }

  /// Ends a capture still open (an error or abort in the middle of one), then drops the graphs.
  void end_open_captures() noexcept {
    if (capturing_ > 0)
      for (Slot& sl : slots_) {
        cudaSetDevice(sl.device);
        cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
        if (cudaStreamIsCapturing(sl.stream, &status) != cudaSuccess || status == cudaStreamCaptureStatusNone) continue;
        cudaGraph_t g = nullptr;
        cudaStreamEndCapture(sl.stream, &g);  // an invalidated capture returns an error and no graph
        if (g) cudaGraphDestroy(g);
      }
    capturing_ = 0;
    cudaGetLastError();  // the capture's error is not the one being reported
    drop_graphs();
  }

  /// Aborts every communicator, graphs first (nccl-tests aborts every comm on an asynchronous
  /// error or a timeout: src/common.cu, testStreamSynchronize). Called only on the thread that
  /// drives the communicators; NCCL frees the process's shared resources at the last abort.
  void abort_all() noexcept {
    end_open_captures();
    for (Slot& sl : slots_) {
      if (sl.comm) ncclCommAbort(sl.comm);
      sl.comm = nullptr;
    }
  }

  /// Releases everything (destructor, failed construction). Finalizes the communicators as one
  /// group and waits for all of them before destroying any; aborts them on an error, or when the
  /// finalize of non-blocking communicators outlasts its deadline.
  void teardown() noexcept {
    end_open_captures();
    bool any = false;
    for (const Slot& sl : slots_) any = any || sl.comm;
    if (any) {
      try {
        ncclGroupStart();
        for (Slot& sl : slots_)
          if (sl.comm) ncclCommFinalize(sl.comm);
        nccl_check(ncclGroupEnd(), "ncclCommFinalize (ncclGroupEnd)", nullptr);
        const double deadline = setup_.poll_timeout_s > 0 ? setup_.poll_timeout_s : kDefaultFinalizeDeadline_s;
        poll_until_finished(comms_, "ncclCommFinalize", blocking_.blocking ? 0 : deadline, nullptr);
        for (Slot& sl : slots_) {
          if (sl.comm) ncclCommDestroy(sl.comm);
          sl.comm = nullptr;
        }
      } catch (...) {
        abort_all();  // poll_until_finished aborted already; a throw from the group end did not
      }
    }
    for (Slot& sl : slots_) {
      cudaSetDevice(sl.device);
      for (cudaEvent_t e : sl.events) cudaEventDestroy(e);
      sl.events.clear();
      if (sl.stream) cudaStreamDestroy(sl.stream);
      sl.stream = nullptr;
    }
  }

  static gpu::CheckArgs args(const CheckSpec& s) {
    return {collective(s.coll).expect, s.dtype, s.op, s.root, s.nranks, s.rank, s.rep, s.sizes.param_count, s.sizes.recv_count};
  }

  NcclSetup setup_;
  StreamsDone streams_;
  CommsReady comms_;
  std::vector<Slot> slots_;
  int first_rank_ = 0, size_ = 1;
  int capturing_ = 0;  ///< streams inside a capture
  bool timing_ = false;
  int launches_timed_ = 0;  ///< timed launches so far; boundary events recorded: this + 1
  BlockingMode blocking_;     ///< what NCCL used (effective_blocking)
  std::string blocking_env_;  ///< NCCL_COMM_BLOCKING as NCCL saw it, empty when unset
  int timed_ = 0;
  bool native_alltoall_ = false;
  bool nccl_buffers_ = true;
  std::string mem_alloc_failure_;
  std::map<void*, bool> from_nccl_;  ///< buffer -> allocated by ncclMemAlloc
};

}  // namespace

std::string unusable_gpu_reason() {
  int n = 0;
  const cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess) return fmt::format("no usable GPU: cudaGetDeviceCount: {}", cudaGetErrorString(e));
  if (n == 0) return "no usable GPU: no CUDA device is visible";
  return {};
}

void check_setup(const NcclSetup& setup) {
  if (const std::string why = unusable_gpu_reason(); !why.empty()) throw UnavailableError("--backend nccl: " + why);
  int n = 0;
  cuda_check(cudaGetDeviceCount(&n), "cudaGetDeviceCount");
  first_device(setup, n);
}

std::string version_text() {
  int rt = 0, drv = 0;
  cudaRuntimeGetVersion(&rt);
  cudaDriverGetVersion(&drv);
  return fmt::format("NCCL {} (built {}), CUDA runtime {}.{}, driver {}", version_string(runtime_version()),
                     version_string(kBuiltVersion), rt / 1000, (rt % 1000) / 10,
                     drv ? fmt::format("{}.{}", drv / 1000, (drv % 1000) / 10) : std::string("none"));
}

std::unique_ptr<Communicator> make_communicator(const NcclSetup& setup, Bootstrap& group) {
  check_setup(setup);
  return std::make_unique<NcclCommunicator>(setup, group);
}

}  // namespace railkit::bench::nccl
