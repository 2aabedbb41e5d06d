#include "sim/nic.hpp"

#include <algorithm>
#include <cmath>

#include "sim/roce.hpp"

namespace railkit::sim {

Nic::Nic(int host, std::string name, const NicConfig& config, std::vector<FlowState>* flows)
    : host_(host), name_(std::move(name)), c_(&config), flows_(flows) {}

void Nic::connect(double rate_bps, std::int64_t delay_ps, Node* peer, std::uint16_t peer_port) {
  port_.clear();
  port_.emplace_back(rate_bps, delay_ps, peer, peer_port);
}

void Nic::start_flow(std::uint32_t f) {
  FlowState& fl = (*flows_)[f];
  fl.active = true;
  fl.last_progress_ps = Engine::now_ps();
  sending_.push_back(f);
  try_send();
}

void Nic::post(std::uint32_t f, std::uint64_t bytes) {
  FlowState& fl = (*flows_)[f];
  const std::uint64_t mtu = c_->mtu_bytes;
  const std::uint64_t pkts = (bytes + mtu - 1) / mtu;
  fl.total_pkts += pkts;
  fl.last_payload = static_cast<std::uint32_t>(bytes - (pkts - 1) * mtu);
  fl.spec.bytes += bytes;
  if (!fl.active) start_flow(f);
  else try_send();
}

void Nic::port_ready(std::uint16_t) {
  port().set_idle();
  try_send();
}

void Nic::wake() {
  if (Engine::now_ps() == wake_at_) wake_at_ = -1;
  try_send();
}

void Nic::try_send() {
  EgressPort& eg = port();
  if (eg.busy()) return;
  const std::int64_t now = Engine::now_ps();
  if (send_control(now)) return;
  send_data(now);
}

bool Nic::send_control(std::int64_t now) {
  for (int q = kPriorities - 1; q >= 0; --q) {
    auto& queue = control_[static_cast<std::size_t>(q)];
    if (queue.empty() || port().paused(q, now)) continue;
    const Packet p = queue.front();
    queue.pop_front();
    port().send(this, 0, p);
    return true;
  }
  return false;
}

bool Nic::send_data(std::int64_t now) {
  std::int64_t earliest = -1;
  const std::size_t n = sending_.size();
  for (std::size_t i = 0; i < n; ++i) {
    const std::size_t slot = (rr_ + i) % n;
    FlowState& f = (*flows_)[sending_[slot]];
    if (!f.has_data() || port().paused(f.spec.priority, now)) continue;
    const std::int64_t next_tx = f.last_tx_ps + serialization_ps(f.last_tx_bytes, f.rp.rate_bps());
    if (next_tx > now) {
      if (earliest < 0 || next_tx < earliest) earliest = next_tx;
      continue;
    }
    const std::uint32_t flow = sending_[slot];
    Packet p;
    p.kind = PacketKind::Data;
    p.flow = flow;
    p.dst = static_cast<std::uint32_t>(f.spec.dst);
    p.hash = f.hash;
    p.priority = static_cast<std::uint8_t>(f.spec.priority);
    p.psn = f.snd_nxt;
    p.payload_bytes = f.snd_nxt + 1 == f.total_pkts ? f.last_payload : c_->mtu_bytes;
    p.wire_bytes = data_wire_bytes(p.payload_bytes);
    if (f.snd_nxt < f.max_sent) ++f.retransmitted_packets;
    if (f.snd_una == f.snd_nxt) f.last_progress_ps = now;  // nothing was outstanding
    ++f.snd_nxt;
    f.max_sent = std::max(f.max_sent, f.snd_nxt);
    ++f.sent_packets;
    f.last_tx_ps = now;
    f.last_tx_bytes = p.wire_bytes;
    if (c_->cc != CcKind::None) {
      f.rp.on_sent(p.payload_bytes);
      arm_rp(f, flow);
    }
    rr_ = slot + 1;
    port().send(this, 0, p);
    arm_rto(f, flow);
    return true;
  }
  if (earliest >= 0 && (wake_at_ < 0 || earliest < wake_at_)) {
    wake_at_ = earliest;
    Engine::after(earliest - now, &Nic::wake, this);
  }
  return false;
}

void Nic::receive(Packet p, std::uint16_t) {
  switch (p.kind) {
    case PacketKind::Data: on_data(p); break;
    case PacketKind::Ack:
    case PacketKind::Nak: on_ack(p); break;
    case PacketKind::Cnp: on_cnp(p); break;
    case PacketKind::Pause: {
      const std::int64_t now = Engine::now_ps();
      const std::int64_t end = port().apply_pause(p.priority, p.pause_quanta, now);
      if (end < 0) try_send();
      else Engine::after(end - now, &Nic::wake, this);
      break;
    }
  }
}

void Nic::on_data(const Packet& p) {
  FlowState& f = (*flows_)[p.flow];
  const std::int64_t now = Engine::now_ps();
  if (p.ce) {
    ++f.ecn_marked_received;
    if (c_->cc != CcKind::None) notify(f, p.flow, now);
  }
  if (p.psn == f.expected) {
    ++f.expected;
    f.delivered_bytes += p.payload_bytes;
    f.nak_sent = false;
    const bool last = f.expected == f.total_pkts;
    if (last) {
      f.completed_ps = now;
      if (listener_ != nullptr) listener_->delivered(p.flow);
    }
    if (last || ++f.since_ack >= c_->ack_every) {
      f.since_ack = 0;
      reply(p.flow, PacketKind::Ack, f.expected);
    }
  } else if (p.psn < f.expected) {
    if (++f.since_ack >= c_->ack_every) {
      f.since_ack = 0;
      reply(p.flow, PacketKind::Ack, f.expected);
    }
  } else {
    ++f.out_of_sequence;
    if (!f.nak_sent) {
      f.nak_sent = true;
      reply(p.flow, PacketKind::Nak, f.expected);
    }
  }
}

void Nic::reply(std::uint32_t flow, PacketKind kind, std::uint64_t psn) {
  const FlowState& f = (*flows_)[flow];
  Packet a;
  a.kind = kind;
  a.flow = flow;
  a.dst = static_cast<std::uint32_t>(f.spec.src);
  a.hash = f.reverse_hash;
  a.priority = static_cast<std::uint8_t>(f.spec.priority);
  a.psn = psn;
  a.wire_bytes = ack_wire_bytes();
  control_[a.priority].push_back(a);
  try_send();
}

void Nic::notify(FlowState& f, std::uint32_t flow, std::int64_t now) {
  if (now - f.last_cnp_ps >= c_->cnp_interval_ps) {
    send_cnp(flow);
    return;
  }
  if (c_->cnp_window && !f.cnp_pending) {
    f.cnp_pending = true;
    Engine::after(f.last_cnp_ps + c_->cnp_interval_ps - now, &Nic::cnp_deferred, this, flow);
  }
}

void Nic::cnp_deferred(std::uint32_t flow) {
  FlowState& f = (*flows_)[flow];
  f.cnp_pending = false;
  send_cnp(flow);
}

void Nic::send_cnp(std::uint32_t flow) {
  FlowState& f = (*flows_)[flow];
  f.last_cnp_ps = Engine::now_ps();
  ++f.cnps_sent;
  Packet c;
  c.kind = PacketKind::Cnp;
  c.flow = flow;
  c.dst = static_cast<std::uint32_t>(f.spec.src);
  c.hash = f.reverse_hash;
  c.priority = static_cast<std::uint8_t>(c_->cnp_priority);
  c.wire_bytes = cnp_wire_bytes();
  control_[c.priority].push_back(c);
  try_send();
}

void Nic::on_ack(const Packet& p) {
  FlowState& f = (*flows_)[p.flow];
  const std::int64_t now = Engine::now_ps();
  if (p.psn > f.snd_una) {
    f.snd_una = p.psn;
    f.last_progress_ps = now;
  }
  if (p.kind == PacketKind::Nak && f.snd_nxt > p.psn) {
    f.snd_nxt = std::max(p.psn, f.snd_una);  // go back N
    f.last_progress_ps = now;
    try_send();
  }
  if (f.snd_una >= f.total_pkts && f.active) {
    f.active = false;
    sending_.erase(std::find(sending_.begin(), sending_.end(), p.flow));
  }
}

void Nic::on_cnp(const Packet& p) {
  FlowState& f = (*flows_)[p.flow];
  ++f.cnps_received;
  if (c_->cc == CcKind::None) return;
  f.rp.on_cnp(Engine::now_ps());
  arm_rp(f, p.flow);
}

void Nic::arm_rp(FlowState& f, std::uint32_t flow) {
  const std::int64_t now = Engine::now_ps();
  const std::int64_t t = f.rp.timer_deadline_ps();
  if (t >= 0 && t != f.rp_timer_armed) {
    f.rp_timer_armed = t;
    Engine::after(t - now, &Nic::rp_timer, this, flow);
  }
  const std::int64_t c = f.rp.pending_cut_ps();
  if (c >= 0 && c != f.rp_cut_armed) {
    f.rp_cut_armed = c;
    Engine::after(c - now, &Nic::rp_cut, this, flow);
  }
}

void Nic::rp_timer(std::uint32_t flow) {
  FlowState& f = (*flows_)[flow];
  const std::int64_t now = Engine::now_ps();
  if (now != f.rp_timer_armed) return;  // superseded by a later deadline
  f.rp_timer_armed = -1;
  f.rp.on_timer(now);
  arm_rp(f, flow);
  try_send();  // a higher rate may let the flow send earlier than the wake-up planned
}

void Nic::rp_cut(std::uint32_t flow) {
  FlowState& f = (*flows_)[flow];
  const std::int64_t now = Engine::now_ps();
  if (now != f.rp_cut_armed) return;
  f.rp_cut_armed = -1;
  f.rp.on_pending_cut(now);
  arm_rp(f, flow);
}

void Nic::arm_rto(FlowState& f, std::uint32_t flow) {
  if (f.rto_armed) return;
  f.rto_armed = true;
  Engine::after(std::max<std::int64_t>(0, f.last_progress_ps + c_->rto_ps - Engine::now_ps()), &Nic::rto, this, flow);
}

void Nic::rto(std::uint32_t flow) {
  FlowState& f = (*flows_)[flow];
  const std::int64_t now = Engine::now_ps();
  f.rto_armed = false;
  if (!f.active || f.snd_una >= f.snd_nxt) return;  // nothing outstanding: the next send re-arms
  if (now - f.last_progress_ps >= c_->rto_ps) {
    ++f.timeouts;
    f.snd_nxt = f.snd_una;
    f.last_progress_ps = now;
    try_send();
  }
  arm_rto(f, flow);
}

}  // namespace railkit::sim
