#include "core/launch.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string_view>

#include <fmt/format.h>

namespace railkit {
namespace fs = std::filesystem;

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

/// Stages of the child's setup, reported back through the exec pipe when one fails.
enum class Stage : int { Stdout = 1, Stderr, Cwd, Exec, Stdin };

struct ChildFailure {
  int stage = 0;
  int err = 0;
};

[[noreturn]] void child_fail(int fd, Stage stage) {
  ChildFailure f{static_cast<int>(stage), errno};
  ssize_t n = ::write(fd, &f, sizeof f);
  (void)n;
  ::_exit(127);
}

std::string format_seconds(double s) {
  return s == std::floor(s) ? fmt::format("{:.0f}", s) : fmt::format("{:.1f}", s);
}

/// Waits up to `wait_s` for `pid`; true (and `status` set) when it has ended.
bool wait_for(pid_t pid, double wait_s, int& status) {
  const auto t0 = Clock::now();
  for (;;) {
    const pid_t r = ::waitpid(pid, &status, WNOHANG);
    if (r == pid) return true;
    if (r < 0 && errno != EINTR) return true;  // already reaped or not our child
    if (seconds_since(t0) >= wait_s) return false;
    ::usleep(20000);
  }
}

/// Every process below `root` (children, grandchildren ...), from /proc/<pid>/stat.
std::vector<pid_t> descendants(pid_t root) {
  std::map<pid_t, std::vector<pid_t>> children;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator("/proc", ec)) {
    const std::string name = e.path().filename().string();
    if (name.empty() || !std::all_of(name.begin(), name.end(), [](char c) { return c >= '0' && c <= '9'; })) continue;
    std::ifstream in(e.path() / "stat");
    std::string stat;
    if (!std::getline(in, stat)) continue;
    const size_t close = stat.rfind(')');  // the command name may hold spaces and parentheses
    if (close == std::string::npos) continue;
    std::istringstream rest(stat.substr(close + 1));
    char state = 0;
    long ppid = 0;
    if (rest >> state >> ppid) children[static_cast<pid_t>(ppid)].push_back(static_cast<pid_t>(std::stol(name)));
  }
  std::vector<pid_t> out;
  std::vector<pid_t> todo{root};
  while (!todo.empty()) {
    const pid_t p = todo.back();
    todo.pop_back();
    for (pid_t c : children[p]) {
      out.push_back(c);
      todo.push_back(c);
    }
  }
  return out;
}

/// SIGTERM to the group and to every descendant, SIGKILL after `grace_s` to those and to any
/// descendant that appeared meanwhile, then reaps the leader. Returns its status.
int end_group(pid_t pid, double grace_s) {
  int status = 0;
  std::vector<pid_t> below = descendants(pid);
  ::kill(-pid, SIGTERM);
  for (pid_t d : below) ::kill(d, SIGTERM);
  const auto t0 = Clock::now();
  bool gone = false;
  while (!gone && seconds_since(t0) < grace_s) {
    for (pid_t d : descendants(pid))
      if (std::find(below.begin(), below.end(), d) == below.end()) below.push_back(d);
    gone = wait_for(pid, std::min(0.2, grace_s), status);
  }
  if (!gone) {
    for (pid_t d : descendants(pid))
      if (std::find(below.begin(), below.end(), d) == below.end()) below.push_back(d);
  }
  ::kill(-pid, SIGKILL);  // also ends stragglers left in the group after the leader exited
  for (pid_t d : below) ::kill(d, SIGKILL);
  if (!gone)
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
  return status;
}

}  // namespace

std::string LaunchResult::describe() const {
  switch (end) {
    case End::Exited: return fmt::format("exit code {}", exit_code);
    case End::Signaled: return fmt::format("killed by signal {} ({})", signal, ::strsignal(signal));
    case End::TimedOut: return fmt::format("timed out (limit {} s)", format_seconds(timeout_s));
    case End::Interrupted: return fmt::format("interrupted by signal {} ({})", signal, ::strsignal(signal));
    case End::FailedToStart: return "could not start: " + start_error;
  }
  return "unknown";
}

