// The MPI backend: host memory, MPI collectives on a private duplicate of MPI_COMM_WORLD.
#include <cstdlib>
#include <limits>

#include "bench/mpi/mpi_session.hpp"
#include "core/error.hpp"

namespace railkit::bench::mpi {
namespace {

MPI_Datatype mpi_type(DType t) {
  switch (t) {
    case DType::Int8: return MPI_INT8_T;
    case DType::Uint8: return MPI_UINT8_T;
    case DType::Int32: return MPI_INT32_T;
    case DType::Uint32: return MPI_UINT32_T;
    case DType::Int64: return MPI_INT64_T;
    case DType::Uint64: return MPI_UINT64_T;
    case DType::Float: return MPI_FLOAT;
    case DType::Double: return MPI_DOUBLE;
    case DType::Half:
    case DType::BFloat16: break;
  }
  throw UnavailableError(std::string("datatype ") + std::string(info(t).name) + " is not available on the mpi backend");
}

MPI_Op mpi_op(RedOp o) {
  switch (o) {
    case RedOp::Sum: return MPI_SUM;
    case RedOp::Prod: return MPI_PROD;
    case RedOp::Min: return MPI_MIN;
    case RedOp::Max: return MPI_MAX;
    case RedOp::Avg: break;
  }
  throw UnavailableError("reduction avg is not available on the mpi backend");
}

class MpiCommunicator final : public Communicator {
 public:
  explicit MpiCommunicator(int color) {
    int world_rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
    check(MPI_Comm_split(MPI_COMM_WORLD, color, world_rank, &comm_), "MPI_Comm_split");
    MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN);
    MPI_Comm_rank(comm_, &rank_);
    MPI_Comm_size(comm_, &size_);
  }
  ~MpiCommunicator() override {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (!finalized) MPI_Comm_free(&comm_);
  }

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  std::string name() const override { return "mpi"; }
  std::string version() const override { return library_version(); }

  std::string unsupported_reason(DType t, RedOp op) const override {
    if (t == DType::Half || t == DType::BFloat16)
      return "-d/--datatype '" + std::string(info(t).name) + "' is only available on the nccl backend (MPI has no " +
             std::string(info(t).name) + " type)";
    if (op == RedOp::Avg) return "-o/--op 'avg' is only available on the nccl backend (MPI has no average reduction)";
    return {};
  }

  void* allocate(int, std::uint64_t bytes) override {
    const std::uint64_t rounded = (bytes + 4095) / 4096 * 4096;
    void* p = std::aligned_alloc(4096, rounded == 0 ? 4096 : rounded);
    if (p == nullptr) throw Error(ErrorCode::Internal, "cannot allocate " + std::to_string(bytes) + " bytes of host memory");
    return p;
  }
  void release(int, void* p) noexcept override { std::free(p); }

  void launch(std::span<const OpCall> calls) override {
    if (calls.size() != 1)
      throw Error(ErrorCode::Internal,
                  "the mpi backend drives one rank per process, got " + std::to_string(calls.size()) + " calls");
    const OpCall& c = calls.front();
    if (c.count > static_cast<std::uint64_t>(std::numeric_limits<int>::max()))
      throw UnavailableError("count " + std::to_string(c.count) + " exceeds MPI's int count");
    const int n = static_cast<int>(c.count);
    const MPI_Datatype t = mpi_type(c.dtype);
    void* recv = c.recv;
    const void* send = c.in_place ? MPI_IN_PLACE : c.send;
    switch (c.coll) {
      case Coll::AllReduce:
        check(MPI_Allreduce(send, recv, n, t, mpi_op(c.op), comm_), "MPI_Allreduce");
        return;
      case Coll::AllGather:
        check(MPI_Allgather(send, n, t, recv, n, t, comm_), "MPI_Allgather");
        return;
      case Coll::ReduceScatter:
        check(MPI_Reduce_scatter_block(send, recv, n, t, mpi_op(c.op), comm_), "MPI_Reduce_scatter_block");
        return;
      case Coll::AllToAll:
        check(MPI_Alltoall(send, n, t, recv, n, t, comm_), "MPI_Alltoall");
        return;
      case Coll::Broadcast: {
        // Out of place: the root sends from its send buffer, the others receive into recv.
        void* buf = (!c.in_place && rank_ == c.root) ? const_cast<void*>(c.send) : recv;
        check(MPI_Bcast(buf, n, t, c.root, comm_), "MPI_Bcast");
        return;
      }
      case Coll::Reduce: {
        const void* s = c.in_place ? (rank_ == c.root ? MPI_IN_PLACE : recv) : c.send;
        check(MPI_Reduce(s, recv, n, t, mpi_op(c.op), c.root, comm_), "MPI_Reduce");
        return;
      }
      case Coll::SendRecv: {
        const int next = (rank_ + 1) % size_;
        const int prev = (rank_ - 1 + size_) % size_;
        if (c.in_place)
          check(MPI_Sendrecv_replace(recv, n, t, next, 0, prev, 0, comm_, MPI_STATUS_IGNORE), "MPI_Sendrecv_replace");
        else
          check(MPI_Sendrecv(c.send, n, t, next, 0, recv, n, t, prev, 0, comm_, MPI_STATUS_IGNORE), "MPI_Sendrecv");
        return;
      }
    }
  }

  bool broadcast_root_receives() const override { return false; }

  InPlaceLayout in_place_layout(Coll c, const CollSizes& s, int slot) const override {
    InPlaceLayout l = Communicator::in_place_layout(c, s, slot);
    // MPI_Reduce_scatter_block with MPI_IN_PLACE leaves this rank's block at the buffer's start.
    if (c == Coll::ReduceScatter) l.output_offset = 0;
    return l;
  }

  void fill_input(int, void* dst, std::uint64_t count, const CheckSpec& spec) override {
    fill_input_host(dst, count, spec);
  }
  void fill_sentinel(int, void* dst, std::uint64_t bytes) override { fill_sentinel_host(dst, bytes); }
  std::int64_t count_wrong(int, const void* out, const CheckSpec& spec) override { return count_wrong_host(out, spec); }

 private:
  MPI_Comm comm_ = MPI_COMM_NULL;
  int rank_ = 0, size_ = 1;
};

}  // namespace

std::unique_ptr<Communicator> make_communicator(int color) { return std::make_unique<MpiCommunicator>(color); }

}  // namespace railkit::bench::mpi
