#pragma once
// What a reduction over ranks must produce in a data check, as NCCL computes it, for the GPU
// check kernels (C++17: nvcc includes this) and their host-side tests. Inputs come from
// bench/gen.hpp, whose value depends on the index only through index mod kGenPeriod.
#include <cstdint>

#include "bench/enums.hpp"
#include "bench/gen.hpp"

namespace railkit::bench {

/// Expected reduction over ranks for each index residue mod kGenPeriod.
struct ReductionTable {
  double as_double[kGenPeriod];         ///< floating types: the exact value (compare with a tolerance)
  std::uint64_t as_bits[kGenPeriod];    ///< integer types: the value's bits in the type's width
};

/// The table for `op` over `nranks` ranks in check pass `rep`, for datatype `t`. Integers wrap
/// in the type's own width; avg follows NCCL's ncclAvg on integers (see integer_average); floats
/// are exact in double (avg: sum / nranks).
ReductionTable reduction_table(RedOp op, DType t, int nranks, int rep);

/// NCCL's average of integers (src/enqueue.cc, ncclAvg -> ncclDevSumPostDiv;
/// src/device/reduce_kernel.h, FuncSumPostDiv::divide): the sum wrapped to `bits`, then divided
/// by `nranks` truncating toward zero (a signed value by its magnitude, the sign put back).
/// Takes and returns the value's bits in the low `bits` bits.
std::uint64_t integer_average(std::uint64_t wrapped_sum, int bits, bool is_signed, std::uint64_t nranks);

/// Relative tolerance of the check of a floating reduction (0 for integers and for float and
/// double sums, products, minima and maxima, which are exact on these small integers):
/// 2 * nranks * eps(T) for half and bfloat16 (every partial sum rounds) and for avg (NCCL
/// pre-multiplies each input by 1/nranks in T, FuncPreMulSum, then sums n rounded terms).
double check_tolerance_rel(DType t, RedOp op, int nranks);

/// Machine epsilon of a floating datatype (2^-10 half, 2^-7 bfloat16, 2^-23 float, 2^-52
/// double); 0 for integers.
double epsilon(DType t);

}  // namespace railkit::bench