namespace {

/// Everything the child needs, built before fork: the child only calls async-signal-safe functions.
struct ChildPlan {
  std::vector<std::string> env_strings;
  std::vector<char*> argv, envp;
  std::string in_path, out_path, err_path, cwd;
  bool search_path = false;
};

ChildPlan plan_child(const LaunchSpec& spec, char* const* base_env) {
  ChildPlan c;
  for (const auto& a : spec.argv) c.argv.push_back(const_cast<char*>(a.c_str()));
  c.argv.push_back(nullptr);
  for (char* const* e = base_env; e && *e; ++e) {
    const std::string_view entry(*e);
    const std::string name(entry.substr(0, entry.find('=')));
    if (!spec.env_add.count(name)) c.env_strings.emplace_back(entry);
  }
  for (const auto& [k, v] : spec.env_add) c.env_strings.push_back(k + "=" + v);
  for (auto& s : c.env_strings) c.envp.push_back(s.data());
  c.envp.push_back(nullptr);
  c.in_path = spec.stdin_path.string();
  c.out_path = spec.stdout_path.string();
  c.err_path = spec.stderr_path.string();
  c.cwd = spec.cwd.string();
  c.search_path = spec.argv[0].find('/') == std::string::npos;
  return c;
}

/// In the child: its own process group, the redirections, the directory, then exec. Reports a
/// failing stage through `fd` (and exits) instead of returning.
[[noreturn]] void exec_child(const ChildPlan& c, int fd, const sigset_t& old_mask) {
  ::setpgid(0, 0);
  ::pthread_sigmask(SIG_SETMASK, &old_mask, nullptr);
  const auto redirect = [&](const std::string& path, int flags, int target, Stage stage) {
    if (path.empty()) return;
    const int f = ::open(path.c_str(), flags, 0644);
    if (f < 0 || ::dup2(f, target) < 0) child_fail(fd, stage);
    ::close(f);
  };
  redirect(c.in_path, O_RDONLY, STDIN_FILENO, Stage::Stdin);
  redirect(c.out_path, O_WRONLY | O_CREAT | O_TRUNC, STDOUT_FILENO, Stage::Stdout);
  redirect(c.err_path, O_WRONLY | O_CREAT | O_TRUNC, STDERR_FILENO, Stage::Stderr);
  if (!c.cwd.empty() && ::chdir(c.cwd.c_str()) != 0) child_fail(fd, Stage::Cwd);
  if (c.search_path)
    ::execvpe(c.argv[0], c.argv.data(), c.envp.data());
  else
    ::execve(c.argv[0], c.argv.data(), c.envp.data());
  child_fail(fd, Stage::Exec);
}

/// "cannot open PATH: reason" for the stage the child reported.
std::string start_failure(const ChildFailure& failure, const ChildPlan& c, const std::string& program) {
  switch (static_cast<Stage>(failure.stage)) {
    case Stage::Stdin: return "cannot open " + c.in_path + ": " + std::strerror(failure.err);
    case Stage::Stdout: return "cannot open " + c.out_path + ": " + std::strerror(failure.err);
    case Stage::Stderr: return "cannot open " + c.err_path + ": " + std::strerror(failure.err);
    case Stage::Cwd: return "cannot enter " + c.cwd + ": " + std::strerror(failure.err);
    default: return "cannot execute " + program + ": " + std::strerror(failure.err);
  }
}

/// Waits for the started child: its exit, the time limit, or a held SIGINT/SIGTERM/SIGHUP
/// (both end its whole group); calls on_tick on the way.
void wait_child(pid_t pid, const LaunchSpec& spec, const sigset_t& held, Clock::time_point t0, LaunchResult& res) {
  double next_tick = spec.tick_s > 0 ? spec.tick_s : 1.0;
  int status = 0;
  for (;;) {
    const pid_t r = ::waitpid(pid, &status, WNOHANG);
    if (r == pid) {
      res.end = WIFEXITED(status) ? LaunchResult::End::Exited : LaunchResult::End::Signaled;
      if (WIFEXITED(status)) res.exit_code = WEXITSTATUS(status);
      if (WIFSIGNALED(status)) res.signal = WTERMSIG(status);
      return;
    }
    const double elapsed = seconds_since(t0);
    if (spec.timeout_s > 0 && elapsed >= spec.timeout_s) {
      end_group(pid, spec.kill_grace_s);
      res.end = LaunchResult::End::TimedOut;
      res.timeout_s = spec.timeout_s;
      return;
    }
    if (spec.on_tick && elapsed >= next_tick) {
      spec.on_tick(elapsed);
      next_tick += spec.tick_s > 0 ? spec.tick_s : 1.0;
    }
    double wait_s = 0.1;
    if (spec.timeout_s > 0) wait_s = std::min(wait_s, std::max(0.001, spec.timeout_s - elapsed));
    timespec ts{0, static_cast<long>(wait_s * 1e9)};
    siginfo_t info;
    const int sig = ::sigtimedwait(&held, &info, &ts);
    if (sig == SIGINT || sig == SIGTERM || sig == SIGHUP) {
      end_group(pid, spec.kill_grace_s);
      res.end = LaunchResult::End::Interrupted;
      res.signal = sig;
      return;
    }
  }
}

}  // namespace

