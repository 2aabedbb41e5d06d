#pragma once
// The collectives railkit measures, in one table: their names in railkit-bench, NCCL, NVIDIA's
// example tuner CSV and Open MPI's coll/tuned, and nccl-tests' byte and bandwidth rules. Used by
// bench (names, busbw), tuner (spaces, --coll all), profiles (decisions, exports) and the NCCL
// tuner plugin.
#include <optional>
#include <span>
#include <string>
#include <string_view>

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

struct Collective {
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
};

/// Every collective, in railkit-bench's order (bench::Coll): all_reduce, all_gather,
/// reduce_scatter, broadcast, reduce, alltoall, sendrecv.
std::span<const Collective> collectives() noexcept;

/// The collective railkit-bench calls `name`; nullptr for another name.
const Collective* find_collective(std::string_view name) noexcept;

/// The collective NCCL's tuner is asked about as ncclFunc_t `func`; nullptr for another value.
const Collective* collective_of_nccl_func(int func) noexcept;

/// "all_reduce, all_gather, ..." (for messages).
std::string collective_names();

/// The bus bandwidth factor of `c` for `nranks` ranks (nranks < 1 counts as 1).
double busbw_factor(const Collective& c, int nranks) noexcept;

}  // namespace railkit
