// run_packet_plan: a collective plan on the packet-level fabric (sim/network.hpp). Network
// transfers are RoCE queue pairs that persist across steps (as NCCL's connections do); NVLink
// copies are at flow level (sim/flow_model.hpp), concurrent with the step's network flows.
#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <unordered_map>
#include <vector>

#include <fmt/format.h>

#include "core/error.hpp"
#include "sim/collective.hpp"
#include "sim/engine.hpp"
#include "sim/flow_model.hpp"
#include "sim/network.hpp"
#include "sim/qp_route.hpp"
#include "sim/topology.hpp"

namespace railkit::sim {
namespace {

/// One queue pair of the simulated NCCL: a connection (the GPU whose data it is, its channel, the
/// sending and receiving NICs) and its QP index; `occurrence` separates transfers of one step
/// that would otherwise share a QP.
struct QpKey {
  int src = 0;
  int nic_src = 0;
  int nic_dst = 0;
  int channel = 0;
  int q = 0;
  int occurrence = 0;
  bool operator==(const QpKey&) const = default;
};

struct QpKeyHash {
  std::size_t operator()(const QpKey& k) const noexcept {
    std::uint64_t x = static_cast<std::uint64_t>(flow_hash(k.nic_src, k.nic_dst, transfer_qp_number(k.src, k.channel, k.q), 0));
    x = x * 0x9e3779b97f4a7c15ull + static_cast<std::uint64_t>(k.occurrence);
    return static_cast<std::size_t>(x ^ (x >> 29));
  }
};

struct Qp {
  std::uint32_t flow = 0;
  bool crosses_spine = false;
  std::size_t used_in_step = 0;  ///< step index + 1 of the step that last posted on it
};

struct Message {
  std::uint32_t flow = 0;
  std::uint64_t bytes = 0;
};

/// What one run of a step does, worked out at its first repetition.
struct PreparedStep {
  std::vector<Message> messages;
  std::int64_t nvlink_ps = 0;  ///< the NVLink part: last NVLink copy done, its hop delay included
  std::int64_t latency_ps = 0;
  std::uint64_t net_bytes = 0;
  std::uint64_t spine_bytes = 0;
  std::uint64_t nvlink_bytes = 0;
};

std::int64_t us_to_ps(double us) { return std::llround(us * 1e6); }

/// Runs the steps in order on the fabric: each step's messages are posted together, the step
/// ends when the last is delivered and the NVLink part is done, the next starts latency later.
class PacketExecutor final : public DeliveryListener {
 public:
  PacketExecutor(const ClusterSpec& c, const CollPlan& plan, Network& net)
      : c_(c), plan_(plan), net_(net), hosts_(net.graph().hosts) {}

  /// Schedules the first step at time 0 (or finishes now for a plan with nothing to run).
  void start() {
    skip_empty();
    if (step_ >= plan_.steps.size()) {
      done_ps_ = 0;
      return;
    }
    Engine::after(0, &PacketExecutor::begin_step, this);
  }

  void delivered(std::uint32_t) override {
    if (--pending_ == 0) finish_step(std::max(Engine::now_ps(), nvlink_done_ps_));
  }

  bool done() const noexcept { return done_ps_ >= 0; }
  std::int64_t done_ps() const noexcept { return done_ps_; }
  const FabricCounters& counters() const noexcept { return counters_; }
  std::string where() const {
    return fmt::format("step {} of {} (repetition {}), {} of {} messages undelivered", step_ + 1, plan_.steps.size(),
                       rep_ + 1, pending_, cur_.messages.size());
  }

 private:
  void skip_empty() {
    while (step_ < plan_.steps.size() && plan_.steps[step_].repeat < 1) ++step_;
  }

  void begin_step() {
    if (rep_ == 0) prepare(plan_.steps[step_]);
    counters_.net_bytes += cur_.net_bytes;
    counters_.spine_bytes += cur_.spine_bytes;
    counters_.nvlink_bytes += cur_.nvlink_bytes;
    const std::int64_t now = Engine::now_ps();
    nvlink_done_ps_ = now + cur_.nvlink_ps;
    pending_ = cur_.messages.size();
    if (pending_ == 0) {
      finish_step(nvlink_done_ps_);
      return;
    }
    for (const Message& m : cur_.messages) net_.post(m.flow, m.bytes);
  }

  void finish_step(std::int64_t end_ps) {
    const std::int64_t next_ps = end_ps + cur_.latency_ps;
    if (++rep_ >= plan_.steps[step_].repeat) {
      rep_ = 0;
      ++step_;
      skip_empty();
    }
    if (step_ >= plan_.steps.size()) {
      done_ps_ = next_ps;
      Engine::stop();
      return;
    }
    Engine::after(next_ps - Engine::now_ps(), &PacketExecutor::begin_step, this);
  }

