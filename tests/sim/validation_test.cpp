// The simulator's validations (issue 15): each claim checked on a fixed seed, numbers printed.
// Figures are simulated. See sim/README.md ("Validation") for what holds and by how much.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "sim/fairness.hpp"
#include "sim_test_util.hpp"

using namespace simtest;

namespace {

/// Mean goodput of flow 0 from the end of the burst (its last flow completed) to the end of the run.
double goodput_after_burst(const rs::SimResult& r) {
  double end = 0;
  for (std::size_t i = 1; i < r.flows.size(); ++i) {
    EXPECT_TRUE(r.flows[i].fct_us.has_value()) << "burst flow " << i << " did not complete";
    if (r.flows[i].fct_us) end = std::max(end, r.flows[i].start_us + *r.flows[i].fct_us);
  }
  double sum = 0;
  int n = 0;
  for (std::size_t k = 0; k < r.series.t_us.size(); ++k)
    if (r.series.t_us[k] > end) {
      sum += r.series.flow_Gbps[0][k];
      ++n;
    }
  return n > 0 ? sum / n : 0.0;
}

}  // namespace

// 1. N long-lived flows into one receiver at 100 Gb/s, NVIDIA default attributes, on 10 seeds
// (ECN marking and ECMP draws): over the second half of 20 ms, the worst flow's deviation from
// C/N and Jain's index per seed; the worst and the median are printed. What holds on every seed:
// the bottleneck >= 90% busy, no drops, Jain >= 0.89; on the median seed: Jain >= 0.98 and the
// worst flow within 20% of its share. The 10% bound of the first validation holds for 2 flows on
// 4 of 10 seeds and for 8 or 16 flows on none: with rpg_ai_rate 5 Mb/s per 300 us the flows
// cannot equalise within 10 ms, and the HPCC reference shows the same spread (sim/VALIDATION.md).
class FairShare : public ::testing::TestWithParam<int> {};

TEST_P(FairShare, EachFlowNearItsShareOverTenSeeds) {
  const int n = GetParam();
  std::vector<double> worst_by_seed, jain_by_seed;
  for (int seed = 1; seed <= 10; ++seed) {
    auto set = incast(n);
    set.push_back("seed=" + std::to_string(seed));
    const rs::SimResult r = rs::run_scenario(example("incast-16to1.yaml", set));
    const double share = r.flows[0].fair_share_Gbps;  // goodput capacity / N
    std::vector<double> rates;
    double worst = 0;
    for (const auto& f : r.flows) {
      rates.push_back(f.steady_throughput_Gbps);
      worst = std::max(worst, std::abs(f.steady_throughput_Gbps - share) / share);
    }
    worst_by_seed.push_back(worst);
    jain_by_seed.push_back(rs::jain_index(rates));
    EXPECT_GE(port(r, "sw0", n).steady_utilisation, 0.90) << "seed " << seed;
    EXPECT_EQ(r.totals.drops, 0u) << "seed " << seed;
    EXPECT_GE(jain_by_seed.back(), 0.89) << "seed " << seed;
  }
  auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
  };
  const std::string k = "n" + std::to_string(n) + ".";
  measured(k + "worst_deviation.worst_seed", *std::max_element(worst_by_seed.begin(), worst_by_seed.end()));
  measured(k + "worst_deviation.median_seed", median(worst_by_seed));
  measured(k + "seeds_within_10pct", static_cast<double>(std::count_if(worst_by_seed.begin(), worst_by_seed.end(), [](double w) { return w <= 0.10; })));
  measured(k + "jain.worst_seed", *std::min_element(jain_by_seed.begin(), jain_by_seed.end()));
  measured(k + "jain.median_seed", median(jain_by_seed));
  EXPECT_LE(median(worst_by_seed), 0.20);
  EXPECT_GE(median(jain_by_seed), 0.98);
}

INSTANTIATE_TEST_SUITE_P(SimValidation, FairShare, ::testing::Values(2, 8, 16));

