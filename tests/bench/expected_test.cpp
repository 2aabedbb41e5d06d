// The expected values of the NCCL backend's data check (bench/expected.hpp) against an
// independent model of what NCCL 2.28.9 computes: integers reduced in their own width, avg as
// FuncSumPostDiv (src/device/reduce_kernel.h: reciprocal multiply, fix-up, sign by magnitude),
// floats' avg as FuncPreMulSum (each input times T(1/nranks), rounded to T, summed in T).
// Every datatype, every reduction, 1..64 ranks. Host code only: runs without a GPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <type_traits>

#include "bench/expected.hpp"
#include "bench/gen.hpp"

using namespace railkit::bench;

namespace {

// --- integers: NCCL's arithmetic, written out -----------------------------------------------

template <typename U>
U fold(RedOp op, int nranks, std::uint64_t m, int rep) {
  U acc = 0;
  for (int r = 0; r < nranks; ++r) {
    const U v = static_cast<U>(gen_raw(op == RedOp::Prod, static_cast<unsigned long long>(r), m,
                                       static_cast<unsigned long long>(rep)));
    if (r == 0) {
      acc = v;
      continue;
    }
    switch (op) {
      case RedOp::Sum:
      case RedOp::Avg: acc = static_cast<U>(acc + v); break;
      case RedOp::Prod: acc = static_cast<U>(acc * v); break;
      case RedOp::Min: acc = acc < v ? acc : v; break;  // inputs are 0..16: signedness cannot matter
      case RedOp::Max: acc = acc > v ? acc : v; break;
    }
  }
  return acc;
}

/// The high 64 bits of a 64 x 64-bit product (CUDA's __umul64hi), from 32-bit halves.
std::uint64_t mulhi64(std::uint64_t a, std::uint64_t b) {
  const std::uint64_t al = a & 0xffffffffu, ah = a >> 32, bl = b & 0xffffffffu, bh = b >> 32;
  const std::uint64_t ll = al * bl, lh = al * bh, hl = ah * bl, hh = ah * bh;
  const std::uint64_t mid = (ll >> 32) + (lh & 0xffffffffu) + (hl & 0xffffffffu);
  return hh + (lh >> 32) + (hl >> 32) + (mid >> 32);
}

/// FuncSumPostDiv<U>::divide as NCCL writes it (U is the unsigned type of the element).
template <typename U>
U nccl_divide(U x, std::uint32_t divisor, bool is_signed) {
  using Wide = std::conditional_t<sizeof(U) == 8, std::uint64_t, std::uint32_t>;
  const Wide recip = static_cast<Wide>(~Wide(0)) / divisor;
  const bool xneg = is_signed && (x & static_cast<U>(~(static_cast<U>(~U(0)) >> 1)));
  const Wide xabs = xneg ? static_cast<U>(-x) : x;
  Wide q = sizeof(U) == 8 ? static_cast<Wide>(mulhi64(xabs, recip))
                          : static_cast<Wide>((static_cast<std::uint64_t>(xabs) * recip) >> 32);
  if (xabs - q * divisor >= divisor) q += 1;
  return xneg ? static_cast<U>(-static_cast<U>(q)) : static_cast<U>(q);
}

template <typename U>
void check_integer_type(DType t, bool is_signed) {
  for (RedOp op : {RedOp::Sum, RedOp::Prod, RedOp::Min, RedOp::Max, RedOp::Avg}) {
    for (int n = 1; n <= 64; ++n) {
      for (int rep : {1, 2}) {
        const ReductionTable table = reduction_table(op, t, n, rep);
        for (std::uint64_t m = 0; m < kGenPeriod; ++m) {
          U want = fold<U>(op, n, m, rep);
          if (op == RedOp::Avg) want = nccl_divide<U>(want, static_cast<std::uint32_t>(n), is_signed);
          ASSERT_EQ(static_cast<U>(table.as_bits[m]), want)
              << "dtype " << static_cast<int>(t) << " op " << static_cast<int>(op) << " nranks " << n << " residue " << m;
        }
      }
    }
  }
}

// --- floats: rounding to T's significand (round to nearest even) -----------------------------

int significand_bits(DType t) {
  switch (t) {
    case DType::Half: return 11;
    case DType::BFloat16: return 8;
    case DType::Float: return 24;
    default: return 53;
  }
}

double round_to(double x, int p) {
  if (x == 0) return 0;
  int e = 0;
  const double m = std::frexp(x, &e);
  return std::ldexp(std::nearbyint(std::ldexp(m, p)), e - p);
}

/// NCCL's avg of floats: FuncPreMulSum with scalar T(1/nranks) (src/enqueue.cc, ncclAvg).
double nccl_float_average(DType t, int n, std::uint64_t m, int rep) {
  const int p = significand_bits(t);
  // f64 = 1.0/nRanks for double; the others convert float(1.0/nRanks) to T.
  const double scalar = t == DType::Double ? 1.0 / n : round_to(static_cast<double>(static_cast<float>(1.0 / n)), p);
  double acc = 0;
  for (int r = 0; r < n; ++r) {
    const double x = static_cast<double>(gen_raw(false, static_cast<unsigned long long>(r), m,
                                                 static_cast<unsigned long long>(rep)));
    acc = r == 0 ? round_to(x * scalar, p) : round_to(acc + round_to(x * scalar, p), p);
  }
  return acc;
}

/// Sums of small integers in half or bfloat16: every partial sum rounds.
double lowp_sum(DType t, int n, std::uint64_t m, int rep) {
  const int p = significand_bits(t);
  double acc = 0;
  for (int r = 0; r < n; ++r)
    acc = round_to(acc + static_cast<double>(gen_raw(false, static_cast<unsigned long long>(r), m,
                                                      static_cast<unsigned long long>(rep))),
                   p);
  return acc;
}

}  // namespace