  void check_host(int h, const char* what, const Transfer& t) const {
    if (h < 0 || h >= hosts_)
      throw Error(ErrorCode::Internal, fmt::format("collective plan: step {}: transfer {} -> {}: {} {} is not a fabric host (0..{})",
                                                   step_ + 1, t.src, t.dst, what, h, hosts_ - 1));
  }

  void check_gpu(int g, const Transfer& t) const {
    if (g < 0 || g >= c_.gpus())
      throw Error(ErrorCode::Internal, fmt::format("collective plan: step {}: transfer {} -> {}: GPU {} out of range (0..{})",
                                                   step_ + 1, t.src, t.dst, g, c_.gpus() - 1));
  }

  Qp& qp_for(QpKey k) {
    while (true) {
      auto [it, fresh] = qps_.try_emplace(k);
      Qp& qp = it->second;
      if (fresh) {
        const std::uint64_t seed = c_.fabric.seed;
        const std::uint32_t qpn = transfer_qp_number(k.src, k.channel, k.q) + static_cast<std::uint32_t>(k.occurrence) * 0x01000193u;
        const std::uint32_t hash = flow_hash(k.nic_src, k.nic_dst, qpn, seed);
        qp.flow = net_.add_flow(k.nic_src, k.nic_dst, plan_.priority, hash, flow_hash(k.nic_dst, k.nic_src, qpn, seed));
        qp.crosses_spine = crosses_spine(net_.graph(), route_path(net_.graph(), k.nic_src, k.nic_dst, hash, c_.fabric.sw.ecmp_seed));
      }
      if (qp.used_in_step != step_ + 1) {
        qp.used_in_step = step_ + 1;
        return qp;
      }
      ++k.occurrence;
    }
  }

  void prepare(const Step& s) {
    cur_ = PreparedStep{};
    if (!(s.latency_us >= 0) || !std::isfinite(s.latency_us))
      throw Error(ErrorCode::Internal, fmt::format("collective plan: step {}: latency_us {} is not a time", step_ + 1, s.latency_us));
    cur_.latency_ps = us_to_ps(s.latency_us);
    const int gpus = c_.gpus();
    FlowSet nv;  // NVLink: every GPU's egress (index g) and ingress (gpus + g), made when used
    nv_link_.assign(static_cast<std::size_t>(2 * gpus), -1);
    auto link = [&](int i) {
      int& l = nv_link_[static_cast<std::size_t>(i)];
      if (l < 0) l = nv.add_link(c_.nvlink_rate_bps / 8.0);
      return l;
    };
    auto nvlink = [&](int from, int to, std::uint64_t bytes) {
      if (from == to || bytes == 0) return;
      const std::array<int, 2> path{link(from), link(gpus + to)};
      nv.add_flow(path, static_cast<double>(bytes));
      cur_.nvlink_bytes += bytes;
    };
    for (const Transfer& t : s.transfers) {
      check_gpu(t.src, t);
      check_gpu(t.dst, t);
      if (!t.net) {
        nvlink(t.src, t.dst, t.bytes);
        continue;
      }
      if (t.relay >= 0) {
        check_gpu(t.relay, t);
        nvlink(t.src, t.relay, t.bytes);
      }
      check_host(t.nic_src, "nic_src", t);
      check_host(t.nic_dst, "nic_dst", t);
      cur_.net_bytes += t.bytes;
      const int qps = std::max(1, t.qps);
      const std::uint64_t each = t.bytes / static_cast<std::uint64_t>(qps);
      const std::uint64_t extra = t.bytes % static_cast<std::uint64_t>(qps);
      for (int q = 0; q < qps; ++q) {
        const std::uint64_t b = each + (static_cast<std::uint64_t>(q) < extra ? 1 : 0);
        if (b == 0) continue;
        const Qp& qp = qp_for(QpKey{t.src, t.nic_src, t.nic_dst, t.channel, q, 0});
        if (qp.crosses_spine) cur_.spine_bytes += b;
        cur_.messages.push_back({qp.flow, b});
      }
    }
    if (nv.flows() > 0) {
      const std::vector<double> done = nv.drain();
      cur_.nvlink_ps = std::llround(*std::max_element(done.begin(), done.end()) * 1e12) + c_.nvlink_delay_ps;
    }
  }

