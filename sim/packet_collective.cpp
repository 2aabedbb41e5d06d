// run_packet_plan: a collective plan on the packet-level fabric (sim/network.hpp). Network
// transfers are RoCE queue pairs that persist across runs (as NCCL's connections do); NVLink
// copies are at flow level (sim/flow_clock.hpp), alongside the network. Every
// transfer run starts when what it depends on is done (sim/plan_progress.hpp), plus its step's
// latency.
#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <limits>
#include <unordered_map>
#include <vector>

#include <fmt/format.h>

#include "core/error.hpp"
#include "sim/collective.hpp"
#include "sim/engine.hpp"
#include "sim/flow_clock.hpp"
#include "sim/network.hpp"
#include "sim/plan_progress.hpp"
#include "sim/qp_route.hpp"
#include "sim/topology.hpp"

namespace railkit::sim {
namespace {

/// A connection's queue pair q: the GPU whose data it is, its channel, the sending and receiving
/// NICs. Several QPs of one key exist when transfers of the key overlap in time.
struct QpKey {
  int src = 0;
  int nic_src = 0;
  int nic_dst = 0;
  int channel = 0;
  int q = 0;
  bool operator==(const QpKey&) const = default;
};

struct QpKeyHash {
  std::size_t operator()(const QpKey& k) const noexcept {
    std::uint64_t x = static_cast<std::uint64_t>(flow_hash(k.nic_src, k.nic_dst, transfer_qp_number(k.src, k.channel, k.q), 0));
    x = x * 0x9e3779b97f4a7c15ull;
    return static_cast<std::size_t>(x ^ (x >> 29));
  }
};

constexpr std::uint32_t kNobody = std::numeric_limits<std::uint32_t>::max();

struct Qp {
  std::uint32_t flow = 0;
  bool crosses_spine = false;
  std::uint32_t owner = kNobody;  ///< the transfer whose message it carries now
};

std::int64_t us_to_ps(double us) { return std::llround(us * 1e6); }

/// Runs the transfers on the fabric as their dependencies allow: a run posts one message per
/// QP and starts its NVLink copy; it is done when every message has been delivered in order and
/// the copy (plus nvlink.delay) is done.
class PacketExecutor final : public DeliveryListener {
 public:
  PacketExecutor(const ClusterSpec& c, const CollPlan& plan, Network& net)
      : c_(c), plan_(plan), net_(net), progress_(plan.steps) {
    const int gpus = c.gpus();
    for (int i = 0; i < 2 * gpus; ++i) nv_.add_link(c.nvlink_rate_bps / 8.0);
    const std::size_t n = progress_.transfers();
    nv_slot_.assign(n, kNobody);
    parts_left_.assign(n, 0);
    for (std::uint32_t id = 0; id < n; ++id) {
      const Transfer& t = transfer(id);
      const int to = t.net ? t.relay : t.dst;
      if (t.bytes == 0 || to < 0 || to == t.src) continue;
      const std::array<int, 2> path{t.src, gpus + to};
      nv_slot_[id] = nv_.add_slot(path);
      nv_owner_.push_back(id);
    }
  }

  /// Schedules the first runs (or finishes now for a plan with nothing to run).
  void start() {
    if (progress_.transfers() == 0) {
      done_ps_ = 0;
      return;
    }
    schedule(progress_.initial());
  }

  void delivered(std::uint32_t flow) override {
    Qp& qp = qps_[qp_of_flow_[flow]];
    const std::uint32_t id = qp.owner;
    qp.owner = kNobody;
    if (id != kNobody) part_done(id);
  }

  bool done() const noexcept { return done_ps_ >= 0; }
  std::int64_t done_ps() const noexcept { return done_ps_; }
  const FabricCounters& counters() const noexcept { return counters_; }
  std::string where() const {
    std::size_t busy = 0, first = kNobody;
    for (std::uint32_t id = 0; id < progress_.transfers(); ++id)
      if (progress_.busy(id)) {
        ++busy;
        if (first == kNobody) first = id;
      }
    if (busy == 0) return "no transfer running";
    return fmt::format("{} of {} transfers running, the first: step {} transfer {} run {} ({} parts undone)", busy,
                       progress_.transfers(), progress_.step_of(static_cast<std::uint32_t>(first)) + 1,
                       progress_.index_of(static_cast<std::uint32_t>(first)), progress_.runs_done(static_cast<std::uint32_t>(first)) + 1,
                       parts_left_[first]);
  }

 private:
  const Transfer& transfer(std::uint32_t id) const {
    return plan_.steps[progress_.step_of(id)].transfers[progress_.index_of(id)];
  }

  void schedule(const std::vector<std::uint32_t>& ready) {
    for (std::uint32_t id : ready)
      Engine::after(us_to_ps(plan_.steps[progress_.step_of(id)].latency_us), &PacketExecutor::begin, this, id);
  }

  void begin(std::uint32_t id);
  Qp& qp_for(const QpKey& k);
  void part_done(std::uint32_t id) {
    if (--parts_left_[id] == 0) finish(id);
  }
  void finish(std::uint32_t id);
  void nv_sync();
  void nv_changed();
  void nv_wake() {
    if (Engine::now_ps() != nv_wake_ps_) return;  // an earlier wake took its place
    nv_wake_ps_ = -1;
    nv_sync();
    nv_changed();
  }
  void nv_landed(std::uint32_t id) { part_done(id); }

