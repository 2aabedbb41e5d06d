#include "sim/collective.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <map>
#include <numeric>
#include <set>

#include <fmt/format.h>

#include "core/collectives.hpp"
#include "core/error.hpp"
#include "sim/flow_model.hpp"
#include "sim/qp_route.hpp"
#include "sim/roce.hpp"
#include "sim/topology.hpp"

namespace railkit::sim {

const char* algo_name(Algo a) noexcept { return a == Algo::Ring ? "Ring" : "Tree"; }

const char* proto_name(Proto p) noexcept {
  switch (p) {
    case Proto::LL: return "LL";
    case Proto::LL128: return "LL128";
    case Proto::Simple: return "Simple";
  }
  return "?";
}

const char* fidelity_name(Fidelity f) noexcept { return f == Fidelity::Packet ? "packet" : "flow"; }

Fidelity parse_fidelity(const std::string& text, const std::string& what) {
  if (text == "packet") return Fidelity::Packet;
  if (text == "flow") return Fidelity::Flow;
  throw UsageError(what + ": '" + text + "': expected packet or flow");
}

}  // namespace railkit::sim

// ---------------------------------------------------------------------------------------------
// Planning: how NCCL moves the data (../shared/reference/nccl.md, "How NCCL moves data").

namespace railkit::sim {
namespace {

/// NCCL's cost-model latencies in microseconds (src/graph/tuning.cc), indexed by protocol
/// LL, LL128, Simple.
struct AlgoLatency {
  double base[3];
  double net[3];
  double nvlink[3];
};
constexpr AlgoLatency kRingLatency{{6.6, 14, 8.4}, {2.7, 4, 14}, {0.6, 1.9, 3.4}};
constexpr AlgoLatency kTreeLatency{{6.8, 14, 8.4}, {5, 8.5, 14}, {0.6, 1.25, 4}};

int proto_index(Proto p) noexcept { return p == Proto::LL ? 0 : p == Proto::LL128 ? 1 : 2; }

/// Payload share of what a protocol moves (NCCL's cost model: LL at half the bus bandwidth,
/// LL128 at 0.92 of it, Simple all of it).
double proto_factor(Proto p) noexcept { return p == Proto::LL ? 0.5 : p == Proto::LL128 ? 0.92 : 1.0; }

int log2_ceil(int n) {
  int k = 0;
  while ((1 << k) < n) ++k;
  return k;
}

struct Shape {
  int G = 1;  ///< GPUs per node
  int N = 1;  ///< nodes
  int n = 1;  ///< ranks
  int gpu(int node, int local) const { return node * G + local; }
  int node(int rank) const { return rank / G; }
  int local(int rank) const { return rank % G; }
};

/// Total latency (us) of algorithm/protocol for `coll` on the shape, NCCL's formulas.
double total_latency_us(CollKind coll, Algo a, Proto p, const Shape& s) {
  const int k = proto_index(p);
  if (collective(coll).point_to_point)
    return kRingLatency.base[2] + (s.N > 1 ? kRingLatency.net[2] : kRingLatency.nvlink[2]);
  if (a == Algo::Tree)
    return kTreeLatency.base[k] + 2.0 * ((s.G - 1) * kTreeLatency.nvlink[k] + log2_ceil(s.N) * kTreeLatency.net[k]);
  int steps = s.n - 1, inter = s.N - 1;
  if (coll == CollKind::AllReduce) {
    steps = 2 * (s.n - 1);
    inter = 2 * (s.N - 1);
  }
  return kRingLatency.base[k] + (steps - inter) * kRingLatency.nvlink[k] + inter * kRingLatency.net[k];
}

/// Bytes each rank moves over its busiest path per byte of nccl-tests' size (the busbw factor).
double bus_factor(CollKind coll, int n) { return busbw_factor(collective(coll), n); }

class Planner {
 public:
  Planner(const ClusterSpec& c, const NcclSettings& s, const CollRequest& r) : c_(c), s_(s), r_(r) {
    sh_.G = c.gpus_per_node();
    sh_.N = c.nodes();
    sh_.n = c.gpus();
  }

