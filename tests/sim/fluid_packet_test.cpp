// 5. The DCQCN fluid model against the packet-level model: N = 2, 10, 64 flows at 40 Gb/s with
// the paper's parameters (sim/examples/fluid-check-40g.yaml). What holds, and by how much, is
// printed and written up in sim/README.md ("Fluid model").
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <utility>

#include "sim/fluid.hpp"
#include "sim/roce.hpp"
#include "sim_test_util.hpp"

using namespace simtest;

namespace {

/// Marking of the paper (Kmax 200 kB, then every packet), or the same slope continued to 2 MB.
const char* kPaperMarking = "switch.ecn={kmin_bytes: 5000, kmax_bytes: 200000, pmax: 0.01}";
const char* kLinearMarking = "switch.ecn={kmin_bytes: 5000, kmax_bytes: 2000000, pmax: 0.10231}";

rs::Scenario scenario(int n, bool linear) {
  auto set = incast(n);
  set.push_back("duration=200ms");
  set.push_back("output.steady_from=50ms");
  set.push_back(linear ? kLinearMarking : kPaperMarking);
  return example("fluid-check-40g.yaml", set);
}

/// The fluid model with the scenario's parameters: rates in packets/s of wire size, the queue
/// in frames, the feedback delay of one round trip with no queue.
rs::FluidParams fluid_params(const rs::Scenario& s) {
  const double wire = rs::data_wire_bytes(s.topology.mtu_bytes);
  const double frame = rs::data_frame_bytes(s.topology.mtu_bytes);
  const double rate = s.topology.link_rate_bps;
  const rs::PaperDcqcn& d = s.nic.paper;
  const rs::EcnThresholds& e = s.sw.ecn[3].thresholds;
  rs::FluidParams p;
  p.flows = static_cast<int>(s.flows.size());
  p.capacity_pps = rate / 8 / wire;
  p.line_rate_pps = p.capacity_pps;
  p.kmin_pkts = static_cast<double>(e.kmin_bytes) / frame;
  p.kmax_pkts = static_cast<double>(e.kmax_bytes) / frame;
  p.pmax = e.pmax;
  p.g = d.g;
  p.tau_s = static_cast<double>(d.cnp_interval_ps) * 1e-12;
  p.tau_prime_s = static_cast<double>(d.alpha_timer_ps) * 1e-12;
  p.timer_s = static_cast<double>(d.rate_timer_ps) * 1e-12;
  p.byte_counter_pkts = static_cast<double>(d.byte_counter_bytes) / s.topology.mtu_bytes;
  p.f = d.f;
  p.ai_pps = d.ai_rate_bps / 8 / wire;
  p.min_rate_pps = d.min_rate_bps / 8 / wire;
  p.tau_star_s = (4.0 * static_cast<double>(s.topology.link_delay_ps) +
                  2.0 * static_cast<double>(rs::serialization_ps(rs::data_wire_bytes(s.topology.mtu_bytes), rate)) +
                  2.0 * static_cast<double>(rs::serialization_ps(rs::cnp_wire_bytes(), rate))) * 1e-12;
  p.duration_s = static_cast<double>(s.duration_ps) * 1e-12;
  p.average_from_s = static_cast<double>(s.steady_from()) * 1e-12;
  return p;
}

struct Pair {
  double packet_queue_bytes = 0;   ///< steady mean at the bottleneck
  double fluid_queue_bytes = 0;
  double packet_goodput_Gbps = 0;  ///< mean over flows, steady window
  double fluid_goodput_Gbps = 0;
  double marked_fraction = 0;      ///< ECN-marked share of the bottleneck's packets, steady window
  double mark_prob_at_mean = 0;    ///< p(mean packet queue) on the switch's curve
  double packet_cnp_per_flow_ms = 0;  ///< CNPs each flow received per ms, over the whole run
  double fluid_cnp_per_flow_ms = 0;   ///< the fluid model's CNP rate a(t)/tau, steady window
};

/// Both models for (n, marking), computed once per test program.
const Pair& compare(int n, bool linear) {
  static std::map<std::pair<int, bool>, Pair> cache;
  auto it = cache.find({n, linear});
  if (it != cache.end()) return it->second;
  const rs::Scenario s = scenario(n, linear);
  const rs::SimResult r = rs::run_scenario(s);
  const rs::FluidParams fp = fluid_params(s);
  const rs::FluidResult f = rs::integrate_dcqcn_fluid(fp);
  const auto& b = port(r, "sw0", n);
  const rs::EcnThresholds& e = s.sw.ecn[3].thresholds;
  Pair x;
  x.packet_queue_bytes = b.steady_queue_mean_bytes;
  x.fluid_queue_bytes = f.mean_queue_pkts * rs::data_frame_bytes(s.topology.mtu_bytes);
  for (const auto& fl : r.flows) x.packet_goodput_Gbps += fl.steady_throughput_Gbps / static_cast<double>(r.flows.size());
  x.fluid_goodput_Gbps = f.mean_rate_pps * s.topology.mtu_bytes * 8 / 1e9;
  x.marked_fraction = static_cast<double>(b.steady_ecn_marked) / static_cast<double>(std::max<std::uint64_t>(1, b.steady_tx_packets));
  double cnps = 0;
  for (const auto& fl : r.flows) cnps += static_cast<double>(fl.cnps_received);
  x.packet_cnp_per_flow_ms = cnps / static_cast<double>(r.flows.size()) / (static_cast<double>(s.duration_ps) * 1e-9);
  x.fluid_cnp_per_flow_ms = f.mean_cnp_rate_per_s * 1e-3;
  x.mark_prob_at_mean = rs::ecn_mark_probability(static_cast<std::uint64_t>(x.packet_queue_bytes), e.kmin_bytes, e.kmax_bytes, e.pmax);
  const std::string k = std::string(linear ? "linear" : "paper") + ".n" + std::to_string(n) + ".";
  measured(k + "packet_queue_bytes", x.packet_queue_bytes);
  measured(k + "fluid_queue_bytes", x.fluid_queue_bytes);
  measured(k + "queue_deviation", x.packet_queue_bytes / x.fluid_queue_bytes - 1);
  measured(k + "packet_goodput_Gbps", x.packet_goodput_Gbps);
  measured(k + "fluid_goodput_Gbps", x.fluid_goodput_Gbps);
  measured(k + "rate_deviation", x.packet_goodput_Gbps / x.fluid_goodput_Gbps - 1);
  measured(k + "marked_fraction", x.marked_fraction);
  measured(k + "packet_cnp_per_flow_ms", x.packet_cnp_per_flow_ms);
  measured(k + "fluid_cnp_per_flow_ms", x.fluid_cnp_per_flow_ms);
  measured(k + "mark_probability_at_mean_queue", x.mark_prob_at_mean);
  return cache.emplace(std::make_pair(n, linear), x).first->second;
}

double deviation(double a, double b) { return std::abs(a - b) / b; }

}  // namespace

