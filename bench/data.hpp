#pragma once
// Exactly predictable data for the untimed check pass, on host memory. Every rank fills its
// input with gen(rank, index, rep); the expected output of each collective follows from the
// collective's definition, computed element by element (no extra buffer of message size).
// Values are small integers (products of 1s and 2s for prod), so float sums and products are
// exact and integer overflow wraps identically on both sides.
#include <cstdint>

#include "bench/types.hpp"

namespace railkit::bench {

/// The value rank `rank` puts at input index `index` in check pass `rep`.
std::int64_t gen_value(RedOp op, int rank, std::uint64_t index, int rep) noexcept;

/// What one rank's check needs to know about the operation.
struct CheckSpec {
  Coll coll;
  DType dtype;
  RedOp op;
  int root;
  int nranks;
  int rank;
  int rep;
  CollSizes sizes;
};

/// Fills `count` elements of `dst` (host memory) with this rank's input for `spec`.
void fill_input_host(void* dst, std::uint64_t count, const CheckSpec& spec);

/// Fills `bytes` of `dst` with a sentinel pattern that differs from most expected values.
void fill_sentinel_host(void* dst, std::uint64_t bytes);

/// Counts wrong elements of this rank's output `out` (host memory, the collective's receive
/// region). Ranks with no defined output (non-roots of reduce) return 0.
std::int64_t count_wrong_host(const void* out, const CheckSpec& spec);

/// Whether this rank has an output to check (false for non-roots of reduce).
bool has_output(const CheckSpec& spec) noexcept;

}  // namespace railkit::bench
