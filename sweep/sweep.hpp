#pragma once
// `railkit sweep`: a matrix of configurations, each one launch of railkit-bench, recorded in
// DIR/sweep.json (`railkit.sweep/1`, see sweep/README.md) as results arrive.
#include <cstddef>
#include <filesystem>
#include <functional>
#include <iosfwd>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/enums.hpp"
#include "launch/bench_run.hpp"
#include "topology/model.hpp"

namespace railkit::sweep {

using launch::BenchConfig;
using launch::ConfigRecord;
using launch::LauncherOptions;

inline constexpr const char* kSweepSchema = "railkit.sweep/1";
inline constexpr const char* kMatrixSchema = "railkit.sweep-matrix/1";

/// One alternative of a factor.
struct Choice {
  std::string label;
  std::map<std::string, std::string> env;
  std::vector<std::string> args;
};

/// One dimension of the matrix, from one source (`--axis NAME=...`, `--preset pxn`, `--matrix F`).
struct Factor {
  std::string source;  ///< for messages: "--axis NCCL_ALGO", "--preset pxn", "--matrix m.json"
  std::vector<Choice> choices;
};

/// Parses "NAME=v1,v2,...": one choice per value, labelled "NAME=v". Throws UsageError naming
/// the axis for a missing '=', an empty or invalid name, an empty value list or repeated values.
Factor parse_axis(std::string_view spec);

/// Parses a matrix document (format in sweep/README.md) into one factor; `source` names it in
/// errors. Throws UsageError for a wrong shape, duplicate or empty names, non-string values.
Factor parse_matrix(const nlohmann::json& doc, const std::string& source);
/// Reads and parses a matrix file. Throws UsageError naming the file.
Factor load_matrix(const std::filesystem::path& path);

/// Preset names, in the order `--help` lists them.
inline constexpr std::string_view kPresets[] = {"pxn", "rails", "algo"};

/// The factors of a preset: `pxn` (NCCL_PXN_DISABLE=1 vs 0 with NCCL_P2P_PXN_LEVEL 0,1,2),
/// `rails` (NCCL_IB_HCA: all rails, then each rail NIC alone; times NCCL_CROSS_NIC 0/1; needs
/// `topo`, the probed node), `algo` (NCCL's default, then NCCL_ALGO x NCCL_PROTO).
/// Throws UsageError for an unknown preset, UnavailableError when `rails` finds no rail.
std::vector<Factor> preset_factors(std::string_view preset, const topo::Topology* topo);

/// The cartesian product, first factor varying slowest. A configuration's name joins the labels
/// of the factors with more than one choice (all labels when none has) with ','. Throws
/// UsageError when there is no factor, when two factors set the same variable, or when names repeat.
std::vector<BenchConfig> expand(const std::vector<Factor>& factors);

/// Everything sweep.json holds.
struct SweepDocument {
  std::string schema = kSweepSchema;
  std::string railkit_version;
  std::string created, updated;  ///< UTC ISO 8601
  std::string bench;
  std::vector<std::string> bench_args;
  nlohmann::json launcher = nlohmann::json::object();  ///< kind, np, ppn, hostfile, args
  double timeout_s = 0;
  std::string baseline;                 ///< configuration the comparison divides by
  std::vector<BenchConfig> planned;     ///< every configuration of the matrix, in run order
  std::vector<ConfigRecord> configs;    ///< finished configurations, in planned order
  const ConfigRecord* find(const std::string& name) const;
};

/// sweep.json's content, keys in documented order.
nlohmann::ordered_json to_json(const SweepDocument& d);
/// Throws UsageError naming `source` when the document is not railkit.sweep/1 or malformed.
SweepDocument sweep_from_json(const nlohmann::json& j, const std::string& source);
/// Reads DIR/sweep.json. Throws UsageError / IoError naming the file.
SweepDocument load_sweep(const std::filesystem::path& dir);

/// Everything a sweep run needs.
struct SweepOptions {
  std::vector<BenchConfig> configs;
  LauncherOptions launcher;
  std::string bench;  ///< railkit-bench path
  std::vector<std::string> bench_args;
  std::filesystem::path out_dir;
  bool resume = false;        ///< skip configurations already in DIR/sweep.json
  bool retry_failed = false;  ///< with resume: run failed and timed-out ones again
  double timeout_s = 0;       ///< per configuration; 0 = none
  double kill_grace_s = 5;
  std::string baseline;       ///< empty = the first configuration
};

/// The outcome of run_sweep.
struct SweepOutcome {
  SweepDocument doc;
  int ran = 0, skipped = 0, failed = 0;  ///< this invocation
};

/// Runs the configurations one after the other, rewriting DIR/sweep.json atomically after each.
/// A signal that interrupts a launch ends the sweep with InterruptedError (finished ones kept).
/// Progress lines go to `progress` (rewritten in place when `tty`). Throws UsageError for bad
/// options (existing sweep without --resume, a resume that does not match, unknown baseline),
/// IoError when DIR cannot be written.
SweepOutcome run_sweep(const SweepOptions& opts, char* const* envp, std::ostream& progress, bool tty);

}  // namespace railkit::sweep
