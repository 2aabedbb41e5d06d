#pragma once
// The collectives railkit measures, in one table: their names in railkit-bench, NCCL, NVIDIA's
// example tuner CSV and Open MPI's coll/tuned, nccl-tests' byte, bandwidth and data-check rules,
// and how NCCL runs them. Used by bench (names, sizes, busbw, checks), sim (busbw, point-to-point),
// tuner (spaces, --coll all), profiles (decisions, exports), the NCCL tuner plugin and help texts.
// Adding a collective: a row here, a CollKind value, and each backend's call of it.
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "core/collective_kind.hpp"

namespace railkit {

/// nccl-tests' bus bandwidth factor for n ranks (src/*.cu, `getBw`).
enum class BusbwRule {
  TwiceNMinus1OverN,  ///< all_reduce: 2(n-1)/n
  NMinus1OverN,       ///< all_gather, reduce_scatter, alltoall: (n-1)/n
  One,                ///< broadcast, reduce, sendrecv: 1
};

/// How the requested size becomes the count each rank passes (nccl-tests' getCollByteCount).
enum class PerRankRule {
  Whole,   ///< count = bytes / element size
  Shared,  ///< count = (bytes / element size) / n, rounded down to 16 bytes' worth of elements
};

/// Which buffers of a PerRankRule::Shared collective hold nranks per-rank blocks (the other holds
/// one block); None for PerRankRule::Whole.
enum class Blocks {
  None,  ///< send and receive hold the whole count
  Recv,  ///< all_gather: send 1 block, receive n
  Send,  ///< reduce_scatter: send n blocks, receive 1
  Both,  ///< alltoall: n blocks each way
};

/// One collective: what every part of railkit needs to know about it.
struct Collective {
  CollKind kind;               ///< its place in this table
  std::string_view name;       ///< railkit-bench --coll, profile decisions: "all_reduce"
  int nccl_func;               ///< ncclFunc_t (nccl_common.h): Broadcast 0 .. AllReduce 4, SendRecv 5; -1 none
  std::string_view nccl_name;  ///< ncclFuncStr, the per-collective NCCL_ALGO prefix: "AllReduce"
  std::string_view tuner_csv;  ///< NVIDIA's example tuner plugin CSV: "allreduce"; "" when it has none
  int ompi_id;                 ///< Open MPI's COLLTYPE (coll_base_functions.h); -1 none
  std::string_view ompi_name;  ///< coll/tuned's name (OMPI_MCA_coll_tuned_<name>_algorithm); "" none
  bool has_redop;              ///< takes a reduction
  bool has_root;               ///< takes a root rank
  BusbwRule busbw;
  PerRankRule per_rank;
  Blocks blocks;               ///< which buffers hold n per-rank blocks
  ExpectRule expect;           ///< the data check's expected value of each output element
  bool point_to_point;         ///< NCCL runs it as grouped send/recv: no algorithm or protocol choice, no in-place
};

/// Every collective, in railkit-bench's order (bench::Coll): all_reduce, all_gather,
/// reduce_scatter, broadcast, reduce, alltoall, sendrecv.
std::span<const Collective> collectives() noexcept;

/// The row of `kind`.
const Collective& collective(CollKind kind) noexcept;

/// The collective railkit-bench calls `name`; nullptr for another name.
const Collective* find_collective(std::string_view name) noexcept;

/// The collective NCCL's tuner is asked about as ncclFunc_t `func`; nullptr for another value.
const Collective* collective_of_nccl_func(int func) noexcept;

/// Every collective's railkit-bench name in table order, joined by `separator`:
/// "all_reduce, all_gather, ..." (for messages and help texts).
std::string collective_names(std::string_view separator = ", ");

/// The bus bandwidth factor of `c` for `nranks` ranks (nranks < 1 counts as 1).
double busbw_factor(const Collective& c, int nranks) noexcept;

}  // namespace railkit
