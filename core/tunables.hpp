#pragma once
// The typed table of tunables: every setting railkit searches, writes into profiles or validates
// when loading one. A tunable applies either as an environment variable on every rank (NCCL_*,
// OMPI_MCA_*) or as a DCQCN attribute of every RDMA NIC of a node (`roce_rp.<attr>`,
// `roce_np.<attr>`, the MLNX_OFED sysfs names; tuner/dcqcn.hpp maps them to the upstream
// debugfs cc_params names). The table itself is in core/tunables.cpp, one row per tunable.
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace railkit {

/// Where a tunable takes effect.
enum class TunableScope {
  Env,     ///< an environment variable set on every rank before the program starts
  Dcqcn,   ///< a DCQCN attribute written on every node's RDMA NICs (sysfs/debugfs), per node
  Switch,  ///< a setting of the fabric's switches (ECN marking): no host reaches it; only the
           ///< simulator takes it (`--sim-set`), and a profile records it as advice
};

/// What a tunable can change (a set of bits): the backends of railkit-bench that read it, and the
/// RoCE fabric between nodes (NIC attributes act on traffic that leaves a node).
enum class Reach : std::uint8_t {
  None = 0,
  Nccl = 1,        ///< the nccl backend (NCCL reads NCCL_* when a communicator is created)
  Mpi = 2,         ///< the mpi backend (Open MPI reads OMPI_MCA_* at MPI_Init)
  Sim = 4,         ///< the simulated backend (models NCCL and DCQCN)
  RoceFabric = 8,  ///< traffic that crosses a RoCE fabric between nodes, on a real backend
};
constexpr Reach operator|(Reach a, Reach b) noexcept {
  return static_cast<Reach>(static_cast<std::uint8_t>(a) | static_cast<std::uint8_t>(b));
}
/// Whether `set` holds every bit of `bit`.
constexpr bool has(Reach set, Reach bit) noexcept {
  return (static_cast<std::uint8_t>(set) & static_cast<std::uint8_t>(bit)) == static_cast<std::uint8_t>(bit);
}

/// The type of a tunable's value; every value is carried as text, as the environment holds it.
enum class TunableType {
  Enum,      ///< one of `values` (matched case-insensitively)
  EnumList,  ///< NCCL_ALGO / NCCL_PROTO syntax: comma-separated `values`, optionally starting with '^'
             ///< (exclude), optionally in per-collective parts "allreduce:ring;broadcast:^tree"
  Int,       ///< a decimal integer within [min, max]
  Pow2,      ///< a power of two within [min, max] (0 allowed when min is 0)
  Bool,      ///< 0 or 1
  Decimal,   ///< a decimal number within [min, max] (switch.ecn.pmax: 0..1)
};

/// One row of the table.
struct Tunable {
  std::string_view name;  ///< NCCL_ALGO, OMPI_MCA_coll_tuned_allreduce_algorithm, roce_rp.rpg_time_reset
  TunableScope scope;
  Reach reach;            ///< what it can change: NCCL_* nccl and sim, OMPI_MCA_* mpi, DCQCN a RoCE fabric and sim
  TunableType type;
  std::int64_t min;                         ///< Int / Pow2: smallest valid value
  std::int64_t max;                         ///< Int / Pow2: largest valid value
  std::span<const std::string_view> values; ///< Enum / EnumList: the valid values
  std::string_view default_value;           ///< the tool's own default, as documented ("auto", "1", ...)
  std::string_view unit;                    ///< "bytes", "us", "Mb/s", "" when none
  std::string_view doc;                     ///< one line
};

/// Every tunable, grouped by tool (NCCL, Open MPI, DCQCN), in a stable order.
std::span<const Tunable> tunables() noexcept;

/// The row named `name` (exact match), or nullptr.
const Tunable* find_tunable(std::string_view name) noexcept;

/// Checks `value` against the row's type and range. Returns an empty string when valid, else
/// the reason ("not an integer", "above the maximum 31", "not one of Ring, Tree, ...").
std::string tunable_value_problem(const Tunable& t, std::string_view value);

/// Throws UsageError "<where>: <name>=<value>: <reason>" when the value is invalid.
void validate_tunable_value(const Tunable& t, std::string_view value, std::string_view where);

/// The integer a valid Int / Pow2 / Bool value holds; nullopt for other types or invalid text.
std::optional<std::int64_t> tunable_int(const Tunable& t, std::string_view value);

/// Where a measurement runs, as far as knobs are concerned.
struct RunTarget {
  std::string backend;          ///< railkit-bench's run.backend: "mpi" | "nccl" | "sim"
  bool crosses_fabric = false;  ///< its traffic crosses the network between nodes (more than one node)
  std::string sim_fidelity;     ///< backend sim: "packet" | "flow" ("" when unknown: judged as packet)
};

/// The reach of an environment variable or DCQCN attribute: its row's, else its family's
/// (NCCL_*: nccl and sim; OMPI_MCA_*: mpi; roce_rp.* / roce_np.*: a RoCE fabric and sim;
/// switch.*: sim only);
/// nullopt for a name of no known family (UCX_*, anything else), which is never judged.
std::optional<Reach> knob_reach(std::string_view name) noexcept;

/// Whether a knob of reach `r` can change a measurement on `t`: t's backend is in `r`, or `r`
/// holds RoceFabric and t is a real backend (mpi, nccl) whose traffic crosses the fabric. The
/// simulator at flow fidelity models no congestion control, ECN or PFC: there only the knobs NCCL
/// reads (its planner's) act, never a DCQCN attribute or a switch setting.
bool reaches(Reach r, const RunTarget& t) noexcept;

/// "nccl, sim", "mpi", "a RoCE fabric between nodes, sim" ...; "nothing" for Reach::None.
std::string reach_text(Reach r);

/// The names among `names` (first occurrence order, each once) whose reach is known and cannot
/// change a measurement on `t`.
std::vector<std::string> inert_knobs(const std::vector<std::string>& names, const RunTarget& t);

/// "env" | "dcqcn" | "switch"; "enum" | "enum-list" | "int" | "pow2" | "bool" | "decimal".
std::string_view scope_name(TunableScope s) noexcept;
std::string_view type_name(TunableType t) noexcept;

/// Prefix of DCQCN tunable names for the reaction point (sender) and notification point (receiver).
inline constexpr std::string_view kDcqcnRpPrefix = "roce_rp.";
inline constexpr std::string_view kDcqcnNpPrefix = "roce_np.";
/// Prefix of switch settings (scope Switch): `switch.ecn.kmin_bytes`, as the simulator names them.
inline constexpr std::string_view kSwitchPrefix = "switch.";

}  // namespace railkit
