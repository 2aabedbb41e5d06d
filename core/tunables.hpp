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

namespace railkit {

/// Where a tunable takes effect.
enum class TunableScope {
  Env,    ///< an environment variable set on every rank before the program starts
  Dcqcn,  ///< a DCQCN attribute written on every node's RDMA NICs (sysfs/debugfs), per node
};

/// The type of a tunable's value; every value is carried as text, as the environment holds it.
enum class TunableType {
  Enum,      ///< one of `values` (matched case-insensitively)
  EnumList,  ///< NCCL_ALGO / NCCL_PROTO syntax: comma-separated `values`, optionally starting with '^'
             ///< (exclude), optionally in per-collective parts "allreduce:ring;broadcast:^tree"
  Int,       ///< a decimal integer within [min, max]
  Pow2,      ///< a power of two within [min, max] (0 allowed when min is 0)
  Bool,      ///< 0 or 1
};

/// One row of the table.
struct Tunable {
  std::string_view name;  ///< NCCL_ALGO, OMPI_MCA_coll_tuned_allreduce_algorithm, roce_rp.rpg_time_reset
  TunableScope scope;
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

/// "env" | "dcqcn"; "enum" | "enum-list" | "int" | "pow2" | "bool".
std::string_view scope_name(TunableScope s) noexcept;
std::string_view type_name(TunableType t) noexcept;

/// Prefix of DCQCN tunable names for the reaction point (sender) and notification point (receiver).
inline constexpr std::string_view kDcqcnRpPrefix = "roce_rp.";
inline constexpr std::string_view kDcqcnNpPrefix = "roce_np.";

}  // namespace railkit
