#include "sim/deadlock.hpp"

#include <algorithm>
#include <unordered_map>
#include <utility>

#include <fmt/format.h>

#include "sim/quantity.hpp"
#include "sim/roce.hpp"

namespace railkit::sim {

namespace {

/// A cycle of the wait-for graph `waits` (node -> nodes it waits on), depth first from the lowest
/// node, in edge order: the same graph gives the same cycle. Empty when there is none.
std::vector<int> find_wait_cycle(const std::vector<std::vector<int>>& waits) {
  std::vector<int> cycle;
  std::vector<int> colour(waits.size(), 0);  // 0 unseen, 1 on the path, 2 done
  for (std::size_t start = 0; start < waits.size() && cycle.empty(); ++start) {
    if (colour[start] != 0) continue;
    std::vector<std::pair<int, std::size_t>> path{{static_cast<int>(start), 0}};
    colour[start] = 1;
    while (!path.empty() && cycle.empty()) {
      const int u = path.back().first;
      const std::size_t k = path.back().second;
      const auto& next = waits[static_cast<std::size_t>(u)];
      if (k == next.size()) {
        colour[static_cast<std::size_t>(u)] = 2;
        path.pop_back();
        continue;
      }
      ++path.back().second;
      const int v = next[k];
      if (colour[static_cast<std::size_t>(v)] == 1) {
        auto it = std::find_if(path.begin(), path.end(), [&](const auto& x) { return x.first == v; });
        for (; it != path.end(); ++it) cycle.push_back(it->first);
      } else if (colour[static_cast<std::size_t>(v)] == 0) {
        colour[static_cast<std::size_t>(v)] = 1;
        path.emplace_back(v, 0);
      }
    }
  }

  return cycle;
}

}  // namespace

std::int64_t deadlock_bound_ps(const FabricGraph& g, const SwitchSpec& sw) {
  double slowest = 0;
  for (int n = g.hosts; n < g.nodes(); ++n)
    for (const PortLink& l : g.ports[static_cast<std::size_t>(n)])
      if (slowest == 0 || l.rate_bps < slowest) slowest = l.rate_bps;
  if (slowest <= 0) return 1;
  const std::int64_t pauses = 8 * pause_duration_ps(sw.pause_quanta, slowest);
  const auto drains = static_cast<std::int64_t>(2.0 * static_cast<double>(sw.buffer_bytes) * 8.0 / slowest * 1e12);
  return std::max<std::int64_t>({pauses, drains, 1});
}

DeadlockWatch::DeadlockWatch(const FabricGraph& g, const std::vector<std::unique_ptr<Switch>>& switches, const SwitchSpec& sw)
    : g_(g), switches_(switches), sw_(sw), bound_ps_(deadlock_bound_ps(g, sw)), period_ps_(std::max<std::int64_t>(bound_ps_ / 4, 1)) {
  std::size_t slots = 0;
  for (const auto& s : switches_) {
    first_slot_.push_back(slots);
    slots += s->ports().size();
  }
  released_.assign(slots * kPriorities, 0);
  progress_ps_.assign(slots * kPriorities, 0);
}

std::optional<DeadlockFinding> DeadlockWatch::check(std::int64_t now_ps) {
  std::vector<Pause> stuck;
  for (std::size_t si = 0; si < switches_.size(); ++si) {
    const auto& ports = switches_[si]->ports();
    for (std::size_t p = 0; p < ports.size(); ++p) {
      const Switch::Port& pt = ports[p];
      for (std::size_t q = 0; q < kPriorities; ++q) {
        if (!sw_.pfc[q]) continue;
        const std::size_t slot = (first_slot_[si] + p) * kPriorities + q;
        if (pt.released[q] != released_[slot]) {
          released_[slot] = pt.released[q];
          progress_ps_[slot] = now_ps;
        }
        if (!pt.xoff[q]) continue;
        const std::int64_t since = std::max(progress_ps_[slot], pt.xoff_since[q]);
        if (now_ps - since >= bound_ps_) stuck.push_back({static_cast<int>(si), static_cast<int>(p), static_cast<int>(q), since});
      }
    }
  }
  if (stuck.empty()) return std::nullopt;
  return analyse(stuck, now_ps);
}

std::string DeadlockWatch::name(const Pause& p) const {
  const int node = g_.hosts + p.sw;
  const PortLink& l = g_.ports[static_cast<std::size_t>(node)][static_cast<std::size_t>(p.port)];
  return fmt::format("{}:{}->{} prio {}", g_.names[static_cast<std::size_t>(l.peer)], l.peer_port,
                     g_.names[static_cast<std::size_t>(node)], p.prio);
}

std::optional<DeadlockFinding> DeadlockWatch::analyse(const std::vector<Pause>& stuck, std::int64_t now_ps) const {
  const auto slot = [&](int sw, int port, int prio) {
    return (first_slot_[static_cast<std::size_t>(sw)] + static_cast<std::size_t>(port)) * kPriorities + static_cast<std::size_t>(prio);
  };
  std::unordered_map<std::size_t, int> index;
  for (std::size_t i = 0; i < stuck.size(); ++i) index.emplace(slot(stuck[i].sw, stuck[i].port, stuck[i].prio), static_cast<int>(i));

  // The wait-for edges: the stuck pause of each ingress whose packets sit on an egress port that
  // the peer switch holds paused through a stuck pause of its own. Each switch and priority
  // with a stuck pause has its queues read once.
  std::vector<std::vector<int>> waits(stuck.size());
  std::vector<bool> read(switches_.size() * kPriorities, false);
  for (const Pause& s : stuck) {
    const std::size_t key = static_cast<std::size_t>(s.sw) * kPriorities + static_cast<std::size_t>(s.prio);
    if (read[key]) continue;
    read[key] = true;
    const int node = g_.hosts + s.sw;
    const auto& ports = switches_[static_cast<std::size_t>(s.sw)]->ports();
    for (std::size_t e = 0; e < ports.size(); ++e) {
      const PortLink& l = g_.ports[static_cast<std::size_t>(node)][e];
      if (g_.is_host(l.peer)) continue;  // hosts never pause
      const auto held = index.find(slot(l.peer - g_.hosts, l.peer_port, s.prio));
      if (held == index.end()) continue;
      for (const Packet& pk : ports[e].q[static_cast<std::size_t>(s.prio)]) {
        const auto from = index.find(slot(s.sw, pk.in_port, s.prio));
        if (from != index.end()) waits[static_cast<std::size_t>(from->second)].push_back(held->second);
      }
    }
  }
  for (auto& w : waits) {
    std::sort(w.begin(), w.end());
    w.erase(std::unique(w.begin(), w.end()), w.end());
  }

  const std::vector<int> cycle = find_wait_cycle(waits);

  DeadlockFinding f;
  f.at_ps = now_ps;
  if (!cycle.empty()) {
    f.kind = kDeadlockCycle;
    for (int i : cycle) {
      f.ports.push_back(name(stuck[static_cast<std::size_t>(i)]));
      f.since_ps = std::max(f.since_ps, stuck[static_cast<std::size_t>(i)].since_ps);
    }
    f.detail = fmt::format("each port is paused by the switch it leads to, whose packets from it wait on the next port (the last "
                           "on the first); none of them has drained for {:.1f} us",
                           ps_to_us(now_ps - f.since_ps));
    return f;
  }
  const Pause* first = nullptr;
  for (const Pause& s : stuck) {
    const Switch::Port& pt = switches_[static_cast<std::size_t>(s.sw)]->ports()[static_cast<std::size_t>(s.port)];
    if (pt.ing_shared[static_cast<std::size_t>(s.prio)] + pt.ing_hdrm[static_cast<std::size_t>(s.prio)] != 0) continue;
    if (first == nullptr) first = &s;
    f.ports.push_back(name(s));
    f.since_ps = std::max(f.since_ps, s.since_ps);
  }
  if (first == nullptr) return std::nullopt;  // stuck, but waiting on something that may still move
  const Switch& s = *switches_[static_cast<std::size_t>(first->sw)];
  f.kind = kDeadlockPauseNeverClears;
  f.detail = fmt::format("the switch each port leads to holds XOFF with nothing queued from it for at least {:.1f} us; XON "
                         "needs queue + xon offset <= threshold, and at {} the xon offset is {} bytes, the threshold {} bytes now ({})",
                         ps_to_us(now_ps - f.since_ps), s.name(), s.xon_offset_bytes(), s.threshold_bytes(),
                         sw_.xoff_bytes >= 0 ? "static: switch.pfc.xoff_bytes" : "dynamic: switch.pfc.threshold_alpha x free buffer");
  return f;
}

}  // namespace railkit::sim
