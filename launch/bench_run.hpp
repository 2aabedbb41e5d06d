#pragma once
// Running railkit-bench once under a launcher and reading what it left: the argv (the
// configuration's environment and arguments after the common ones), the process, the results
// document, and a judgement (ok, failed with the telling stderr line, timeout). Shared by
// sweep, tune and accept.
#include <filesystem>
#include <functional>
#include <initializer_list>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/enums.hpp"
#include "core/launch.hpp"
#include "launch/launcher.hpp"

namespace railkit::launch {

/// One configuration of railkit-bench: a unique name, the environment it adds for every rank,
/// and arguments appended after the common ones.
struct BenchConfig {
  std::string name;
  std::map<std::string, std::string> env;
  std::vector<std::string> args;
  bool operator==(const BenchConfig&) const = default;
};

/// What became of one launch; an entry of sweep.json's `configs` (sweep/README.md).
struct ConfigRecord {
  std::string name;
  std::map<std::string, std::string> env;
  std::vector<std::string> args;
  TrialStatus status = TrialStatus::Interrupted;  ///< Interrupted: not recorded
  std::string results;  ///< results document, relative to the output directory; "" when none
  std::string stdout_file, stderr_file;  ///< relative to the output directory
  std::optional<int> exit_code;          ///< unset when it did not exit by itself
  double elapsed_s = 0;
  std::string started;                   ///< UTC ISO 8601
  std::vector<std::string> command;      ///< the argv that ran
  std::string error;                     ///< why it failed: the end and its most telling stderr line
  std::string stderr_tail;               ///< last lines of its stderr when it failed
};

/// Throws UsageError when the bench arguments set what `railkit COMMAND` sets itself (-J).
void check_bench_args(const std::vector<std::string>& bench_args, std::string_view command);

/// The argv that runs `bench` with `bench_args`, then the configuration's args, then
/// `--label NAME` (unless the arguments carry --label) and `-J results_path`, on every rank of the
/// launcher's job, with the configuration's environment (world_argv).
std::vector<std::string> bench_argv(const LauncherOptions& l, const BenchConfig& c, const std::string& bench,
                                    const std::vector<std::string>& bench_args, const std::string& results_path);

/// What every launch of a sweep, tuning session or acceptance run shares.
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
  ConfigRecord record;  ///< status Interrupted when the launch was interrupted (not recorded)
  LaunchResult launch;
};

/// Launches railkit-bench once for `c` (results in out_dir/<base>.json, logs in
/// <base>.stdout.txt / .stderr.txt) and judges it: ok (exit 0 and a valid results document),
/// timeout (the limit, or the bench's own watchdog exit 4) or failed (with the telling stderr line).
TrialRun run_config(const LaunchContext& ctx, const BenchConfig& c, const std::string& base, char* const* envp,
                    const std::function<void(double)>& on_tick);

/// The backend railkit-bench will run, as far as it is known before a launch.
struct ExpectedBackend {
  std::string backend;  ///< "mpi" | "nccl" | "sim"; "" when only a results document can tell
  std::string how;      ///< how it was found, or why it is not known ("--backend mpi in the bench arguments")
};

/// The value of the last --backend in bench arguments (`--backend X`, `--backend=X`); "" when absent.
std::string backend_arg(const std::vector<std::string>& bench_args);

/// Whether every process the launcher starts runs on this host: `local`, or mpirun without a
/// hostfile and without a host list in its arguments (srun: never assumed).
bool single_host(const LauncherOptions& l);

/// What `railkit-bench --version` run here says `--backend auto` resolves to: mpi when no nccl
/// backend is built, or when it is built but this host has no GPU driver ("driver none") and
/// every rank runs here (`this_host_only`); else "" (a GPU on the nodes decides).
ExpectedBackend backend_from_version(const std::string& version_text, bool this_host_only);

/// The backend the bench arguments will run: --backend mpi|nccl|sim as given; with auto (or
/// none), railkit-bench's own answer (`bench --version` run here, backend_from_version). Never
/// throws: a bench that cannot say gives "" and the caller judges the first results document.
ExpectedBackend expected_backend(const std::string& bench, const std::vector<std::string>& bench_args,
                                 const LauncherOptions& l, char* const* envp);

/// The line of a failed launch's stderr that says most: the last one mentioning an error outside
/// mpirun's dashed boxes (a dangling "error:" cut by mpirun's output joined with its rest), else
/// the last line.
std::string telling_stderr_line(const std::string& tail);

}  // namespace railkit::launch
