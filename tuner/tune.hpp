#pragma once
// `railkit tune`: a search strategy drives railkit-bench launches (one per trial, through the
// launcher) over a space of settings, every trial journaled (tuner/journal.hpp); the best
// candidates are then re-measured against the baseline interleaved (A/B/A/B) with data checks
// (tuner/session.hpp), and the validated result is written as a profile (railkit.profile/1,
// tuner/evidence.hpp) whose fingerprint describes the measured nodes (tuner/fingerprint.hpp).
// Documented in tuner/README.md.
#include <cstdint>
#include <filesystem>
#include <iosfwd>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/profile.hpp"
#include "tuner/space.hpp"
#include "launch/bench_run.hpp"
#include "launch/sim_bench.hpp"
#include "tuner/validate.hpp"

namespace railkit::tuner {

using launch::LauncherOptions;

/// Where and how DCQCN knobs are applied: `railkit dcqcn` run once per node through the launcher.
struct DcqcnOnNodes {
  std::string railkit;                ///< the railkit executable that nodes run
  std::string root = "/";             ///< --root passed to railkit dcqcn (fixture trees in tests)
  std::vector<std::string> netdevs;   ///< empty = every RoCE netdev of the node
  int priority = 3;                   ///< the RoCE priority the profile records the settings for
};

/// Where the profile's topology fingerprint comes from.
struct TopoSource {
  std::string root;     ///< --topo-root: a captured or fixture tree probed here; "" = probe the measured nodes
  std::string railkit;  ///< the railkit executable each measured node runs (`railkit topo --format json`)
};

/// Everything a tuning session needs (a new one; --resume reads it back from the journal).
struct TuneOptions {
  Space space;
  std::string strategy = "coordinate";
  int budget = 0;                     ///< most search trials (0 = grid: all)
  std::uint64_t seed = 1;
  LauncherOptions launcher;
  std::string bench;
  std::vector<std::string> bench_args;  ///< as given after --, minus -n/--iters (see iters)
  int iters = 20;                       ///< timed iterations of a fidelity-1 trial (-n)
  double timeout_s = 600;               ///< per launch
  double kill_grace_s = 5;
  std::filesystem::path out_dir;
  std::optional<std::string> weights_path;
  int pairs = 5;                        ///< A/B validation rounds
  int validate_iters = 0;               ///< -n of validation runs; 0 = 2 x the most the search used
  double max_regression = 0.02;
  bool validate = true;                 ///< false: no validation; the profile says validated: false
  std::map<std::string, std::string> baseline_env;  ///< the settings tuned ones must beat (default: none)
  std::optional<DcqcnOnNodes> dcqcn;     ///< required when the space has DCQCN knobs (not with --backend sim)
  /// Set (by run_tune, from the bench arguments) when the trials run railkit-bench --backend sim:
  /// the cluster file, its hash, fidelity and seed. DCQCN and switch knobs then go to the simulated
  /// fabric as --sim-set arguments; the profile is never validated.
  std::optional<launch::SimEvidence> sim;
  TopoSource topo;                      ///< the profile's fingerprint source
  std::optional<std::string> emit_ompi_rules;       ///< write an Open MPI dynamic rules file here too
  std::string profile_name;             ///< default: the out directory's name
  /// Measure knobs that cannot reach the backend that runs (NCCL_* on mpi ...); the profile then
  /// says `inert` and is never validated. Without it such a session is refused (exit 6).
  bool allow_inert = false;
};

/// What a session ended with.
struct TuneOutcome {
  int trials_run = 0;        ///< this invocation
  int trials_total = 0;      ///< in the journal
  int trials_failed = 0;     ///< in the journal (infeasible ones included)
  int trials_infeasible = 0; ///< in the journal: settings that could not run (switch ECN Kmin >= Kmax ...)
  std::optional<ProfileDocument> profile;
  std::filesystem::path profile_path;
  std::optional<std::string> emit_ompi_rules;  ///< where the caller writes the Open MPI rules of the profile
  double best_objective_GBps = 0;
  double baseline_objective_GBps = 0;
};

/// Runs a new session in opts.out_dir (which must not hold a journal). Progress lines go to
/// `progress` (rewritten in place when `tty`; none when `quiet`). Throws UsageError for bad
/// options and for knobs that cannot reach the backend that will run (unless allow_inert:
/// before anything runs when launch::expected_backend knows it, else after the first trial,
/// which is journaled), IoError when the directory cannot be written, InterruptedError when a
/// signal stops it (what finished is journaled; the message says how to resume).
TuneOutcome run_tune(const TuneOptions& opts, char* const* envp, std::ostream& progress, bool tty, bool quiet);

/// The most search trials --budget may ask for.
inline constexpr std::int64_t kMaxBudget = 1000000;

/// What `railkit tune --resume` may change or must confirm.
struct ResumeOptions {
  bool allow_inert = false;    ///< adds to the journal's
  std::optional<int> budget;   ///< --budget again: the session's new budget (journaled as a `budget` line)
  std::string bench;           ///< --bench again: must be the journal's bench
  /// The railkit-bench next to this railkit: the journal's bench runs without --bench only when
  /// it is this one; empty when there is none.
  std::string default_bench;
};

/// Continues the session in `dir` from its journal, with the journal's settings (DCQCN target,
/// fingerprint source ...): no finished trial repeated, none lost; DCQCN attributes an
/// interrupted session left set are restored first. Prints the bench it runs (even when
/// quiet). Throws as run_tune, and UsageError when the journal's bench is not r.default_bench
/// and --bench does not name it again, or when the new budget would change the trials the
/// strategy already proposed (halving, random).
TuneOutcome resume_tune(const std::filesystem::path& dir, char* const* envp, std::ostream& progress, bool tty, bool quiet,
                        const ResumeOptions& r = {});

/// The one line that refuses switch settings (`knobs`, of space `space`) on a real backend: only
/// the simulator reaches a switch.
std::string switch_refusal(const std::string& space, const std::vector<std::string>& knobs);

/// The one line that refuses knobs that cannot reach `backend` (known by `how`).
std::string inert_refusal(const std::vector<std::string>& knobs, const std::string& backend, const std::string& how);

/// Removes -n/--iters (and its value) from bench arguments and returns it (nullopt when absent).
/// Throws UsageError for a malformed value or -J/--output_file (the tuner sets it).
std::optional<int> take_iters(std::vector<std::string>& bench_args);

/// The collectives the bench arguments ask for (--coll; railkit-bench's default when absent).
std::vector<std::string> bench_collectives(const std::vector<std::string>& bench_args);

}  // namespace railkit::tuner
