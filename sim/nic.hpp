#pragma once
// A RoCE NIC with one port: queue pairs (flows) it sends, each paced by its own rate limiter and
// driven by a DCQCN reaction point; the receive side of the flows it terminates (in-order
// delivery, coalesced ACKs, a NAK on the first out-of-sequence packet: go-back-N), the DCQCN
// notification point (CNPs, spaced per flow), and PFC pauses honoured per priority.
#include <array>
#include <cstdint>
#include <deque>
#include <limits>
#include <string>
#include <vector>

#include "sim/dcqcn.hpp"
#include "sim/engine.hpp"
#include "sim/node.hpp"
#include "sim/scenario.hpp"

namespace railkit::sim {

/// Per-flow state: the sender's queue pair and the receiver's side, plus counters.
struct FlowState {
  FlowSpec spec;
  std::uint64_t total_pkts = std::numeric_limits<std::uint64_t>::max();  ///< long-lived: max
  std::uint32_t last_payload = 0;  ///< payload of the last packet
  std::uint32_t hash = 0;          ///< ECMP hash of the data direction
  std::uint32_t reverse_hash = 0;  ///< of ACKs and CNPs
  // sender
  ReactionPoint rp;
  std::uint64_t snd_nxt = 0;
  std::uint64_t snd_una = 0;
  std::uint64_t max_sent = 0;       ///< highest sequence number sent + 1
  std::int64_t last_tx_ps = 0;      ///< rate limiter: when the last packet started
  std::uint32_t last_tx_bytes = 0;  ///< ... and its wire bytes (the gap follows the current rate)
  std::int64_t last_progress_ps = 0;
  std::int64_t rp_timer_armed = -1;
  std::int64_t rp_cut_armed = -1;
  bool rto_armed = false;
  bool active = false;              ///< started and not yet fully acknowledged
  // receiver
  std::uint64_t expected = 0;
  bool nak_sent = false;
  std::uint32_t since_ack = 0;
  std::int64_t last_cnp_ps = std::numeric_limits<std::int64_t>::min() / 2;
  bool cnp_pending = false;
  // counters
  std::uint64_t delivered_bytes = 0;
  std::uint64_t sent_packets = 0;
  std::uint64_t retransmitted_packets = 0;
  std::uint64_t out_of_sequence = 0;
  std::uint64_t timeouts = 0;
  std::uint64_t cnps_sent = 0;      ///< by the receiver's NP
  std::uint64_t cnps_received = 0;  ///< by the sender's RP
  std::uint64_t ecn_marked_received = 0;
  std::int64_t completed_ps = -1;   ///< all bytes delivered in order

  FlowState(const FlowSpec& s, const RpConfig* rp_config) : spec(s), rp(rp_config) {}
  bool has_data() const noexcept { return snd_nxt < total_pkts; }
};

/// Told when all the data posted on a flow so far has been delivered in order at its receiver
/// (Nic::post's messages). Called from inside the receiving NIC's handler: it must not add flows,
/// post data or run the engine; it schedules what follows through Engine::after.
class DeliveryListener {
 public:
  virtual ~DeliveryListener() = default;
  virtual void delivered(std::uint32_t flow) = 0;
};

/// How the NICs behave: from NicSpec, resolved against the line rate.
struct NicConfig {
  CcKind cc = CcKind::DcqcnNvidia;
  RpConfig rp;
  std::int64_t cnp_interval_ps = 0;  ///< NP spacing per flow
  bool cnp_window = false;           ///< paper: a marked packet inside the spacing sends a CNP at its end
  int cnp_priority = 6;
  std::uint32_t mtu_bytes = 4096;
  std::uint32_t ack_every = 16;
  std::int64_t rto_ps = 0;
};

class Nic final : public Node {
 public:
  Nic(int host, std::string name, const NicConfig& config, std::vector<FlowState>* flows);

  /// Connects the NIC's port to `peer`'s `peer_port`.
  void connect(double rate_bps, std::int64_t delay_ps, Node* peer, std::uint16_t peer_port);
  /// Flow `f` (sent by this NIC) starts now.
  void start_flow(std::uint32_t f);
  /// Queues a message of `bytes` (> 0) more on flow `f` (sent by this NIC; its total_pkts not the
  /// long-lived maximum): it starts on a packet boundary and ends with a short packet. A flow
  /// whose earlier data is all acknowledged becomes active again.
  void post(std::uint32_t f, std::uint64_t bytes);
  /// Tells `l` (or nobody: nullptr) when a flow this NIC receives has delivered all it was posted.
  void set_listener(DeliveryListener* l) noexcept { listener_ = l; }

  void receive(Packet p, std::uint16_t port) override;
  void port_ready(std::uint16_t port) override;

  const std::string& name() const noexcept { return name_; }
  EgressPort& port() noexcept { return port_.front(); }
  const EgressPort& port() const noexcept { return port_.front(); }

 private:
  void try_send();
  void wake();
  bool send_control(std::int64_t now);
  bool send_data(std::int64_t now);
  void on_data(const Packet& p);
  void on_ack(const Packet& p);
  void on_cnp(const Packet& p);
  void notify(FlowState& f, std::uint32_t flow, std::int64_t now);
  void send_cnp(std::uint32_t flow);
  void cnp_deferred(std::uint32_t flow);
  void reply(std::uint32_t flow, PacketKind kind, std::uint64_t psn);
  void arm_rp(FlowState& f, std::uint32_t flow);
  void rp_timer(std::uint32_t flow);
  void rp_cut(std::uint32_t flow);
  void arm_rto(FlowState& f, std::uint32_t flow);
  void rto(std::uint32_t flow);

  int host_;
  std::string name_;
  const NicConfig* c_;
  std::vector<FlowState>* flows_;
  std::vector<EgressPort> port_;  ///< exactly one once connected
  std::array<std::deque<Packet>, kPriorities> control_;
  std::vector<std::uint32_t> sending_;  ///< active flows of this NIC
  std::size_t rr_ = 0;
  std::int64_t wake_at_ = -1;
  DeliveryListener* listener_ = nullptr;
};

}  // namespace railkit::sim
