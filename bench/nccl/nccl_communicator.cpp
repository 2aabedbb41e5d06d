#include <cuda_runtime.h>
#include <mpi.h>
#include <nccl.h>

#include <chrono>
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

class NcclCommunicator final : public Communicator {
 public:
  explicit NcclCommunicator(const NcclSetup& s) {
    int ndev = 0;
    cuda_check(cudaGetDeviceCount(&ndev), "cudaGetDeviceCount");
    device_ = s.device.value_or(s.local_rank % ndev);
    if (device_ >= ndev) throw UsageError(fmt::format("--device '{}': only {} GPUs are visible", device_, ndev));
    cuda_check(cudaSetDevice(device_), "cudaSetDevice");
    cuda_check(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreate");

    int world_rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
    MPI_Comm group;
    MPI_Comm_split(MPI_COMM_WORLD, s.color, world_rank, &group);
    MPI_Comm_rank(group, &rank_);
    MPI_Comm_size(group, &size_);
    ncclUniqueId id{};
    if (rank_ == 0) nccl_check(ncclGetUniqueId(&id), "ncclGetUniqueId", nullptr);
    MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, group);
    MPI_Comm_free(&group);

    ncclConfig_t cfg = nonblocking_config();
    nccl_check(ncclCommInitRankConfig(&comm_, size_, id, rank_, &cfg), "ncclCommInitRankConfig", nullptr);
    wait_comm("ncclCommInitRankConfig", s.init_timeout_s);
  }

  ~NcclCommunicator() override {
    if (comm_) {
      if (aborted_) ncclCommAbort(comm_);
      else {
        ncclCommFinalize(comm_);
        ncclResult_t st = ncclInProgress;
        while (ncclCommGetAsyncError(comm_, &st) == ncclSuccess && st == ncclInProgress) std::this_thread::yield();
        ncclCommDestroy(comm_);
      }
    }
    drop_graph();
    for (auto& e : events_) cudaEventDestroy(e);
    if (stream_) cudaStreamDestroy(stream_);
  }

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  std::string name() const override { return "nccl"; }
  std::string version() const override { return version_text(); }
  std::string device() const override {
    cudaDeviceProp p{};
    cudaGetDeviceProperties(&p, device_);
    return fmt::format("GPU {} {} [{:04x}:{:02x}:{:02x}.0]", device_, p.name, p.pciDomainID, p.pciBusID, p.pciDeviceID);
  }
  std::string unsupported_reason(DType, RedOp) const override { return {}; }

  void* allocate(std::uint64_t bytes) override {
    void* p = nullptr;
    cuda_check(cudaMalloc(&p, bytes == 0 ? 1 : bytes), "cudaMalloc");
    return p;
  }
  void release(void* p) noexcept override {
    if (p) cudaFree(p);
  }

  bool asynchronous() const override { return true; }
  bool supports_in_place(Coll c) const override { return c != Coll::AllToAll && c != Coll::SendRecv; }

  void launch(const OpCall& c) override {
    if (timing_ && next_event_ + 1 < events_.size()) cuda_check(cudaEventRecord(events_[next_event_], stream_), "cudaEventRecord");
    const ncclDataType_t t = nccl_type(c.dtype);
    const size_t n = static_cast<size_t>(c.count);
    void* recv = c.recv;
    const void* send = c.send;
    ncclResult_t r = ncclSuccess;
    switch (c.coll) {
      case Coll::AllReduce: r = ncclAllReduce(send, recv, n, t, nccl_op(c.op), comm_, stream_); break;
      case Coll::AllGather: r = ncclAllGather(send, recv, n, t, comm_, stream_); break;
      case Coll::ReduceScatter: r = ncclReduceScatter(send, recv, n, t, nccl_op(c.op), comm_, stream_); break;
      case Coll::Broadcast: r = ncclBroadcast(send, recv, n, t, c.root, comm_, stream_); break;
      case Coll::Reduce: r = ncclReduce(send, recv, n, t, nccl_op(c.op), c.root, comm_, stream_); break;
      case Coll::AllToAll: {
        const size_t bytes = n * info(c.dtype).size_bytes;
        ncclGroupStart();
        for (int p = 0; p < size_; ++p) {
          ncclSend(static_cast<const char*>(send) + p * bytes, n, t, p, comm_, stream_);
          ncclRecv(static_cast<char*>(recv) + p * bytes, n, t, p, comm_, stream_);
        }
        r = ncclGroupEnd();
        break;
      }
      case Coll::SendRecv: {
        ncclGroupStart();
        ncclSend(send, n, t, (rank_ + 1) % size_, comm_, stream_);
        ncclRecv(recv, n, t, (rank_ - 1 + size_) % size_, comm_, stream_);
        r = ncclGroupEnd();
        break;
      }
    }
    nccl_check(r, "NCCL collective launch", comm_);
    if (r == ncclInProgress) wait_comm("NCCL collective launch", 0);
    if (timing_ && next_event_ + 1 < events_.size()) {
      cuda_check(cudaEventRecord(events_[next_event_ + 1], stream_), "cudaEventRecord");
      next_event_ += 2;
    }
  }

