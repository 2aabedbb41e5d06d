#pragma once
// A scenario's fabric built from NICs and switches, run on one Engine, and what it measured.
#include <cstdint>
#include <memory>
#include <vector>

#include "sim/engine.hpp"
#include "sim/nic.hpp"
#include "sim/result.hpp"
#include "sim/scenario.hpp"
#include "sim/switch.hpp"
#include "sim/topology.hpp"

namespace railkit::sim {

/// The nodes, links and flows of one run. Construct after the Engine, destroy before it.
class Network {
 public:
  /// Builds the fabric and schedules the flows' starts and the samples. Throws UsageError when
  /// the scenario cannot be built (a switch buffer smaller than its PFC headroom).
  Network(const Scenario& s, Engine& engine);

  /// Runs to the scenario's duration.
  void run();

  /// The measurements, once run() returned; `wall_s` is recorded as given.
  SimResult result(double wall_s);

 private:
  struct Sample {
    std::vector<std::uint64_t> delivered;  ///< per flow
    std::vector<double> cc_rate_bps;       ///< per flow
    std::vector<double> queue_integral;    ///< per port
    std::vector<std::uint64_t> pause_tx;   ///< per port, all priorities
    std::vector<std::uint64_t> pause_rx;
    std::vector<std::uint64_t> tx_bytes;
    std::vector<std::uint64_t> tx_packets;
    std::vector<std::uint64_t> ecn_marked;
  };

  void build_nodes();
  void sample();
  Sample take() const;
  std::vector<double> fair_shares() const;
  void fill_flows(SimResult& r) const;
  void fill_ports(SimResult& r) const;
  void fill_series(SimResult& r) const;

  const Scenario& s_;
  Engine& engine_;
  FabricGraph graph_;
  NicConfig nic_;
  std::vector<FlowState> flows_;
  std::vector<std::unique_ptr<Nic>> nics_;
  std::vector<std::unique_ptr<Switch>> switches_;
  std::vector<EgressPort*> ports_;       ///< every egress port: switch ports, then NIC ports
  std::vector<std::pair<int, int>> port_ids_;  ///< (node, port) of each
  std::int64_t interval_ps_ = 0;
  std::vector<std::int64_t> sample_t_;
  std::vector<Sample> samples_;
  Sample steady_;                         ///< at steady_from
  bool steady_taken_ = false;
};

/// Runs `s` on a fresh Engine and returns what it measured (wall time included).
SimResult run_scenario(const Scenario& s);

}  // namespace railkit::sim
