#include "sim/switch.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "core/error.hpp"
#include "sim/roce.hpp"
#include "sim/topology.hpp"

namespace railkit::sim {
namespace {

std::uint64_t mix64(std::uint64_t x) noexcept {  // splitmix64's finalizer
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ull;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebull;
  x ^= x >> 31;
  return x;
}

}  // namespace

std::uint32_t ecmp_pick(std::uint32_t flow_hash, std::uint64_t salt, std::uint32_t n) noexcept {
  return n <= 1 ? 0 : static_cast<std::uint32_t>(mix64(flow_hash ^ mix64(salt)) % n);
}

Switch::Switch(int id, std::string name, const SwitchSpec& spec, std::uint32_t mtu_bytes, Uniform rng)
    : id_(id),
      name_(std::move(name)),
      spec_(&spec),
      mtu_frame_(data_frame_bytes(mtu_bytes)),
      rng_(std::move(rng)),
      salt_(switch_salt(spec.ecmp_seed, id)) {}

std::uint16_t Switch::add_port(double rate_bps, std::int64_t delay_ps, Node* peer, std::uint16_t peer_port) {
  ports_.push_back(Port{EgressPort(rate_bps, delay_ps, peer, peer_port), {}, {}, {}, {}, {}, {}, {}, {}, {}, 0, {}, {}, 0, true});
  return static_cast<std::uint16_t>(ports_.size() - 1);
}

namespace {

/// The PFC headroom of one port: switch.pfc.headroom_bytes, else the mlx5 formula for its rate
/// and cable.
std::uint64_t port_headroom_bytes(const SwitchSpec& spec, double rate_bps, std::int64_t delay_ps, std::uint32_t mtu_frame) {
  return spec.headroom_bytes >= 0 ? static_cast<std::uint64_t>(spec.headroom_bytes)
                                  : mlx5_headroom_bytes(rate_bps / 1e9, cable_m_from_delay(delay_ps), mtu_frame);
}

std::uint64_t lossless_priorities(const SwitchSpec& spec) {
  return spec.pfc_enabled ? static_cast<std::uint64_t>(std::count(spec.pfc.begin(), spec.pfc.end(), true)) : 0;
}

/// Throws UsageError when `reserved` headroom plus 4 frames per port does not fit the buffer.
void check_buffer_holds(const SwitchSpec& spec, std::uint64_t reserved, std::uint64_t ports, std::uint32_t mtu_frame,
                        std::string_view which) {
  if (reserved + 4ull * ports * mtu_frame > spec.buffer_bytes)
    throw UsageError(fmt::format("switch.buffer_bytes: {} bytes cannot hold the PFC headroom of {} ({} ports x {} "
                                 "lossless priorities{}) plus 4 frames per port",
                                 spec.buffer_bytes, reserved, ports, std::count(spec.pfc.begin(), spec.pfc.end(), true),
                                 which.empty() ? "" : ", " + std::string(which)));
}

}  // namespace

void check_switch_buffers(const Scenario& s) {
  const TopologySpec& t = s.topology;
  const std::uint32_t frame = data_frame_bytes(t.mtu_bytes);
  const std::uint64_t lossless = lossless_priorities(s.sw);
  const std::uint64_t host_port = port_headroom_bytes(s.sw, t.link_rate_bps, t.link_delay_ps, frame) * lossless;
  const std::uint64_t fabric_port =  // single_switch: no uplinks (and no fabric rate)
      t.kind == TopologyKind::SingleSwitch ? 0 : port_headroom_bytes(s.sw, t.fabric_rate_bps, t.fabric_delay_ps, frame) * lossless;
  const auto check = [&](std::uint64_t hosts, std::uint64_t uplinks, std::string_view which) {
    check_buffer_holds(s.sw, hosts * host_port + uplinks * fabric_port, hosts + uplinks, frame, which);
  };
  switch (t.kind) {
    case TopologyKind::SingleSwitch:
      check(static_cast<std::uint64_t>(t.hosts), 0, "");
      return;
    case TopologyKind::LeafSpine:
      check(static_cast<std::uint64_t>(t.hosts_per_leaf), static_cast<std::uint64_t>(t.spines), "each leaf");
      if (t.spines > 0) check(0, static_cast<std::uint64_t>(t.leaves), "each spine");
      return;
    case TopologyKind::RailOptimized:
      check(static_cast<std::uint64_t>(t.nodes), static_cast<std::uint64_t>(t.spines), "each rail switch");
      if (t.spines > 0) check(0, static_cast<std::uint64_t>(t.gpus_per_node), "each spine");
      return;
  }
}

void Switch::finalize() {
  std::uint64_t reserved = 0;
  for (auto& pt : ports_) {
    const double rate = pt.eg.rate_bps();
    pt.headroom_bytes = port_headroom_bytes(*spec_, rate, pt.eg.delay_ps(), mtu_frame_);
    for (std::size_t p = 0; p < kPriorities; ++p) {
      if (spec_->pfc_enabled && spec_->pfc[p]) reserved += pt.headroom_bytes;
      const EcnSpec& e = spec_->ecn[p];
      pt.ecn[p] = !e.enabled ? EcnThresholds{UINT64_MAX, UINT64_MAX, 0} : ecn_thresholds(e.preset, rate, e.thresholds);
    }
  }
  check_buffer_holds(*spec_, reserved, ports_.size(), mtu_frame_, "");
  shared_pool_ = spec_->buffer_bytes - reserved;
  xon_offset_ = spec_->xon_offset_bytes >= 0 ? static_cast<std::uint64_t>(spec_->xon_offset_bytes) : 2ull * mtu_frame_;
}

std::uint64_t Switch::threshold() const noexcept {
  if (spec_->xoff_bytes >= 0) return static_cast<std::uint64_t>(spec_->xoff_bytes);
  return static_cast<std::uint64_t>(spec_->threshold_alpha * static_cast<double>(shared_pool_ - shared_used_));
}

void Switch::receive(Packet p, std::uint16_t in_port) {
  const std::int64_t now = Engine::now_ps();
  if (p.kind == PacketKind::Pause) {
    const std::int64_t end = ports_[in_port].eg.apply_pause(p.priority, p.pause_quanta, now);
    if (end < 0) try_send(in_port);
    else Engine::after(end - now, &Switch::wake, this, in_port);
    return;
  }
  const auto& choices = routes_[p.dst];
  if (choices.empty()) return;  // unreachable destination: not in any topology railkit builds
  const std::uint16_t out = choices.size() == 1 ? choices[0] : choices[ecmp_pick(p.hash, salt_, static_cast<std::uint32_t>(choices.size()))];
  Port& in = ports_[in_port];
  const std::size_t prio = p.priority;
  const std::uint64_t size = buffer_bytes(p);
  const bool lossless = spec_->pfc_enabled && spec_->pfc[prio];
  const std::uint64_t thr = threshold();
  p.in_port = in_port;
  p.in_headroom = false;
  if (in.ing_shared[prio] + size <= thr && shared_used_ + size <= shared_pool_) {
    in.ing_shared[prio] += size;
    shared_used_ += size;
  } else if (lossless && in.ing_hdrm[prio] + size <= in.headroom_bytes) {
    in.ing_hdrm[prio] += size;
    p.in_headroom = true;
  } else {
    ++ports_[out].eg.counters.drops;
    return;
  }
  if (lossless && !in.xoff[prio] && (p.in_headroom || in.ing_shared[prio] + mtu_frame_ > threshold()))
    send_pause(in_port, static_cast<int>(prio), true);
  enqueue(p, out);
}

void Switch::mark(Packet& p, Port& pt) {
  if (p.kind != PacketKind::Data) return;
  const EcnThresholds& e = pt.ecn[p.priority];
  const std::uint64_t q = pt.q_bytes[p.priority];
  if (q <= e.kmin_bytes) return;
  const double prob = ecn_mark_probability(q, e.kmin_bytes, e.kmax_bytes, e.pmax);
  if (prob >= 1.0 || (prob > 0 && rng_.next() < prob)) {
    p.ce = true;
    ++pt.eg.counters.ecn_marked;
  }
}

void Switch::enqueue(Packet& p, std::uint16_t out) {
  Port& pt = ports_[out];
  if (!spec_->ecn_on_dequeue) mark(p, pt);
  const std::uint64_t size = buffer_bytes(p);
  pt.q_bytes[p.priority] += size;
  pt.eg.queue.add(Engine::now_ps(), static_cast<std::int64_t>(size));
  pt.q[p.priority].push_back(p);
  try_send(out);
}

void Switch::port_ready(std::uint16_t port) {
  ports_[port].eg.set_idle();
  try_send(port);
}

void Switch::wake(std::uint16_t port) { try_send(port); }

int Switch::select(Port& pt, std::int64_t now) {
  const auto eligible = [&](int q) { return !pt.q[q].empty() && !pt.eg.paused(q, now); };
  const bool all_strict = spec_->scheduler == SchedulerKind::Strict;
  for (int q = kPriorities - 1; q >= 0; --q)
    if ((all_strict || spec_->strict[q]) && eligible(q)) return q;
  if (all_strict) return -1;
  for (int i = 0; i < 2 * kPriorities + 1; ++i) {
    const int q = pt.rr;
    if (spec_->strict[q] || !eligible(q)) {
      if (pt.q[q].empty()) pt.deficit[q] = 0;
      pt.rr = (q + 1) % kPriorities;
      pt.fresh = true;
      continue;
    }
    if (pt.fresh) {
      pt.deficit[q] += static_cast<std::int64_t>(spec_->dwrr_weights[q]) * mtu_frame_;
      pt.fresh = false;
    }
    const auto size = static_cast<std::int64_t>(buffer_bytes(pt.q[q].front()));
    if (pt.deficit[q] >= size) {
      pt.deficit[q] -= size;
      return q;
    }
    pt.rr = (q + 1) % kPriorities;
    pt.fresh = true;
  }
  return -1;
}

void Switch::try_send(std::uint16_t port) {
  Port& pt = ports_[port];
  if (pt.eg.busy()) return;
  if (!pt.pending_pauses.empty()) {
    const Packet f = pt.pending_pauses.front();
    pt.pending_pauses.erase(pt.pending_pauses.begin());
    pt.eg.send(this, port, f);
    return;
  }
  const std::int64_t now = Engine::now_ps();
  const int q = select(pt, now);
  if (q < 0) return;
  Packet p = pt.q[q].front();
  pt.q[q].pop_front();
  const std::uint64_t size = buffer_bytes(p);
  pt.q_bytes[q] -= size;
  pt.eg.queue.add(now, -static_cast<std::int64_t>(size));
  if (spec_->ecn_on_dequeue) mark(p, pt);
  release(p);
  pt.eg.send(this, port, p);
}

void Switch::release(const Packet& p) {
  Port& in = ports_[p.in_port];
  const std::size_t prio = p.priority;
  const std::uint64_t size = buffer_bytes(p);
  ++in.released[prio];
  if (p.in_headroom) {
    in.ing_hdrm[prio] -= size;
  } else {
    in.ing_shared[prio] -= size;
    shared_used_ -= size;
  }
  if (in.xoff[prio] && in.ing_hdrm[prio] == 0 && in.ing_shared[prio] + xon_offset_ <= threshold())
    send_pause(p.in_port, static_cast<int>(prio), false);
}

void Switch::send_pause(std::uint16_t port, int prio, bool xoff) {
  Port& pt = ports_[port];
  const auto p = static_cast<std::size_t>(prio);
  Packet f;
  f.kind = PacketKind::Pause;
  f.priority = static_cast<std::uint8_t>(prio);
  f.wire_bytes = pause_wire_bytes();
  f.pause_quanta = static_cast<std::uint16_t>(xoff ? spec_->pause_quanta : 0);
  if (xoff && !pt.xoff[p]) pt.xoff_since[p] = Engine::now_ps();
  pt.xoff[p] = xoff;
  ++pt.xoff_gen[p];
  if (xoff) {
    ++pt.eg.counters.pause_tx[p];
    const std::int64_t half = pause_duration_ps(spec_->pause_quanta, pt.eg.rate_bps()) / 2;
    Engine::after(std::max<std::int64_t>(half, 1), &Switch::refresh_pause, this, port, static_cast<std::uint8_t>(prio), pt.xoff_gen[p]);
  } else {
    ++pt.eg.counters.resume_tx[p];
  }
  pt.pending_pauses.push_back(f);
  try_send(port);
}

void Switch::refresh_pause(std::uint16_t port, std::uint8_t prio, std::uint32_t gen) {
  Port& pt = ports_[port];
  if (!pt.xoff[prio] || pt.xoff_gen[prio] != gen) return;
  // The XON condition is met on a packet's departure, but a dynamic threshold can also rise while
  // nothing leaves this port (other ports drain): look again before refreshing.
  const bool xon = pt.ing_hdrm[prio] == 0 && pt.ing_shared[prio] + xon_offset_ <= threshold();
  send_pause(port, prio, !xon);
}

}  // namespace railkit::sim