  void complete() override {
    // Poll rather than block, so that a hang stays visible to ncclCommGetAsyncError and the watchdog.
    for (;;) {
      const cudaError_t q = cudaStreamQuery(stream_);
      if (q == cudaSuccess) return;
      if (q != cudaErrorNotReady) cuda_check(q, "cudaStreamQuery");
      ncclResult_t st = ncclSuccess;
      nccl_check(ncclCommGetAsyncError(comm_, &st), "ncclCommGetAsyncError", comm_);
      if (st != ncclSuccess && st != ncclInProgress) nccl_check(st, "NCCL asynchronous error", comm_);
      std::this_thread::yield();
    }
  }

  void start_event_timing(int iters) override {
    while (events_.size() < static_cast<size_t>(2 * iters)) {
      cudaEvent_t e;
      cuda_check(cudaEventCreate(&e), "cudaEventCreate");
      events_.push_back(e);
    }
    timing_ = true;
    next_event_ = 0;
    timed_ = iters;
  }

  std::vector<double> event_times_us() override {
    std::vector<double> out;
    if (!timing_) return out;
    for (int i = 0; i < timed_ && static_cast<size_t>(2 * i + 1) < next_event_; ++i) {
      float ms = 0;
      cuda_check(cudaEventElapsedTime(&ms, events_[2 * i], events_[2 * i + 1]), "cudaEventElapsedTime");
      out.push_back(ms * 1000.0);
    }
    timing_ = false;
    return out;
  }

  bool supports_graphs() const override { return true; }
  void begin_capture() override {
    timing_ = false;
    // Thread-local mode, as nccl-tests: NCCL may allocate while connecting during the capture.
    cuda_check(cudaStreamBeginCapture(stream_, cudaStreamCaptureModeThreadLocal), "cudaStreamBeginCapture");
  }
  void end_capture() override {
    drop_graph();
    cuda_check(cudaStreamEndCapture(stream_, &graph_), "cudaStreamEndCapture");
    cuda_check(cudaGraphInstantiate(&exec_, graph_, 0), "cudaGraphInstantiate");
  }
  void replay(int times) override {
    for (int i = 0; i < times; ++i) cuda_check(cudaGraphLaunch(exec_, stream_), "cudaGraphLaunch");
  }

  void abort() noexcept override {
    aborted_ = true;
    if (comm_) ncclCommAbort(comm_);
    comm_ = nullptr;
  }

  void fill_input(void* dst, std::uint64_t count, const CheckSpec& spec) override {
    gpu::fill_input(dst, count, args(spec), stream_);
  }
  void fill_sentinel(void* dst, std::uint64_t bytes) override {
    cuda_check(cudaMemsetAsync(dst, 0xA5, bytes, stream_), "cudaMemsetAsync");
  }
  std::int64_t count_wrong(const void* out, const CheckSpec& spec) override {
    complete();
    return gpu::count_wrong(out, args(spec), stream_);
  }

 private:
  void drop_graph() noexcept {
    if (exec_) cudaGraphExecDestroy(exec_);
    if (graph_) cudaGraphDestroy(graph_);
    exec_ = nullptr;
    graph_ = nullptr;
  }

  static gpu::CheckArgs args(const CheckSpec& s) {
    return {s.coll, s.dtype, s.op, s.root, s.nranks, s.rank, s.rep, s.sizes.param_count, s.sizes.recv_count,
            info(s.dtype).is_float};
  }

  void wait_comm(const char* what, double timeout_s) {
    const auto start = std::chrono::steady_clock::now();
    for (;;) {
      ncclResult_t st = ncclInProgress;
      nccl_check(ncclCommGetAsyncError(comm_, &st), what, comm_);
      if (st == ncclSuccess) return;
      if (st != ncclInProgress) nccl_check(st, what, comm_);
      if (timeout_s > 0 &&
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() > timeout_s) {
        abort();
        throw TimeoutError(fmt::format("{} did not complete within {:.0f} s", what, timeout_s));
      }
      std::this_thread::yield();
    }
  }

  int device_ = 0;
  int rank_ = 0, size_ = 1;
  cudaStream_t stream_ = nullptr;
  ncclComm_t comm_ = nullptr;
  bool aborted_ = false;
  std::vector<cudaEvent_t> events_;
  cudaGraph_t graph_ = nullptr;
  cudaGraphExec_t exec_ = nullptr;
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
