#pragma once
// A scenario's fabric built from NICs and switches, run on one Engine, and what it measured.
#include <cstdint>
#include <memory>
#include <ostream>
#include <vector>

#include "sim/deadlock.hpp"
#include "sim/engine.hpp"
#include "sim/nic.hpp"
#include "sim/result.hpp"
#include "sim/scenario.hpp"
#include "sim/switch.hpp"
#include "sim/topology.hpp"

namespace railkit::sim {

/// Tag of the Network constructor for flows added while it runs (no scenario flows, no samples).
struct OpenFlows {};

/// Sums over the fabric so far (every port and flow): the counters of SimTotals that need no
/// time window.
struct FabricTotals {
  std::uint64_t packet_hops = 0;
  std::uint64_t drops = 0;
  std::uint64_t ecn_marked = 0;
  std::uint64_t pause_tx = 0;  ///< XOFF frames, all priorities
  std::uint64_t cnps = 0;      ///< sent by receivers
  std::uint64_t retransmitted_packets = 0;
  std::uint64_t timeouts = 0;
};

/// The nodes, links and flows of one run. Construct after the Engine, destroy before it.
class Network {
 public:
  /// Builds the fabric and schedules the flows' starts, the samples and, with PFC on, the
  /// deadlock watch (sim/deadlock.hpp). Throws UsageError when the scenario cannot be built (a
  /// switch buffer smaller than its PFC headroom).
  Network(const Scenario& s, Engine& engine);

  /// Builds the fabric of `s` only (its flows and output settings are not used): flows come from
  /// add_flow() and post(); nothing is sampled; the caller runs the Engine. Throws like the above.
  Network(const Scenario& s, Engine& engine, OpenFlows);

  /// Open mode: adds a queue pair from host `src` to host `dst` at `priority` whose packets carry
  /// ECMP hash `hash` (ACKs and CNPs: `reverse_hash`), with no data yet. Returns its id. Grows
  /// the flow table: call it only where no NIC or switch handler is running (before the run or
  /// from an event the caller scheduled), or after reserve_flows() made room.
  std::uint32_t add_flow(int src, int dst, int priority, std::uint32_t hash, std::uint32_t reverse_hash);
  void reserve_flows(std::size_t n) { flows_.reserve(n); }
  /// Open mode: posts a message of `bytes` (> 0) on flow `f`; the listener hears when all posted
  /// data of the flow has been delivered in order. Same calling rule as add_flow.
  void post(std::uint32_t f, std::uint64_t bytes);
  /// Who hears of delivered messages (nullptr: nobody).
  void set_listener(DeliveryListener* l) noexcept;
  const FlowState& flow(std::uint32_t f) const { return flows_[f]; }
  std::size_t flow_count() const noexcept { return flows_.size(); }
  const FabricGraph& graph() const noexcept { return graph_; }
  /// Counters summed over ports and flows now.
  FabricTotals totals() const;

  /// Replaces switch node `node`'s ports towards host `dst`, in the switch and in graph(): routes
  /// shortest-path routing never makes (a detour after a link failure, a loop). Before run().
  void set_route(int node, int dst, std::vector<std::uint16_t> ports);

  /// Runs to the scenario's duration, or until the deadlock watch finds a deadlock.
  void run();

  /// The deadlock that stopped run(), if one did.
  const std::optional<DeadlockFinding>& deadlock() const noexcept { return deadlock_; }

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
  void watch();
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
  std::unique_ptr<DeadlockWatch> watch_;  ///< scenario mode with PFC on
  std::optional<DeadlockFinding> deadlock_;
  std::int64_t end_ps_ = 0;               ///< where run() stopped: the duration, or the deadlock
};

/// Scenarios this large (hosts, or flows) take seconds to build: run_scenario reports progress.
inline constexpr int kProgressHosts = 1024;
inline constexpr std::size_t kProgressFlows = 4096;

/// Runs `s` on a fresh Engine and returns what it measured (wall time included). With
/// `progress`, a scenario of kProgressHosts hosts or kProgressFlows flows or more says there
/// when it starts building, how long the build took and how long the run took.
SimResult run_scenario(const Scenario& s, std::ostream* progress = nullptr);

}  // namespace railkit::sim
