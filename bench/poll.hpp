#pragma once
// How an asynchronous backend waits, and how another thread stops it. ncclCommAbort must not
// race a poll of the same communicator (nor a launch, nor a free), so the watchdog never aborts
// anything itself: it raises an AbortSignal, and the thread that drives the communicators sees
// it at its next poll, aborts them, acknowledges, and unwinds with AbortedError. Pure C++ (no
// CUDA, no NCCL), so the protocol runs in unit tests against a fake.
#include <atomic>
#include <condition_variable>
#include <mutex>
#include <string>

#include "core/error.hpp"

namespace railkit::bench {

/// Raised by the watchdog thread, honoured by the thread that owns the communicators.
class AbortSignal {
 public:
  /// Watchdog thread: asks the owner to abort at its next poll. Idempotent, never blocks.
  void request() noexcept { requested_.store(true, std::memory_order_release); }
  bool requested() const noexcept { return requested_.load(std::memory_order_acquire); }
  /// Owner thread: its communicators are aborted.
  void acknowledge();
  bool acknowledged() const;
  /// Watchdog thread: waits up to `timeout_s` for acknowledge(); true when it came.
  bool wait_acknowledged(double timeout_s);

 private:
  std::atomic<bool> requested_{false};
  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool acknowledged_ = false;
};

/// The owner unwound because the watchdog asked it to (code: timeout). The watchdog reports.
class AbortedError : public Error {
 public:
  explicit AbortedError(const std::string& m) : Error(ErrorCode::Timeout, m) {}
};

/// What one wait polls: the NCCL backend's streams and communicators, or a fake in tests.
class Pollable {
 public:
  virtual ~Pollable() = default;
  /// True when everything waited for is done. May throw (a CUDA error).
  virtual bool finished() = 0;
  /// A one-line description of an asynchronous error of any communicator, or empty.
  virtual std::string async_error() = 0;
  /// Aborts every communicator (and whatever keeps them alive, e.g. captured graphs).
  virtual void abort_all() noexcept = 0;
};

/// Polls `p` until finished(), yielding between polls, as nccl-tests' testStreamSynchronize.
/// Before any error leaves, every communicator is aborted (abort_all): on an asynchronous error
/// (then NcclError), past `deadline_s` seconds when it is > 0 (then TimeoutError naming `what`),
/// on a CUDA error from finished() (rethrown), and when `signal` is raised (then acknowledge
/// and AbortedError). `signal` may be null.
void poll_until_finished(Pollable& p, const std::string& what, double deadline_s, AbortSignal* signal);

/// Runs `f`; if anything escapes it, aborts every communicator of `p` first (unless the
/// signal already did) and rethrows.
template <typename F>
void abort_on_error(Pollable& p, F&& f) {
  try {
    f();
  } catch (const AbortedError&) {
    throw;
  } catch (...) {
    p.abort_all();
    throw;
  }
}

}  // namespace railkit::bench
