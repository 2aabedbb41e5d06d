#include <cuda_runtime.h>
#include <mpi.h>
#include <nccl.h>

#include <chrono>
#include <span>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "bench/nccl/nccl_adapter.hpp"
#include "bench/nccl/nccl_backend.hpp"
#include "bench/nccl/nccl_kernels.hpp"
#include "core/error.hpp"

namespace railkit::bench::nccl {
namespace {

void cuda_check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw CudaError(fmt::format("{}: {}", what, cudaGetErrorString(e)));
}

void nccl_check(ncclResult_t r, const char* what, ncclComm_t comm) {
  if (r == ncclSuccess || r == ncclInProgress) return;
  const char* last = comm ? ncclGetLastError(comm) : ncclGetLastError(nullptr);
  throw NcclError(fmt::format("{}: {}{}{}", what, ncclGetErrorString(r), last && *last ? ": " : "", last ? last : ""));
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

/// This process's GPUs: one slot per GPU (-g N), each its own NCCL rank, stream and
/// communicator. All NCCL calls of one operation go into one ncclGroupStart/End, as NCCL asks
/// of a thread that drives several GPUs; the communicators are non-blocking, so every wait polls
/// ncclCommGetAsyncError and a hang stays visible to the watchdog.
class NcclCommunicator final : public Communicator {
 public:
  explicit NcclCommunicator(const NcclSetup& s) {
    try {
      init(s);
    } catch (...) {
      abort();  // communicators of a failed or timed-out init are aborted, not finalized
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

  void* allocate(int slot, std::uint64_t bytes) override {
    on_device(at(slot).device, "cudaSetDevice");
    void* p = nullptr;
    cuda_check(cudaMalloc(&p, bytes == 0 ? 1 : bytes), "cudaMalloc");
    return p;
  }
  void release(int slot, void* p) noexcept override {
    if (!p) return;
    cudaSetDevice(at(slot).device);
    cudaFree(p);
  }

  bool asynchronous() const override { return true; }
  bool supports_in_place(Coll c) const override { return c != Coll::AllToAll && c != Coll::SendRecv; }

  void launch(std::span<const OpCall> calls) override {
    if (calls.size() != slots_.size())
      throw Error(ErrorCode::Internal, fmt::format("nccl launch: {} calls for {} GPUs", calls.size(), slots_.size()));
    const bool timed = timing_ && next_event_ + 2 <= 2 * static_cast<size_t>(timed_);
    if (timed)
      for (Slot& sl : slots_) {
        on_device(sl.device, "cudaSetDevice");
        cuda_check(cudaEventRecord(sl.events[next_event_], sl.stream), "cudaEventRecord");
      }
    // One group for every GPU's part (and for alltoall's and sendrecv's sends and receives):
    // NCCL enqueues nothing until ncclGroupEnd, which must be reached even after a failed call.
    nccl_check(ncclGroupStart(), "ncclGroupStart", nullptr);
    ncclResult_t first_error = ncclSuccess;
    ncclComm_t failed = nullptr;
    for (size_t k = 0; k < slots_.size(); ++k) {
      const ncclResult_t r = enqueue(calls[k], slots_[k], first_rank_ + static_cast<int>(k));
      if (r != ncclSuccess && r != ncclInProgress && first_error == ncclSuccess) {
        first_error = r;
        failed = slots_[k].comm;
      }
    }
    const ncclResult_t end = ncclGroupEnd();
    nccl_check(first_error, "NCCL collective launch", failed);
    nccl_check(end, "NCCL collective launch (ncclGroupEnd)", nullptr);
    if (end == ncclInProgress) wait_all("NCCL collective launch", 0);
    if (timed) {
      for (Slot& sl : slots_) {
        on_device(sl.device, "cudaSetDevice");
        cuda_check(cudaEventRecord(sl.events[next_event_ + 1], sl.stream), "cudaEventRecord");
      }
      next_event_ += 2;
    }
  }

  void complete() override {
    // Poll rather than block, so that a hang stays visible to ncclCommGetAsyncError and the watchdog.
    for (Slot& sl : slots_) {
      for (;;) {
        const cudaError_t q = cudaStreamQuery(sl.stream);
        if (q == cudaSuccess) break;
        if (q != cudaErrorNotReady) cuda_check(q, "cudaStreamQuery");
        for (const Slot& other : slots_) {
          ncclResult_t st = ncclSuccess;
          nccl_check(ncclCommGetAsyncError(other.comm, &st), "ncclCommGetAsyncError", other.comm);
          if (st != ncclSuccess && st != ncclInProgress) nccl_check(st, "NCCL asynchronous error", other.comm);
        }
        std::this_thread::yield();
      }
    }
  }

  void start_event_timing(int iters) override {
    for (Slot& sl : slots_) {
      on_device(sl.device, "cudaSetDevice");  // an event belongs to the device current at its creation
      while (sl.events.size() < static_cast<size_t>(2 * iters)) {
        cudaEvent_t e;
        cuda_check(cudaEventCreate(&e), "cudaEventCreate");
        sl.events.push_back(e);
      }
    }
    timing_ = true;
    next_event_ = 0;
    timed_ = iters;
  }

  std::vector<std::vector<double>> event_times_us() override {
    std::vector<std::vector<double>> out;
    if (!timing_) return out;
    for (Slot& sl : slots_) {
      std::vector<double> times;
      on_device(sl.device, "cudaSetDevice");
      for (int i = 0; i < timed_ && static_cast<size_t>(2 * i + 1) < next_event_; ++i) {
        float ms = 0;
        cuda_check(cudaEventElapsedTime(&ms, sl.events[2 * i], sl.events[2 * i + 1]), "cudaEventElapsedTime");
        times.push_back(ms * 1000.0);
      }
      out.push_back(std::move(times));
    }
    timing_ = false;
    return out;
  }

  bool supports_graphs() const override { return true; }
  void begin_capture() override {
    timing_ = false;
    // As nccl-tests with -g: one capture per GPU's stream, in thread-local mode (NCCL may
    // allocate while connecting during the capture); the grouped launches then record each
    // GPU's part into its own stream's graph.
    for (Slot& sl : slots_) {
      on_device(sl.device, "cudaSetDevice");
      cuda_check(cudaStreamBeginCapture(sl.stream, cudaStreamCaptureModeThreadLocal), "cudaStreamBeginCapture");
    }
  }
  void end_capture() override {
    for (Slot& sl : slots_) {
      drop_graph(sl);
      on_device(sl.device, "cudaSetDevice");
      cuda_check(cudaStreamEndCapture(sl.stream, &sl.graph), "cudaStreamEndCapture");
    }
    for (Slot& sl : slots_) {
      on_device(sl.device, "cudaSetDevice");
      cuda_check(cudaGraphInstantiate(&sl.exec, sl.graph, 0), "cudaGraphInstantiate");
    }
  }
  void replay(int times) override {
    for (int i = 0; i < times; ++i)
      for (Slot& sl : slots_) {
        on_device(sl.device, "cudaSetDevice");
        cuda_check(cudaGraphLaunch(sl.exec, sl.stream), "cudaGraphLaunch");
      }
  }

  void abort() noexcept override {
    // One ncclCommAbort per communicator: each raises its abort flag at once, and NCCL frees the
    // process's shared resources at the last one.
    aborted_ = true;
    for (Slot& sl : slots_) {
      if (sl.comm) ncclCommAbort(sl.comm);
      sl.comm = nullptr;
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
  struct Slot {
    int device = 0;
    cudaStream_t stream = nullptr;
    ncclComm_t comm = nullptr;
    std::vector<cudaEvent_t> events;
    cudaGraph_t graph = nullptr;
    cudaGraphExec_t exec = nullptr;
  };

  void init(const NcclSetup& s) {
    int ndev = 0;
    cuda_check(cudaGetDeviceCount(&ndev), "cudaGetDeviceCount");
    const int n = s.gpus;
    if (n < 1) throw UsageError(fmt::format("-g/--ngpus '{}': must be at least 1", n));
    // One GPU: the node-local rank's, wrapping (as before). Several: node-local rank L drives
    // GPUs L*n .. L*n + n - 1, as nccl-tests; --device D makes them D .. D + n - 1.
    const int base = s.device ? *s.device : (n == 1 ? s.local_rank % ndev : s.local_rank * n);
    if (base + n > ndev) {
      if (s.device && n == 1) throw UsageError(fmt::format("--device '{}': only {} GPUs are visible", base, ndev));
      if (s.device)
        throw UsageError(fmt::format("--device '{}' with -g/--ngpus '{}': needs GPUs {}..{} but only {} are visible",
                                     base, n, base, base + n - 1, ndev));
      throw UsageError(fmt::format("-g/--ngpus '{}': node-local rank {} drives GPUs {}..{} but only {} are visible "
                                   "(CUDA_VISIBLE_DEVICES, --device and the ranks per node decide which)",
                                   n, s.local_rank, base, base + n - 1, ndev));
    }
    slots_.resize(static_cast<size_t>(n));
    for (int k = 0; k < n; ++k) {
      Slot& sl = slots_[static_cast<size_t>(k)];
      sl.device = base + k;
      on_device(sl.device, "cudaSetDevice");
      cuda_check(cudaStreamCreateWithFlags(&sl.stream, cudaStreamNonBlocking), "cudaStreamCreate");
    }

    int world_rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
    MPI_Comm group;
    MPI_Comm_split(MPI_COMM_WORLD, s.color, world_rank, &group);
    int proc = 0, nprocs = 1;
    MPI_Comm_rank(group, &proc);
    MPI_Comm_size(group, &nprocs);
    first_rank_ = proc * n;
    size_ = nprocs * n;
    ncclUniqueId id{};
    if (proc == 0) nccl_check(ncclGetUniqueId(&id), "ncclGetUniqueId", nullptr);
    MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, group);
    MPI_Comm_free(&group);

    // NCCL's pattern for one thread and several GPUs: each ncclCommInitRankConfig inside one
    // group, with its GPU current; ncclGroupEnd starts them all (ncclInProgress when non-blocking).
    std::vector<ncclConfig_t> configs(slots_.size(), nonblocking_config());
    nccl_check(ncclGroupStart(), "ncclGroupStart", nullptr);
    ncclResult_t first_error = ncclSuccess;
    cudaError_t cuda_error = cudaSuccess;
    for (size_t k = 0; k < slots_.size(); ++k) {
      cuda_error = cudaSetDevice(slots_[k].device);
      if (cuda_error != cudaSuccess) break;
      const ncclResult_t r =
          ncclCommInitRankConfig(&slots_[k].comm, size_, id, first_rank_ + static_cast<int>(k), &configs[k]);
      if (r != ncclSuccess && r != ncclInProgress) {
        first_error = r;
        break;
      }
    }
    const ncclResult_t end = ncclGroupEnd();
    cuda_check(cuda_error, "cudaSetDevice");
    nccl_check(first_error, "ncclCommInitRankConfig", nullptr);
    nccl_check(end, "ncclCommInitRankConfig (ncclGroupEnd)", nullptr);
    wait_all("ncclCommInitRankConfig", s.init_timeout_s);
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
        const size_t bytes = n * info(c.dtype).size_bytes;
        for (int p = 0; p < nranks; ++p) {
          if (const ncclResult_t r = ncclSend(static_cast<const char*>(send) + p * bytes, n, t, p, comm, st);
              r != ncclSuccess && r != ncclInProgress)
            return r;
          if (const ncclResult_t r = ncclRecv(static_cast<char*>(recv) + p * bytes, n, t, p, comm, st);
              r != ncclSuccess && r != ncclInProgress)
            return r;
        }
        return ncclSuccess;
      }
      case Coll::SendRecv: {
        if (const ncclResult_t r = ncclSend(send, n, t, (rank_of_slot + 1) % nranks, comm, st);
            r != ncclSuccess && r != ncclInProgress)
          return r;
        return ncclRecv(recv, n, t, (rank_of_slot - 1 + nranks) % nranks, comm, st);
      }
    }
    return ncclInvalidArgument;
  }

  Slot& at(int slot) { return slots_.at(static_cast<size_t>(slot)); }
  const Slot& at(int slot) const { return slots_.at(static_cast<size_t>(slot)); }

  static void drop_graph(Slot& sl) noexcept {
    if (sl.exec) cudaGraphExecDestroy(sl.exec);
    if (sl.graph) cudaGraphDestroy(sl.graph);
    sl.exec = nullptr;
    sl.graph = nullptr;
  }

  /// Releases everything (destructor, failed construction). Finalizes the communicators as one
  /// group and waits for all of them before destroying any; aborts them after an abort or error.
  void teardown() noexcept {
    bool any = false;
    for (const Slot& sl : slots_) any = any || sl.comm;
    if (any && !aborted_) {
      ncclGroupStart();
      for (Slot& sl : slots_)
        if (sl.comm) ncclCommFinalize(sl.comm);
      ncclGroupEnd();
      bool failed = false;
      for (Slot& sl : slots_) {
        if (!sl.comm) continue;
        ncclResult_t st = ncclInProgress;
        while (ncclCommGetAsyncError(sl.comm, &st) == ncclSuccess && st == ncclInProgress) std::this_thread::yield();
        failed = failed || st != ncclSuccess;
      }
      if (failed) abort();
      else
        for (Slot& sl : slots_) {
          if (sl.comm) ncclCommDestroy(sl.comm);
          sl.comm = nullptr;
        }
    } else if (any) {
      abort();
    }
    for (Slot& sl : slots_) {
      cudaSetDevice(sl.device);
      drop_graph(sl);
      for (cudaEvent_t e : sl.events) cudaEventDestroy(e);
      sl.events.clear();
      if (sl.stream) cudaStreamDestroy(sl.stream);
      sl.stream = nullptr;
    }
  }

  static gpu::CheckArgs args(const CheckSpec& s) {
    return {s.coll, s.dtype, s.op, s.root, s.nranks, s.rank, s.rep, s.sizes.param_count, s.sizes.recv_count,
            info(s.dtype).is_float};
  }

  /// Polls every communicator until none is in progress (ncclSuccess), as NCCL asks after a
  /// non-blocking call returned ncclInProgress. Aborts and throws TimeoutError after timeout_s (> 0).
  void wait_all(const char* what, double timeout_s) {
    const auto start = std::chrono::steady_clock::now();
    for (Slot& sl : slots_) {
      for (;;) {
        ncclResult_t st = ncclInProgress;
        nccl_check(ncclCommGetAsyncError(sl.comm, &st), what, sl.comm);
        if (st == ncclSuccess) break;
        if (st != ncclInProgress) nccl_check(st, what, sl.comm);
        if (timeout_s > 0 &&
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() > timeout_s) {
          abort();
          throw TimeoutError(fmt::format("{} did not complete within {:.0f} s", what, timeout_s));
        }
        std::this_thread::yield();
      }
    }
  }

  std::vector<Slot> slots_;
  int first_rank_ = 0, size_ = 1;
  bool aborted_ = false;
  bool timing_ = false;
  size_t next_event_ = 0;
  int timed_ = 0;
};

}  // namespace

std::string unusable_gpu_reason() {
  int n = 0;
  const cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess) return fmt::format("no usable GPU: cudaGetDeviceCount: {}", cudaGetErrorString(e));
  if (n == 0) return "no usable GPU: no CUDA device is visible";
  return {};
}

std::string version_text() {
  int code = 0;
  ncclGetVersion(&code);
  int rt = 0, drv = 0;
  cudaRuntimeGetVersion(&rt);
  cudaDriverGetVersion(&drv);
  return fmt::format("NCCL {} (built {}), CUDA runtime {}.{}, driver {}", version_string(code),
                     version_string(kBuiltVersion), rt / 1000, (rt % 1000) / 10,
                     drv ? fmt::format("{}.{}", drv / 1000, (drv % 1000) / 10) : std::string("none"));
}

std::unique_ptr<Communicator> make_communicator(const NcclSetup& setup) {
  if (const std::string why = unusable_gpu_reason(); !why.empty()) throw UnavailableError("--backend nccl: " + why);
  return std::make_unique<NcclCommunicator>(setup);
}

}  // namespace railkit::bench::nccl
