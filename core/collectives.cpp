#include "core/collectives.hpp"

#include <array>

namespace railkit {
namespace {

using K = CollKind;
using B = BusbwRule;
using P = PerRankRule;
using E = ExpectRule;

// ncclFunc_t: NCCL 2.28's src/include/nccl_common.h; COLLTYPE: Open MPI 4.1's
// ompi/mca/coll/base/coll_base_functions.h; busbw, per-rank and check rules: nccl-tests' src/*.cu.
constexpr std::array kCollectives{
    Collective{K::AllReduce, "all_reduce", 4, "AllReduce", "allreduce", 2, "allreduce", true, false,
               B::TwiceNMinus1OverN, P::Whole, Blocks::None, E::Reduced, false},
    Collective{K::AllGather, "all_gather", 2, "AllGather", "allgather", 0, "allgather", false, false, B::NMinus1OverN,
               P::Shared, Blocks::Recv, E::RankBlocks, false},
    Collective{K::ReduceScatter, "reduce_scatter", 3, "ReduceScatter", "reducescatter", 12, "reduce_scatter", true,
               false, B::NMinus1OverN, P::Shared, Blocks::Send, E::ReducedOwnBlock, false},
    Collective{K::Broadcast, "broadcast", 0, "Broadcast", "broadcast", 7, "bcast", false, true, B::One, P::Whole,
               Blocks::None, E::RootInput, false},
    Collective{K::Reduce, "reduce", 1, "Reduce", "reduce", 11, "reduce", true, true, B::One, P::Whole, Blocks::None,
               E::ReducedAtRoot, false},
    Collective{K::AllToAll, "alltoall", -1, "AllToAll", "", 3, "alltoall", false, false, B::NMinus1OverN, P::Shared,
               Blocks::Both, E::ExchangedBlocks, true},
    Collective{K::SendRecv, "sendrecv", 5, "SendRecv", "", -1, "", false, false, B::One, P::Whole, Blocks::None,
               E::PreviousRank, true},
};

/// Every row at its CollKind's place, and per-rank blocks exactly where the count is shared.
constexpr bool consistent() {
  if (kCollectives.size() != static_cast<std::size_t>(kCollKinds)) return false;
  for (std::size_t i = 0; i < kCollectives.size(); ++i) {
    const Collective& c = kCollectives[i];
    if (static_cast<std::size_t>(c.kind) != i) return false;
    if ((c.per_rank == P::Shared) != (c.blocks != Blocks::None)) return false;
  }
  return true;
}
static_assert(consistent(), "core's collectives table: one row per CollKind, in its order");

}  // namespace

std::span<const Collective> collectives() noexcept { return kCollectives; }

const Collective& collective(CollKind kind) noexcept { return kCollectives[static_cast<std::size_t>(kind)]; }

const Collective* find_collective(std::string_view name) noexcept {
  for (const Collective& c : kCollectives)
    if (c.name == name) return &c;
  return nullptr;
}

const Collective* collective_of_nccl_func(int func) noexcept {
  for (const Collective& c : kCollectives)
    if (c.nccl_func >= 0 && c.nccl_func == func) return &c;
  return nullptr;
}

std::string collective_names(std::string_view separator) {
  std::string out;
  for (const Collective& c : kCollectives) {
    if (!out.empty()) out += separator;
    out += c.name;
  }
  return out;
}

double busbw_factor(const Collective& c, int nranks) noexcept {
  const double n = nranks > 0 ? nranks : 1;
  switch (c.busbw) {
    case BusbwRule::TwiceNMinus1OverN: return 2.0 * (n - 1) / n;
    case BusbwRule::NMinus1OverN: return (n - 1) / n;
    case BusbwRule::One: return 1.0;
  }
  return 1.0;
}

}  // namespace railkit
