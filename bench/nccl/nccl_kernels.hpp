#pragma once
// Data init and verification on the GPU for the NCCL backend (nccl_kernels.cu). Same values as
// the host check (bench/gen.hpp); expected reductions come from a per-residue table computed on
// the host as NCCL computes them (bench/expected.hpp).
#include <cstdint>

#include "bench/enums.hpp"
#include "bench/expected.hpp"

namespace railkit::bench::gpu {

/// What one rank's check needs (bench::CheckSpec in C++17 terms, for nvcc).
struct CheckArgs {
  ExpectRule expect;  ///< the collective's expected-value rule (core's collectives table)
  DType dtype;
  RedOp op;
  int root;
  int nranks;
  int rank;
  int rep;
  std::uint64_t param_count;
  std::uint64_t recv_count;
};

/// Fills `count` elements at device pointer `dst` with this rank's input, on `stream`.
void fill_input(void* dst, std::uint64_t count, const CheckArgs& spec, void* stream);

/// Counts wrong elements of the output at device pointer `out`; synchronizes `stream`.
std::int64_t count_wrong(const void* out, const CheckArgs& spec, void* stream);

}  // namespace railkit::bench::gpu
