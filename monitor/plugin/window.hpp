#pragma once
// One window of one communicator: fixed-size tables that completed collectives, point-to-point
// operations, proxy operations and NIC transfers are added into on NCCL's threads (no allocation,
// bounded time), and that the writer thread reads after swapping windows.
#include <cstdint>

#include "monitor/plugin/model.hpp"

namespace railkit::monitor_plugin {

inline constexpr int kMaxBuckets = 64;      ///< colls and p2p entries per window (contract)
inline constexpr int kReservoir = 64;       ///< times kept per bucket for the median
inline constexpr int kMaxSamples = 1024;    ///< the most RAILKIT_MONITOR_SAMPLES may ask for
inline constexpr int kMaxProxy = 256;       ///< (channel, peer, direction) entries per window
inline constexpr int kMaxNics = 32;         ///< net devices 0..31

/// How a collective's time was measured (model: README "Timing per collective").
enum class Timing : std::uint8_t { Kernel, Proxy, Enqueue };
const char* timing_name(Timing t) noexcept;

/// The time summary of a bucket: count, sum, min, max, and a reservoir sample for the median.
struct TimeStats {
  std::uint32_t count = 0;
  double sum_us = 0, min_us = 0, max_us = 0;
  float reservoir_us[kReservoir] = {};
  /// Adds one time; `random` picks the reservoir slot once it is full.
  void add(double time_us, std::uint64_t random) noexcept;
  /// Median of the reservoir (0 when empty).
  double p50_us() const noexcept;
};

/// Completed collectives of one (op, bytes, algo, proto, timing).
struct CollBucket {
  Op op = Op::Unknown;
  std::uint8_t algo = kUnknownName, proto = kUnknownName;
  Timing timing = Timing::Enqueue;
  int channels = 0;
  std::uint64_t bytes = 0;
  TimeStats time;
};

/// Completed point-to-point operations of one (op, peer, bytes, timing).
struct P2pBucket {
  Op op = Op::Unknown;
  int peer = -1;
  Timing timing = Timing::Enqueue;
  std::uint64_t bytes = 0;
  TimeStats time;
};

/// One completed collective kept with its own start (for alignment across ranks).
struct Sample {
  Op op = Op::Unknown;
  std::uint64_t seq = 0, bytes = 0;
  std::int64_t start_unix_ns = 0;
  float time_us = 0;
};

/// Proxy activity of one (channel, peer, direction).
struct ProxyEntry {
  int channel = 0, peer = 0;
  bool send = false;
  std::uint64_t ops = 0, bytes = 0;
  double busy_us = 0;
};

/// Net-plugin transfers of one device.
struct NicEntry {
  std::uint64_t bytes = 0, wrs = 0;
  double busy_us = 0;
};

/// One completed collective or p2p, as the recorder hands it to the window.
struct Completed {
  Op op = Op::Unknown;
  bool p2p = false;
  std::uint8_t algo = kUnknownName, proto = kUnknownName;
  int channels = 0, peer = -1;
  std::uint64_t seq = 0, bytes = 0;
  Timing timing = Timing::Enqueue;
  double time_us = 0;
  std::int64_t start_unix_ns = 0, end_unix_ns = 0;
};

/// The tables of one window. Reset by the writer after it wrote them.
struct Window {
  std::int64_t start_unix_ns = 0;
  int ncolls = 0, np2p = 0, nsamples = 0, nproxy = 0;
  CollBucket colls[kMaxBuckets];
  P2pBucket p2p[kMaxBuckets];
  Sample samples[kMaxSamples];
  ProxyEntry proxy[kMaxProxy];
  NicEntry nics[kMaxNics];
  std::int64_t last_completion_unix_ns = 0;
  std::uint64_t dropped_events = 0, dropped_samples = 0, callbacks = 0;

  /// Adds a completed operation; keeps at most `max_samples` samples. Counts drops when full.
  void add(const Completed& c, int max_samples, std::uint64_t random) noexcept;
  /// Adds one stopped proxy operation.
  void add_proxy(int channel, int peer, bool send, std::uint64_t bytes, double busy_us) noexcept;
  /// Empties the tables for the window starting at `start_ns`.
  void reset(std::int64_t start_ns) noexcept;
};

}  // namespace railkit::monitor_plugin
