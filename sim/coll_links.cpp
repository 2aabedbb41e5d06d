#include "sim/coll_links.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "sim/qp_route.hpp"
#include "sim/roce.hpp"

namespace railkit::sim {

CollLinks::CollLinks(const ClusterSpec& c)
    : c_(c), graph_(build_fabric(c.fabric.topology)), nvlink_(static_cast<std::size_t>(2 * c.gpus()), -1) {
  payload_share_ = static_cast<double>(c.fabric.topology.mtu_bytes) / data_wire_bytes(c.fabric.topology.mtu_bytes);
}

int CollLinks::nvlink(int gpu, int dir) {
  int& l = nvlink_[static_cast<std::size_t>(2 * gpu + dir)];
  if (l < 0) {
    l = static_cast<int>(capacity_.size());
    capacity_.push_back(c_.nvlink_rate_bps / 8);
    what_.push_back(-1 - (2 * gpu + dir));
  }
  return l;
}

int CollLinks::fabric(std::int64_t port) {
  auto [it, fresh] = fabric_.try_emplace(port, 0);
  if (fresh) {
    it->second = static_cast<int>(capacity_.size());
    const PortLink& pl = graph_.ports[static_cast<std::size_t>(port / 65536)][static_cast<std::size_t>(port % 65536)];
    capacity_.push_back(pl.rate_bps / 8 * payload_share_);
    what_.push_back(port);
  }
  return it->second;
}

std::string CollLinks::name(int l) const {
  const std::int64_t w = what_[static_cast<std::size_t>(l)];
  if (w < 0) {
    const int k = static_cast<int>(-1 - w);
    return fmt::format("NVLink {} of {}", k % 2 == 0 ? "egress" : "ingress", host_name(c_.fabric.topology, k / 2));
  }
  const auto node = static_cast<std::size_t>(w / 65536);
  const PortLink& pl = graph_.ports[node][static_cast<std::size_t>(w % 65536)];
  return fmt::format("link {} -> {}", graph_.names[node], graph_.names[static_cast<std::size_t>(pl.peer)]);
}

TransferFlows CollLinks::flows_of(const Transfer& t) {
  TransferFlows out;
  if (t.bytes == 0 || (!t.net && t.src == t.dst)) return out;
  std::vector<int> head;
  std::int64_t delay = 0;
  if (!t.net || t.relay >= 0) {
    head = {nvlink(t.src, 0), nvlink(t.net ? t.relay : t.dst, 1)};
    delay = c_.nvlink_delay_ps;
    out.nvlink_bytes = t.bytes;
  }
  if (!t.net) {
    out.flows.push_back(TransferFlow{head, t.bytes, false});
    out.delay_ps = delay;
    return out;
  }
  out.net_bytes = t.bytes;
  const auto qps = static_cast<std::uint64_t>(std::max(1, t.qps));
  for (std::uint64_t q = 0; q < qps; ++q) {
    TransferFlow f{head, t.bytes / qps + (q < t.bytes % qps ? 1 : 0), false};
    if (f.bytes == 0) continue;
    // The same queue pair identity (and so ECMP path) as the packet level gives it.
    const std::uint32_t hash = transfer_qp_hash(t.nic_src, t.nic_dst, t.src, t.channel, static_cast<int>(q), c_.fabric.seed);
    const std::vector<std::int64_t> route = route_path(graph_, t.nic_src, t.nic_dst, hash, c_.fabric.sw.ecmp_seed);
    std::int64_t path_delay = delay;
    for (std::int64_t p : route) {
      f.links.push_back(fabric(p));
      path_delay += graph_.ports[static_cast<std::size_t>(p / 65536)][static_cast<std::size_t>(p % 65536)].delay_ps;
    }
    f.spine = crosses_spine(graph_, route);
    if (f.spine) out.spine_bytes += f.bytes;
    out.delay_ps = std::max(out.delay_ps, path_delay);
    out.flows.push_back(std::move(f));
  }
  return out;
}

std::pair<double, std::string> busiest_link_s(const ClusterSpec& c, const std::vector<Step>& steps) {
  CollLinks links(c);
  std::vector<double> load;
  for (const Step& s : steps) {
    if (s.repeat < 1) continue;
    for (const Transfer& t : s.transfers) {
      for (const TransferFlow& f : links.flows_of(t).flows) {
        load.resize(links.count(), 0.0);
        for (int l : f.links) load[static_cast<std::size_t>(l)] += static_cast<double>(f.bytes) * s.repeat;
      }
    }
  }
  double worst = 0;
  int at = -1;
  for (std::size_t l = 0; l < load.size(); ++l) {
    const double t = load[l] / links.capacity(static_cast<int>(l));
    if (t > worst) {
      worst = t;
      at = static_cast<int>(l);
    }
  }
  return {worst, at < 0 ? std::string("none") : links.name(at)};
}

}  // namespace railkit::sim
