#pragma once
// What a simulation run produced, before it is written as a railkit.sim/1 document.
// Rates are goodput (payload bits per second) unless named otherwise; every figure is simulated.
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "sim/scenario.hpp"

namespace railkit::sim {

/// One flow.
struct FlowResult {
  int id = 0;
  std::string src, dst;
  int priority = 0;
  double start_us = 0;
  std::uint64_t bytes = 0;              ///< 0: long-lived
  std::uint64_t delivered_bytes = 0;    ///< in order at the receiver
  double throughput_Gbps = 0;           ///< delivered / (completion or end - start)
  double steady_throughput_Gbps = 0;    ///< delivered in the steady window / its length
  double fair_share_Gbps = 0;           ///< max-min fair goodput if all flows were active at once
  std::optional<double> fct_us;         ///< completion time (sized flows that completed)
  std::uint64_t sent_packets = 0;
  std::uint64_t retransmitted_packets = 0;
  std::uint64_t out_of_sequence = 0;    ///< packets the receiver dropped (go-back-N)
  std::uint64_t timeouts = 0;
  std::uint64_t ecn_marked = 0;         ///< CE-marked packets received
  std::uint64_t cnps_sent = 0;          ///< by the receiver
  std::uint64_t cnps_received = 0;      ///< by the sender
  std::uint64_t rate_cuts = 0;
  std::uint64_t rate_increases = 0;     ///< timer and byte-counter increase events
  double final_rate_Gbps = 0;           ///< the reaction point's rate at the end (wire rate)
  double final_target_Gbps = 0;         ///< ... and its target rate
  double final_alpha = 0;               ///< ... and its alpha
};

/// One egress port (one direction of a link).
struct PortResult {
  std::string node, peer;
  int port = 0;
  bool host = false;                    ///< a NIC's port
  double rate_Gbps = 0;
  std::uint64_t tx_bytes = 0;
  std::uint64_t tx_packets = 0;
  double utilisation = 0;               ///< wire bytes / capacity over the run
  double steady_utilisation = 0;
  std::uint64_t queue_max_bytes = 0;
  double queue_mean_bytes = 0;
  double steady_queue_mean_bytes = 0;
  std::uint64_t ecn_marked = 0;
  std::uint64_t steady_ecn_marked = 0;  ///< in the steady window
  std::uint64_t steady_tx_packets = 0;
  std::uint64_t drops = 0;
  std::array<std::uint64_t, kPriorities> pause_tx{}, resume_tx{}, pause_rx{}, resume_rx{};
  std::uint64_t steady_pause_tx = 0;    ///< pause frames sent in the steady window, all priorities
  std::array<double, kPriorities> paused_us{};
};

/// Time series, one value per sample interval (the value over the interval ending at t_us).
struct SimSeries {
  std::vector<double> t_us;
  std::vector<std::string> flow_names;
  std::vector<std::vector<double>> flow_Gbps;      ///< delivered goodput
  std::vector<std::vector<double>> flow_cc_Gbps;   ///< reaction point rate at the sample
  std::vector<std::string> port_names;
  std::vector<std::vector<double>> port_queue_bytes;  ///< mean queue over the interval
  std::vector<std::vector<double>> port_pause_tx;     ///< pause frames sent in the interval
  std::vector<std::vector<double>> port_pause_rx;     ///< pause frames received
};

/// Sums over the fabric.
struct SimTotals {
  std::uint64_t packet_hops = 0;        ///< frames serialized on any link (every kind)
  std::uint64_t drops = 0;
  std::uint64_t ecn_marked = 0;
  std::uint64_t cnps = 0;
  std::uint64_t pause_tx = 0;
  std::uint64_t resume_tx = 0;
  std::uint64_t steady_pause_tx = 0;
  std::uint64_t retransmitted_packets = 0;
  std::uint64_t timeouts = 0;
  double goodput_Gbps = 0;              ///< sum of delivered / duration
  double steady_goodput_Gbps = 0;
  double jain_steady = 1;               ///< Jain's index of the steady throughputs of long-lived flows
};

inline constexpr const char* kDeadlockCycle = "cycle";
inline constexpr const char* kDeadlockPauseNeverClears = "pause_never_clears";

/// A PFC deadlock found while the run went on (sim/deadlock.hpp); the run stopped there.
struct DeadlockFinding {
  std::string kind;                ///< kDeadlockCycle or kDeadlockPauseNeverClears
  std::int64_t at_ps = 0;          ///< when it was found: where the run stopped
  std::int64_t since_ps = 0;       ///< since when none of the named pauses has drained
  std::vector<std::string> ports;  ///< the paused egress ports, "node:port->peer prio P" (a cycle in its order)
  std::string detail;              ///< one sentence: why it is a deadlock
};

/// A whole run.
struct SimResult {
  std::string name;
  std::uint64_t seed = 0;
  std::int64_t duration_ps = 0;         ///< simulated: the scenario's duration, or less when a deadlock stopped the run
  std::int64_t steady_from_ps = 0;
  std::uint64_t events = 0;
  double wall_s = 0;
  std::vector<FlowResult> flows;
  std::vector<PortResult> ports;
  SimTotals totals;
  SimSeries series;
  std::optional<DeadlockFinding> deadlock;  ///< set when a deadlock stopped the run

  /// The port `node:port` (e.g. "sw0:16"), or nullptr.
  const PortResult* find_port(const std::string& node, int port) const;
};

}  // namespace railkit::sim