  CollPlan plan() {
    if (r_.root < 0 || r_.root >= sh_.n)
      throw UsageError(fmt::format("root {}: the simulated cluster has ranks 0..{}", r_.root, sh_.n - 1));
    CollPlan p;
    p.priority = s_.ib_tc ? (*s_.ib_tc >> 5) : c_.fabric.nic.data_priority;
    p.channels = channels();
    choose(p);
    switch (r_.coll) {
      case CollKind::AllReduce:
        if (p.algo == Algo::Tree) tree_allreduce(p);
        else ring_steps(p, 2 * (sh_.n - 1), static_cast<double>(r_.bytes) / sh_.n);
        break;
      case CollKind::AllGather:
      case CollKind::ReduceScatter: ring_steps(p, sh_.n - 1, static_cast<double>(r_.bytes) / sh_.n); break;
      case CollKind::Broadcast: chain(p, false); break;
      case CollKind::Reduce: chain(p, true); break;
      case CollKind::AllToAll: alltoall(p); break;
      case CollKind::SendRecv: sendrecv(p); break;
    }
    const int nsteps = std::accumulate(p.steps.begin(), p.steps.end(), 0, [](int a, const Step& st) { return a + st.repeat; });
    const double lat = total_latency_us(r_.coll, p.algo, p.proto, sh_);
    for (Step& st : p.steps) st.latency_us = nsteps > 0 ? lat / nsteps : 0;
    observe(p);
    return p;
  }

 private:
  bool p2p() const { return collective(r_.coll).point_to_point; }

  int channels() const {
    int ch = 2 * sh_.G;  // two channels per NIC (typical H100 RoCE)
    if (s_.min_channels > 0) ch = std::max(ch, s_.min_channels);
    return std::clamp(ch, 1, s_.max_channels);
  }

  /// Algorithm and protocol by NCCL's cost model: latency + bytes / (bus bandwidth x efficiency).
  void choose(CollPlan& p) {
    if (p2p()) {
      p.algo = Algo::Ring;
      p.proto = Proto::Simple;
      p.protocol_factor = 1;
      p.notes.push_back("point-to-point (grouped send/recv): no algorithm choice, protocol Simple");
      return;
    }
    const double payload_share = static_cast<double>(c_.fabric.topology.mtu_bytes) / data_wire_bytes(c_.fabric.topology.mtu_bytes);
    const double bus_Bps = sh_.N > 1 ? sh_.G * c_.fabric.topology.link_rate_bps / 8 * payload_share : c_.nvlink_rate_bps / 8;
    double best = std::numeric_limits<double>::infinity();
    for (Algo a : s_.algos) {
      if (a == Algo::Tree && (r_.coll != CollKind::AllReduce || sh_.N < 2)) continue;
      for (Proto pr : s_.protos) {
        const double eff = proto_factor(pr) * (a == Algo::Tree ? 0.92 : 1.0);
        const double t = total_latency_us(r_.coll, a, pr, sh_) +
                         static_cast<double>(r_.bytes) * bus_factor(r_.coll, sh_.n) / (bus_Bps * eff) * 1e6;
        if (t < best) {
          best = t;
          p.algo = a;
          p.proto = pr;
        }
      }
    }
    if (best == std::numeric_limits<double>::infinity()) {
      // Only Tree allowed where NCCL has no tree: NCCL falls back to Ring.
      p.algo = Algo::Ring;
      p.proto = s_.protos.back();
      p.notes.push_back("NCCL_ALGO allows only Tree, which this collective does not have here: Ring");
    }
    p.protocol_factor = proto_factor(p.proto);
  }

  std::uint64_t wire_bytes(double payload, const CollPlan& p) const {
    const double b = payload / p.protocol_factor;
    return b <= 0 ? 0 : static_cast<std::uint64_t>(std::ceil(b));
  }

  /// Channel c's ring: rail r = c mod G enters every node on GPU r; inside the node the ring
  /// goes r, r+1, ... (NVLink) and leaves from GPU r-1.
  std::vector<int> ring(int c) const {
    const int r = c % sh_.G;
    std::vector<int> order;
    order.reserve(static_cast<std::size_t>(sh_.n));
    for (int k = 0; k < sh_.N; ++k)
      for (int i = 0; i < sh_.G; ++i) order.push_back(sh_.gpu(k, (r + i) % sh_.G));
    return order;
  }

  /// A ring edge a -> b of channel c (b the next rank).
  Transfer ring_edge(int a, int b, int c, std::uint64_t bytes) {
    Transfer t;
    t.src = a;
    t.dst = b;
    t.bytes = bytes;
    t.channel = c;
    if (sh_.node(a) == sh_.node(b)) return t;
    t.net = true;
    t.qps = s_.qps_per_connection;
    t.nic_dst = b;
    if (s_.cross_nic == 1) {
      t.nic_src = a;  // leaves on its own rail: crosses to rail r above the leaves
    } else {
      const int rail = sh_.local(b);
      t.nic_src = sh_.gpu(sh_.node(a), rail);  // same rail in and out
      if (!s_.pxn_disable && t.nic_src != a) t.relay = t.nic_src;  // NCCL's ring PXN
      else if (t.nic_src != a) pcie_exit_ = true;
    }
    return t;
  }

