#pragma once
// The fabric as a graph: hosts (one NIC each) first, then switches; every link is two ports;
// shortest-path routing with every equal-cost next hop kept for ECMP. Pure: no ns-3 here.
#include <cstdint>
#include <string>
#include <vector>

#include "sim/scenario.hpp"

namespace railkit::sim {

/// One port of a node: where its link goes.
struct PortLink {
  int peer = 0;                 ///< node at the other end
  std::uint16_t peer_port = 0;  ///< its port index there
  double rate_bps = 0;
  std::int64_t delay_ps = 0;
};

/// Nodes, ports and routes of a topology. Nodes 0 .. hosts-1 are hosts (node id = host id).
struct FabricGraph {
  int hosts = 0;
  std::vector<std::string> names;              ///< per node: h3 / n1g3, sw0, leaf1, spine0
  std::vector<std::vector<PortLink>> ports;    ///< per node
  /// routes[node][dst host]: the node's ports on a shortest path to dst (switches only).
  std::vector<std::vector<std::vector<std::uint16_t>>> routes;

  int nodes() const noexcept { return static_cast<int>(names.size()); }
  bool is_host(int node) const noexcept { return node < hosts; }
};

/// Builds the graph of `t` (a checked TopologySpec: see parse_scenario).
/// single_switch: hosts on port i of sw0. leaf_spine: host i on leaf i / hosts_per_leaf; leaf
/// uplink j to spine j. rail_optimized: GPU g of node n on leaf g (rail g), port n; leaf uplink j
/// to spine j.
FabricGraph build_fabric(const TopologySpec& t);

/// ECMP hash of a flow's data direction (its 5-tuple: hosts and the queue pair's UDP port).
std::uint32_t flow_hash(int src, int dst, std::uint32_t flow, std::uint64_t seed) noexcept;

/// Salt of switch `node`'s ECMP choice.
std::uint64_t switch_salt(std::uint64_t ecmp_seed, int node) noexcept;

/// The directed links (as (node, port) pairs flattened to node * 65536 + port) a packet with
/// `hash` follows from host `src` to host `dst`, choosing among equal-cost ports as switches do.
std::vector<std::int64_t> route_path(const FabricGraph& g, int src, int dst, std::uint32_t hash, std::uint64_t ecmp_seed);

}  // namespace railkit::sim