// The feedback loop agrees: per-flow goodput (both near C/N: a sanity check, not a finding) and
// the rate of CNPs each flow receives, which depends on the queue's marking and the NP's window
// (packet: counted; fluid: a(t)/tau), within 25% for every N.
TEST(SimFluidVsPacket, RatesAndCnpRatesAgree) {
  for (int n : {2, 10, 64}) {
    const Pair& x = compare(n, false);
    EXPECT_LE(deviation(x.packet_goodput_Gbps, x.fluid_goodput_Gbps), 0.25) << "N = " << n;
    EXPECT_LE(deviation(x.packet_cnp_per_flow_ms, x.fluid_cnp_per_flow_ms), 0.25) << "N = " << n;
  }
}

// Where the marking curve is linear over the queues both models visit, the steady queue agrees
// within 25% for every N.
TEST(SimFluidVsPacket, QueueAgreesWhereMarkingIsLinear) {
  for (int n : {2, 10, 64}) {
    const Pair& x = compare(n, true);
    EXPECT_LE(deviation(x.packet_queue_bytes, x.fluid_queue_bytes), 0.25) << "N = " << n;
  }
}

// With the paper's marking curve (every packet above Kmax = 200 kB) the queue agrees within 25%
// for N = 2. For N = 10 and 64 it does not (packet 42% and 51% below the fluid model): that
// disagreement is reported by the measured figures above and explained in sim/README.md ("Fluid
// model"), not asserted here.
TEST(SimFluidVsPacket, QueueAgreesWithThePaperMarkingForTwoFlows) {
  const Pair& two = compare(2, false);
  EXPECT_LE(deviation(two.packet_queue_bytes, two.fluid_queue_bytes), 0.25);
}
