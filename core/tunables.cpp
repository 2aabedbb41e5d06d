#include "core/tunables.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cmath>
#include <string>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/strings.hpp"

namespace railkit {
namespace {

constexpr std::string_view kAlgos[] = {"Ring", "Tree", "CollNetDirect", "CollNetChain", "NVLS", "NVLSTree", "PAT"};
constexpr std::string_view kProtos[] = {"LL", "LL128", "Simple"};
constexpr std::string_view kGdrLevels[] = {"LOC", "PIX", "PXB", "PHB", "SYS"};
constexpr std::span<const std::string_view> kNone{};

constexpr std::int64_t kMiB = 1 << 20;
constexpr std::int64_t k17bit = (1 << 17) - 1;
constexpr std::int64_t k31bit = (std::int64_t{1} << 31) - 1;

using S = TunableScope;
using T = TunableType;

// What each family of knobs can change (the row's `reach`).
constexpr Reach kNccl = Reach::Nccl | Reach::Sim;      // NCCL reads NCCL_*; the simulator models NCCL
constexpr Reach kOmpi = Reach::Mpi;                     // Open MPI reads OMPI_MCA_*; NCCL ignores them
constexpr Reach kDcqcn = Reach::RoceFabric | Reach::Sim;  // NIC attributes: traffic between nodes, or the model
constexpr Reach kSwitch = Reach::Sim;                     // switch settings: no host reaches a switch; the model does

// One row per tunable. Sources: ../shared/reference/nccl.md (NCCL 2.28.9 defaults), `ompi_info
// --param coll tuned --level 9` (Open MPI 4.1; algorithm ids up to the largest any 4.1/5.0
// release lists), ../shared/reference/roce.md (mlx5 DCQCN attributes, ConnectX defaults).
constexpr Tunable kTable[] = {
    // ---- NCCL: implementation choices and resources (nccl-proto)
    {"NCCL_ALGO", S::Env, kNccl, T::EnumList, 0, 0, kAlgos, "auto", "", "collective algorithms allowed (per collective since 2.24)"},
    {"NCCL_PROTO", S::Env, kNccl, T::EnumList, 0, 0, kProtos, "auto", "", "protocols allowed"},
    {"NCCL_MIN_NCHANNELS", S::Env, kNccl, T::Int, 1, 64, kNone, "auto", "", "lower bound on channels (CTAs) per collective"},
    {"NCCL_MAX_NCHANNELS", S::Env, kNccl, T::Int, 1, 64, kNone, "64", "", "upper bound on channels (CTAs) per collective"},
    {"NCCL_MIN_CTAS", S::Env, kNccl, T::Int, 1, 64, kNone, "auto", "", "lower bound on CTAs (newer name of MIN_NCHANNELS)"},
    {"NCCL_MAX_CTAS", S::Env, kNccl, T::Int, 1, 64, kNone, "64", "", "upper bound on CTAs (newer name of MAX_NCHANNELS)"},
    {"NCCL_NTHREADS", S::Env, kNccl, T::Int, 64, 512, kNone, "512", "", "threads per block for Simple/LL (a multiple of 32)"},
    {"NCCL_BUFFSIZE", S::Env, kNccl, T::Int, 65536, 1024 * kMiB, kNone, "4194304", "bytes", "per-connection buffer; step = BUFFSIZE/8"},
    {"NCCL_NVLS_ENABLE", S::Env, kNccl, T::Int, 0, 2, kNone, "2", "", "NVLink SHARP: 0 off, 1 on, 2 auto"},
    {"NCCL_CUMEM_ENABLE", S::Env, kNccl, T::Bool, 0, 1, kNone, "auto", "", "cuMem allocations"},
    // ---- NCCL: network (nccl-net)
    {"NCCL_PXN_DISABLE", S::Env, kNccl, T::Bool, 0, 1, kNone, "0", "", "1 = no PXN (inter-node sends through NVLink relays) anywhere"},
    {"NCCL_P2P_PXN_LEVEL", S::Env, kNccl, T::Int, 0, 2, kNone, "2", "", "PXN for send/recv: 0 never, 1 only if needed, 2 as much as possible"},
    {"NCCL_PXN_C2C", S::Env, kNccl, T::Bool, 0, 1, kNone, "1", "", "PXN through C2C-attached NICs"},
    {"NCCL_CROSS_NIC", S::Env, kNccl, T::Int, 0, 2, kNone, "2", "", "rings/trees: 0 same rail in and out, 1 cross allowed, 2 same rail first"},
    {"NCCL_IB_QPS_PER_CONNECTION", S::Env, kNccl, T::Int, 1, 128, kNone, "1", "", "queue pairs per connection (ECMP entropy on RoCE)"},
    {"NCCL_IB_SPLIT_DATA_ON_QPS", S::Env, kNccl, T::Bool, 0, 1, kNone, "0", "", "1 = split each message over the QPs, 0 = rotate QPs per message"},
    {"NCCL_NCHANNELS_PER_NET_PEER", S::Env, kNccl, T::Int, 1, 64, kNone, "2", "", "send/recv channels per network peer"},
    {"NCCL_NET_GDR_LEVEL", S::Env, kNccl, T::Enum, 0, 0, kGdrLevels, "PXB", "", "largest GPU-NIC path type that uses GPUDirect RDMA"},
    {"NCCL_NET_GDR_READ", S::Env, kNccl, T::Bool, 0, 1, kNone, "1", "", "GPUDirect RDMA for sends (on for sm80+)"},
    {"NCCL_IB_ADAPTIVE_ROUTING", S::Env, kNccl, T::Bool, 0, 1, kNone, "0", "", "adaptive routing (default on for IB, off for RoCE)"},
    {"NCCL_IB_TC", S::Env, kNccl, T::Int, 0, 255, kNone, "0", "", "IP traffic class of the QPs: DSCP << 2 | ECN bits (106 = DSCP 26, ECT(0))"},
    {"NCCL_IB_FIFO_TC", S::Env, kNccl, T::Int, 0, 255, kNone, "0", "", "traffic class of the control (FIFO) messages"},
    {"NCCL_IB_SL", S::Env, kNccl, T::Int, 0, 15, kNone, "0", "", "InfiniBand service level"},
    {"NCCL_IB_TIMEOUT", S::Env, kNccl, T::Int, 1, 31, kNone, "20", "", "QP timeout 4.096 us * 2^N"},
    {"NCCL_IB_RETRY_CNT", S::Env, kNccl, T::Int, 0, 7, kNone, "7", "", "QP retries"},
    {"NCCL_IB_GID_INDEX", S::Env, kNccl, T::Int, -1, 255, kNone, "-1", "", "GID index; -1 = automatic (RoCE v2 preferred)"},
    {"NCCL_IB_ROCE_VERSION_NUM", S::Env, kNccl, T::Int, 1, 2, kNone, "2", "", "RoCE version for the automatic GID choice"},
    {"NCCL_IB_MERGE_NICS", S::Env, kNccl, T::Bool, 0, 1, kNone, "1", "", "merge the ports of dual-port NICs"},
    {"NCCL_P2P_NET_CHUNKSIZE", S::Env, kNccl, T::Pow2, 2048, 16 * kMiB, kNone, "131072", "bytes", "send/recv network chunk"},
    // ---- Open MPI tuned collectives (ompi-coll)
    {"OMPI_MCA_coll_tuned_use_dynamic_rules", S::Env, kOmpi, T::Bool, 0, 1, kNone, "0", "",
     "1 = honour the forced algorithm parameters and the dynamic rules file"},
    {"OMPI_MCA_coll_tuned_allreduce_algorithm", S::Env, kOmpi, T::Int, 0, 7, kNone, "0", "",
     "0 ignore, 1 basic linear, 2 nonoverlapping, 3 recursive doubling, 4 ring, 5 segmented ring, 6 rabenseifner"},
    {"OMPI_MCA_coll_tuned_allreduce_algorithm_segmentsize", S::Env, kOmpi, T::Int, 0, 1024 * kMiB, kNone, "0", "bytes",
     "segment size of the segmented all-reduce algorithms; 0 = none"},
    {"OMPI_MCA_coll_tuned_allgather_algorithm", S::Env, kOmpi, T::Int, 0, 8, kNone, "0", "",
     "0 ignore, 1 basic linear, 2 bruck, 3 recursive doubling, 4 ring, 5 neighbor exchange, 6 two proc only"},
    {"OMPI_MCA_coll_tuned_allgather_algorithm_segmentsize", S::Env, kOmpi, T::Int, 0, 1024 * kMiB, kNone, "0", "bytes",
     "segment size for all-gather; 0 = none"},
    {"OMPI_MCA_coll_tuned_reduce_scatter_algorithm", S::Env, kOmpi, T::Int, 0, 5, kNone, "0", "",
     "0 ignore, 1 non-overlapping, 2 recursive halving, 3 ring, 4 butterfly"},
    {"OMPI_MCA_coll_tuned_reduce_scatter_algorithm_segmentsize", S::Env, kOmpi, T::Int, 0, 1024 * kMiB, kNone, "0", "bytes",
     "segment size for reduce-scatter; 0 = none"},
    {"OMPI_MCA_coll_tuned_alltoall_algorithm", S::Env, kOmpi, T::Int, 0, 6, kNone, "0", "",
     "0 ignore, 1 basic linear, 2 pairwise, 3 modified bruck, 4 linear with sync, 5 two proc only"},
    {"OMPI_MCA_coll_tuned_alltoall_algorithm_segmentsize", S::Env, kOmpi, T::Int, 0, 1024 * kMiB, kNone, "0", "bytes",
     "segment size for all-to-all; 0 = none"},
    {"OMPI_MCA_coll_tuned_bcast_algorithm", S::Env, kOmpi, T::Int, 0, 10, kNone, "0", "",
     "0 ignore, 1 basic linear, 2 chain, 3 pipeline, 4 split binary tree, 5 binary tree, 6 binomial, 7 knomial, "
     "8 scatter_allgather, 9 scatter_allgather_ring"},
    {"OMPI_MCA_coll_tuned_bcast_algorithm_segmentsize", S::Env, kOmpi, T::Int, 0, 1024 * kMiB, kNone, "0", "bytes",
     "segment size for broadcast; 0 = none"},
    {"OMPI_MCA_coll_tuned_reduce_algorithm", S::Env, kOmpi, T::Int, 0, 8, kNone, "0", "",
     "0 ignore, 1 linear, 2 chain, 3 pipeline, 4 binary, 5 binomial, 6 in-order binary, 7 rabenseifner"},
    {"OMPI_MCA_coll_tuned_reduce_algorithm_segmentsize", S::Env, kOmpi, T::Int, 0, 1024 * kMiB, kNone, "0", "bytes",
     "segment size for reduce; 0 = none"},
    // ---- DCQCN reaction point (sender), /sys/class/net/<if>/ecn/roce_rp/<attr>
    {"roce_rp.rpg_time_reset", S::Dcqcn, kDcqcn, T::Int, 1, k17bit, kNone, "300", "us", "rate-increase timer period"},
    {"roce_rp.rpg_byte_reset", S::Dcqcn, kDcqcn, T::Int, 0, (1 << 15) - 1, kNone, "32767", "bytes",
     "rate-increase byte counter (unit disputed); 0 = off"},
    {"roce_rp.rpg_threshold", S::Dcqcn, kDcqcn, T::Int, 0, 31, kNone, "1", "", "rate-increase events per stage (F)"},
    {"roce_rp.rpg_max_rate", S::Dcqcn, kDcqcn, T::Int, 0, k31bit, kNone, "0", "Mb/s", "rate ceiling; 0 = line rate"},
    {"roce_rp.rpg_ai_rate", S::Dcqcn, kDcqcn, T::Int, 1, k17bit, kNone, "5", "Mb/s", "additive increase step"},
    {"roce_rp.rpg_hai_rate", S::Dcqcn, kDcqcn, T::Int, 1, k17bit, kNone, "50", "Mb/s", "hyper increase step"},
    {"roce_rp.rpg_gd", S::Dcqcn, kDcqcn, T::Int, 0, 15, kNone, "11", "", "log2 of the rate-decrease divisor"},
    {"roce_rp.rpg_min_dec_fac", S::Dcqcn, kDcqcn, T::Int, 0, 100, kNone, "50", "%", "floor of new/old rate on a cut"},
    {"roce_rp.rpg_min_rate", S::Dcqcn, kDcqcn, T::Int, 1, k31bit, kNone, "1", "Mb/s", "rate floor"},
    {"roce_rp.rate_to_set_on_first_cnp", S::Dcqcn, kDcqcn, T::Int, 0, k31bit, kNone, "0", "Mb/s", "rate after the first CNP; 0 = off"},
    {"roce_rp.dce_tcp_g", S::Dcqcn, kDcqcn, T::Int, 0, 1023, kNone, "1019", "1/1024", "alpha gain g"},
    {"roce_rp.dce_tcp_rtt", S::Dcqcn, kDcqcn, T::Int, 1, k17bit, kNone, "1", "us", "alpha update period"},
    {"roce_rp.rate_reduce_monitor_period", S::Dcqcn, kDcqcn, T::Int, 1, (std::int64_t{1} << 32) - 1, kNone, "4", "us",
     "minimum time between rate cuts"},
    {"roce_rp.initial_alpha_value", S::Dcqcn, kDcqcn, T::Int, 1, 1023, kNone, "1023", "1/1024", "alpha after the first CNP"},
    {"roce_rp.clamp_tgt_rate", S::Dcqcn, kDcqcn, T::Bool, 0, 1, kNone, "0", "", "clamp the target rate on a cut"},
    {"roce_rp.clamp_tgt_rate_after_time_inc", S::Dcqcn, kDcqcn, T::Bool, 0, 1, kNone, "1", "", "clamp the target rate after a timer increase"},
    // ---- DCQCN notification point (receiver), /sys/class/net/<if>/ecn/roce_np/<attr>
    {"roce_np.min_time_between_cnps", S::Dcqcn, kDcqcn, T::Int, 0, k17bit, kNone, "4", "us",
     "CNP spacing per flow (0 on ConnectX-4 Lx, 4 on BlueField-3)"},
    {"roce_np.cnp_dscp", S::Dcqcn, kDcqcn, T::Int, 0, 63, kNone, "48", "", "DSCP of CNPs"},
    {"roce_np.cnp_802p_prio", S::Dcqcn, kDcqcn, T::Int, 0, 7, kNone, "6", "", "802.1p priority of CNPs"},
    // ---- Switch ECN marking of the RoCE queues (switch-ecn; advice in a profile, only the simulator applies it).
    // Defaults: the DCQCN paper's (Kmin 5 kB, Kmax 200 kB, Pmax 1%), the simulator's default preset.
    {"switch.ecn.kmin_bytes", S::Switch, kSwitch, T::Int, 0, 1024 * kMiB, kNone, "5000", "bytes",
     "ECN Kmin of the switches' RoCE queues: no marking below it"},
    {"switch.ecn.kmax_bytes", S::Switch, kSwitch, T::Int, 1, 1024 * kMiB, kNone, "200000", "bytes",
     "ECN Kmax: marking probability rises linearly from Kmin to Pmax at Kmax, every packet above it"},
    {"switch.ecn.pmax", S::Switch, kSwitch, T::Decimal, 0, 1, kNone, "0.01", "", "ECN marking probability at Kmax (0..1)"},
};

std::string lower(std::string_view s) {
  std::string r(s);
  std::transform(r.begin(), r.end(), r.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return r;
}

std::optional<std::int64_t> parse_int(std::string_view v) {
  std::int64_t x = 0;
  if (v.empty()) return std::nullopt;
  const char* b = v.data();
  const char* e = v.data() + v.size();
  if (*b == '+') ++b;
  auto [p, ec] = std::from_chars(b, e, x);
  if (ec != std::errc() || p != e) return std::nullopt;
  return x;
}

std::string join_values(std::span<const std::string_view> vs) {
  std::string s;
  for (auto v : vs) s += (s.empty() ? "" : ", ") + std::string(v);
  return s;
}

bool known_value(const Tunable& t, std::string_view v) {
  const std::string lv = lower(v);
  return std::any_of(t.values.begin(), t.values.end(), [&](std::string_view x) { return lower(x) == lv; });
}

// NCCL_ALGO / NCCL_PROTO syntax: "ring,tree", "^tree", "allreduce:ring;broadcast:^tree".
std::string enum_list_problem(const Tunable& t, std::string_view value) {
  if (value.empty()) return "empty";
  size_t start = 0;
  while (start <= value.size()) {
    const size_t semi = value.find(';', start);
    std::string_view part = value.substr(start, semi == std::string_view::npos ? std::string_view::npos : semi - start);
    if (const size_t colon = part.find(':'); colon != std::string_view::npos) {
      if (colon == 0) return "a per-collective part has no collective name";
      part = part.substr(colon + 1);
    }
    if (!part.empty() && part.front() == '^') part.remove_prefix(1);
    if (part.empty()) return "an empty list";
    size_t p = 0;
    while (p <= part.size()) {
      const size_t comma = part.find(',', p);
      const std::string_view item = part.substr(p, comma == std::string_view::npos ? std::string_view::npos : comma - p);
      if (!known_value(t, item)) return fmt::format("'{}' is not one of {}", item, join_values(t.values));
      if (comma == std::string_view::npos) break;
      p = comma + 1;
    }
    if (semi == std::string_view::npos) break;
    start = semi + 1;
  }
  return "";
}

}  // namespace

std::span<const Tunable> tunables() noexcept { return kTable; }

const Tunable* find_tunable(std::string_view name) noexcept {
  for (const auto& t : kTable)
    if (t.name == name) return &t;
  return nullptr;
}

std::optional<std::int64_t> tunable_int(const Tunable& t, std::string_view value) {
  if (t.type == TunableType::Bool) {
    const std::string lv = lower(value);
    if (lv == "0" || lv == "false") return 0;
    if (lv == "1" || lv == "true") return 1;
    return std::nullopt;
  }
  if (t.type != TunableType::Int && t.type != TunableType::Pow2) return std::nullopt;
  return parse_int(value);
}

std::string tunable_value_problem(const Tunable& t, std::string_view value) {
  switch (t.type) {
    case TunableType::Enum:
      return known_value(t, value) ? "" : fmt::format("not one of {}", join_values(t.values));
    case TunableType::EnumList:
      return enum_list_problem(t, value);
    case TunableType::Bool:
      return tunable_int(t, value) ? "" : "not a boolean (0, 1, true, false)";
    case TunableType::Int:
    case TunableType::Pow2: {
      const auto x = parse_int(value);
      if (!x) return "not an integer";
      if (*x < t.min) return fmt::format("below the minimum {}", t.min);
      if (*x > t.max) return fmt::format("above the maximum {}", t.max);
      if (t.type == TunableType::Pow2 && *x != 0 && (*x & (*x - 1)) != 0) return "not a power of two";
      if (t.type == TunableType::Pow2 && *x == 0 && t.min > 0) return "not a power of two";
      if (t.name == "NCCL_NTHREADS" && *x % 32 != 0) return "not a multiple of 32";
      return "";
    }
    case TunableType::Decimal: {
      const auto x = to_double(value);
      if (!x || !std::isfinite(*x)) return "not a decimal number";
      if (*x < static_cast<double>(t.min)) return fmt::format("below the minimum {}", t.min);
      if (*x > static_cast<double>(t.max)) return fmt::format("above the maximum {}", t.max);
      return "";
    }
  }
  return "unknown type";
}

void validate_tunable_value(const Tunable& t, std::string_view value, std::string_view where) {
  const std::string why = tunable_value_problem(t, value);
  if (!why.empty()) throw UsageError(fmt::format("{}: {}={}: {}", where, t.name, printable(value), why));
}

std::optional<Reach> knob_reach(std::string_view name) noexcept {
  if (const Tunable* t = find_tunable(name)) return t->reach;
  if (name.starts_with("NCCL_")) return kNccl;
  if (name.starts_with("OMPI_MCA_")) return kOmpi;
  if (name.starts_with(kDcqcnRpPrefix) || name.starts_with(kDcqcnNpPrefix)) return kDcqcn;
  if (name.starts_with(kSwitchPrefix)) return kSwitch;
  return std::nullopt;
}

bool reaches(Reach r, const RunTarget& t) noexcept {
  if (t.backend == "nccl" && has(r, Reach::Nccl)) return true;
  if (t.backend == "mpi" && has(r, Reach::Mpi)) return true;
  if (t.backend == "sim" && t.sim_fidelity == "flow") return has(r, Reach::Nccl);
  if (t.backend == "sim" && has(r, Reach::Sim)) return true;
  return has(r, Reach::RoceFabric) && t.crosses_fabric && (t.backend == "mpi" || t.backend == "nccl");
}

std::string reach_text(Reach r) {
  std::string s;
  const auto add = [&](Reach bit, const char* text) {
    if (has(r, bit)) s += (s.empty() ? "" : ", ") + std::string(text);
  };
  add(Reach::Nccl, "nccl");
  add(Reach::Mpi, "mpi");
  add(Reach::RoceFabric, "a RoCE fabric between nodes");
  add(Reach::Sim, "sim");
  return s.empty() ? "nothing" : s;
}

std::vector<std::string> inert_knobs(const std::vector<std::string>& names, const RunTarget& t) {
  std::vector<std::string> out;
  for (const auto& n : names) {
    const auto r = knob_reach(n);
    if (r && !reaches(*r, t) && std::find(out.begin(), out.end(), n) == out.end()) out.push_back(n);
  }
  return out;
}

std::string_view scope_name(TunableScope s) noexcept {
  switch (s) {
    case TunableScope::Env: return "env";
    case TunableScope::Dcqcn: return "dcqcn";
    case TunableScope::Switch: return "switch";
  }
  return "?";
}

std::string_view type_name(TunableType t) noexcept {
  switch (t) {
    case TunableType::Enum: return "enum";
    case TunableType::EnumList: return "enum-list";
    case TunableType::Int: return "int";
    case TunableType::Pow2: return "pow2";
    case TunableType::Bool: return "bool";
    case TunableType::Decimal: return "decimal";
  }
  return "?";
}

}  // namespace railkit
