#pragma once
// Rates between two samples and the derived signals (monitor/README.md, section 3): pure functions
// of the samples and the measured interval, so tests inject both.
#include <string>
#include <vector>

#include "monitor/node/sample.hpp"

namespace railkit::monitor {

/// A counter's change over one interval.
struct RateReading {
  std::string metric;  ///< the counter's family (railkit_node_rdma_counter_total ...)
  Labels labels;
  double delta = 0;       ///< exported units (raw / the counter's divisor)
  double rate_per_s = 0;  ///< delta / interval
};

/// The rates of one interval.
struct IntervalRates {
  double interval_s = 0;
  std::vector<RateReading> rates;
  std::vector<std::string> notes;  ///< counters that went backwards (reset, wrap): no rate for them
  /// The rate of a series; nullptr when it has none this interval.
  const RateReading* find(std::string_view metric, const Labels& labels) const;
};

/// Rates from `prev` to `cur` over cur.mono_s - prev.mono_s. A counter present in both whose value
/// did not go backwards gets a rate; one that went backwards gets none and a note; never a negative
/// rate. Throws std::invalid_argument when the interval is not positive.
IntervalRates compute_rates(const NodeSample& prev, const NodeSample& cur);

/// Thresholds of the derived signals (the flags of `railkit monitor node`).
struct SignalThresholds {
  double pause_ratio = 0.1;             ///< fraction of the interval a priority was paused
  double pause_frames_per_s = 10000;    ///< pause frames per second on a priority
  double cnp_per_s = 50000;             ///< np_cnp_sent or rp_cnp_handled per second
  double retransmit_per_s = 100;        ///< out_of_sequence + packet_seq_err + local_ack_timeout_err per second
  double rail_fraction = 0.5;           ///< a port below this fraction of the median tx rate ...
  double rail_min_Gbps = 1;             ///< ... while the median is over this (Gb/s, 1e9 bit/s)
};

/// One derived signal: holds (1) or judged clean (0). Signals that cannot be judged are left out.
struct Signal {
  std::string signal;   ///< pause_storm, cnp_surge, retransmit_surge, link_flap, pcie_downtrained, rail_rate_outlier
  std::string subject;  ///< netdev, "device/port", or PCI BDF
  bool holds = false;
  std::string evidence;  ///< the figure that decided, for people
};

/// The derived signals of the current sample (`rates` null before the second sample: then only
/// pcie_downtrained can be judged).
std::vector<Signal> derive_signals(const NodeSample& cur, const IntervalRates* rates, const SignalThresholds& t);

/// Bytes per second of each RDMA port and direction from port_xmit_data / port_rcv_data (4-byte words).
struct PortRate {
  std::string device, port, direction;
  double bytes_per_s = 0;
};
std::vector<PortRate> port_byte_rates(const IntervalRates& rates);

}  // namespace railkit::monitor

namespace railkit::monitor {
/// Whether a link is judged: a NIC's speed (both known) or any function's width (both known).
bool link_judged(const PcieLink& l);
/// A judged link below its capability (a GPU's speed is not judged: it drops when idle).
bool link_downtrained(const PcieLink& l);
}  // namespace railkit::monitor
