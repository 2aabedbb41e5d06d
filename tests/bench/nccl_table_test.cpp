// The NCCL backend's data check compares GPU output against a per-residue table built on the
// host (bench/nccl/nccl_kernels.cu). This checks that table against an independent reduction of
// the inputs every rank generates, for every reduction, integer wrap-around included. Host code
// only: it runs without a GPU.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "bench/data.hpp"
#include "bench/gen.hpp"
#include "bench/nccl/nccl_kernels.hpp"

using namespace railkit::bench;

namespace {

gpu::CheckArgs args(RedOp op, DType t, int nranks, int rep) {
  return {Coll::AllReduce, t, op, 0, nranks, 0, rep, 85, 85, info(t).is_float};
}

template <typename T>
T fold(RedOp op, int nranks, std::uint64_t index, int rep) {
  T acc{};
  for (int r = 0; r < nranks; ++r) {
    const T v = static_cast<T>(static_cast<std::make_unsigned_t<T>>(gen_value(op, r, index, rep)));
    if (r == 0) {
      acc = v;
      continue;
    }
    using U = std::make_unsigned_t<T>;
    switch (op) {
      case RedOp::Sum:
      case RedOp::Avg: acc = static_cast<T>(static_cast<U>(static_cast<U>(acc) + static_cast<U>(v))); break;
      case RedOp::Prod: acc = static_cast<T>(static_cast<U>(static_cast<U>(acc) * static_cast<U>(v))); break;
      case RedOp::Min: acc = acc < v ? acc : v; break;
      case RedOp::Max: acc = acc > v ? acc : v; break;
    }
  }
  return acc;
}

}  // namespace

TEST(NcclCheckTable, IntegersWrapLikeTheGpu) {
  for (RedOp op : {RedOp::Sum, RedOp::Prod, RedOp::Min, RedOp::Max}) {
    for (int n : {1, 2, 7, 33, 300}) {
      const gpu::ReductionTable t8 = gpu::reduction_table(args(op, DType::Int8, n, 2));
      const gpu::ReductionTable t64 = gpu::reduction_table(args(op, DType::Int64, n, 2));
      for (std::uint64_t m = 0; m < kGenPeriod; ++m) {
        EXPECT_EQ(static_cast<std::int8_t>(static_cast<std::uint8_t>(t8.as_bits[m])), fold<std::int8_t>(op, n, m, 2))
            << "op " << static_cast<int>(op) << " n " << n << " m " << m;
        EXPECT_EQ(static_cast<std::int64_t>(t64.as_bits[m]), fold<std::int64_t>(op, n, m, 2));
      }
    }
  }
}

TEST(NcclCheckTable, FloatsAreExactSumsProductsAndAverages) {
  for (int n : {1, 3, 8}) {
    const gpu::ReductionTable sum = gpu::reduction_table(args(RedOp::Sum, DType::Float, n, 1));
    const gpu::ReductionTable avg = gpu::reduction_table(args(RedOp::Avg, DType::Float, n, 1));
    const gpu::ReductionTable prod = gpu::reduction_table(args(RedOp::Prod, DType::Double, n, 1));
    for (std::uint64_t m = 0; m < kGenPeriod; ++m) {
      double s = 0, p = 1;
      for (int r = 0; r < n; ++r) {
        s += static_cast<double>(gen_value(RedOp::Sum, r, m, 1));
        p *= static_cast<double>(gen_value(RedOp::Prod, r, m, 1));
      }
      EXPECT_DOUBLE_EQ(sum.as_double[m], s);
      EXPECT_DOUBLE_EQ(avg.as_double[m], s / n);
      EXPECT_DOUBLE_EQ(prod.as_double[m], p);
    }
  }
}