  const ClusterSpec& c_;
  const CollPlan& plan_;
  Network& net_;
  int hosts_;
  std::unordered_map<QpKey, Qp, QpKeyHash> qps_;
  std::vector<int> nv_link_;
  std::size_t step_ = 0;
  int rep_ = 0;
  PreparedStep cur_;
  std::size_t pending_ = 0;
  std::int64_t nvlink_done_ps_ = 0;
  std::int64_t done_ps_ = -1;
  FabricCounters counters_;
};

/// A bound on the simulated time of `plan` beyond which the run is taken as lost: 1 s plus 1000
/// times the time its busiest NIC and GPU need per step at line rate, plus two retransmit
/// timeouts per step run (go-back-N in a lossy fabric).
std::int64_t time_cap_ps(const ClusterSpec& c, const CollPlan& plan) {
  const auto hosts = static_cast<std::size_t>(c.fabric.topology.host_count());
  std::vector<std::uint64_t> tx(hosts, 0), rx(hosts, 0), nv_out(static_cast<std::size_t>(c.gpus()), 0), nv_in(nv_out);
  double estimate_s = 0;
  double runs = 0;
  auto at = [](std::vector<std::uint64_t>& v, int i) -> std::uint64_t& {  // out of range: checked when run
    return v[std::min(static_cast<std::size_t>(std::max(i, 0)), v.size() - 1)];
  };
  for (const Step& s : plan.steps) {
    if (s.repeat < 1) continue;
    std::uint64_t net = 0, nv = 0;
    for (const Transfer& t : s.transfers) {
      if (t.net) {
        net = std::max({net, at(tx, t.nic_src) += t.bytes, at(rx, t.nic_dst) += t.bytes});
        if (t.relay >= 0) nv = std::max({nv, at(nv_out, t.src) += t.bytes, at(nv_in, t.relay) += t.bytes});
      } else {
        nv = std::max({nv, at(nv_out, t.src) += t.bytes, at(nv_in, t.dst) += t.bytes});
      }
    }
    for (const Transfer& t : s.transfers) {  // reset only what this step touched
      at(tx, t.nic_src) = 0;
      at(rx, t.nic_dst) = 0;
      at(nv_out, t.src) = 0;
      at(nv_in, t.dst) = 0;
      at(nv_in, t.relay) = 0;
    }
    const double step_s = std::max(static_cast<double>(net) * 8.0 / c.fabric.topology.link_rate_bps,
                                   static_cast<double>(nv) * 8.0 / c.nvlink_rate_bps) +
                          s.latency_us * 1e-6;
    estimate_s += s.repeat * step_s;
    runs += s.repeat;
  }
  const double cap_s = 1.0 + 1000.0 * estimate_s + runs * 2.0 * static_cast<double>(c.fabric.nic.retransmit_timeout_ps) * 1e-12;
  return static_cast<std::int64_t>(std::min(cap_s, 1e6) * 1e12);
}

}  // namespace

CollOutcome run_packet_plan(const ClusterSpec& c, CollPlan plan) {
  const auto t0 = std::chrono::steady_clock::now();
  if (c.fabric.topology.host_count() != c.gpus())
    throw UsageError(fmt::format("{}: topology: the packet-level collective needs a rail_optimized fabric (one NIC per GPU)",
                                 c.fabric.name));
  CollOutcome out;
  out.fidelity = Fidelity::Packet;
  for (const Step& s : plan.steps)
    if (s.repeat > 0) out.latency_us += s.repeat * s.latency_us;
  const std::int64_t cap_ps = time_cap_ps(c, plan);
  {
    Engine engine(c.fabric.event_scheduler, c.fabric.seed);
    Network net(c.fabric, engine, OpenFlows{});
    PacketExecutor exec(c, plan, net);
    net.set_listener(&exec);
    exec.start();
    if (!exec.done()) engine.run_until(cap_ps);
    if (!exec.done()) {
      const double at_us = static_cast<double>(Engine::now_ps()) * 1e-6;
      if (Engine::now_ps() >= cap_ps)
        throw TimeoutError(fmt::format("packet-level collective: not finished after {:.6g} us simulated (the bound for this "
                                       "plan): {}", at_us, exec.where()));
      throw Error(ErrorCode::Internal,
                  fmt::format("packet-level collective stalled at {:.6g} us simulated: {}", at_us, exec.where()));
    }
    out.time_us = static_cast<double>(exec.done_ps()) * 1e-6;
    out.counters = exec.counters();
    const FabricTotals t = net.totals();
    out.counters.ecn_marked = t.ecn_marked;
    out.counters.pause_tx = t.pause_tx;
    out.counters.drops = t.drops;
    out.counters.retransmitted_packets = t.retransmitted_packets;
    out.counters.cnps = t.cnps;
    out.counters.packet_hops = t.packet_hops;
    out.counters.events = engine.events();
  }
  plan.steps.clear();
  plan.steps.shrink_to_fit();
  out.plan = std::move(plan);
  out.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return out;
}

}  // namespace railkit::sim