LaunchResult run_process(const LaunchSpec& spec, char* const* base_env) {
  if (spec.argv.empty()) throw std::invalid_argument("run_process: empty argv");
  const ChildPlan plan = plan_child(spec, base_env);
  LaunchResult res;
  int pipefd[2];
  if (::pipe2(pipefd, O_CLOEXEC) != 0) {
    res.start_error = std::string("pipe: ") + std::strerror(errno);
    return res;
  }
  sigset_t held, old_mask;
  sigemptyset(&held);
  for (int s : {SIGCHLD, SIGINT, SIGTERM, SIGHUP}) sigaddset(&held, s);
  ::pthread_sigmask(SIG_BLOCK, &held, &old_mask);
  const auto t0 = Clock::now();
  const pid_t pid = ::fork();
  if (pid < 0) {
    res.start_error = std::string("fork: ") + std::strerror(errno);
    ::close(pipefd[0]);
    ::close(pipefd[1]);
    ::pthread_sigmask(SIG_SETMASK, &old_mask, nullptr);
    return res;
  }
  if (pid == 0) {
    ::close(pipefd[0]);
    sigset_t child_mask = old_mask;  // never the caller's holds (InterruptHold): the child must see them
    for (int s : {SIGCHLD, SIGINT, SIGTERM, SIGHUP}) sigdelset(&child_mask, s);
    exec_child(plan, pipefd[1], child_mask);
  }
  ::setpgid(pid, pid);  // also here, so the group exists before we might signal it
  ::close(pipefd[1]);
  ChildFailure failure;
  ssize_t got;
  while ((got = ::read(pipefd[0], &failure, sizeof failure)) < 0 && errno == EINTR) {
  }
  ::close(pipefd[0]);
  if (got == static_cast<ssize_t>(sizeof failure)) {  // the child reported a failed stage and exited
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    ::pthread_sigmask(SIG_SETMASK, &old_mask, nullptr);
    res.start_error = start_failure(failure, plan, spec.argv[0]);
    res.elapsed_s = seconds_since(t0);
    return res;
  }
  wait_child(pid, spec, held, t0, res);
  res.elapsed_s = seconds_since(t0);
  // Drop a SIGCHLD still pending from this child before restoring the caller's mask.
  sigset_t chld;
  sigemptyset(&chld);
  sigaddset(&chld, SIGCHLD);
  timespec zero{0, 0};
  while (::sigtimedwait(&chld, nullptr, &zero) == SIGCHLD) {
  }
  ::pthread_sigmask(SIG_SETMASK, &old_mask, nullptr);
  return res;
}

InterruptHold::InterruptHold() {
  sigset_t held;
  sigemptyset(&held);
  for (int s : {SIGINT, SIGTERM, SIGHUP}) sigaddset(&held, s);
  ::pthread_sigmask(SIG_BLOCK, &held, &old_);
}

InterruptHold::~InterruptHold() { ::pthread_sigmask(SIG_SETMASK, &old_, nullptr); }

std::string file_tail(const fs::path& path, std::size_t max_lines, std::size_t max_bytes) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return "";
  in.seekg(0, std::ios::end);
  const std::streamoff size = in.tellg();
  const std::streamoff start = std::max<std::streamoff>(0, size - static_cast<std::streamoff>(max_bytes));
  in.seekg(start);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
  std::size_t pos = text.size();
  for (std::size_t lines = 0; lines < max_lines; ++lines) {
    const std::size_t nl = pos == 0 ? std::string::npos : text.rfind('\n', pos - 1);
    if (nl == std::string::npos) return text;
    pos = nl;
  }
  return text.substr(pos + 1);
}

int online_cpus() noexcept {
  const long n = ::sysconf(_SC_NPROCESSORS_ONLN);
  return n > 0 ? static_cast<int>(n) : 1;
}

fs::path self_exe_dir() {
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  return ec ? fs::path{} : exe.parent_path();
}

}  // namespace railkit
