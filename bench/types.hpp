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

/// Element counts of one collective at one requested size, following nccl-tests:
/// count = bytes / element size, and for all_gather, reduce_scatter and alltoall the
/// per-rank count is count / nranks (rounded down).
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
