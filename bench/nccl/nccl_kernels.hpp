#pragma once
// Data init and verification on the GPU for the NCCL backend (nccl_kernels.cu). Same values as
// the host check (bench/gen.hpp); expected reductions come from a per-residue table computed on
// the host (integers in wrapping 64-bit arithmetic, floats in double).
#include <cstdint>

#include "bench/enums.hpp"

namespace railkit::bench::gpu {

/// What one rank's check needs (bench::CheckSpec in C++17 terms, for nvcc).
struct CheckArgs {
  Coll coll;
  DType dtype;
  RedOp op;
  int root;
  int nranks;
  int rank;
  int rep;
  std::uint64_t param_count;
  std::uint64_t recv_count;
  bool is_float;
};

/// Expected reduction over ranks for each index residue mod kGenPeriod.
struct ReductionTable {
  double as_double[85];
  std::uint64_t as_bits[85];  ///< integer types: the wrapped integer value
};

ReductionTable reduction_table(const CheckArgs& spec);

/// Fills `count` elements at device pointer `dst` with this rank's input, on `stream`.
void fill_input(void* dst, std::uint64_t count, const CheckArgs& spec, void* stream);

/// Counts wrong elements of the output at device pointer `out`; synchronizes `stream`.
std::int64_t count_wrong(const void* out, const CheckArgs& spec, void* stream);

}  // namespace railkit::bench::gpu
