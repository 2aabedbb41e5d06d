#include "sim/node.hpp"

#include <algorithm>
#include <cmath>

#include "sim/engine.hpp"

namespace railkit::sim {

EgressPort::EgressPort(double rate_bps, std::int64_t delay_ps, Node* peer, std::uint16_t peer_port)
    : rate_bps_(rate_bps), ps_per_byte_(8.0e12 / rate_bps), delay_ps_(delay_ps), peer_(peer), peer_port_(peer_port) {}

void EgressPort::send(Node* owner, std::uint16_t index, const Packet& p) {
  busy_ = true;
  const auto ser = static_cast<std::int64_t>(std::llround(p.wire_bytes * ps_per_byte_));
  ++counters.tx_packets;
  counters.tx_bytes += p.wire_bytes;
  Engine::after(ser, &Node::port_ready, owner, index);
  Engine::after(ser + delay_ps_, &Node::receive, peer_, p, peer_port_);
}

std::int64_t EgressPort::apply_pause(int priority, std::uint16_t quanta, std::int64_t now_ps) {
  const auto p = static_cast<std::size_t>(priority);
  const bool was_paused = paused_until_[p] > now_ps;
  if (!was_paused && paused_until_[p] > pause_start_[p]) {  // close the interval that expired
    counters.paused_ps[p] += paused_until_[p] - pause_start_[p];
    pause_start_[p] = paused_until_[p];
  }
  if (quanta == 0) {
    ++counters.resume_rx[p];
    if (was_paused) {
      counters.paused_ps[p] += now_ps - pause_start_[p];
      paused_until_[p] = now_ps;
      pause_start_[p] = now_ps;
    }
    return -1;
  }
  ++counters.pause_rx[p];
  if (!was_paused) pause_start_[p] = now_ps;
  const std::int64_t end = now_ps + static_cast<std::int64_t>(std::llround(quanta * 512.0e12 / rate_bps_));
  paused_until_[p] = end;
  return end;
}

void EgressPort::close_pauses(std::int64_t now_ps) {
  for (std::size_t p = 0; p < kPriorities; ++p) {
    const std::int64_t end = std::min(paused_until_[p], now_ps);
    if (end > pause_start_[p]) counters.paused_ps[p] += end - pause_start_[p];
    pause_start_[p] = std::max(pause_start_[p], end);
    paused_until_[p] = std::min(paused_until_[p], now_ps);
  }
}

}  // namespace railkit::sim
