// The abort protocol of asynchronous backends (bench/poll.hpp) on a fake communicator: every
// error leaves only after every communicator is aborted, the abort always runs on the thread that
// polls (never on the watchdog's), and the real Watchdog writes its report, waits a bounded time
// for that abort, and exits with the timeout code.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "bench/lone_bootstrap.hpp"
#include "bench/poll.hpp"
#include "bench/watchdog.hpp"

using namespace railkit::bench;
using railkit::CudaError;
using railkit::NcclError;
using railkit::TimeoutError;

namespace {

/// A communicator that never finishes unless told, with a scripted asynchronous error; records
/// every abort and the thread it ran on.
class FakeComms final : public Pollable {
 public:
  bool finished() override {
    ++polls;
    if (cuda_error_at > 0 && polls >= cuda_error_at) throw CudaError("cudaStreamQuery: an illegal memory access");
    return finish_at > 0 && polls >= finish_at;
  }
  std::string async_error() override { return error_at > 0 && polls >= error_at ? "remote process exited" : ""; }
  void abort_all() noexcept override {
    std::lock_guard lk(mu);
    abort_threads.push_back(std::this_thread::get_id());
  }
  std::vector<std::thread::id> aborts() {
    std::lock_guard lk(mu);
    return abort_threads;
  }

  int polls = 0;
  int finish_at = 0;      ///< finished() from this poll on (0: never)
  int error_at = 0;       ///< asynchronous error from this poll on (0: never)
  int cuda_error_at = 0;  ///< finished() throws from this poll on (0: never)

 private:
  std::mutex mu;
  std::vector<std::thread::id> abort_threads;
};

}  // namespace

TEST(Poll, FinishedWaitsWithoutAborting) {
  FakeComms c;
  c.finish_at = 5;
  poll_until_finished(c, "all_reduce", 0, nullptr);
  EXPECT_EQ(c.polls, 5);
  EXPECT_TRUE(c.aborts().empty());
}

TEST(Poll, AsyncErrorAbortsEveryCommunicatorBeforeItLeaves) {
  FakeComms c;
  c.error_at = 3;
  try {
    poll_until_finished(c, "all_reduce", 0, nullptr);
    FAIL() << "no error";
  } catch (const NcclError& e) {
    EXPECT_NE(std::string(e.what()).find("all_reduce: asynchronous NCCL error: remote process exited"), std::string::npos)
        << e.what();
    ASSERT_EQ(c.aborts().size(), 1u);  // aborted before the exception reached the caller
  }
}

TEST(Poll, CudaErrorAbortsToo) {
  FakeComms c;
  c.cuda_error_at = 2;
  EXPECT_THROW(poll_until_finished(c, "all_reduce", 0, nullptr), CudaError);
  EXPECT_EQ(c.aborts().size(), 1u);
}

TEST(Poll, DeadlineAbortsAndNamesTheWait) {
  FakeComms c;
  const auto t0 = std::chrono::steady_clock::now();
  try {
    poll_until_finished(c, "ncclCommFinalize", 0.2, nullptr);
    FAIL() << "no timeout";
  } catch (const TimeoutError& e) {
    EXPECT_NE(std::string(e.what()).find("ncclCommFinalize did not complete within 0.2 s"), std::string::npos) << e.what();
  }
  EXPECT_GE(std::chrono::steady_clock::now() - t0, std::chrono::milliseconds(200));
  EXPECT_EQ(c.aborts().size(), 1u);
}

TEST(Poll, AbortOnErrorAbortsOnceForAnyEscapingError) {
  FakeComms c;
  EXPECT_THROW(abort_on_error(c, [] { throw NcclError("ncclGroupEnd: unhandled system error"); }), NcclError);
  EXPECT_EQ(c.aborts().size(), 1u);
  // An abort the signal already did is not repeated.
  EXPECT_THROW(abort_on_error(c, [] { throw AbortedError("stopped"); }), AbortedError);
  EXPECT_EQ(c.aborts().size(), 1u);
}

