#include "bench/watchdog.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <iostream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "core/json_text.hpp"

namespace railkit::bench {
namespace {

std::int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

std::string describe(const OpPoint& at) {
  std::string s = fmt::format("{} {} B", at.phase, at.bytes);
  if (at.in_place) s += " in-place";
  if (at.iteration >= 0) s += fmt::format(" iteration {}", at.iteration);
  return s;
}

}  // namespace

Watchdog::Watchdog(Bootstrap& boot, double timeout_s, OnTimeout on_timeout)
    : boot_(boot), timeout_s_(timeout_s), on_timeout_(std::move(on_timeout)) {
  if (timeout_s_ > 0) thread_ = std::thread([this] { loop(); });
}

Watchdog::~Watchdog() {
  {
    std::lock_guard lk(stop_mu_);
    stop_ = true;
  }
  stop_cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void Watchdog::set_on_timeout(OnTimeout on_timeout) {
  std::lock_guard lk(cb_mu_);
  on_timeout_ = std::move(on_timeout);
}

double Watchdog::bounded_wait_s(double timeout_s) { return std::min(10.0, std::max(2.0, 0.5 * timeout_s)); }

void Watchdog::wait_for_exit() {
  for (;;) std::this_thread::sleep_for(std::chrono::seconds(1));
}

void Watchdog::enter_watched(const OpPoint& at) {
  seq_.fetch_add(1, std::memory_order_relaxed);
  {
    std::lock_guard lk(mu_);
    at_ = at;
  }
  since_ns_.store(now_ns(), std::memory_order_relaxed);
  state_.store(1, std::memory_order_release);
}

void Watchdog::stall(const OpPoint& at) {
  {
    std::lock_guard lk(mu_);
    at_ = at;
  }
  since_ns_.store(now_ns(), std::memory_order_relaxed);
  state_.store(2, std::memory_order_release);
  for (;;) std::this_thread::sleep_for(std::chrono::seconds(1));
}

RankState Watchdog::snapshot(double now_s) const {
  RankState s;
  s.rank = boot_.rank();
  s.host = boot_.hosts().at(static_cast<size_t>(boot_.rank()));
  s.seq = seq_.load();
  const int st = state_.load();
  s.state = st == 2 ? "stalled" : (st == 1 ? "waiting" : "idle");
  {
    std::lock_guard lk(mu_);
    s.at = at_;
  }
  s.waited_s = now_s - static_cast<double>(since_ns_.load()) * 1e-9;
  return s;
}

void Watchdog::loop() {
  const auto period = std::chrono::milliseconds(timeout_s_ < 2 ? 10 : 50);
  for (;;) {
    {
      std::unique_lock lk(stop_mu_);
      if (stop_cv_.wait_for(lk, period, [this] { return stop_; })) return;
    }
    if (state_.load(std::memory_order_acquire) == 0) continue;
    const double now_s = static_cast<double>(now_ns()) * 1e-9;
    const double since_s = static_cast<double>(since_ns_.load()) * 1e-9;
    if (now_s - since_s >= timeout_s_) fire(now_s);
  }
}

void Watchdog::fire(double now_s) {
  // First: ask the owner of the communicators to abort them at its next poll (never from here).
  signal_.request();
  const RankState self = snapshot(now_s);
  const bool side = boot_.has_side_channel();
  if (boot_.rank() != 0) {
    if (side) boot_.post_status(encode(self));
    else
      std::cerr << fmt::format("railkit-bench: rank {} ({}): timeout after {:.0f} s in {} ({})\n", self.rank, self.host,
                               timeout_s_, describe(self.at), self.state);
    // Rank 0 reports and ends the job; exit anyway if it cannot (this rank's owner aborts its
    // communicators meanwhile).
    std::this_thread::sleep_for(std::chrono::duration<double>(std::min(10.0, std::max(3.0, timeout_s_))));
    std::cerr.flush();
    ::_exit(exit_code(ErrorCode::Timeout));
  }
  std::vector<RankState> others;
  if (side) {
    const double wait_s = bounded_wait_s(timeout_s_);
    for (const std::string& t : boot_.collect_statuses(wait_s)) {
      try {
        others.push_back(decode(t));
      } catch (...) {
        // a garbled status is treated as no answer
      }
    }
  }
  const TimeoutReport rep = make_report(timeout_s_, self, others, boot_.size(), boot_.hosts(), side);
  try {
    OnTimeout cb;
    {
      std::lock_guard lk(cb_mu_);
      cb = on_timeout_;
    }
    if (cb) cb(rep);
  } catch (const std::exception& e) {
    std::cerr << "railkit-bench: error while reporting the timeout: " << e.what() << "\n";
  }
  // The document is written; give the owner a bounded time to finish aborting its communicators.
  signal_.wait_acknowledged(bounded_wait_s(timeout_s_));
  std::cout.flush();
  std::cerr.flush();
  std::fflush(nullptr);
  ::_exit(exit_code(ErrorCode::Timeout));
}

std::string Watchdog::encode(const RankState& s) {
  return json_dump(nlohmann::json{{"rank", s.rank},          {"host", s.host},       {"seq", s.seq},
                        {"state", s.state},        {"phase", s.at.phase},  {"bytes", s.at.bytes},
                        {"iteration", s.at.iteration}, {"in_place", s.at.in_place}, {"waited_s", s.waited_s}});
}

RankState Watchdog::decode(const std::string& text) {
  const auto j = parse_json(text);
  RankState s;
  s.rank = j.at("rank").get<int>();
  s.host = j.at("host").get<std::string>();
  s.seq = j.at("seq").get<std::int64_t>();
  s.state = j.at("state").get<std::string>();
  s.at.phase = j.at("phase").get<std::string>();
  s.at.bytes = j.at("bytes").get<std::uint64_t>();
  s.at.iteration = j.at("iteration").get<int>();
  s.at.in_place = j.at("in_place").get<bool>();
  s.waited_s = j.at("waited_s").get<double>();
  return s;
}

TimeoutReport Watchdog::make_report(double timeout_s, const RankState& self, const std::vector<RankState>& others,
                                    int nranks, const std::vector<std::string>& hosts, bool side_channel) {
  TimeoutReport r;
  r.timeout_s = timeout_s;
  r.at = self.at;
  r.side_channel = side_channel;
  std::vector<bool> seen(static_cast<size_t>(nranks), false);
  r.ranks.push_back(self);
  seen[static_cast<size_t>(self.rank)] = true;
  for (const auto& o : others) {
    if (o.rank < 0 || o.rank >= nranks || seen[static_cast<size_t>(o.rank)]) continue;
    seen[static_cast<size_t>(o.rank)] = true;
    r.ranks.push_back(o);
  }
  std::int64_t max_seq = 0;
  for (const auto& s : r.ranks) max_seq = std::max(max_seq, s.seq);
  for (const auto& s : r.ranks)
    if (s.state == "stalled" || s.seq < max_seq) r.not_arrived.push_back(s.rank);
  if (side_channel) {
    for (int k = 0; k < nranks; ++k) {
      if (seen[static_cast<size_t>(k)]) continue;
      RankState silent;
      silent.rank = k;
      silent.host = k < static_cast<int>(hosts.size()) ? hosts[static_cast<size_t>(k)] : "";
      silent.state = "no answer";
      r.ranks.push_back(silent);
      r.not_arrived.push_back(k);
    }
  }
  std::sort(r.ranks.begin(), r.ranks.end(), [](const RankState& a, const RankState& b) { return a.rank < b.rank; });
  std::sort(r.not_arrived.begin(), r.not_arrived.end());
  std::string who;
  for (int k : r.not_arrived) {
    if (!who.empty()) who += ", ";
    who += fmt::format("{} ({})", k, k < static_cast<int>(hosts.size()) ? hosts[static_cast<size_t>(k)] : "?");
  }
  r.message = fmt::format("timeout: {} did not complete within {:.0f} s", describe(self.at), timeout_s);
  if (!who.empty()) r.message += "; ranks that had not arrived: " + who;
  else if (!side_channel) r.message += "; other ranks' positions unknown (MPI without MPI_THREAD_MULTIPLE)";
  return r;
}

}  // namespace railkit::bench
