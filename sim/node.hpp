#pragma once
// Layer-2 packets, nodes and the egress side of a link, shared by NICs and switches. A packet is
// a small descriptor (no payload bytes, no ns-3 Packet): its wire size carries the RoCEv2 header
// sizes of sim/roce.hpp. A link direction is an EgressPort: it serializes one packet at a time at
// its rate and delivers it to the peer after the propagation delay; PFC pause frames received on a
// port stop its priorities until the pause expires or a resume arrives.
#include <array>
#include <cstdint>

#include "sim/scenario.hpp"

namespace railkit::sim {

enum class PacketKind : std::uint8_t { Data, Ack, Nak, Cnp, Pause };

/// One frame in flight or in a queue.
struct Packet {
  std::uint64_t psn = 0;           ///< Data: sequence number; Ack/Nak: next expected sequence number
  std::uint32_t flow = 0;          ///< flow (queue pair) index
  std::uint32_t dst = 0;           ///< destination host (routing)
  std::uint32_t hash = 0;          ///< ECMP hash of the flow's 5-tuple
  std::uint32_t wire_bytes = 0;    ///< bytes on the wire, preamble and inter-frame gap included
  std::uint32_t payload_bytes = 0; ///< Data: payload
  std::uint16_t in_port = 0;       ///< switch bookkeeping: the port it arrived on
  std::uint16_t pause_quanta = 0;  ///< Pause: quanta (0 = resume)
  PacketKind kind = PacketKind::Data;
  std::uint8_t priority = 0;
  bool ce = false;                 ///< ECN congestion experienced
  bool in_headroom = false;        ///< switch bookkeeping: admitted into PFC headroom
};

/// Buffer bytes a packet occupies in a switch: the frame without preamble and gap.
constexpr std::uint32_t buffer_bytes(const Packet& p) noexcept { return p.wire_bytes - kWireGapBytes; }

/// A NIC or a switch.
class Node {
 public:
  virtual ~Node() = default;
  /// `p` arrived completely on `port`.
  virtual void receive(Packet p, std::uint16_t port) = 0;
  /// `port` finished serializing its packet: send the next one.
  virtual void port_ready(std::uint16_t port) = 0;
};

/// A queue length over time: current, maximum, and its time integral for exact averages.
struct QueueTrack {
  std::uint64_t bytes = 0;
  std::uint64_t max_bytes = 0;
  double integral = 0;        ///< byte x picoseconds up to last_ps
  std::int64_t last_ps = 0;

  void add(std::int64_t now_ps, std::int64_t delta) {
    integral += static_cast<double>(bytes) * static_cast<double>(now_ps - last_ps);
    last_ps = now_ps;
    bytes = static_cast<std::uint64_t>(static_cast<std::int64_t>(bytes) + delta);
    if (bytes > max_bytes) max_bytes = bytes;
  }
  double integral_at(std::int64_t now_ps) const {
    return integral + static_cast<double>(bytes) * static_cast<double>(now_ps - last_ps);
  }
};

/// Counters of one egress port (one direction of a link).
struct PortCounters {
  std::uint64_t tx_bytes = 0;      ///< wire bytes sent
  std::uint64_t tx_packets = 0;    ///< frames sent (every kind): packet-hops
  std::uint64_t ecn_marked = 0;    ///< data packets marked CE on enqueue here
  std::uint64_t drops = 0;         ///< packets dropped on their way to this port
  std::array<std::uint64_t, kPriorities> pause_tx{};   ///< XOFF frames sent out of this port
  std::array<std::uint64_t, kPriorities> resume_tx{};  ///< XON (quanta 0) frames sent
  std::array<std::uint64_t, kPriorities> pause_rx{};   ///< XOFF frames received on this port
  std::array<std::uint64_t, kPriorities> resume_rx{};  ///< XON frames received
  std::array<std::int64_t, kPriorities> paused_ps{};   ///< time this port's priority was paused
};

/// The sending side of a link.
class EgressPort {
 public:
  EgressPort(double rate_bps, std::int64_t delay_ps, Node* peer, std::uint16_t peer_port);

  double rate_bps() const noexcept { return rate_bps_; }
  std::int64_t delay_ps() const noexcept { return delay_ps_; }
  Node* peer() const noexcept { return peer_; }
  std::uint16_t peer_port() const noexcept { return peer_port_; }
  bool busy() const noexcept { return busy_; }
  void set_idle() noexcept { busy_ = false; }
  bool paused(int priority, std::int64_t now_ps) const noexcept { return paused_until_[priority] > now_ps; }

  /// Starts serializing `p`; `owner`->port_ready(`index`) when it is out, the peer receives it
  /// one propagation delay later.
  void send(Node* owner, std::uint16_t index, const Packet& p);

  /// Applies a pause frame received on this port. Returns when the pause ends (to wake the
  /// sender then), or -1 when it ended now (a resume).
  std::int64_t apply_pause(int priority, std::uint16_t quanta, std::int64_t now_ps);

  /// Closes open pause intervals at `now_ps` (end of run) so paused_ps is complete.
  void close_pauses(std::int64_t now_ps);

  PortCounters counters;
  QueueTrack queue;  ///< bytes queued for this port (switches)

 private:
  double rate_bps_;
  double ps_per_byte_;
  std::int64_t delay_ps_;
  Node* peer_;
  std::uint16_t peer_port_;
  bool busy_ = false;
  std::array<std::int64_t, kPriorities> paused_until_{};
  std::array<std::int64_t, kPriorities> pause_start_{};
};

}  // namespace railkit::sim