// 2. PFC without congestion control pauses the senders all along; DCQCN removes >= 90% of the
// pauses after convergence (second half).
TEST(SimValidation, DcqcnRemovesPfcPauses) {
  const rs::SimResult pfc = rs::run_scenario(example("incast-16to1.yaml", {"nic.cc=none"}));
  const rs::SimResult dcqcn = rs::run_scenario(example("incast-16to1.yaml"));
  std::uint64_t upstream = 0;  // XOFF frames sw0 sent towards the 16 senders, second half
  for (int p = 0; p < 16; ++p) upstream += port(pfc, "sw0", p).steady_pause_tx;
  measured("pfc_only.steady_pauses", static_cast<double>(pfc.totals.steady_pause_tx));
  measured("pfc_only.pauses", static_cast<double>(pfc.totals.pause_tx));
  measured("dcqcn.steady_pauses", static_cast<double>(dcqcn.totals.steady_pause_tx));
  measured("dcqcn.pauses", static_cast<double>(dcqcn.totals.pause_tx));
  EXPECT_GT(upstream, 0u);
  EXPECT_EQ(upstream, pfc.totals.steady_pause_tx);
  EXPECT_LE(static_cast<double>(dcqcn.totals.steady_pause_tx), 0.1 * static_cast<double>(pfc.totals.steady_pause_tx));
  EXPECT_EQ(pfc.totals.drops + dcqcn.totals.drops, 0u);
  EXPECT_FALSE(pfc.deadlock.has_value());  // paused all along, never stuck (sim/deadlock.hpp)
}

// 3. Pause spreading: with PFC alone the incast behind leaf1 pauses the spines, the spines pause
// leaf0, leaf0 pauses the victim's host: the victim falls well below its fair share. With DCQCN
// it keeps it.
TEST(SimValidation, VictimFlow) {
  const rs::SimResult pfc = rs::run_scenario(example("leaf-spine-victim.yaml", {"nic.cc=none"}));
  const rs::SimResult dcqcn = rs::run_scenario(example("leaf-spine-victim.yaml"));
  const rs::FlowResult& v_pfc = pfc.flows.back();
  const rs::FlowResult& v_dcqcn = dcqcn.flows.back();
  ASSERT_EQ(v_pfc.src, "h16");
  measured("victim.fair_share_Gbps", v_pfc.fair_share_Gbps);
  measured("victim.pfc_only_Gbps", v_pfc.steady_throughput_Gbps);
  measured("victim.dcqcn_Gbps", v_dcqcn.steady_throughput_Gbps);
  std::uint64_t spine_pauses = 0;
  for (const auto& p : pfc.ports)
    if (p.node.rfind("spine", 0) == 0) spine_pauses += p.pause_tx[3];
  measured("pfc_only.spine_pauses_to_leaf0", static_cast<double>(spine_pauses));
  measured("pfc_only.leaf0_pauses_to_victim_host", static_cast<double>(port(pfc, "leaf0", 16).pause_tx[3]));
  EXPECT_GT(spine_pauses, 0u);
  EXPECT_GT(port(pfc, "leaf0", 16).pause_tx[3], 0u);
  EXPECT_LT(v_pfc.steady_throughput_Gbps, 0.5 * v_pfc.fair_share_Gbps);
  EXPECT_FALSE(pfc.deadlock.has_value());  // pauses spread over two tiers, but they clear
  EXPECT_GE(v_dcqcn.steady_throughput_Gbps, 0.9 * v_dcqcn.fair_share_Gbps);
}

// 4. Lossy: PFC off and a shallow buffer drop packets, go-back-N retransmits, goodput falls below
// lossless mode's. Without congestion control, go-back-N collapses.
TEST(SimValidation, LossyModeDropsAndRetransmits) {
  const std::vector<std::string> shallow = {"switch.buffer_bytes=2MiB"};
  auto with = [&](std::vector<std::string> more) {
    more.insert(more.begin(), shallow.begin(), shallow.end());
    return rs::run_scenario(example("incast-16to1.yaml", more));
  };
  const rs::SimResult lossless = with({});
  const rs::SimResult lossy = with({"switch.pfc.enabled=false"});
  const rs::SimResult lossless_nocc = with({"nic.cc=none"});
  const rs::SimResult lossy_nocc = with({"nic.cc=none", "switch.pfc.enabled=false"});
  std::uint64_t oos = 0;
  for (const auto& f : lossy.flows) oos += f.out_of_sequence;
  measured("dcqcn.lossless_goodput_Gbps", lossless.totals.goodput_Gbps);
  measured("dcqcn.lossy_goodput_Gbps", lossy.totals.goodput_Gbps);
  measured("dcqcn.lossy_drops", static_cast<double>(lossy.totals.drops));
  measured("dcqcn.lossy_retransmitted", static_cast<double>(lossy.totals.retransmitted_packets));
  measured("nocc.lossless_goodput_Gbps", lossless_nocc.totals.goodput_Gbps);
  measured("nocc.lossy_goodput_Gbps", lossy_nocc.totals.goodput_Gbps);
  measured("nocc.lossy_drops", static_cast<double>(lossy_nocc.totals.drops));
  EXPECT_EQ(lossless.totals.drops, 0u);
  EXPECT_FALSE(lossless_nocc.deadlock.has_value());
  EXPECT_GT(lossy.totals.drops, 0u);
  EXPECT_GT(lossy.totals.retransmitted_packets, 0u);
  EXPECT_GT(oos, 0u);
  EXPECT_LT(lossy.totals.goodput_Gbps, lossless.totals.goodput_Gbps);
  EXPECT_LT(lossy_nocc.totals.goodput_Gbps, 0.1 * lossless_nocc.totals.goodput_Gbps);
}

