#pragma once
// Datatypes, reductions and collectives: names, sizes and the nccl-tests byte/bandwidth rules.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "bench/enums.hpp"

namespace railkit::bench {


struct DTypeInfo {
  DType type;
  std::string_view name;  ///< as nccl-tests prints it: int8 ... float, double, half, bfloat16
  std::size_t size_bytes;
  bool is_float;
};

struct RedOpInfo {
  RedOp op;
  std::string_view name;
};

struct CollInfo {
  Coll coll;
  std::string_view name;  ///< as --coll spells it
  bool has_redop;
  bool has_root;
};

std::span<const DTypeInfo> all_dtypes();
std::span<const RedOpInfo> all_redops();
std::span<const CollInfo> all_colls();

const DTypeInfo& info(DType t);
const RedOpInfo& info(RedOp o);
const CollInfo& info(Coll c);

std::optional<DType> parse_dtype(std::string_view name);
std::optional<RedOp> parse_redop(std::string_view name);
std::optional<Coll> parse_coll(std::string_view name);

/// Per-rank blocks of all_gather, reduce_scatter and alltoall are whole multiples of this many
/// bytes, as in nccl-tests (src/all_gather.cu and the others: `(count/nranks) & ~(16/eltSize - 1)`).
inline constexpr std::size_t kPerRankAlignBytes = 16;

/// nccl-tests' per-rank count of all_gather, reduce_scatter and alltoall: count / nranks rounded
/// down to a multiple of 16 bytes' worth of elements.
std::uint64_t per_rank_count(std::uint64_t count, std::size_t elem_bytes, int nranks);

/// Element counts of one collective at one requested size, following nccl-tests:
/// count = bytes / element size, and for all_gather, reduce_scatter and alltoall the
/// per-rank count is per_rank_count (count / nranks, rounded down to 16 bytes).
struct CollSizes {
  std::uint64_t send_count = 0;   ///< elements in the send buffer
  std::uint64_t recv_count = 0;   ///< elements in the receive buffer
  std::uint64_t param_count = 0;  ///< the count passed to the collective ("count" column)
  std::uint64_t bytes = 0;        ///< max(send, recv) bytes: nccl-tests' "size" column
  bool rounded = false;           ///< bytes differs from the requested size
};

CollSizes coll_sizes(Coll c, std::uint64_t requested_bytes, std::size_t elem_bytes, int nranks);

/// nccl-tests' bus bandwidth factor for n ranks: all_reduce 2(n-1)/n; all_gather,
/// reduce_scatter, alltoall (n-1)/n; broadcast, reduce, sendrecv 1.
double busbw_factor(Coll c, int nranks);

/// The requested sizes from min to max: multiply by step_factor when > 1, else add step_bytes.
/// Requires a sequence that grows (validated by the options).
std::vector<std::uint64_t> size_sequence(std::uint64_t min_bytes, std::uint64_t max_bytes,
                                         std::uint64_t step_factor, std::uint64_t step_bytes);

}  // namespace railkit::bench
