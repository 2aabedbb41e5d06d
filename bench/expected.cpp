#include "bench/expected.hpp"

namespace railkit::bench {
namespace {

struct IntShape {
  int bits;
  bool is_signed;
};

/// Width and signedness of an integer datatype; bits 0 for floating types.
IntShape shape(DType t) {
  switch (t) {
    case DType::Int8: return {8, true};
    case DType::Uint8: return {8, false};
    case DType::Int32: return {32, true};
    case DType::Uint32: return {32, false};
    case DType::Int64: return {64, true};
    case DType::Uint64: return {64, false};
    case DType::Half:
    case DType::BFloat16:
    case DType::Float:
    case DType::Double: break;
  }
  return {0, false};
}

std::uint64_t mask(int bits) { return bits >= 64 ? ~0ull : (1ull << bits) - 1; }

}  // namespace

double epsilon(DType t) {
  switch (t) {
    case DType::Half: return 1.0 / 1024;       // 2^-10
    case DType::BFloat16: return 1.0 / 128;    // 2^-7
    case DType::Float: return 1.0 / 8388608;   // 2^-23
    case DType::Double: return 2.220446049250313e-16;
    default: return 0;
  }
}

double check_tolerance_rel(DType t, RedOp op, int nranks) {
  const double eps = epsilon(t);
  if (eps == 0) return 0;
  const bool lowp = t == DType::Half || t == DType::BFloat16;
  if (!lowp && op != RedOp::Avg) return 0;
  return 2.0 * nranks * eps;
}

std::uint64_t integer_average(std::uint64_t wrapped_sum, int bits, bool is_signed, std::uint64_t nranks) {
  const std::uint64_t m = mask(bits);
  const std::uint64_t x = wrapped_sum & m;
  const bool negative = is_signed && ((x >> (bits - 1)) & 1u);
  const std::uint64_t magnitude = negative ? (0 - x) & m : x;
  const std::uint64_t q = magnitude / nranks;
  return (negative ? 0 - q : q) & m;
}

ReductionTable reduction_table(RedOp op, DType t, int nranks, int rep) {
  ReductionTable table{};
  const IntShape sh = shape(t);
  for (unsigned long long m = 0; m < kGenPeriod; ++m) {
    double d = 0;
    std::uint64_t u = 0;  // wrapping arithmetic mod 2^64 equals the type's width after masking
    for (int r = 0; r < nranks; ++r) {
      const long long v = gen_raw(op == RedOp::Prod, static_cast<unsigned long long>(r), m,
                                  static_cast<unsigned long long>(rep));
      const auto uv = static_cast<std::uint64_t>(v);
      if (r == 0) {
        d = static_cast<double>(v);
        u = uv;
        continue;
      }
      // gen values are small non-negative integers: min/max agree in every type.
      switch (op) {
        case RedOp::Sum:
        case RedOp::Avg: d += static_cast<double>(v); u += uv; break;
        case RedOp::Prod: d *= static_cast<double>(v); u *= uv; break;
        case RedOp::Min: d = d < static_cast<double>(v) ? d : static_cast<double>(v); u = u < uv ? u : uv; break;
        case RedOp::Max: d = d > static_cast<double>(v) ? d : static_cast<double>(v); u = u > uv ? u : uv; break;
      }
    }
    if (sh.bits > 0) {
      u &= mask(sh.bits);
      if (op == RedOp::Avg) u = integer_average(u, sh.bits, sh.is_signed, static_cast<std::uint64_t>(nranks));
    }
    if (op == RedOp::Avg) d /= nranks;
    table.as_double[m] = d;
    table.as_bits[m] = u;
  }
  return table;
}

}  // namespace railkit::bench