TEST(Poll, TheWatchdogsSignalIsHonouredOnThePollingThread) {
  FakeComms c;
  AbortSignal signal;
  const std::thread::id owner = std::this_thread::get_id();
  std::atomic<bool> acked_after_abort{false};
  std::thread watchdog([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    signal.request();  // the watchdog never aborts anything itself
    acked_after_abort = signal.wait_acknowledged(10) && c.aborts().size() == 1;
  });
  EXPECT_THROW(poll_until_finished(c, "all_reduce 1048576 B", 0, &signal), AbortedError);
  watchdog.join();
  const auto aborts = c.aborts();
  ASSERT_EQ(aborts.size(), 1u);
  EXPECT_EQ(aborts[0], owner);
  EXPECT_TRUE(acked_after_abort) << "the acknowledgement came before the abort, or never";
  EXPECT_TRUE(signal.acknowledged());
}

TEST(Poll, BoundedWaitWhenNobodyAcknowledges) {
  AbortSignal signal;
  signal.request();
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_FALSE(signal.wait_acknowledged(0.1));
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(5));
  EXPECT_DOUBLE_EQ(Watchdog::bounded_wait_s(1), 2);
  EXPECT_DOUBLE_EQ(Watchdog::bounded_wait_s(8), 4);
  EXPECT_DOUBLE_EQ(Watchdog::bounded_wait_s(3600), 10);
}

namespace {

std::string read_all(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

// The real watchdog and a fake communicator in one process: the owner thread polls, the
// watchdog fires after 1 s, the owner aborts (on its own thread) and acknowledges, the report is
// written, and the process exits 4. The child appends what happened to a file, in order.
TEST(PollDeathTest, WatchdogReportsThenOwnerAbortsThenExit4) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  // One name for the parent and the re-executed child (threadsafe death tests run a new process).
  const std::string log = ::testing::TempDir() + "railkit-poll-death-test.log";
  std::remove(log.c_str());
  EXPECT_EXIT(
      {
        const auto boot = make_lone_bootstrap("node-a");
        const std::thread::id owner = std::this_thread::get_id();
        struct Recording final : public Pollable {
          std::string path;
          std::thread::id owner;
          bool finished() override { return false; }
          std::string async_error() override { return {}; }
          void abort_all() noexcept override {
            std::ofstream(path, std::ios::app) << (std::this_thread::get_id() == owner ? "abort on owner\n"
                                                                                       : "abort on another thread\n");
          }
        } comms;
        comms.path = log;
        comms.owner = owner;
        Watchdog wd(*boot, 1, [&](const TimeoutReport& r) {
          std::ofstream(log, std::ios::app) << "report: " << r.message << "\n";
        });
        wd.enter(OpPoint{"all_reduce", 1048576, 7, false});
        try {
          poll_until_finished(comms, "all_reduce", 0, &wd.signal());
        } catch (const AbortedError&) {
          wd.wait_for_exit();  // the watchdog exits once it has the acknowledgement
        }
        std::ofstream(log, std::ios::app) << "returned\n";
        std::_Exit(0);
      },
      ::testing::ExitedWithCode(4), "");
  const std::string text = read_all(log);
  EXPECT_NE(text.find("abort on owner\n"), std::string::npos) << text;
  EXPECT_EQ(text.find("abort on another thread"), std::string::npos) << text;
  EXPECT_NE(text.find("report: timeout: all_reduce 1048576 B iteration 7 did not complete within 1 s"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("returned"), std::string::npos) << text;
  std::remove(log.c_str());
}

// The owner is stuck where it cannot poll (a blocking NCCL call): the watchdog still reports and
// exits 4 after its bounded wait.
TEST(PollDeathTest, WatchdogExitsWhenTheOwnerCannotAcknowledge) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_EXIT(
      {
        const auto boot = make_lone_bootstrap("node-a");
        Watchdog wd(*boot, 1, [](const TimeoutReport& r) { std::fprintf(stderr, "REPORT %s\n", r.message.c_str()); });
        wd.enter(OpPoint{"NCCL communicator init", 0, -1, false});
        std::this_thread::sleep_for(std::chrono::seconds(60));
        std::_Exit(0);
      },
      ::testing::ExitedWithCode(4), "REPORT timeout: NCCL communicator init 0 B did not complete within 1 s");
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(20));
}
