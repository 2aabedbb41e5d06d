#include "core/collectives.hpp"

#include <array>

namespace railkit {
namespace {

// ncclFunc_t: NCCL 2.28's src/include/nccl_common.h; COLLTYPE: Open MPI 4.1's
// ompi/mca/coll/base/coll_base_functions.h; busbw and per-rank rules: nccl-tests' src/*.cu.
constexpr std::array kCollectives{
    Collective{"all_reduce", 4, "AllReduce", "allreduce", 2, "allreduce", true, false, BusbwRule::TwiceNMinus1OverN,
               PerRankRule::Whole},
    Collective{"all_gather", 2, "AllGather", "allgather", 0, "allgather", false, false, BusbwRule::NMinus1OverN,
               PerRankRule::Shared},
    Collective{"reduce_scatter", 3, "ReduceScatter", "reducescatter", 12, "reduce_scatter", true, false,
               BusbwRule::NMinus1OverN, PerRankRule::Shared},
    Collective{"broadcast", 0, "Broadcast", "broadcast", 7, "bcast", false, true, BusbwRule::One, PerRankRule::Whole},
    Collective{"reduce", 1, "Reduce", "reduce", 11, "reduce", true, true, BusbwRule::One, PerRankRule::Whole},
    Collective{"alltoall", -1, "AllToAll", "", 3, "alltoall", false, false, BusbwRule::NMinus1OverN,
               PerRankRule::Shared},
    Collective{"sendrecv", 5, "SendRecv", "", -1, "", false, false, BusbwRule::One, PerRankRule::Whole},
};

}  // namespace

std::span<const Collective> collectives() noexcept { return kCollectives; }

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

std::string collective_names() {
  std::string out;
  for (const Collective& c : kCollectives) {
    if (!out.empty()) out += ", ";
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