TEST(ExpectedValues, IntegersAsNcclReducesThemForEveryOpAndRankCount) {
  check_integer_type<std::uint8_t>(DType::Int8, true);
  check_integer_type<std::uint8_t>(DType::Uint8, false);
  check_integer_type<std::uint32_t>(DType::Int32, true);
  check_integer_type<std::uint32_t>(DType::Uint32, false);
  check_integer_type<std::uint64_t>(DType::Int64, true);
  check_integer_type<std::uint64_t>(DType::Uint64, false);
}

TEST(ExpectedValues, Int8AverageWrapsThenTruncatesTowardZero) {
  // 8 ranks whose inputs sum to 128 wrap to -128 in int8; NCCL divides the magnitude: -16.
  EXPECT_EQ(static_cast<std::int8_t>(integer_average(128, 8, true, 8)), -16);
  EXPECT_EQ(static_cast<std::int8_t>(integer_average(static_cast<std::uint8_t>(-7), 8, true, 2)), -3);  // not -4
  EXPECT_EQ(integer_average(128, 8, false, 8), 16u);
  EXPECT_EQ(static_cast<std::int64_t>(integer_average(static_cast<std::uint64_t>(-9), 64, true, 4)), -2);
}

TEST(ExpectedValues, FloatAveragesWithinToleranceOfNcclsPreMultipliedSum) {
  for (DType t : {DType::Half, DType::BFloat16, DType::Float, DType::Double}) {
    double worst = 0;  // largest error seen, relative to the tolerance
    for (int n = 1; n <= 64; ++n) {
      const double tol = check_tolerance_rel(t, RedOp::Avg, n);
      EXPECT_DOUBLE_EQ(tol, 2.0 * n * epsilon(t));
      const ReductionTable table = reduction_table(RedOp::Avg, t, n, 3);
      for (std::uint64_t m = 0; m < kGenPeriod; ++m) {
        const double want = table.as_double[m];
        const double got = nccl_float_average(t, n, m, 3);
        ASSERT_LE(std::fabs(got - want), tol * std::fabs(want))
            << "dtype " << static_cast<int>(t) << " nranks " << n << " residue " << m << " got " << got << " want " << want;
        if (want != 0) worst = std::max(worst, std::fabs(got - want) / (tol * std::fabs(want)));
      }
    }
    // A fixed 1e-6 (the old float rule) would fail float at 64 ranks; the rule must not be slack either.
    EXPECT_GT(worst, 0.01) << "tolerance of dtype " << static_cast<int>(t) << " far looser than NCCL's rounding";
  }
  EXPECT_GT(2.0 * 64 * epsilon(DType::Float), 1e-6);
}

TEST(ExpectedValues, LowPrecisionSumsWithinToleranceExactTypesExact) {
  for (DType t : {DType::Half, DType::BFloat16}) {
    for (int n = 1; n <= 64; ++n) {
      const ReductionTable table = reduction_table(RedOp::Sum, t, n, 1);
      const double tol = check_tolerance_rel(t, RedOp::Sum, n);
      for (std::uint64_t m = 0; m < kGenPeriod; ++m)
        ASSERT_LE(std::fabs(lowp_sum(t, n, m, 1) - table.as_double[m]), tol * table.as_double[m]) << n << " " << m;
    }
  }
  for (RedOp op : {RedOp::Sum, RedOp::Prod, RedOp::Min, RedOp::Max}) {
    EXPECT_EQ(check_tolerance_rel(DType::Float, op, 64), 0.0);
    EXPECT_EQ(check_tolerance_rel(DType::Double, op, 64), 0.0);
    EXPECT_EQ(check_tolerance_rel(DType::Int32, op, 64), 0.0);
  }
  EXPECT_EQ(check_tolerance_rel(DType::Int8, RedOp::Avg, 64), 0.0);
}