  void ring_steps(CollPlan& p, int steps, double per_rank_payload) {
    Step st;
    st.repeat = steps;
    const std::uint64_t bytes = wire_bytes(per_rank_payload / p.channels, p);
    for (int c = 0; c < p.channels; ++c) {
      const std::vector<int> order = ring(c);
      for (int i = 0; i < sh_.n; ++i) st.transfers.push_back(ring_edge(order[i], order[(i + 1) % sh_.n], c, bytes));
    }
    if (bytes > 0) p.steps.push_back(std::move(st));
    if (pcie_exit_) p.notes.push_back("PXN disabled: the ring leaves each node on its entry rail through the exit GPU's "
                                      "PCIe/CPU path to that NIC, whose cost is not modelled");
  }

  /// Broadcast (from the root down the ring) or reduce (up the ring to the root), pipelined:
  /// every chain edge carries the channel's share at once.
  void chain(CollPlan& p, bool to_root) {
    Step st;
    const std::uint64_t bytes = wire_bytes(static_cast<double>(r_.bytes) / p.channels, p);
    for (int c = 0; c < p.channels; ++c) {
      std::vector<int> order = ring(c);
      std::rotate(order.begin(), std::find(order.begin(), order.end(), r_.root), order.end());
      for (int i = 0; i + 1 < sh_.n; ++i) {
        Transfer t = ring_edge(order[i], order[i + 1], c, bytes);
        if (to_root) {
          std::swap(t.src, t.dst);
          if (t.net) {
            // Toward the root the same rail carries it: the entry GPU's NIC sends; the hop to the
            // receiving GPU inside its node is not modelled.
            const int back = t.nic_src;
            t.nic_src = t.nic_dst;
            t.nic_dst = back;
            t.relay = -1;
          }
        }
        st.transfers.push_back(t);
      }
    }
    if (bytes > 0) p.steps.push_back(std::move(st));
  }

  /// Tree all-reduce: a chain inside each node (rail r's GPU at its head) and a double binary
  /// tree across nodes (channels 0..G-1 on tree A, G..2G-1 on tree B, whose inner nodes are A's
  /// leaves); reduce up and broadcast down run at once (pipelined).
  void tree_allreduce(CollPlan& p) {
    Step st;
    const std::uint64_t bytes = wire_bytes(static_cast<double>(r_.bytes) / p.channels, p);
    auto add = [&](int a, int b, int c, bool net) {
      Transfer t;
      t.src = a;
      t.dst = b;
      t.bytes = bytes;
      t.channel = c;
      if (net) {
        t.net = true;
        t.nic_src = a;
        t.nic_dst = b;
        t.qps = s_.qps_per_connection;
      }
      st.transfers.push_back(t);
    };
    for (int c = 0; c < p.channels; ++c) {
      const int r = c % sh_.G;
      const bool mirrored = (c / sh_.G) % 2 == 1;
      for (int k = 0; k < sh_.N; ++k) {
        for (int i = 0; i + 1 < sh_.G; ++i) {
          const int up_from = sh_.gpu(k, (r + i + 1) % sh_.G), up_to = sh_.gpu(k, (r + i) % sh_.G);
          add(up_from, up_to, c, false);
          add(up_to, up_from, c, false);
        }
        const int m = mirrored ? sh_.N - 1 - k : k;
        if (m == 0) continue;
        const int parent_m = (m - 1) / 2;
        const int parent = mirrored ? sh_.N - 1 - parent_m : parent_m;
        add(sh_.gpu(k, r), sh_.gpu(parent, r), c, true);
        add(sh_.gpu(parent, r), sh_.gpu(k, r), c, true);
      }
    }
    if (bytes > 0) p.steps.push_back(std::move(st));
  }

  /// A point-to-point transfer from a to b (grouped send/recv).
  Transfer p2p_edge(int a, int b, std::uint64_t bytes) const {
    Transfer t;
    t.src = a;
    t.dst = b;
    t.bytes = bytes;
    if (sh_.node(a) == sh_.node(b)) return t;
    t.net = true;
    t.qps = s_.channels_per_net_peer * s_.qps_per_connection;
    t.nic_dst = b;
    t.nic_src = a;
    // PXN for send/recv: level 2 relays through the local GPU on the peer's rail; level 1 only
    // when the sender has no close NIC, which never happens with one NIC per GPU.
    if (!s_.pxn_disable && s_.p2p_pxn_level == 2) {
      const int proxy = sh_.gpu(sh_.node(a), sh_.local(b));
      if (proxy != a) {
        t.relay = proxy;
        t.nic_src = proxy;
      }
    }
    return t;
  }