  const ClusterSpec& c_;
  const CollPlan& plan_;
  Network& net_;
  PlanProgress progress_;
  std::unordered_map<QpKey, std::vector<std::uint32_t>, QpKeyHash> qp_index_;
  std::vector<Qp> qps_;
  std::vector<std::uint32_t> qp_of_flow_;
  FlowClock nv_;                          ///< NVLink: GPU g's egress is link g, its ingress gpus + g
  std::vector<std::uint32_t> nv_slot_;    ///< per transfer: its NVLink copy's slot or kNobody
  std::vector<std::uint32_t> nv_owner_;   ///< per slot: its transfer
  std::int64_t nv_wake_ps_ = -1;          ///< the pending wake for the next NVLink completion (-1: none)
  std::vector<std::pair<std::uint32_t, std::uint64_t>> posts_;  ///< begin's scratch
  std::vector<std::uint32_t> parts_left_;
  std::int64_t done_ps_ = -1;
  FabricCounters counters_;
};

void PacketExecutor::begin(std::uint32_t id) {
  const Transfer& t = transfer(id);
  std::uint32_t parts = 0;
  if (nv_slot_[id] != kNobody) {
    nv_sync();
    nv_.start(nv_slot_[id], static_cast<double>(t.bytes));
    counters_.nvlink_bytes += t.bytes;
    ++parts;
  }
  posts_.clear();
  if (t.net && t.bytes > 0) {
    counters_.net_bytes += t.bytes;
    const auto qps = static_cast<std::uint64_t>(std::max(1, t.qps));
    for (std::uint64_t q = 0; q < qps; ++q) {
      const std::uint64_t b = t.bytes / qps + (q < t.bytes % qps ? 1 : 0);
      if (b == 0) continue;
      Qp& qp = qp_for(QpKey{t.src, t.nic_src, t.nic_dst, t.channel, static_cast<int>(q)});
      qp.owner = id;
      if (qp.crosses_spine) counters_.spine_bytes += b;
      posts_.emplace_back(qp.flow, b);
      ++parts;
    }
  }
  parts_left_[id] = parts;
  for (const auto& [flow, b] : posts_) net_.post(flow, b);
  if (nv_slot_[id] != kNobody) nv_changed();
  if (parts == 0) finish(id);
}

Qp& PacketExecutor::qp_for(const QpKey& k) {
  std::vector<std::uint32_t>& list = qp_index_[k];
  for (std::uint32_t i : list)
    if (qps_[i].owner == kNobody) return qps_[i];
  // A new QP of the connection: the first keeps the connection's identity, later ones (transfers
  // of the key overlapping in time) another QP number.
  const std::uint64_t seed = c_.fabric.seed;
  const std::uint32_t qpn = transfer_qp_number(k.src, k.channel, k.q) + static_cast<std::uint32_t>(list.size()) * 0x01000193u;
  const std::uint32_t hash = flow_hash(k.nic_src, k.nic_dst, qpn, seed);
  Qp qp;
  qp.flow = net_.add_flow(k.nic_src, k.nic_dst, plan_.priority, hash, flow_hash(k.nic_dst, k.nic_src, qpn, seed));
  qp.crosses_spine = crosses_spine(net_.graph(), route_path(net_.graph(), k.nic_src, k.nic_dst, hash, c_.fabric.sw.ecmp_seed));
  if (qp_of_flow_.size() <= qp.flow) qp_of_flow_.resize(qp.flow + 1, kNobody);
  qp_of_flow_[qp.flow] = static_cast<std::uint32_t>(qps_.size());
  list.push_back(static_cast<std::uint32_t>(qps_.size()));
  qps_.push_back(qp);
  return qps_.back();
}

void PacketExecutor::finish(std::uint32_t id) {
  std::vector<std::uint32_t> ready;
  progress_.done(id, ready);
  schedule(ready);
  if (progress_.finished()) {
    done_ps_ = Engine::now_ps();
    Engine::stop();
  }
}

void PacketExecutor::nv_sync() {
  std::vector<std::uint32_t> done;
  nv_.advance(std::max(nv_.now(), static_cast<double>(Engine::now_ps()) * 1e-12), done);
  for (std::uint32_t s : done) Engine::after(c_.nvlink_delay_ps, &PacketExecutor::nv_landed, this, nv_owner_[s]);
}

void PacketExecutor::nv_changed() {
  const double t = nv_.next_completion();
  if (!(t < std::numeric_limits<double>::infinity())) return;
  const std::int64_t at_ps = std::max(Engine::now_ps(), static_cast<std::int64_t>(std::ceil(t * 1e12)));
  if (nv_wake_ps_ >= 0 && nv_wake_ps_ <= at_ps) return;  // the pending wake comes first and looks again
  nv_wake_ps_ = at_ps;
  Engine::after(at_ps - Engine::now_ps(), &PacketExecutor::nv_wake, this);
}

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
  normalize_plan(c, plan.steps);
  for (const Step& s : plan.steps) out.latency_us += s.repeat * s.latency_us;
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
