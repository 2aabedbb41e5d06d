#pragma once
// `railkit sweep`: a matrix of configurations, each one launch of railkit-bench, recorded in
// DIR/sweep.json (`railkit.sweep/1`, see sweep/README.md) as results arrive.
#include <cstddef>
#include <cstdint>
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

inline constexpr const char* kSweepSchema = "railkit.sweep/2";
inline constexpr const char* kSweepSchemaV1 = "railkit.sweep/1";  ///< read (one round, `configs`), never written
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
/// errors. Throws UsageError for a wrong shape, duplicate or empty names, non-string values, an
/// `env` variable a profile may not set (env_key_allowed: NCCL_*, OMPI_MCA_* ..., no LD_PRELOAD or
/// PATH), and `args` that set what the sweep sets itself (-J/--output_file, check_bench_args).
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

/// Where a configuration's variable came from ("--preset algo", "--axis NCCL_ALGO", "--matrix m.json"),
/// for messages: variable -> the first factor that sets it.
std::map<std::string, std::string> knob_sources(const std::vector<Factor>& factors);

/// The order of the configurations `0 .. n-1` in `round` (from 1): a Fisher-Yates shuffle driven
/// by std::mt19937_64 seeded with (seed, round), the same on every platform.
std::vector<std::size_t> round_order(std::size_t n, std::uint64_t seed, int round);

/// A knob that cannot reach the backend that ran (or will run) the sweep.
struct InertKnob {
  std::string name;
  std::string reaches;  ///< reach_text(): "nccl, sim"
  std::string source;   ///< the factor that set it; "" when unknown
};

/// The knobs of `configs` that cannot reach `backend` (core/tunables: knob_reach), each once,
/// with the factor that set it from `sources`.
std::vector<InertKnob> inert_in(const std::vector<BenchConfig>& configs, const std::string& backend,
                                const std::map<std::string, std::string>& sources);

/// One launch: a configuration in a round (an entry of sweep.json's `launches`).
struct LaunchRecord {
  int round = 1;                   ///< from 1
  ConfigRecord run;                ///< what became of the launch
  std::string backend;             ///< its results document's run.backend; "" without one
  std::vector<std::string> inert;  ///< its knobs that cannot reach that backend (kept with --allow-inert)
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
  int rounds = 1;                       ///< every configuration runs once per round
  std::uint64_t seed = 0;               ///< of round_order()
  std::vector<std::vector<std::string>> order;  ///< per round, the configuration names in run order
  /// {expected, how, seen}: the backend known before the first launch ("" = not known), how it
  /// was known, and the backends the results documents name.
  nlohmann::json backend = nlohmann::json::object();
  bool allow_inert = false;
  std::vector<InertKnob> inert;         ///< knobs that cannot reach the backend (only with allow_inert)
  std::string inert_backend;            ///< the backend they cannot reach
  /// --preset rails: where the rails came from ({source, root, host, measured_node, note}); null otherwise.
  nlohmann::json topology = nullptr;
  /// --backend sim: the simulation (launch::to_json(SimEvidence): backend sim, simulated true,
  /// cluster, cluster_hash, fidelity, seed ...) and `round_seeds`, the seed each round simulated
  /// with; null for a real backend.
  nlohmann::json sim = nullptr;
  std::vector<BenchConfig> planned;     ///< every configuration of the matrix, in planned order
  std::vector<LaunchRecord> launches;   ///< finished launches, in run order (round by round)
  /// The finished launches of a configuration, by round.
  std::vector<const LaunchRecord*> of(const std::string& name) const;
  const LaunchRecord* find(const std::string& name, int round) const;
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
  bool resume = false;        ///< skip launches already in DIR/sweep.json
  bool retry_failed = false;  ///< with resume: run failed and timed-out ones again
  double timeout_s = 0;       ///< per launch; 0 = none
  double kill_grace_s = 5;
  std::string baseline;       ///< a name or "[N]"; empty = the first configuration
  int rounds = 3;             ///< every configuration, the baseline included, once per round
  std::optional<std::uint64_t> seed;  ///< of the round order; unset = a fresh one (or the resumed sweep's)
  bool allow_inert = false;   ///< measure knobs that cannot reach the backend (marked inert)
  std::map<std::string, std::string> knob_sources;  ///< variable -> factor, for messages (knob_sources())
  nlohmann::json topology = nullptr;  ///< recorded as sweep.json's `topology`
  /// --prom: the sweep's node_exporter textfile (render_sweep_prometheus), written atomically when
  /// run_sweep ends (after --resume too); checked writable before anything runs. Empty = none.
  std::filesystem::path prom;
};

/// The outcome of run_sweep.
struct SweepOutcome {
  SweepDocument doc;
  int ran = 0, skipped = 0, failed = 0;  ///< launches of this invocation
};

/// Runs every configuration once per round, in each round's shuffled order, rewriting
/// DIR/sweep.json atomically after each launch. With --backend sim in the bench arguments the
/// launcher must be `local` (one process simulates every rank), the --sim-cluster file must be
/// there, and round R simulates with `--sim-set seed=` launch::sim_replica_seed(S, R - 1) (S: the
/// bench arguments' seed, else the cluster file's, else 1), so rounds are replicas with other
/// seeds; sweep.json's `sim` records it. The backend that will run is known first
/// (launch::expected_backend) or from the first results document: knobs that cannot reach it
/// are refused (UsageError naming the knob and the backend; before anything runs when the
/// backend is known, else right after that launch, which is kept) unless allow_inert. A signal
/// that interrupts a launch ends the sweep with InterruptedError (finished ones kept). Progress
/// lines go to `progress` (rewritten in place when `tty`). Throws UsageError for bad options
/// (existing sweep without --resume, a resume that does not match, unknown baseline, a --prom
/// file that cannot be written), IoError when DIR cannot be written.
SweepOutcome run_sweep(const SweepOptions& opts, char* const* envp, std::ostream& progress, bool tty);

}  // namespace railkit::sweep
