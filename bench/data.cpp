#include "bench/data.hpp"

#include "bench/gen.hpp"
#include "core/collectives.hpp"

#include <cstring>
#include <type_traits>

namespace railkit::bench {
namespace {

template <typename T>
T to_elem(std::int64_t v) {
  if constexpr (std::is_floating_point_v<T>) {
    return static_cast<T>(v);
  } else {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(static_cast<std::uint64_t>(v)));
  }
}

template <typename T>
T combine(RedOp op, T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    switch (op) {
      case RedOp::Sum:
      case RedOp::Avg: return a + b;
      case RedOp::Prod: return a * b;
      case RedOp::Min: return a < b ? a : b;
      case RedOp::Max: return a > b ? a : b;
    }
  } else {
    using U = std::make_unsigned_t<T>;
    switch (op) {
      case RedOp::Sum:
      case RedOp::Avg: return static_cast<T>(static_cast<U>(static_cast<U>(a) + static_cast<U>(b)));
      case RedOp::Prod: return static_cast<T>(static_cast<U>(static_cast<U>(a) * static_cast<U>(b)));
      case RedOp::Min: return a < b ? a : b;
      case RedOp::Max: return a > b ? a : b;
    }
  }
  return a;
}

template <typename T>
T reduced(const CheckSpec& s, std::uint64_t index) {
  T acc = to_elem<T>(gen_value(s.op, 0, index, s.rep));
  for (int r = 1; r < s.nranks; ++r) acc = combine<T>(s.op, acc, to_elem<T>(gen_value(s.op, r, index, s.rep)));
  if (s.op == RedOp::Avg) acc = static_cast<T>(acc / static_cast<T>(s.nranks));
  return acc;
}

/// Rank `rank`'s input at `index`, or the reduction over ranks of input `index`.
template <typename T>
T source_value(const CheckSpec& s, const ExpectSource& src) {
  if (src.reduced) return reduced<T>(s, src.index);
  return to_elem<T>(gen_value(s.op, static_cast<int>(src.rank), src.index, s.rep));
}

template <typename T>
void fill(void* dst, std::uint64_t count, const CheckSpec& s) {
  T* p = static_cast<T*>(dst);
  for (std::uint64_t i = 0; i < count; ++i) p[i] = to_elem<T>(gen_value(s.op, s.rank, i, s.rep));
}

// gen_value depends on the index only through index mod kGenPeriod, so a reduction over ranks
// is tabulated once per residue instead of once per element.
constexpr std::uint64_t kPeriod = kGenPeriod;

template <typename T>
std::int64_t wrong(const void* out, const CheckSpec& s) {
  const T* p = static_cast<const T*>(out);
  const ExpectRule rule = collective(s.coll).expect;
  const std::uint64_t pc = s.sizes.param_count;
  std::int64_t bad = 0;
  const ExpectSource first = expect_source(rule, 0, pc, s.rank, s.root, s.nranks);
  if (first.reduced) {
    T table[kPeriod];
    for (std::uint64_t m = 0; m < kPeriod; ++m) table[m] = reduced<T>(s, m);
    for (std::uint64_t i = 0; i < s.sizes.recv_count; ++i)
      if (std::memcmp(&p[i], &table[(first.index + i) % kPeriod], sizeof(T)) != 0) ++bad;
    return bad;
  }
  for (std::uint64_t i = 0; i < s.sizes.recv_count; ++i) {
    const T want = source_value<T>(s, expect_source(rule, i, pc, s.rank, s.root, s.nranks));
    if (std::memcmp(&p[i], &want, sizeof(T)) != 0) ++bad;
  }
  return bad;
}

template <template <typename> class F, typename... Args>
auto dispatch(DType t, Args&&... args) {
  switch (t) {
    case DType::Int8: return F<std::int8_t>{}(args...);
    case DType::Uint8: return F<std::uint8_t>{}(args...);
    case DType::Int32: return F<std::int32_t>{}(args...);
    case DType::Uint32: return F<std::uint32_t>{}(args...);
    case DType::Int64: return F<std::int64_t>{}(args...);
    case DType::Uint64: return F<std::uint64_t>{}(args...);
    case DType::Float: return F<float>{}(args...);
    case DType::Double: return F<double>{}(args...);
    case DType::Half:
    case DType::BFloat16: break;  // device-only types: the NCCL backend checks them on the GPU
  }
  using Result = decltype(F<float>{}(args...));
  if constexpr (!std::is_void_v<Result>) return Result{};
}

template <typename T>
struct FillOp {
  void operator()(void* d, std::uint64_t c, const CheckSpec& s) const { fill<T>(d, c, s); }
};
template <typename T>
struct WrongOp {
  std::int64_t operator()(const void* o, const CheckSpec& s) const { return wrong<T>(o, s); }
};

}  // namespace

std::int64_t gen_value(RedOp op, int rank, std::uint64_t index, int rep) noexcept {
  return gen_raw(op == RedOp::Prod, static_cast<std::uint64_t>(rank), index, static_cast<std::uint64_t>(rep));
}

void fill_input_host(void* dst, std::uint64_t count, const CheckSpec& spec) {
  dispatch<FillOp>(spec.dtype, dst, count, spec);
}

void fill_sentinel_host(void* dst, std::uint64_t bytes) { std::memset(dst, 0xA5, bytes); }

bool has_output(const CheckSpec& spec) noexcept {
  return has_expected_output(collective(spec.coll).expect, spec.rank, spec.root);
}

std::int64_t count_wrong_host(const void* out, const CheckSpec& spec) {
  if (!has_output(spec)) return 0;
  return dispatch<WrongOp>(spec.dtype, out, spec);
}

}  // namespace railkit::bench
