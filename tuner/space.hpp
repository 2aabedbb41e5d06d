#pragma once
// Search spaces of `railkit tune`: knobs (rows of the tunables table, core/tunables.hpp) with the
// values searched, conditions between knobs, and the environment every trial sets. A
// configuration is one value index per knob. Built-in spaces and the space file format
// (`railkit.space/1`) are documented in tuner/README.md.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/tunables.hpp"

namespace railkit::tuner {

inline constexpr const char* kSpaceSchema = "railkit.space/1";

/// When a knob takes part: only while another knob's current value satisfies `op` against `value`.
/// A knob whose condition fails is inactive: its value is not set and it is held at its baseline.
struct Condition {
  std::string knob;  ///< name of an earlier knob of the same space
  std::string op;    ///< "==", "!=", ">", ">=", "<", "<=" (numeric for the last four), "in", "not-in"
  std::vector<std::string> values;  ///< one value, or the list for in / not-in
  bool operator==(const Condition&) const = default;
};

/// One dimension of a space.
struct Knob {
  std::string name;                  ///< the tunable's name (a row of tunables())
  const Tunable* tunable = nullptr;  ///< that row; never null in a loaded space
  /// The values searched, in order; "" means "leave it unset" (the tool's own default). Numeric
  /// knobs list their non-empty values in ascending order.
  std::vector<std::string> values;
  std::size_t baseline = 0;          ///< index of the default value in `values`
  bool numeric = false;              ///< ordered resource knob (coordinate descends it), else categorical
  std::vector<std::string> collectives;  ///< bench collectives it affects ("all_reduce"); empty = all
  std::optional<Condition> when;
};

/// A search space.
struct Space {
  std::string name;
  std::string source;  ///< "built-in" or the file it came from
  std::string doc;
  std::vector<Knob> knobs;
  std::map<std::string, std::string> fixed_env;  ///< set in every trial (and every profile made from it)
};

/// One value index per knob of a space.
using Config = std::vector<std::size_t>;

/// The configuration with every knob at its baseline.
Config baseline_config(const Space& s);

/// Whether knob k takes part in configuration c (its condition holds).
bool knob_active(const Space& s, const Config& c, std::size_t k);

/// `c` with every inactive knob moved to its baseline, so equal settings have equal configs.
Config canonical(const Space& s, Config c);

/// The number of distinct canonical configurations (saturates at SIZE_MAX).
std::size_t config_count(const Space& s);

/// Every distinct canonical configuration: the baseline first, then in lexicographic order of
/// the indices (first knob slowest). Throws UsageError when there are more than `limit`.
std::vector<Config> all_configs(const Space& s, std::size_t limit = 100000);

/// What a configuration sets: environment variables (fixed_env plus every active, non-empty env
/// knob), DCQCN attributes and switch settings (every active, non-empty knob of that scope, by
/// tunable name).
struct Settings {
  std::map<std::string, std::string> env;
  std::map<std::string, std::string> dcqcn;
  /// switch.ecn.*: the fabric's switches; only the simulator takes them (`--sim-set`)
  std::map<std::string, std::string> switch_settings = {};
  bool operator==(const Settings&) const = default;
};
Settings settings_of(const Space& s, const Config& c);

/// The switch ECN knobs the simulator takes together (`--sim-set switch.ecn.kmin_bytes=...,
/// kmax_bytes=..., pmax=...`).
inline constexpr std::string_view kSwitchEcnKnobs[] = {"switch.ecn.kmin_bytes", "switch.ecn.kmax_bytes", "switch.ecn.pmax"};

/// Why settings cannot be run at all, or "" when they can: switch ECN settings are given
/// together or not at all, and Kmin must be below Kmax. A trial with such settings is journaled
/// as failed and infeasible without launching anything.
std::string infeasible_reason(const Settings& s);

/// A short readable name: the active knobs off their baseline as NAME=value joined by ',',
/// with common prefixes dropped (NCCL_, OMPI_MCA_coll_tuned_); "defaults" when none is.
std::string config_label(const Space& s, const Config& c);

/// The configuration as JSON {knob name: value} (active knobs only; "" as null), and back.
/// Throws UsageError naming `where` for unknown knobs or values not in the space.
nlohmann::ordered_json config_to_json(const Space& s, const Config& c);
Config config_from_json(const Space& s, const nlohmann::json& j, const std::string& where);

/// Names of the built-in spaces, in the order `--help` lists them.
inline constexpr std::string_view kBuiltinSpaces[] = {"ompi-coll", "nccl-proto", "nccl-net", "dcqcn", "switch-ecn"};

/// Open MPI's number of algorithms per collective ("allreduce" -> 7), as
/// `ompi_info --parsable --param coll tuned --level 9` lists them (`..._algorithm_count:value:N`).
using OmpiAlgorithmCounts = std::map<std::string, int>;
OmpiAlgorithmCounts parse_ompi_info_counts(const std::string& text);

/// A built-in space. `ompi_counts` sizes ompi-coll's algorithm ids (empty: Open MPI 4.1's).
/// Throws UsageError for an unknown name.
Space builtin_space(std::string_view name, const OmpiAlgorithmCounts& ompi_counts = {});

/// Parses a space document (JSON, `railkit.space/1`); `source` names it in errors. Every knob
/// must be a row of the tunables table and every value valid for it. Throws UsageError.
Space parse_space(const nlohmann::json& doc, const std::string& source);
/// Reads a space file. Throws UsageError / IoError naming the file.
Space load_space(const std::filesystem::path& path);
/// A built-in name or a file path.
Space resolve_space(const std::string& name_or_path, const OmpiAlgorithmCounts& ompi_counts = {});

/// The space as a document parse_space accepts (for the journal).
nlohmann::ordered_json space_to_json(const Space& s);

/// The space without the knobs that affect none of `collectives` (bench --coll names). Throws
/// UsageError when no knob is left, naming the space and the collectives.
Space restrict_to(const Space& s, const std::vector<std::string>& collectives);

}  // namespace railkit::tuner
