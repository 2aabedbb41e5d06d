// The planner: how NCCL moves one collective's data (../shared/reference/nccl.md, "How NCCL moves
// data"): rings, trees, chains and grouped point-to-point as steps of transfers, and what NCCL's
// log would show of them. The algorithm and protocol are given (collective_choice.cpp chooses).
#include <algorithm>
#include <cmath>
#include <numeric>
#include <set>

#include <fmt/format.h>

#include "core/collectives.hpp"
#include "core/error.hpp"
#include "sim/collective.hpp"
#include "sim/collective_model.hpp"

namespace railkit::sim {
namespace {

class Planner {
 public:
  Planner(const ClusterSpec& c, const NcclSettings& s, const CollRequest& r) : c_(c), s_(s), r_(r), sh_(shape_of(c)) {}

  CollPlan plan(Algo a, Proto proto) {
    if (r_.root < 0 || r_.root >= sh_.n)
      throw UsageError(fmt::format("root {}: the simulated cluster has ranks 0..{}", r_.root, sh_.n - 1));
    CollPlan p;
    p.priority = s_.ib_tc ? (*s_.ib_tc >> 5) : c_.fabric.nic.data_priority;
    p.channels = channels();
    p.algo = has_algo(r_.coll, a, sh_) ? a : Algo::Ring;
    p.proto = p2p() ? Proto::Simple : proto;
    p.protocol_factor = proto_factor(p.proto);
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
    const int nsteps = std::accumulate(p.steps.begin(), p.steps.end(), 0, [](int n, const Step& st) { return n + st.repeat; });
    const double lat = nccl_latency_us(r_.coll, p.algo, p.proto, sh_);
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
      const auto first = static_cast<std::uint32_t>(st.transfers.size());
      for (int i = 0; i < sh_.n; ++i) {
        Transfer t = ring_edge(order[i], order[(i + 1) % sh_.n], c, bytes);
        // Step s of this edge forwards what the edge into order[i] delivered in step s - 1.
        t.after = {first + static_cast<std::uint32_t>((i + sh_.n - 1) % sh_.n)};
        st.transfers.push_back(std::move(t));
      }
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

CollPlan plan_with(const ClusterSpec& c, const NcclSettings& s, const CollRequest& r, Algo a, Proto p) {
  if (c.gpus() < 2) throw UsageError("the simulated cluster needs at least 2 GPUs");
  return Planner(c, s, r).plan(a, p);
}

}  // namespace railkit::sim
