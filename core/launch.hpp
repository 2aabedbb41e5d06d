#pragma once
// Process launching without a shell: fork + exec of an argv vector, environment additions,
// stdout/stderr to files, a wall-clock limit that ends the whole process group (SIGTERM, then
// SIGKILL after a grace period), and the exit status. Used by `railkit sweep` to start
// launchers (mpirun, srun) and railkit-bench, and by `railkit report` to run the plot script.
#include <csignal>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace railkit {

/// What to run and how.
struct LaunchSpec {
  /// argv[0] is looked up in PATH when it contains no '/'. Must not be empty.
  std::vector<std::string> argv;
  /// Variables added to (or overriding) the base environment given to run_process.
  std::map<std::string, std::string> env_add;
  /// The child's stdin; empty = inherit. /dev/null by default: a child in its own process
  /// group that read the terminal would be stopped (SIGTTIN).
  std::filesystem::path stdin_path{"/dev/null"};
  /// Files that receive the child's stdout / stderr (created or truncated); empty = inherit.
  std::filesystem::path stdout_path, stderr_path;
  /// Working directory of the child; empty = the caller's.
  std::filesystem::path cwd;
  /// Wall-clock limit in seconds; 0 = none. On expiry (and on interruption) the child's process
  /// group and every descendant found in /proc (launchers such as mpirun give ranks their own
  /// groups) get SIGTERM, then SIGKILL after kill_grace_s.
  double timeout_s = 0;
  double kill_grace_s = 5;
  /// Called about every tick_s seconds while the child runs, with the elapsed seconds.
  std::function<void(double elapsed_s)> on_tick;
  double tick_s = 1;
};

/// How a launched process ended.
struct LaunchResult {
  enum class End {
    Exited,         ///< exited on its own: exit_code is valid
    Signaled,       ///< killed by a signal not sent by us: signal is valid
    TimedOut,       ///< ran past timeout_s; its process group was terminated
    Interrupted,    ///< we received SIGINT/SIGTERM/SIGHUP (in `signal`); its group was terminated
    FailedToStart,  ///< fork, a redirection or exec failed: start_error says why
  };
  End end = End::FailedToStart;
  int exit_code = -1;
  int signal = 0;
  double elapsed_s = 0;
  double timeout_s = 0;  ///< the limit that was applied (0 = none)
  std::string start_error;
  bool ok() const noexcept { return end == End::Exited && exit_code == 0; }
  /// "exit code 3", "killed by signal 9", "timed out (limit 10 s)", "interrupted by signal 2",
  /// "could not start: ...".
  std::string describe() const;
};

/// Runs `spec` to completion in its own process group, with `base_env` (a null-terminated
/// "NAME=value" array such as `environ`) plus spec.env_add as its environment. While it runs,
/// SIGINT, SIGTERM and SIGHUP sent to the caller are held, end the child's group, and are
/// reported as End::Interrupted (the caller decides how to exit). Never throws for a child
/// failure; throws std::invalid_argument for an empty argv.
LaunchResult run_process(const LaunchSpec& spec, char* const* base_env);

/// Holds SIGINT, SIGTERM and SIGHUP blocked on the calling thread for its lifetime, for a command
/// that runs many launches (a sweep, a tune session): a Ctrl-C that arrives between two launches
/// stays pending instead of killing the command, and the next run_process takes it at once (that
/// launch ends as End::Interrupted, so the command reports it and exits as it does for one that
/// arrived during a launch). Children never inherit the block (run_process unblocks them).
class InterruptHold {
 public:
  InterruptHold();
  ~InterruptHold();
  InterruptHold(const InterruptHold&) = delete;
  InterruptHold& operator=(const InterruptHold&) = delete;

 private:
  sigset_t old_;
};

/// The last `max_lines` lines (at most `max_bytes` bytes) of a text file; "" when unreadable.
std::string file_tail(const std::filesystem::path& path, std::size_t max_lines, std::size_t max_bytes = 4096);

/// Number of online CPUs of this machine (>= 1).
int online_cpus() noexcept;

/// Directory of the running executable (/proc/self/exe's parent); empty when unknown.
std::filesystem::path self_exe_dir();

}  // namespace railkit
