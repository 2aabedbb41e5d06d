#include "sim/network.hpp"

#include <algorithm>
#include <chrono>
#include <map>
#include <numeric>
#include <ostream>

#include <fmt/format.h>

#include "sim/fairness.hpp"
#include "sim/quantity.hpp"
#include "sim/roce.hpp"

namespace railkit::sim {
namespace {

NicConfig nic_config(const Scenario& s) {
  NicConfig c;
  c.cc = s.nic.cc;
  c.mtu_bytes = s.topology.mtu_bytes;
  c.ack_every = s.nic.ack_every_packets;
  c.rto_ps = s.nic.retransmit_timeout_ps;
  const double line = s.topology.link_rate_bps;
  if (s.nic.cc == CcKind::DcqcnPaper) {
    c.rp = rp_config(s.nic.paper, line);
    c.cnp_interval_ps = s.nic.paper.cnp_interval_ps;
    c.cnp_window = true;
    c.cnp_priority = s.nic.paper.cnp_priority;
  } else {
    c.rp = rp_config(s.nic.nvidia, line, s.nic.byte_reset_unit_bytes);
    c.cnp_interval_ps = s.nic.nvidia.min_time_between_cnps * 1'000'000;
    c.cnp_window = false;
    c.cnp_priority = static_cast<int>(s.nic.nvidia.cnp_802p_prio);
  }
  return c;
}

/// The fabric of `s`, its switch buffers checked first (a buffer too small for its headroom is
/// refused before hosts, ports and routes are built).
FabricGraph checked_fabric(const Scenario& s) {
  check_switch_buffers(s);
  return build_fabric(s.topology);
}

double gbps(std::uint64_t bytes, std::int64_t ps) {
  return ps > 0 ? static_cast<double>(bytes) * 8.0 / (static_cast<double>(ps) * 1e-12) / 1e9 : 0.0;
}

}  // namespace

const PortResult* SimResult::find_port(const std::string& node, int port) const {
  for (const auto& p : ports)
    if (p.node == node && p.port == port) return &p;
  return nullptr;
}

Network::Network(const Scenario& s, Engine& engine)
    : s_(s), engine_(engine), graph_(checked_fabric(s)), nic_(nic_config(s)), interval_ps_(s.sample_interval()) {
  flows_.reserve(s.flows.size());
  const std::uint32_t mtu = s.topology.mtu_bytes;
  for (std::size_t i = 0; i < s.flows.size(); ++i) {
    const FlowSpec& f = s.flows[i];
    FlowState& st = flows_.emplace_back(f, &nic_.rp);
    if (f.bytes > 0) {
      st.total_pkts = (f.bytes + mtu - 1) / mtu;
      st.last_payload = static_cast<std::uint32_t>(f.bytes - (st.total_pkts - 1) * mtu);
    }
    st.hash = flow_hash(f.src, f.dst, static_cast<std::uint32_t>(i), s.seed);
    st.reverse_hash = flow_hash(f.dst, f.src, static_cast<std::uint32_t>(i), s.seed);
  }
  build_nodes();
  for (std::size_t i = 0; i < flows_.size(); ++i)
    Engine::after(s.flows[i].start_ps, &Nic::start_flow, nics_[static_cast<std::size_t>(s.flows[i].src)].get(),
                  static_cast<std::uint32_t>(i));
  Engine::after(interval_ps_, &Network::sample, this);
  if (s.sw.pfc_enabled && std::find(s.sw.pfc.begin(), s.sw.pfc.end(), true) != s.sw.pfc.end() && !switches_.empty()) {
    watch_ = std::make_unique<DeadlockWatch>(graph_, switches_, s.sw);
    Engine::after(watch_->period_ps(), &Network::watch, this);
  }
  samples_.push_back(take());  // t = 0
  sample_t_.push_back(0);
  if (s.steady_from() == 0) {
    steady_ = samples_.front();
    steady_taken_ = true;
  }
}

Network::Network(const Scenario& s, Engine& engine, OpenFlows)
    : s_(s), engine_(engine), graph_(checked_fabric(s)), nic_(nic_config(s)) {
  build_nodes();
}

std::uint32_t Network::add_flow(int src, int dst, int priority, std::uint32_t hash, std::uint32_t reverse_hash) {
  FlowSpec spec;
  spec.src = src;
  spec.dst = dst;
  spec.start_ps = Engine::now_ps();
  spec.priority = priority;
  FlowState& st = flows_.emplace_back(spec, &nic_.rp);
  st.total_pkts = 0;
  st.hash = hash;
  st.reverse_hash = reverse_hash;
  return static_cast<std::uint32_t>(flows_.size() - 1);
}

void Network::post(std::uint32_t f, std::uint64_t bytes) {
  nics_[static_cast<std::size_t>(flows_[f].spec.src)]->post(f, bytes);
}

void Network::set_route(int node, int dst, std::vector<std::uint16_t> ports) {
  graph_.routes.at(static_cast<std::size_t>(node)).at(static_cast<std::size_t>(dst)) = ports;
  switches_.at(static_cast<std::size_t>(node - graph_.hosts))->set_route(dst, std::move(ports));
}

void Network::set_listener(DeliveryListener* l) noexcept {
  for (auto& n : nics_) n->set_listener(l);
}

FabricTotals Network::totals() const {
  FabricTotals t;
  for (const EgressPort* p : ports_) {
    t.packet_hops += p->counters.tx_packets;
    t.drops += p->counters.drops;
    t.ecn_marked += p->counters.ecn_marked;
    t.pause_tx += std::accumulate(p->counters.pause_tx.begin(), p->counters.pause_tx.end(), std::uint64_t{0});
  }
  for (const FlowState& f : flows_) {
    t.cnps += f.cnps_sent;
    t.retransmitted_packets += f.retransmitted_packets;
    t.timeouts += f.timeouts;
  }
  return t;
}

void Network::build_nodes() {
  std::vector<Node*> node(static_cast<std::size_t>(graph_.nodes()), nullptr);
  for (int h = 0; h < graph_.hosts; ++h) {
    nics_.push_back(std::make_unique<Nic>(h, graph_.names[h], nic_, &flows_));
    node[h] = nics_.back().get();
  }
  for (int n = graph_.hosts; n < graph_.nodes(); ++n) {
    switches_.push_back(std::make_unique<Switch>(n, graph_.names[n], s_.sw, s_.topology.mtu_bytes, engine_.uniform(n)));
    node[n] = switches_.back().get();
  }
  for (int n = 0; n < graph_.nodes(); ++n)
    for (const PortLink& pl : graph_.ports[n]) {
      if (graph_.is_host(n)) nics_[n]->connect(pl.rate_bps, pl.delay_ps, node[pl.peer], pl.peer_port);
      else switches_[n - graph_.hosts]->add_port(pl.rate_bps, pl.delay_ps, node[pl.peer], pl.peer_port);
    }
  for (auto& sw : switches_) {
    sw->set_routes(graph_.routes[sw->id()]);
    sw->finalize();
    for (std::size_t p = 0; p < sw->ports().size(); ++p) {
      ports_.push_back(&sw->ports()[p].eg);
      port_ids_.emplace_back(sw->id(), static_cast<int>(p));
    }
  }
  for (int h = 0; h < graph_.hosts; ++h) {
    ports_.push_back(&nics_[h]->port());
    port_ids_.emplace_back(h, 0);
  }
}

Network::Sample Network::take() const {
  const std::int64_t now = Engine::now_ps();
  Sample x;
  x.delivered.reserve(flows_.size());
  for (const auto& f : flows_) {
    x.delivered.push_back(f.delivered_bytes);
    x.cc_rate_bps.push_back(f.rp.rate_bps());
  }
  for (const EgressPort* p : ports_) {
    x.queue_integral.push_back(p->queue.integral_at(now));
    x.pause_tx.push_back(std::accumulate(p->counters.pause_tx.begin(), p->counters.pause_tx.end(), std::uint64_t{0}));
    x.pause_rx.push_back(std::accumulate(p->counters.pause_rx.begin(), p->counters.pause_rx.end(), std::uint64_t{0}));
    x.tx_bytes.push_back(p->counters.tx_bytes);
    x.tx_packets.push_back(p->counters.tx_packets);
    x.ecn_marked.push_back(p->counters.ecn_marked);
  }
  return x;
}

void Network::sample() {
  const std::int64_t now = Engine::now_ps();
  samples_.push_back(take());
  sample_t_.push_back(now);
  const std::int64_t steady = s_.steady_from();
  if (!steady_taken_ && now >= steady) {
    steady_ = samples_.back();
    steady_taken_ = true;
  }
  const std::int64_t next = std::min(now + interval_ps_, s_.duration_ps);
  // The steady window starts exactly at steady_from: sample there even off the grid.
  const std::int64_t at = !steady_taken_ && steady < next ? steady : next;
  if (at > now) Engine::after(at - now, &Network::sample, this);
}

void Network::watch() {
  const std::int64_t now = Engine::now_ps();
  deadlock_ = watch_->check(now);
  if (deadlock_) {
    Engine::stop();
    return;
  }
  if (now + watch_->period_ps() < s_.duration_ps) Engine::after(watch_->period_ps(), &Network::watch, this);
}

void Network::run() {
  engine_.run_until(s_.duration_ps);
  const std::int64_t end = deadlock_ ? deadlock_->at_ps : s_.duration_ps;
  end_ps_ = end;
  if (sample_t_.back() < end) {  // the run ended between samples
    samples_.push_back(take());
    sample_t_.push_back(end);
  }
  for (EgressPort* p : ports_) p->close_pauses(end);
}

std::vector<double> Network::fair_shares() const {
  std::map<std::int64_t, int> index;
  std::vector<double> capacity;
  std::vector<std::vector<int>> paths;
  const double goodput_share = static_cast<double>(s_.topology.mtu_bytes) / data_wire_bytes(s_.topology.mtu_bytes);
  for (const auto& f : flows_) {
    std::vector<int> path;
    for (std::int64_t l : route_path(graph_, f.spec.src, f.spec.dst, f.hash, s_.sw.ecmp_seed)) {
      auto [it, fresh] = index.emplace(l, static_cast<int>(capacity.size()));
      if (fresh) capacity.push_back(graph_.ports[l / 65536][l % 65536].rate_bps * goodput_share);
      path.push_back(it->second);
    }
    paths.push_back(std::move(path));
  }
  auto r = maxmin_rates(paths, capacity);
  for (double& x : r) x /= 1e9;
  return r;
}

void Network::fill_flows(SimResult& r) const {
  const std::vector<double> fair = fair_shares();
  const std::int64_t end = end_ps_;
  const std::int64_t steady = s_.steady_from();
  const bool in_steady = steady_taken_ && end > steady;  // a run stopped before steady_from has no steady window
  std::vector<double> steady_long;
  std::vector<double> steady_all;
  for (std::size_t i = 0; i < flows_.size(); ++i) {
    const FlowState& f = flows_[i];
    FlowResult x;
    x.id = static_cast<int>(i);
    x.src = graph_.names[f.spec.src];
    x.dst = graph_.names[f.spec.dst];
    x.priority = f.spec.priority;
    x.start_us = ps_to_us(f.spec.start_ps);
    x.bytes = f.spec.bytes;
    x.delivered_bytes = f.delivered_bytes;
    const std::int64_t stop = f.completed_ps >= 0 ? f.completed_ps : end;
    x.throughput_Gbps = gbps(f.delivered_bytes, stop - f.spec.start_ps);
    x.steady_throughput_Gbps = in_steady ? gbps(f.delivered_bytes - steady_.delivered[i], end - steady) : 0.0;
    x.fair_share_Gbps = fair[i];
    if (f.completed_ps >= 0) x.fct_us = ps_to_us(f.completed_ps - f.spec.start_ps);
    x.sent_packets = f.sent_packets;
    x.retransmitted_packets = f.retransmitted_packets;
    x.out_of_sequence = f.out_of_sequence;
    x.timeouts = f.timeouts;
    x.ecn_marked = f.ecn_marked_received;
    x.cnps_sent = f.cnps_sent;
    x.cnps_received = f.cnps_received;
    x.rate_cuts = f.rp.cuts();
    x.rate_increases = f.rp.increases();
    x.final_rate_Gbps = f.rp.rate_bps() / 1e9;
    x.final_target_Gbps = f.rp.target_bps() / 1e9;
    x.final_alpha = f.rp.alpha();
    r.totals.retransmitted_packets += f.retransmitted_packets;
    r.totals.timeouts += f.timeouts;
    r.totals.cnps += f.cnps_sent;
    r.totals.goodput_Gbps += gbps(f.delivered_bytes, end);
    r.totals.steady_goodput_Gbps += x.steady_throughput_Gbps;
    (f.spec.bytes == 0 ? steady_long : steady_all).push_back(x.steady_throughput_Gbps);
    r.flows.push_back(std::move(x));
  }
  r.totals.jain_steady = jain_index(steady_long.empty() ? steady_all : steady_long);
}

void Network::fill_ports(SimResult& r) const {
  const std::int64_t end = end_ps_;
  const std::int64_t steady = s_.steady_from();
  const bool in_steady = steady_taken_ && end > steady;
  const Sample& last = samples_.back();
  for (std::size_t i = 0; i < ports_.size(); ++i) {
    const EgressPort& p = *ports_[i];
    const auto [node, port] = port_ids_[i];
    PortResult x;
    x.node = graph_.names[node];
    x.port = port;
    x.peer = graph_.names[graph_.ports[node][port].peer];
    x.host = graph_.is_host(node);
    x.rate_Gbps = p.rate_bps() / 1e9;
    x.tx_bytes = p.counters.tx_bytes;
    x.tx_packets = p.counters.tx_packets;
    x.utilisation = gbps(p.counters.tx_bytes, end) / x.rate_Gbps;
    x.steady_utilisation = in_steady ? gbps(p.counters.tx_bytes - steady_.tx_bytes[i], end - steady) / x.rate_Gbps : 0.0;
    x.queue_max_bytes = p.queue.max_bytes;
    x.queue_mean_bytes = last.queue_integral[i] / static_cast<double>(end);
    x.steady_queue_mean_bytes =
        in_steady ? (last.queue_integral[i] - steady_.queue_integral[i]) / static_cast<double>(end - steady) : 0.0;
    x.ecn_marked = p.counters.ecn_marked;
    x.drops = p.counters.drops;
    x.pause_tx = p.counters.pause_tx;
    x.resume_tx = p.counters.resume_tx;
    x.pause_rx = p.counters.pause_rx;
    x.resume_rx = p.counters.resume_rx;
    for (std::size_t q = 0; q < kPriorities; ++q) x.paused_us[q] = ps_to_us(p.counters.paused_ps[q]);
    r.totals.packet_hops += p.counters.tx_packets;
    r.totals.drops += x.drops;
    r.totals.ecn_marked += x.ecn_marked;
    for (std::size_t q = 0; q < kPriorities; ++q) {
      r.totals.pause_tx += x.pause_tx[q];
      r.totals.resume_tx += x.resume_tx[q];
    }
    const std::uint64_t steady_pauses = in_steady ? last.pause_tx[i] - steady_.pause_tx[i] : 0;
    r.totals.steady_pause_tx += steady_pauses;
    x.steady_pause_tx = steady_pauses;
    x.steady_tx_packets = in_steady ? last.tx_packets[i] - steady_.tx_packets[i] : 0;
    x.steady_ecn_marked = in_steady ? last.ecn_marked[i] - steady_.ecn_marked[i] : 0;
    r.ports.push_back(std::move(x));
  }
}

void Network::fill_series(SimResult& r) const {
  SimSeries& ser = r.series;
  for (std::size_t k = 1; k < sample_t_.size(); ++k) ser.t_us.push_back(ps_to_us(sample_t_[k]));
  const auto nflows = std::min<std::size_t>(flows_.size(), static_cast<std::size_t>(s_.output.max_series_flows));
  for (std::size_t f = 0; f < nflows; ++f) {
    ser.flow_names.push_back("f" + std::to_string(f) + " " + r.flows[f].src + "->" + r.flows[f].dst);
    std::vector<double> rate;
    std::vector<double> cc;
    for (std::size_t k = 1; k < sample_t_.size(); ++k) {
      rate.push_back(gbps(samples_[k].delivered[f] - samples_[k - 1].delivered[f], sample_t_[k] - sample_t_[k - 1]));
      cc.push_back(samples_[k].cc_rate_bps[f] / 1e9);
    }
    ser.flow_Gbps.push_back(std::move(rate));
    ser.flow_cc_Gbps.push_back(std::move(cc));
  }
  // Ports worth plotting: those that queued or paused, deepest queue first.
  std::vector<std::size_t> busy;
  for (std::size_t i = 0; i < ports_.size(); ++i)
    if (r.ports[i].queue_max_bytes > 0 || samples_.back().pause_tx[i] > 0 || samples_.back().pause_rx[i] > 0) busy.push_back(i);
  std::stable_sort(busy.begin(), busy.end(), [&](std::size_t a, std::size_t b) { return r.ports[a].queue_max_bytes > r.ports[b].queue_max_bytes; });
  busy.resize(std::min<std::size_t>(busy.size(), static_cast<std::size_t>(s_.output.max_series_ports)));
  for (std::size_t i : busy) {
    ser.port_names.push_back(r.ports[i].node + ":" + std::to_string(r.ports[i].port) + "->" + r.ports[i].peer);
    std::vector<double> q;
    std::vector<double> ptx;
    std::vector<double> prx;
    for (std::size_t k = 1; k < sample_t_.size(); ++k) {
      const double dt = static_cast<double>(sample_t_[k] - sample_t_[k - 1]);
      q.push_back(dt > 0 ? (samples_[k].queue_integral[i] - samples_[k - 1].queue_integral[i]) / dt : 0.0);
      ptx.push_back(static_cast<double>(samples_[k].pause_tx[i] - samples_[k - 1].pause_tx[i]));
      prx.push_back(static_cast<double>(samples_[k].pause_rx[i] - samples_[k - 1].pause_rx[i]));
    }
    ser.port_queue_bytes.push_back(std::move(q));
    ser.port_pause_tx.push_back(std::move(ptx));
    ser.port_pause_rx.push_back(std::move(prx));
  }
}

SimResult Network::result(double wall_s) {
  SimResult r;
  r.name = s_.name;
  r.seed = s_.seed;
  r.duration_ps = end_ps_;
  r.steady_from_ps = s_.steady_from();
  r.deadlock = deadlock_;
  r.events = engine_.events();
  r.wall_s = wall_s;
  fill_flows(r);
  fill_ports(r);
  fill_series(r);
  return r;
}

SimResult run_scenario(const Scenario& s, std::ostream* progress) {
  const auto hosts = s.topology.host_count();
  if (progress && (hosts >= kProgressHosts || s.flows.size() >= kProgressFlows))
    *progress << fmt::format("railkit-sim: building the fabric ({} hosts, {} flows)...", hosts, s.flows.size())
              << std::flush;
  else
    progress = nullptr;  // a small scenario builds and runs in a blink: nothing to report
  const auto built0 = std::chrono::steady_clock::now();
  Engine engine(s.event_scheduler, s.seed);
  Network net(s, engine);
  const auto t0 = std::chrono::steady_clock::now();
  if (progress)
    *progress << fmt::format(" built in {:.1f} s; simulating {:g} us...\n",
                             std::chrono::duration<double>(t0 - built0).count(), static_cast<double>(s.duration_ps) / 1e6)
              << std::flush;
  net.run();
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (progress) *progress << fmt::format("railkit-sim: simulated in {:.1f} s\n", wall) << std::flush;
  return net.result(wall);
}

}  // namespace railkit::sim
