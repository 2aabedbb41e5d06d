#include "bench/types.hpp"

#include <array>

#include "core/collectives.hpp"

namespace railkit::bench {
namespace {

constexpr std::array kDTypes{
    DTypeInfo{DType::Int8, "int8", 1, false},     DTypeInfo{DType::Uint8, "uint8", 1, false},
    DTypeInfo{DType::Int32, "int32", 4, false},   DTypeInfo{DType::Uint32, "uint32", 4, false},
    DTypeInfo{DType::Int64, "int64", 8, false},   DTypeInfo{DType::Uint64, "uint64", 8, false},
    DTypeInfo{DType::Half, "half", 2, true},      DTypeInfo{DType::BFloat16, "bfloat16", 2, true},
    DTypeInfo{DType::Float, "float", 4, true},    DTypeInfo{DType::Double, "double", 8, true},
};

constexpr std::array kRedOps{
    RedOpInfo{RedOp::Sum, "sum"}, RedOpInfo{RedOp::Prod, "prod"}, RedOpInfo{RedOp::Min, "min"},
    RedOpInfo{RedOp::Max, "max"}, RedOpInfo{RedOp::Avg, "avg"},
};

constexpr std::size_t kNumColls = static_cast<std::size_t>(kCollKinds);

/// bench::Coll's names and whether each takes a reduction or a root, from core's collectives table.
const std::array<CollInfo, kNumColls>& coll_table() {
  static const std::array<CollInfo, kNumColls> table = [] {
    std::array<CollInfo, kNumColls> t{};
    for (const Collective& c : collectives())
      t[static_cast<std::size_t>(c.kind)] = CollInfo{c.kind, c.name, c.has_redop, c.has_root};
    return t;
  }();
  return table;
}

}  // namespace

std::span<const DTypeInfo> all_dtypes() { return kDTypes; }
std::span<const RedOpInfo> all_redops() { return kRedOps; }
std::span<const CollInfo> all_colls() { return coll_table(); }

const DTypeInfo& info(DType t) { return kDTypes[static_cast<std::size_t>(t)]; }
const RedOpInfo& info(RedOp o) { return kRedOps[static_cast<std::size_t>(o)]; }
const CollInfo& info(Coll c) { return coll_table()[static_cast<std::size_t>(c)]; }

std::optional<DType> parse_dtype(std::string_view name) {
  for (const auto& e : kDTypes)
    if (e.name == name) return e.type;
  // nccl-tests' aliases
  if (name == "char") return DType::Int8;
  if (name == "int") return DType::Int32;
  if (name == "float32") return DType::Float;
  if (name == "float64") return DType::Double;
  if (name == "float16" || name == "fp16") return DType::Half;
  if (name == "bf16") return DType::BFloat16;
  return std::nullopt;
}

std::optional<RedOp> parse_redop(std::string_view name) {
  for (const auto& e : kRedOps)
    if (e.name == name) return e.op;
  return std::nullopt;
}

std::optional<Coll> parse_coll(std::string_view name) {
  for (const auto& e : coll_table())
    if (e.name == name) return e.coll;
  return std::nullopt;
}

std::uint64_t per_rank_count(std::uint64_t count, std::size_t elem_bytes, int nranks) {
  const std::uint64_t n = static_cast<std::uint64_t>(nranks > 0 ? nranks : 1);
  const std::uint64_t align = elem_bytes < kPerRankAlignBytes ? kPerRankAlignBytes / elem_bytes : 1;
  return (count / n) & ~(align - 1);
}

CollSizes coll_sizes(Coll c, std::uint64_t requested_bytes, std::size_t elem_bytes, int nranks) {
  const std::uint64_t n = static_cast<std::uint64_t>(nranks > 0 ? nranks : 1);
  const std::uint64_t count = requested_bytes / elem_bytes;
  const Collective& desc = collective(c);
  CollSizes s;
  if (desc.per_rank == PerRankRule::Whole) {
    s.send_count = s.recv_count = s.param_count = count;
  } else {
    s.param_count = per_rank_count(count, elem_bytes, nranks);
    const bool send_n = desc.blocks == Blocks::Send || desc.blocks == Blocks::Both;
    const bool recv_n = desc.blocks == Blocks::Recv || desc.blocks == Blocks::Both;
    s.send_count = send_n ? s.param_count * n : s.param_count;
    s.recv_count = recv_n ? s.param_count * n : s.param_count;
  }
  s.bytes = (s.send_count > s.recv_count ? s.send_count : s.recv_count) * elem_bytes;
  s.rounded = s.bytes != requested_bytes;
  return s;
}

double busbw_factor(Coll c, int nranks) { return railkit::busbw_factor(collective(c), nranks); }

std::vector<std::uint64_t> size_sequence(std::uint64_t min_bytes, std::uint64_t max_bytes,
                                         std::uint64_t step_factor, std::uint64_t step_bytes) {
  std::vector<std::uint64_t> out;
  for (std::uint64_t s = min_bytes; s <= max_bytes;) {
    out.push_back(s);
    const std::uint64_t next = step_factor > 1 ? s * step_factor : s + step_bytes;
    if (next <= s) break;  // no growth or overflow: stop rather than loop forever
    s = next;
  }
  return out;
}

}  // namespace railkit::bench
