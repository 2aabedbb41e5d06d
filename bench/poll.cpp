#include "bench/poll.hpp"

#include <chrono>
#include <thread>

#include <fmt/format.h>

namespace railkit::bench {

void AbortSignal::acknowledge() {
  {
    std::lock_guard lk(mu_);
    acknowledged_ = true;
  }
  cv_.notify_all();
}

bool AbortSignal::acknowledged() const {
  std::lock_guard lk(mu_);
  return acknowledged_;
}

bool AbortSignal::wait_acknowledged(double timeout_s) {
  std::unique_lock lk(mu_);
  return cv_.wait_for(lk, std::chrono::duration<double>(timeout_s), [this] { return acknowledged_; });
}

void poll_until_finished(Pollable& p, const std::string& what, double deadline_s, AbortSignal* signal) {
  const auto start = std::chrono::steady_clock::now();
  abort_on_error(p, [&] {
    for (;;) {
      if (signal && signal->requested()) {
        p.abort_all();
        signal->acknowledge();
        throw AbortedError(fmt::format("{}: aborted at the watchdog's request", what));
      }
      if (p.finished()) return;
      if (const std::string e = p.async_error(); !e.empty())
        throw NcclError(fmt::format("{}: asynchronous NCCL error: {}", what, e));
      if (deadline_s > 0 &&
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() > deadline_s)
        throw TimeoutError(fmt::format("{} did not complete within {:g} s", what, deadline_s));
      std::this_thread::yield();
    }
  });
}

}  // namespace railkit::bench