  void alltoall(CollPlan& p) {
    Step st;
    const std::uint64_t bytes = wire_bytes(static_cast<double>(r_.bytes) / sh_.n, p);
    st.transfers.reserve(static_cast<std::size_t>(sh_.n) * static_cast<std::size_t>(sh_.n - 1));
    for (int a = 0; a < sh_.n; ++a)
      for (int b = 0; b < sh_.n; ++b)
        if (a != b) st.transfers.push_back(p2p_edge(a, b, bytes));
    if (bytes > 0) p.steps.push_back(std::move(st));
  }

  void sendrecv(CollPlan& p) {
    Step st;
    const std::uint64_t bytes = wire_bytes(static_cast<double>(r_.bytes), p);
    for (int a = 0; a < sh_.n; ++a) st.transfers.push_back(p2p_edge(a, (a + 1) % sh_.n, bytes));
    if (bytes > 0) p.steps.push_back(std::move(st));
  }

  /// What NCCL's log would show (connection lines per channel, PXN relays, NICs).
  void observe(CollPlan& p) const {
    NcclLogSummary& o = p.observed;
    o.net = "IB";
    o.transport = "RoCE";
    o.nranks = sh_.n;
    o.nnodes = sh_.N;
    o.files = {"simulated"};
    for (const auto& [name, value] : s_.honoured) o.env_from_log[name] = value;
    for (int k = 0; k < sh_.N; ++k) o.hosts.insert(fmt::format("n{}", k));
    for (int g = 0; g < sh_.G; ++g) o.nics_available.insert(NcclNic{fmt::format("rail{}", g), 1, "RoCE"});
    bool ring_relay = false;
    std::set<std::pair<int, int>> p2p_seen;
    for (const Step& st : p.steps)
      for (const Transfer& t : st.transfers) {
        if (!t.net) {
          ++o.transports["P2P"];
          continue;
        }
        if (p2p()) {
          // One connection per peer pair and net channel.
          if (!p2p_seen.insert({t.src, t.dst}).second) continue;
        }
        const std::int64_t conns = p2p() ? s_.channels_per_net_peer : 1;
        o.send_net_connections += conns;
        o.recv_net_connections += conns;
        o.transports["NET"] += 2 * conns;
        o.nic_connections[fmt::format("rail{}", sh_.local(t.nic_src))] += conns;
        o.nic_connections[fmt::format("rail{}", sh_.local(t.nic_dst))] += conns;
        if (t.relay >= 0) {
          o.pxn_relays += conns;
          if (p2p()) o.p2p_pxn_relays += conns;
          else ring_relay = true;
          o.relay_ranks.insert(t.relay);
        } else {
          o.direct_net_connections += conns;
        }
      }
    if (!p2p()) {
      o.ring_pxn = ring_relay;
      o.ring_channels = p.channels;
      o.graph_channels = p.channels;
      NcclGraphPattern g;
      g.pattern = p.algo == Algo::Ring ? 4 : 3;
      g.cross_nic = s_.cross_nic == 1 ? 1 : 0;
      g.n_channels = p.channels;
      g.bw_intra_GBps = c_.nvlink_rate_bps / 8e9 / p.channels;
      g.bw_inter_GBps = c_.fabric.topology.link_rate_bps / 8e9 * sh_.G / p.channels;
      g.type_intra = "NVL";
      g.type_inter = ring_relay ? "PXN" : "PIX";
      g.same_channels = 1;
      o.patterns.push_back(g);
    }
  }

  const ClusterSpec& c_;
  const NcclSettings& s_;
  const CollRequest& r_;
  Shape sh_;
  bool pcie_exit_ = false;
};

}  // namespace

CollPlan plan_collective(const ClusterSpec& c, const NcclSettings& s, const CollRequest& r) {
  if (c.gpus() < 2) throw UsageError("the simulated cluster needs at least 2 GPUs");
  return Planner(c, s, r).plan();
}

// ---------------------------------------------------------------------------------------------
// Flow level.

namespace {

/// The fabric and NVLink as links of a FlowSet, with each transfer's paths.
class FlowFabric {
 public:
  explicit FlowFabric(const ClusterSpec& c) : c_(c), graph_(build_fabric(c.fabric.topology)) {
    payload_share_ = static_cast<double>(c.fabric.topology.mtu_bytes) / data_wire_bytes(c.fabric.topology.mtu_bytes);
  }

