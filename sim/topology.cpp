#include "sim/topology.hpp"

#include <deque>

#include <fmt/format.h>

#include "sim/switch.hpp"

namespace railkit::sim {
namespace {

int add_node(FabricGraph& g, std::string name) {
  g.names.push_back(std::move(name));
  g.ports.emplace_back();
  return g.nodes() - 1;
}

void link(FabricGraph& g, int a, int b, double rate_bps, std::int64_t delay_ps) {
  const auto pa = static_cast<std::uint16_t>(g.ports[a].size());
  const auto pb = static_cast<std::uint16_t>(g.ports[b].size());
  g.ports[a].push_back({b, pb, rate_bps, delay_ps});
  g.ports[b].push_back({a, pa, rate_bps, delay_ps});
}

/// Two tiers: `leaves` leaves with `per_leaf` hosts each (host of leaf l, slot k: leaf_host(l, k)),
/// every leaf linked to every spine.
template <class HostOf>
void two_tier(FabricGraph& g, const TopologySpec& t, int leaves, int per_leaf, const char* leaf_name, HostOf leaf_host) {
  std::vector<int> leaf(leaves);
  for (int l = 0; l < leaves; ++l) leaf[l] = add_node(g, fmt::format("{}{}", leaf_name, l));
  std::vector<int> spine(t.spines);
  for (int s = 0; s < t.spines; ++s) spine[s] = add_node(g, fmt::format("spine{}", s));
  for (int l = 0; l < leaves; ++l)
    for (int k = 0; k < per_leaf; ++k) link(g, leaf_host(l, k), leaf[l], t.link_rate_bps, t.link_delay_ps);
  for (int l = 0; l < leaves; ++l)
    for (int s = 0; s < t.spines; ++s) link(g, leaf[l], spine[s], t.fabric_rate_bps, t.fabric_delay_ps);
}

void compute_routes(FabricGraph& g) {
  g.routes.assign(g.nodes(), {});
  for (int n = g.hosts; n < g.nodes(); ++n) g.routes[n].assign(g.hosts, {});
  std::vector<int> dist(g.nodes());
  for (int d = 0; d < g.hosts; ++d) {
    std::fill(dist.begin(), dist.end(), -1);
    std::deque<int> todo{d};
    dist[d] = 0;
    while (!todo.empty()) {
      const int n = todo.front();
      todo.pop_front();
      if (n != d && g.is_host(n)) continue;  // hosts do not forward
      for (const auto& pl : g.ports[n])
        if (dist[pl.peer] < 0) {
          dist[pl.peer] = dist[n] + 1;
          todo.push_back(pl.peer);
        }
    }
    for (int n = g.hosts; n < g.nodes(); ++n) {
      if (dist[n] < 0) continue;
      for (std::size_t p = 0; p < g.ports[n].size(); ++p)
        if (dist[g.ports[n][p].peer] == dist[n] - 1) g.routes[n][d].push_back(static_cast<std::uint16_t>(p));
    }
  }
}

}  // namespace

FabricGraph build_fabric(const TopologySpec& t) {
  FabricGraph g;
  g.hosts = t.host_count();
  for (int h = 0; h < g.hosts; ++h) add_node(g, host_name(t, h));
  switch (t.kind) {
    case TopologyKind::SingleSwitch: {
      const int sw = add_node(g, "sw0");
      for (int h = 0; h < g.hosts; ++h) link(g, h, sw, t.link_rate_bps, t.link_delay_ps);
      break;
    }
    case TopologyKind::LeafSpine:
      two_tier(g, t, t.leaves, t.hosts_per_leaf, "leaf", [&](int l, int k) { return l * t.hosts_per_leaf + k; });
      break;
    case TopologyKind::RailOptimized:
      two_tier(g, t, t.gpus_per_node, t.nodes, "rail", [&](int rail, int node) { return node * t.gpus_per_node + rail; });
      break;
  }
  compute_routes(g);
  return g;
}

std::uint32_t flow_hash(int src, int dst, std::uint32_t flow, std::uint64_t seed) noexcept {
  std::uint64_t x = (static_cast<std::uint64_t>(src) << 40) ^ (static_cast<std::uint64_t>(dst) << 20) ^ flow ^ (seed << 52);
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdull;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ull;
  x ^= x >> 33;
  return static_cast<std::uint32_t>(x);
}

std::uint64_t switch_salt(std::uint64_t ecmp_seed, int node) noexcept {
  return ecmp_seed * 0x9e3779b97f4a7c15ull + static_cast<std::uint64_t>(node);
}

std::vector<std::int64_t> route_path(const FabricGraph& g, int src, int dst, std::uint32_t hash, std::uint64_t ecmp_seed) {
  std::vector<std::int64_t> path;
  int node = src;
  std::uint16_t port = 0;
  for (int hops = 0; hops <= g.nodes(); ++hops) {
    path.push_back(static_cast<std::int64_t>(node) * 65536 + port);
    const int next = g.ports[node][port].peer;
    if (next == dst) return path;
    if (g.is_host(next)) break;
    const auto& choices = g.routes[next][dst];
    if (choices.empty()) break;
    port = choices[ecmp_pick(hash, switch_salt(ecmp_seed, next), static_cast<std::uint32_t>(choices.size()))];
    node = next;
  }
  return {};
}

}  // namespace railkit::sim
