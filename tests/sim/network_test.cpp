// The packet-level model on small cases with known answers.
#include <gtest/gtest.h>

#include "core/error.hpp"
#include "sim/engine.hpp"
#include "sim/network.hpp"
#include "sim/node.hpp"
#include "sim/roce.hpp"
#include "sim/scenario.hpp"

namespace rs = railkit::sim;
using nlohmann::json;

namespace {

rs::Scenario two_hosts(const std::string& flow_bytes) {
  json d = json::parse(R"({
    "duration": "1ms",
    "topology": {"kind": "single_switch", "hosts": 2, "link_rate": "100Gbps", "link_delay": "1us"},
    "flows": [{"src": "h0", "dst": "h1"}]
  })");
  if (!flow_bytes.empty()) d["flows"][0]["bytes"] = flow_bytes;
  return rs::parse_scenario(d, "two.yaml", ".");
}

constexpr double kGoodput100G = 100.0 * 4096 / (4096 + 82);

}  // namespace

TEST(SimNetwork, OneFlowRunsAtLineRate) {
  const auto r = rs::run_scenario(two_hosts(""));
  ASSERT_EQ(r.flows.size(), 1u);
  EXPECT_NEAR(r.flows[0].steady_throughput_Gbps, kGoodput100G, 0.01 * kGoodput100G);
  EXPECT_NEAR(r.flows[0].fair_share_Gbps, kGoodput100G, 1e-6);
  EXPECT_EQ(r.totals.drops, 0u);
  EXPECT_EQ(r.totals.pause_tx, 0u);
  EXPECT_GT(r.events, 0u);
  const auto* down = r.find_port("sw0", 1);
  ASSERT_NE(down, nullptr);
  EXPECT_EQ(down->peer, "h1");
  EXPECT_GT(down->steady_utilisation, 0.99);
}

TEST(SimNetwork, FlowCompletionTime) {
  const auto r = rs::run_scenario(two_hosts("1MiB"));
  ASSERT_TRUE(r.flows[0].fct_us.has_value());
  // 256 packets back to back on the first hop, the last one serialized again on the second,
  // two propagation delays: 256 x 334.24 ns + 334.24 ns + 2 us.
  const double expect_us = 257.0 * static_cast<double>(rs::serialization_ps(rs::data_wire_bytes(4096), 100e9)) * 1e-6 + 2.0;
  EXPECT_NEAR(*r.flows[0].fct_us, expect_us, 0.01);
  EXPECT_EQ(r.flows[0].delivered_bytes, 1u << 20);
}

TEST(SimNetwork, SameSeedSameRun) {
  rs::Scenario s = rs::load_scenario(std::string(RAILKIT_SIM_EXAMPLES) + "/incast-16to1.yaml", {"duration=2ms"});
  const auto a = rs::run_scenario(s);
  const auto b = rs::run_scenario(s);
  EXPECT_EQ(a.events, b.events);
  EXPECT_EQ(a.totals.ecn_marked, b.totals.ecn_marked);
  for (std::size_t i = 0; i < a.flows.size(); ++i) EXPECT_EQ(a.flows[i].delivered_bytes, b.flows[i].delivered_bytes);
}

TEST(SimNetwork, OneEngineAtATime) {
  rs::Engine e("priority_queue", 1);
  EXPECT_THROW(rs::Engine("heap", 1), railkit::Error);
  EXPECT_THROW(rs::Engine("fifo", 1), railkit::UsageError);
}

TEST(SimNetwork, BufferSmallerThanHeadroomIsAUsageError) {
  rs::Scenario s = rs::load_scenario(std::string(RAILKIT_SIM_EXAMPLES) + "/incast-16to1.yaml", {"switch.buffer_bytes=512KiB"});
  try {
    rs::run_scenario(s);
    FAIL() << "17 ports of 85 kB headroom do not fit in 512 KiB";
  } catch (const railkit::UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("switch.buffer_bytes"), std::string::npos) << e.what();
  }
}

TEST(SimNetwork, PauseAccounting) {
  rs::EgressPort p(100e9, 1'000'000, nullptr, 0);
  const std::int64_t q = rs::pause_duration_ps(1000, 100e9);  // 5.12 us
  EXPECT_EQ(p.apply_pause(3, 1000, 0), q);
  EXPECT_TRUE(p.paused(3, 1));
  EXPECT_FALSE(p.paused(2, 1));
  EXPECT_EQ(p.apply_pause(3, 0, 2'000'000), -1);  // resumed after 2 us
  EXPECT_FALSE(p.paused(3, 2'000'000));
  p.apply_pause(3, 1000, 10'000'000);  // expires on its own
  p.close_pauses(100'000'000);
  EXPECT_EQ(p.counters.paused_ps[3], 2'000'000 + q);
  EXPECT_EQ(p.counters.pause_rx[3], 2u);
  EXPECT_EQ(p.counters.resume_rx[3], 1u);
}

namespace {

/// h0 -> h2 on priority 3 and h1 -> h2 on priority 5, no congestion control, both lossless.
rs::SimResult two_priorities(const std::vector<std::string>& more) {
  json d = json::parse(R"({
    "duration": "2ms",
    "topology": {"kind": "single_switch", "hosts": 3, "link_rate": "100Gbps"},
    "nic": {"cc": "none"},
    "switch": {"pfc": {"priorities": [3, 5]}, "strict_priorities": []},
    "flows": [{"src": "h0", "dst": "h2", "priority": 3}, {"src": "h1", "dst": "h2", "priority": 5}]
  })");
  for (const auto& m : more) rs::apply_override(d, m);
  return rs::run_scenario(rs::parse_scenario(d, "prio.yaml", "."));
}

}  // namespace

TEST(SimNetwork, DwrrSharesByWeight) {
  const auto even = two_priorities({});
  EXPECT_NEAR(even.flows[0].steady_throughput_Gbps, kGoodput100G / 2, 0.03 * kGoodput100G);
  EXPECT_NEAR(even.flows[1].steady_throughput_Gbps, kGoodput100G / 2, 0.03 * kGoodput100G);
  const auto weighted = two_priorities({"switch.dwrr_weights=[1, 1, 1, 3, 1, 1, 1, 1]"});
  EXPECT_NEAR(weighted.flows[0].steady_throughput_Gbps, kGoodput100G * 0.75, 0.03 * kGoodput100G);
  EXPECT_NEAR(weighted.flows[1].steady_throughput_Gbps, kGoodput100G * 0.25, 0.03 * kGoodput100G);
  EXPECT_EQ(weighted.totals.drops, 0u);
}

TEST(SimNetwork, StrictPriorityAndPausePerPriority) {
  const auto r = two_priorities({"switch.scheduler=strict"});
  // Priority 5 takes the port; priority 3 is paused back to its sender, priority 5 never is.
  EXPECT_GT(r.flows[1].steady_throughput_Gbps, 0.97 * kGoodput100G);
  EXPECT_LT(r.flows[0].steady_throughput_Gbps, 0.02 * kGoodput100G);
  const auto& to_h0 = *r.find_port("sw0", 0);
  const auto& to_h1 = *r.find_port("sw0", 1);
  EXPECT_GT(to_h0.pause_tx[3], 0u);
  EXPECT_EQ(to_h1.pause_tx[5], 0u);
  EXPECT_EQ(r.totals.drops, 0u);
}
