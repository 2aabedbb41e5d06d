#pragma once
// An Ethernet switch for RoCE: one shared buffer with per-port, per-priority ingress accounting;
// PFC XOFF/XON per ingress port and priority with headroom (mlx5's formula by default) and pause
// frames with quanta, refreshed while congestion lasts; egress queues per priority with ECN
// marking on the instantaneous queue (Kmin, Kmax, Pmax per queue); strict or DWRR scheduling
// across priorities; ECMP by a per-switch hash of the flow.
#include <array>
#include <cstdint>
#include <deque>
#include <string>
#include <vector>

#include "sim/engine.hpp"
#include "sim/node.hpp"
#include "sim/scenario.hpp"

namespace railkit::sim {

/// ECMP choice among `n` equal-cost ports for a flow hash at a switch with `salt`.
std::uint32_t ecmp_pick(std::uint32_t flow_hash, std::uint64_t salt, std::uint32_t n) noexcept;

/// What Switch::finalize checks, from the scenario alone and before anything is built: every
/// switch's buffer holds the PFC headroom of its ports plus 4 frames per port. Throws UsageError
/// naming switch.buffer_bytes.
void check_switch_buffers(const Scenario& s);

class Switch final : public Node {
 public:
  /// One port of the switch: its egress side, its priority queues and the accounting of the
  /// packets that arrived on it.
  struct Port {
    EgressPort eg;
    std::array<std::deque<Packet>, kPriorities> q;
    std::array<std::uint64_t, kPriorities> q_bytes{};
    std::array<EcnThresholds, kPriorities> ecn{};
    std::array<std::uint64_t, kPriorities> ing_shared{};  ///< bytes from this port in the shared pool
    std::array<std::uint64_t, kPriorities> ing_hdrm{};    ///< bytes from this port in its headroom
    std::array<bool, kPriorities> xoff{};                 ///< upstream paused by us
    std::array<std::int64_t, kPriorities> xoff_since{};   ///< when the pause now held began
    std::array<std::uint64_t, kPriorities> released{};    ///< packets from this port that left the switch
    std::array<std::uint32_t, kPriorities> xoff_gen{};
    std::uint64_t headroom_bytes = 0;
    std::vector<Packet> pending_pauses;                   ///< control frames to send first
    std::array<std::int64_t, kPriorities> deficit{};
    int rr = 0;
    bool fresh = true;
  };

  Switch(int id, std::string name, const SwitchSpec& spec, std::uint32_t mtu_bytes, Uniform rng);

  /// Adds a port towards `peer`'s port `peer_port`. Returns its index.
  std::uint16_t add_port(double rate_bps, std::int64_t delay_ps, Node* peer, std::uint16_t peer_port);
  /// routes[dst host] = ports on a shortest path to it.
  void set_routes(std::vector<std::vector<std::uint16_t>> routes) { routes_ = std::move(routes); }
  /// Replaces the ports towards host `dst` (any ports: a route that is not a shortest path too).
  void set_route(int dst, std::vector<std::uint16_t> ports) { routes_.at(static_cast<std::size_t>(dst)) = std::move(ports); }
  /// Sizes headroom and ECN per port once all ports exist. Throws UsageError naming
  /// switch.buffer_bytes when the buffer cannot hold the headroom.
  void finalize();

  void receive(Packet p, std::uint16_t in_port) override;
  void port_ready(std::uint16_t port) override;

  const std::string& name() const noexcept { return name_; }
  int id() const noexcept { return id_; }
  std::vector<Port>& ports() noexcept { return ports_; }
  const std::vector<Port>& ports() const noexcept { return ports_; }
  std::uint64_t shared_pool_bytes() const noexcept { return shared_pool_; }
  /// The XOFF threshold now (static, or alpha x free shared buffer).
  std::uint64_t threshold_bytes() const noexcept { return threshold(); }
  /// XON once an ingress queue is this far below the threshold.
  std::uint64_t xon_offset_bytes() const noexcept { return xon_offset_; }

 private:
  void enqueue(Packet& p, std::uint16_t out);
  void mark(Packet& p, Port& pt);
  void try_send(std::uint16_t port);
  void wake(std::uint16_t port);  ///< a pause on `port` may have ended
  int select(Port& pt, std::int64_t now);
  void release(const Packet& p);
  std::uint64_t threshold() const noexcept;
  void send_pause(std::uint16_t port, int prio, bool xoff);
  void refresh_pause(std::uint16_t port, std::uint8_t prio, std::uint32_t gen);

  int id_;
  std::string name_;
  const SwitchSpec* spec_;
  std::uint32_t mtu_frame_;
  Uniform rng_;
  std::uint64_t salt_;
  std::vector<Port> ports_;
  std::vector<std::vector<std::uint16_t>> routes_;
  std::uint64_t shared_pool_ = 0;
  std::uint64_t shared_used_ = 0;
  std::uint64_t xon_offset_ = 0;
};

}  // namespace railkit::sim
