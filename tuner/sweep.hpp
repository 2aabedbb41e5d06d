#pragma once
// `railkit sweep`: a matrix of configurations, each one launch of railkit-bench, recorded in
// DIR/sweep.json (`railkit.sweep/1`, see tuner/README.md) as results arrive.
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

#include "core/launch.hpp"
#include "topology/model.hpp"

namespace railkit::tuner {

inline constexpr const char* kSweepSchema = "railkit.sweep/1";
inline constexpr const char* kMatrixSchema = "railkit.sweep-matrix/1";

/// One configuration: a unique name, the environment it adds for every rank, and bench
/// arguments appended after the common ones.
struct SweepConfig {
  std::string name;
  std::map<std::string, std::string> env;
  std::vector<std::string> args;
  bool operator==(const SweepConfig&) const = default;
};

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

/// Parses a matrix document (format in tuner/README.md) into one factor; `source` names it in
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
std::vector<SweepConfig> expand(const std::vector<Factor>& factors);

enum class LauncherKind { Mpirun, Srun, Local };

/// Parses "mpirun" | "srun" | "local". Throws UsageError.
LauncherKind parse_launcher(std::string_view name);
std::string_view launcher_name(LauncherKind k) noexcept;

/// How each configuration is started.
struct LauncherOptions {
  LauncherKind kind = LauncherKind::Mpirun;
  int np = 0;   ///< ranks; 0 = the launcher's default
  int ppn = 0;  ///< ranks per node; 0 = the launcher's default
  std::string hostfile;
  std::vector<std::string> args;  ///< extra launcher arguments, before the program
  bool as_root = false;           ///< mpirun gets --allow-run-as-root
  int cpus = 1;                   ///< online CPUs here: mpirun gets --oversubscribe when np > cpus
  /// Throws UsageError for options that make no sense for the launcher (np < 0, local with np > 1 ...).
  void validate() const;
};

/// The argv that runs `bench` with `bench_args`, then the configuration's args, then
/// `--label NAME` (unless the arguments carry --label) and `-J results_path`, under the launcher,
/// passing the configuration's environment to every rank (mpirun: -x NAME=VALUE; srun:
/// --export=ALL,NAME=VALUE, or NAME alone when the value holds a comma: the runner also sets
/// the variables in the launcher's own environment, which --export=ALL passes on).
std::vector<std::string> launch_argv(const LauncherOptions& l, const SweepConfig& c, const std::string& bench,
                                     const std::vector<std::string>& bench_args, const std::string& results_path);

/// Throws UsageError when the bench arguments set what the sweep sets itself (-J/--output_file).
void check_bench_args(const std::vector<std::string>& bench_args);

/// What became of one configuration; an entry of sweep.json's `configs`.
struct ConfigRecord {
  std::string name;
  std::map<std::string, std::string> env;
  std::vector<std::string> args;
  std::string status;   ///< "ok" | "failed" | "timeout"
  std::string results;  ///< results document, relative to the sweep directory; "" when none
  std::string stdout_file, stderr_file;  ///< relative to the sweep directory
  std::optional<int> exit_code;          ///< unset when it did not exit by itself
  double elapsed_s = 0;
  std::string started;                   ///< UTC ISO 8601
  std::vector<std::string> command;      ///< the argv that ran
  std::string error;                     ///< why it failed: the end and its most telling stderr line
  std::string stderr_tail;               ///< last lines of its stderr when it failed
};

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
  std::vector<SweepConfig> planned;     ///< every configuration of the matrix, in run order
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
  std::vector<SweepConfig> configs;
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

/// What every launch of a sweep or tuning session shares.
struct LaunchContext {
  LauncherOptions launcher;
  std::string bench;  ///< railkit-bench path
  std::vector<std::string> bench_args;
  std::filesystem::path out_dir;  ///< absolute; results and logs go here
  double timeout_s = 0;           ///< per launch; 0 = none
  double kill_grace_s = 5;
};

/// One launch and what became of it.
struct TrialRun {
  ConfigRecord record;  ///< status "" when the launch was interrupted (not recorded)
  LaunchResult launch;
};

/// Launches railkit-bench once for `c` (results in out_dir/<base>.json, logs in
/// <base>.stdout.txt / .stderr.txt) and judges it: ok (exit 0 and a valid results document),
/// timeout (the limit, or the bench's own watchdog exit 4) or failed (with the telling stderr line).
TrialRun run_config(const LaunchContext& ctx, const SweepConfig& c, const std::string& base, char* const* envp,
                    const std::function<void(double)>& on_tick);

/// The outcome of run_sweep.
struct SweepOutcome {
  SweepDocument doc;
  int ran = 0, skipped = 0, failed = 0;  ///< this invocation
  int interrupted_by = 0;                ///< signal that stopped the sweep, 0 when it finished
};

/// Runs the configurations one after the other, rewriting DIR/sweep.json atomically after each.
/// Progress lines go to `progress` (rewritten in place when `tty`). Throws UsageError for bad
/// options (existing sweep without --resume, a resume that does not match, unknown baseline),
/// IoError when DIR cannot be written.
SweepOutcome run_sweep(const SweepOptions& opts, char* const* envp, std::ostream& progress, bool tty);

/// The line of a failed launch's stderr that says most: the last one mentioning an error outside
/// mpirun's dashed boxes (a dangling "error:" cut by mpirun's output joined with its rest), else
/// the last line.
std::string telling_stderr_line(const std::string& tail);

/// "12 s", "3 min 05 s", "1 h 02 min".
std::string format_duration(double seconds);

/// A file-name-safe form of a configuration name (letters, digits, '.', '_', '-', '=';
/// everything else '_'), at most 80 characters.
std::string slug(std::string_view name);

}  // namespace railkit::tuner
