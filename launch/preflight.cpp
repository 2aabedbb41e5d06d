#include "launch/preflight.hpp"

#include <stdlib.h>
#include <unistd.h>

#include <filesystem>

#include <fmt/format.h>

#include "core/env.hpp"
#include "core/error.hpp"
#include "core/launch.hpp"
#include "core/strings.hpp"
#include "launch/bench_run.hpp"

namespace railkit::launch {

namespace fs = std::filesystem;

namespace {

/// A temporary directory for a check's output, removed with the object.
class ScratchDir {
 public:
  ScratchDir() {
    std::string tmpl = (fs::temp_directory_path() / "railkit-preflight-XXXXXX").string();
    if (::mkdtemp(tmpl.data()) == nullptr)
      throw IoError("launcher check: cannot create a temporary directory in " + fs::temp_directory_path().string());
    path_ = tmpl;
  }
  ~ScratchDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

/// How one check command ended and the line of its output that says most.
struct CheckRun {
  LaunchResult result;
  std::string said;
};

CheckRun run_check(const std::vector<std::string>& argv, char* const* envp, double timeout_s, const char* what) {
  const ScratchDir dir;
  LaunchSpec spec;
  spec.argv = argv;
  if (const std::string p = find_on_path(envp, argv.front()); !p.empty()) spec.argv.front() = p;
  spec.stdout_path = dir.path() / "stdout.txt";
  spec.stderr_path = dir.path() / "stderr.txt";
  spec.timeout_s = timeout_s;
  spec.kill_grace_s = 5;
  CheckRun c{run_process(spec, envp), ""};
  if (c.result.end == LaunchResult::End::Interrupted)
    throw InterruptedError(c.result.signal,
                           fmt::format("interrupted by signal {} while checking {}; nothing ran", c.result.signal, what));
  c.said = telling_stderr_line(file_tail(spec.stderr_path, 40, 8192));
  if (c.said.empty())  // scontrol ping: its first line says it ("Slurmctld(primary) at c1 is DOWN")
    for (const std::string& line : split(file_tail(spec.stdout_path, 10, 2048), '\n'))
      if (!trim(line).empty()) {
        c.said = std::string(trim(line));
        break;
      }
  return c;
}

std::string describe(const CheckRun& c) {
  std::string s = c.result.describe();
  if (!c.said.empty()) s += ": " + c.said;
  return s;
}

}  // namespace

std::vector<std::string> srun_trial_argv(const LauncherOptions& l) {
  LauncherOptions trial = l;
  trial.kind = LauncherKind::Srun;
  std::vector<std::string> argv = world_argv(trial, {}, {"true"});
  argv.insert(argv.begin() + 1, "--job-name=railkit-preflight");  // the run's own --job-name, later, wins
  return argv;
}

void preflight(const LauncherOptions& l, char* const* envp, const PreflightOptions& o) {
  l.validate();
  check_available(l, envp);
  if (l.kind != LauncherKind::Srun) return;
  const std::string conf = env_value(envp, "SLURM_CONF");
  const std::string conf_words = conf.empty() ? "SLURM_CONF unset" : "SLURM_CONF=" + conf;
  if (!conf.empty() && ::access(conf.c_str(), R_OK) != 0)  // Slurm's clients would retry it for a minute
    throw UnavailableError(fmt::format("--launcher srun: no Slurm controller answers (SLURM_CONF={}): cannot read "
                                       "the configuration file",
                                       conf));
  if (!find_on_path(envp, "scontrol").empty()) {
    const CheckRun ping = run_check({"scontrol", "ping"}, envp, o.ping_timeout_s, "the Slurm controller");
    if (!ping.result.ok())
      throw UnavailableError(fmt::format("--launcher srun: no Slurm controller answers ({}): scontrol ping: {}",
                                         conf_words, describe(ping)));
  }
  const std::vector<std::string> argv = srun_trial_argv(l);
  const CheckRun job = run_check(argv, envp, o.job_timeout_s, "that a Slurm job can start");
  if (job.result.ok()) return;
  std::string why = describe(job);
  if (job.result.end == LaunchResult::End::TimedOut)
    why = fmt::format("it did not start and end within {} s{}", o.job_timeout_s, job.said.empty() ? "" : " (" + job.said + ")");
  throw UnavailableError(fmt::format("--launcher srun: a job with the run's launcher options cannot start ({}; {}): {}",
                                     join(argv, " "), conf_words, why));
}

}  // namespace railkit::launch
