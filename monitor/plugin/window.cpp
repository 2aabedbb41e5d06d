// Aggregation into a window (window.hpp): linear lookups over at most 64 or 256 entries, no
// allocation; the median is computed by the writer over a copy of the reservoir.
#include "monitor/plugin/window.hpp"

#include <algorithm>

namespace railkit::monitor_plugin {

const char* timing_name(Timing t) noexcept {
  constexpr const char* kNames[] = {"kernel", "proxy", "enqueue"};
  return kNames[static_cast<int>(t)];
}

void TimeStats::add(double time_us, std::uint64_t random) noexcept {
  if (count == 0 || time_us < min_us) min_us = time_us;
  if (count == 0 || time_us > max_us) max_us = time_us;
  sum_us += time_us;
  if (count < kReservoir) {
    reservoir_us[count] = static_cast<float>(time_us);
  } else {
    const std::uint64_t slot = random % (std::uint64_t{count} + 1);  // reservoir sampling
    if (slot < kReservoir) reservoir_us[slot] = static_cast<float>(time_us);
  }
  ++count;
}

double TimeStats::p50_us() const noexcept {
  const int n = static_cast<int>(std::min<std::uint32_t>(count, kReservoir));
  if (n == 0) return 0;
  float copy[kReservoir];
  std::copy(reservoir_us, reservoir_us + n, copy);
  std::nth_element(copy, copy + n / 2, copy + n);
  const double hi = copy[n / 2];
  if (n % 2) return hi;
  const double lo = *std::max_element(copy, copy + n / 2);
  return (lo + hi) / 2;
}

namespace {

CollBucket* find_coll(Window& w, const Completed& c) noexcept {
  for (int i = 0; i < w.ncolls; ++i) {
    auto& b = w.colls[i];
    if (b.op == c.op && b.bytes == c.bytes && b.algo == c.algo && b.proto == c.proto && b.timing == c.timing) return &b;
  }
  if (w.ncolls == kMaxBuckets) return nullptr;
  auto& b = w.colls[w.ncolls++];
  b = CollBucket{};
  b.op = c.op;
  b.bytes = c.bytes;
  b.algo = c.algo;
  b.proto = c.proto;
  b.timing = c.timing;
  b.channels = c.channels;
  return &b;
}

P2pBucket* find_p2p(Window& w, const Completed& c) noexcept {
  for (int i = 0; i < w.np2p; ++i) {
    auto& b = w.p2p[i];
    if (b.op == c.op && b.peer == c.peer && b.bytes == c.bytes && b.timing == c.timing) return &b;
  }
  if (w.np2p == kMaxBuckets) return nullptr;
  auto& b = w.p2p[w.np2p++];
  b = P2pBucket{};
  b.op = c.op;
  b.peer = c.peer;
  b.bytes = c.bytes;
  b.timing = c.timing;
  return &b;
}

}  // namespace

void Window::add(const Completed& c, int max_samples, std::uint64_t random) noexcept {
  if (c.end_unix_ns > last_completion_unix_ns) last_completion_unix_ns = c.end_unix_ns;
  if (c.p2p) {
    P2pBucket* b = find_p2p(*this, c);
    if (!b) { ++dropped_events; return; }
    b->time.add(c.time_us, random);
    return;
  }
  CollBucket* b = find_coll(*this, c);
  if (!b) {
    ++dropped_events;
  } else {
    b->time.add(c.time_us, random);
    if (c.channels > b->channels) b->channels = c.channels;
  }
  if (nsamples < max_samples && nsamples < kMaxSamples) {
    samples[nsamples++] = Sample{c.op, c.seq, c.bytes, c.start_unix_ns, static_cast<float>(c.time_us)};
  } else {
    ++dropped_samples;
  }
}

void Window::add_proxy(int channel, int peer, bool send, std::uint64_t bytes, double busy_us) noexcept {
  for (int i = 0; i < nproxy; ++i) {
    auto& e = proxy[i];
    if (e.channel == channel && e.peer == peer && e.send == send) {
      ++e.ops;
      e.bytes += bytes;
      e.busy_us += busy_us;
      return;
    }
  }
  if (nproxy == kMaxProxy) { ++dropped_events; return; }
  proxy[nproxy++] = ProxyEntry{channel, peer, send, 1, bytes, busy_us};
}

void Window::reset(std::int64_t start_ns) noexcept {
  start_unix_ns = start_ns;
  ncolls = np2p = nsamples = nproxy = 0;
  for (auto& n : nics) n = NicEntry{};
  last_completion_unix_ns = 0;
  dropped_events = dropped_samples = callbacks = 0;
}

}  // namespace railkit::monitor_plugin
