#pragma once
// The watchdog (-T): a thread that watches the main thread's current operation and ends the run
// when one takes longer than the timeout. It touches no communicator: it raises its AbortSignal
// (the main thread's next poll aborts the communicators and acknowledges), then rank 0 gathers
// every rank's position over the bootstrap's side channel (when MPI_THREAD_MULTIPLE is
// available), names the ranks that had not arrived, hands a report to the caller (who writes the
// results document), waits a bounded time for the acknowledgement, and exits with the timeout
// code. It never hangs forever.
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "bench/bootstrap.hpp"
#include "bench/poll.hpp"
#include "bench/types.hpp"

namespace railkit::bench {

/// Where a rank is. `phase` names what it does ("all_reduce", "check all_reduce", "control").
struct OpPoint {
  std::string phase;
  std::uint64_t bytes = 0;
  int iteration = -1;  ///< timed iteration, -1 outside the timed loop
  bool in_place = false;
};

struct RankState {
  int rank = 0;
  std::string host;
  std::int64_t seq = 0;   ///< operations entered so far
  std::string state;      ///< "waiting" (inside an operation), "stalled" (injected), "no answer"
  OpPoint at;
  double waited_s = 0;
};

struct TimeoutReport {
  double timeout_s = 0;
  OpPoint at;                     ///< rank 0's view
  std::vector<RankState> ranks;   ///< every rank that answered, plus "no answer" entries
  std::vector<int> not_arrived;   ///< ranks behind the others, stalled, or silent
  bool side_channel = false;
  std::string message;            ///< one line for the user
};

class Watchdog {
 public:
  using OnTimeout = std::function<void(const TimeoutReport&)>;
  /// timeout_s <= 0 disables the watchdog (enter/leave become counters only).
  /// `on_timeout` runs on rank 0's watchdog thread before the process exits with code 4; it must
  /// not touch a communicator (the owner aborts those when it sees signal()).
  Watchdog(Bootstrap& boot, double timeout_s, OnTimeout on_timeout = {});
  ~Watchdog();
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;

  /// Marks the start of an operation that must complete within the timeout (free when disabled).
  void enter(const OpPoint& at) {
    if (timeout_s_ > 0) enter_watched(at);
  }
  /// Marks its completion.
  void leave() {
    if (timeout_s_ > 0) state_.store(0, std::memory_order_release);
  }
  /// Marks this rank as stalled (fire drill) and blocks until the watchdog ends the process.
  [[noreturn]] void stall(const OpPoint& at);
  /// Replaces the report callback (the results document exists only once the run is set up).
  void set_on_timeout(OnTimeout on_timeout);
  /// Raised when the watchdog fires; the thread that owns the communicators polls it.
  AbortSignal& signal() { return signal_; }
  /// Called by the owner after unwinding with AbortedError: the watchdog reports and exits, so
  /// this thread only waits for that (and never returns).
  [[noreturn]] void wait_for_exit();
  /// How long rank 0's watchdog waits for the other ranks' statuses, and then for the owner's
  /// acknowledgement, before it goes on anyway: 2..10 s, half the timeout.
  static double bounded_wait_s(double timeout_s);

  /// Builds the report from rank 0's own position and the other ranks' statuses (a pure function).
  static TimeoutReport make_report(double timeout_s, const RankState& self, const std::vector<RankState>& others,
                                   int nranks, const std::vector<std::string>& hosts, bool side_channel);
  /// Status encoding on the side channel (one line of JSON).
  static std::string encode(const RankState& s);
  static RankState decode(const std::string& text);

 private:
  void enter_watched(const OpPoint& at);
  void loop();
  RankState snapshot(double now_s) const;
  [[noreturn]] void fire(double now_s);

  Bootstrap& boot_;
  double timeout_s_;
  std::mutex cb_mu_;           // guards on_timeout_
  OnTimeout on_timeout_;
  AbortSignal signal_;
  std::atomic<std::int64_t> seq_{0};
  std::atomic<int> state_{0};  // 0 idle, 1 in op, 2 stalled
  std::atomic<std::int64_t> since_ns_{0};
  mutable std::mutex mu_;      // guards at_
  OpPoint at_;
  std::mutex stop_mu_;
  std::condition_variable stop_cv_;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace railkit::bench