  /// Adds `t` to `fs` (qps flows when it crosses the network) and counts its bytes.
  void add(FlowSet& fs, const Transfer& t, FabricCounters& k, std::int64_t& delay_ps) {
    std::vector<int> links;
    std::int64_t delay = 0;
    if (!t.net || t.relay >= 0) {
      const int to = t.net ? t.relay : t.dst;
      links.push_back(nvlink(fs, t.src, 0));
      links.push_back(nvlink(fs, to, 1));
      delay += c_.nvlink_delay_ps;
      k.nvlink_bytes += t.bytes;
    }
    if (!t.net) {
      fs.add_flow(links, static_cast<double>(t.bytes));
      delay_ps = std::max(delay_ps, delay);
      return;
    }
    k.net_bytes += t.bytes;
    const int qps = std::max(1, t.qps);
    const std::size_t base = links.size();
    for (int q = 0; q < qps; ++q) {
      links.resize(base);
      // The same queue pair identity (and so ECMP path) as the packet level gives it.
      const std::uint32_t hash = transfer_qp_hash(t.nic_src, t.nic_dst, t.src, t.channel, q, c_.fabric.seed);
      std::int64_t path_delay = delay;
      const std::vector<std::int64_t> route = route_path(graph_, t.nic_src, t.nic_dst, hash, c_.fabric.sw.ecmp_seed);
      for (std::int64_t l : route) {
        links.push_back(fabric_link(fs, l));
        path_delay += graph_.ports[static_cast<std::size_t>(l / 65536)][static_cast<std::size_t>(l % 65536)].delay_ps;
      }
      const bool spine = crosses_spine(graph_, route);
      const std::uint64_t share = t.bytes / static_cast<std::uint64_t>(qps) + (static_cast<std::uint64_t>(q) < t.bytes % static_cast<std::uint64_t>(qps) ? 1 : 0);
      if (spine) k.spine_bytes += share;
      fs.add_flow(links, static_cast<double>(share));
      delay_ps = std::max(delay_ps, path_delay);
    }
  }

  void reset() {
    link_index_.clear();
    nvl_index_.clear();
  }

 private:
  int nvlink(FlowSet& fs, int gpu, int dir) {
    auto [it, fresh] = nvl_index_.emplace(std::pair{gpu, dir}, 0);
    if (fresh) it->second = fs.add_link(c_.nvlink_rate_bps / 8);
    return it->second;
  }
  int fabric_link(FlowSet& fs, std::int64_t l) {
    auto [it, fresh] = link_index_.emplace(l, 0);
    if (fresh) {
      const PortLink& pl = graph_.ports[static_cast<std::size_t>(l / 65536)][static_cast<std::size_t>(l % 65536)];
      it->second = fs.add_link(pl.rate_bps / 8 * payload_share_);
    }
    return it->second;
  }

  const ClusterSpec& c_;
  FabricGraph graph_;
  double payload_share_ = 1;
  std::map<std::int64_t, int> link_index_;
  std::map<std::pair<int, int>, int> nvl_index_;
};

}  // namespace

CollOutcome run_flow_plan(const ClusterSpec& c, CollPlan plan) {
  const auto t0 = std::chrono::steady_clock::now();
  CollOutcome out;
  out.fidelity = Fidelity::Flow;
  FlowFabric fabric(c);
  double time_s = 0;
  for (const Step& st : plan.steps) {
    FlowSet fs;
    FabricCounters once;
    std::int64_t delay_ps = 0;
    fabric.reset();
    for (const Transfer& t : st.transfers) fabric.add(fs, t, once, delay_ps);
    const std::vector<double> done = fs.drain(&out.counters.events);
    const double last = done.empty() ? 0.0 : *std::max_element(done.begin(), done.end());
    const double step_s = last + static_cast<double>(delay_ps) * 1e-12 + st.latency_us * 1e-6;
    time_s += step_s * st.repeat;
    out.latency_us += st.latency_us * st.repeat;
    const auto rep = static_cast<std::uint64_t>(st.repeat);
    out.counters.net_bytes += once.net_bytes * rep;
    out.counters.spine_bytes += once.spine_bytes * rep;
    out.counters.nvlink_bytes += once.nvlink_bytes * rep;
  }
  out.time_us = time_s * 1e6;
  plan.steps.clear();
  out.plan = std::move(plan);
  out.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return out;
}

CollOutcome simulate_collective(const ClusterSpec& c, const NcclSettings& s, const CollRequest& r, Fidelity f) {
  CollPlan plan = plan_collective(c, s, r);
  return f == Fidelity::Flow ? run_flow_plan(c, std::move(plan)) : run_packet_plan(c, std::move(plan));
}

}  // namespace railkit::sim
