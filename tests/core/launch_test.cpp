// core/launch: fork/exec without a shell, environment, redirection, timeouts that end the group.
#include "core/launch.hpp"
#include "test_util.hpp"

#include <signal.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

extern char** environ;

namespace railkit {
namespace {
namespace fs = std::filesystem;

using test::TempDir;

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

TEST(Launch, ExitCodeStdoutAndEnv) {
  TempDir d;
  LaunchSpec s;
  s.argv = {"/bin/sh", "-c", "echo \"$RK_A-$RK_B\"; echo oops >&2; exit 3"};
  s.env_add = {{"RK_A", "one"}, {"RK_B", "two words"}};
  s.stdout_path = d.path / "out.txt";
  s.stderr_path = d.path / "err.txt";
  const LaunchResult r = run_process(s, environ);
  EXPECT_EQ(r.end, LaunchResult::End::Exited);
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.describe(), "exit code 3");
  EXPECT_EQ(slurp(d.path / "out.txt"), "one-two words\n");
  EXPECT_EQ(slurp(d.path / "err.txt"), "oops\n");
}

TEST(Launch, ArgumentsAreNotInterpretedByAShell) {
  TempDir d;
  LaunchSpec s;
  s.argv = {"printf", "%s|", "a b", "$HOME", "*", ";"};  // found in PATH
  s.stdout_path = d.path / "out.txt";
  EXPECT_TRUE(run_process(s, environ).ok());
  EXPECT_EQ(slurp(d.path / "out.txt"), "a b|$HOME|*|;|");
}

TEST(Launch, EnvOverridesTheBase) {
  TempDir d;
  std::string base_entry = "RK_X=base";
  char* base[] = {base_entry.data(), nullptr};
  LaunchSpec s;
  s.argv = {"/usr/bin/env"};
  s.env_add = {{"RK_X", "added"}};
  s.stdout_path = d.path / "out.txt";
  EXPECT_TRUE(run_process(s, base).ok());
  EXPECT_EQ(slurp(d.path / "out.txt"), "RK_X=added\n");
}

TEST(Launch, FailedToStart) {
  LaunchSpec s;
  s.argv = {"/nonexistent/railkit-bench"};
  LaunchResult r = run_process(s, environ);
  EXPECT_EQ(r.end, LaunchResult::End::FailedToStart);
  EXPECT_NE(r.start_error.find("/nonexistent/railkit-bench"), std::string::npos) << r.start_error;
  s.argv = {"no-such-program-railkit"};
  EXPECT_EQ(run_process(s, environ).end, LaunchResult::End::FailedToStart);
  s.argv = {"/bin/true"};
  s.stdout_path = "/nonexistent/dir/out.txt";
  r = run_process(s, environ);
  EXPECT_EQ(r.end, LaunchResult::End::FailedToStart);
  EXPECT_NE(r.describe().find("/nonexistent/dir/out.txt"), std::string::npos);
  EXPECT_THROW(run_process(LaunchSpec{}, environ), std::invalid_argument);
}

TEST(Launch, KilledBySignal) {
  LaunchSpec s;
  s.argv = {"/bin/sh", "-c", "kill -9 $$"};
  const LaunchResult r = run_process(s, environ);
  EXPECT_EQ(r.end, LaunchResult::End::Signaled);
  EXPECT_EQ(r.signal, SIGKILL);
}

bool alive(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat;
  if (!std::getline(in, stat)) return false;
  const size_t close = stat.rfind(')');
  return close != std::string::npos && stat.size() > close + 2 && stat[close + 2] != 'Z';
}

TEST(Launch, TimeoutEndsTheGroupAndDescendantsInOtherGroups) {
  TempDir d;
  const fs::path pids = d.path / "pids.txt";
  LaunchSpec s;
  // A child that ignores SIGTERM, one in its own process group (as mpirun's ranks are), and the
  // leader: all must be gone after the timeout.
  s.argv = {"/bin/sh", "-c",
            "trap '' TERM; sleep 60 & echo $! > " + pids.string() +
                "; setsid sleep 60 & echo $! >> " + pids.string() + "; wait"};
  s.timeout_s = 0.5;
  s.kill_grace_s = 0.3;
  const auto t0 = std::chrono::steady_clock::now();
  const LaunchResult r = run_process(s, environ);
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_EQ(r.end, LaunchResult::End::TimedOut);
  EXPECT_EQ(r.describe(), "timed out (limit 0.5 s)");
  EXPECT_LT(took, 5.0);
  std::ifstream in(pids);
  int n = 0;
  for (pid_t p; in >> p; ++n) {
    for (int i = 0; i < 50 && alive(p); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(20));
    EXPECT_FALSE(alive(p)) << "pid " << p << " survived";
  }
  EXPECT_EQ(n, 2);
}

TEST(Launch, Ticks) {
  LaunchSpec s;
  s.argv = {"/bin/sleep", "0.35"};
  s.tick_s = 0.1;
  int ticks = 0;
  s.on_tick = [&](double) { ++ticks; };
  EXPECT_TRUE(run_process(s, environ).ok());
  EXPECT_GE(ticks, 2);
}

TEST(Launch, StdinIsDevNull) {
  LaunchSpec s;
  s.argv = {"/bin/sh", "-c", "read x && exit 1; exit 0"};
  EXPECT_TRUE(run_process(s, environ).ok());
}

TEST(Launch, InterruptBetweenLaunchesEndsTheNextOneAndChildrenAreNotHeld) {
  TempDir d;
  LaunchSpec s;
  s.argv = {"/bin/sh", "-c", "grep '^SigBlk' /proc/self/status"};
  s.stdout_path = d.path / "mask.txt";
  {
    const InterruptHold hold;
    ASSERT_EQ(::raise(SIGINT), 0);  // held: this process lives on, the signal pending
    LaunchSpec sleeper;
    sleeper.argv = {"/bin/sleep", "5"};
    const auto t0 = std::chrono::steady_clock::now();
    const LaunchResult r = run_process(sleeper, environ);
    EXPECT_EQ(r.end, LaunchResult::End::Interrupted);
    EXPECT_EQ(r.signal, SIGINT);
    EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 2.0);
    ASSERT_TRUE(run_process(s, environ).ok());  // a child started under the hold
  }
  // SigBlk is a hex mask: bit (signal - 1). The child must see SIGINT, SIGTERM and SIGHUP.
  const std::string line = slurp(d.path / "mask.txt");
  ASSERT_EQ(line.rfind("SigBlk:", 0), 0u) << line;
  const unsigned long long blocked = std::stoull(line.substr(7), nullptr, 16);
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) EXPECT_EQ(blocked & (1ull << (sig - 1)), 0u) << sig;
}

TEST(Launch, FileTail) {
  TempDir d;
  {
    std::ofstream out(d.path / "f.txt");
    out << "one\ntwo\nthree\nfour\n";
  }
  EXPECT_EQ(file_tail(d.path / "f.txt", 2), "three\nfour");
  EXPECT_EQ(file_tail(d.path / "f.txt", 10), "one\ntwo\nthree\nfour");
  EXPECT_EQ(file_tail(d.path / "f.txt", 10, 9), "ree\nfour");
  EXPECT_EQ(file_tail(d.path / "missing.txt", 2), "");
  EXPECT_GE(online_cpus(), 1);
  EXPECT_FALSE(self_exe_dir().empty());
}

}  // namespace
}  // namespace railkit