// 6a. A higher rpg_ai_rate recovers faster after a burst (Barre: 5 -> 8..20 Mb/s).
TEST(SimValidation, HigherAiRateRecoversFaster) {
  const auto slow = rs::run_scenario(example("burst-recovery.yaml", {"nic.dcqcn.roce_rp.rpg_ai_rate=5"}));
  const auto fast = rs::run_scenario(example("burst-recovery.yaml", {"nic.dcqcn.roce_rp.rpg_ai_rate=50"}));
  const double a = goodput_after_burst(slow);
  const double b = goodput_after_burst(fast);
  measured("ai5.goodput_after_burst_Gbps", a);
  measured("ai50.goodput_after_burst_Gbps", b);
  measured("ai5.final_rate_Gbps", slow.flows[0].final_rate_Gbps);
  measured("ai50.final_rate_Gbps", fast.flows[0].final_rate_Gbps);
  EXPECT_GT(b, a);
  EXPECT_GT(fast.flows[0].final_rate_Gbps, slow.flows[0].final_rate_Gbps);
}

// 6b. A shorter rpg_time_reset recovers faster after a burst (Barre: 300 -> 20..100 us). Over the
// first 5 ms after the burst it is slower (8.9 against 9.4 Gb/s): with 300 us few cuts follow a
// timer increase, so the target is rarely clamped and fast recovery climbs towards a higher one.
TEST(SimValidation, ShorterTimeResetRecoversFaster) {
  const auto slow = rs::run_scenario(example("burst-recovery.yaml", {"nic.dcqcn.roce_rp.rpg_time_reset=300"}));
  const auto fast = rs::run_scenario(example("burst-recovery.yaml", {"nic.dcqcn.roce_rp.rpg_time_reset=30"}));
  const double a = goodput_after_burst(slow);
  const double b = goodput_after_burst(fast);
  measured("reset300.goodput_after_burst_Gbps", a);
  measured("reset30.goodput_after_burst_Gbps", b);
  measured("reset300.final_rate_Gbps", slow.flows[0].final_rate_Gbps);
  measured("reset30.final_rate_Gbps", fast.flows[0].final_rate_Gbps);
  EXPECT_GT(b, a);
  EXPECT_GT(fast.flows[0].final_rate_Gbps, slow.flows[0].final_rate_Gbps);
}

// 6c. A higher Kmin raises the steady queue (marking that regulates between Kmin and Kmax:
// Kmax 1.6 MB, Pmax 0.2 as the HPCC paper's DCQCN setting at 100 Gb/s).
TEST(SimValidation, HigherKminRaisesTheSteadyQueue) {
  auto run = [](int kmin) {
    return rs::run_scenario(example("incast-16to1.yaml",
                                    {"switch.ecn={kmin_bytes: " + std::to_string(kmin) + ", kmax_bytes: 1600000, pmax: 0.2}"}));
  };
  const auto low = run(100'000);
  const auto high = run(400'000);
  const double ql = port(low, "sw0", 16).steady_queue_mean_bytes;
  const double qh = port(high, "sw0", 16).steady_queue_mean_bytes;
  measured("kmin100k.steady_queue_bytes", ql);
  measured("kmin400k.steady_queue_bytes", qh);
  EXPECT_GT(qh, ql);
}
