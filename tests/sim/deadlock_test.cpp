// PFC deadlock detection (sim/deadlock.hpp): a pause that never clears (a static XOFF threshold
// below the XON offset), a real cyclic buffer dependency (routes that bounce between leaves and
// spines, as after two link failures), and congested fabrics that are not deadlocked.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "sim/deadlock.hpp"
#include "sim/engine.hpp"
#include "sim/network.hpp"
#include "sim/quantity.hpp"
#include "sim/roce.hpp"
#include "sim/report.hpp"
#include "sim/scenario.hpp"

namespace rs = railkit::sim;
using nlohmann::json;

namespace {

rs::Scenario deadlock_example(const std::string& name, const std::vector<std::string>& set = {}) {
  return rs::load_scenario(std::string(RAILKIT_SIM_EXAMPLES) + "/" + name, set);
}

bool deadlock_names(const rs::DeadlockFinding& d, const std::string& port) {
  return std::find(d.ports.begin(), d.ports.end(), port) != d.ports.end();
}

/// 4 leaves of 2 hosts (leaf l: h2l, h2l+1), 2 spines, every link 100 Gb/s, no congestion
/// control, XOFF at 1/8 of the free buffer (with alpha 1 the 16 MiB buffers absorb the two flows
/// at 48 Gb/s each and the spines never pause). h0 (leaf0) sends to h4 (leaf2) and h2 (leaf1) to h6 (leaf3), each on a path that
/// bounces: leaf0 -> spine0 -> leaf1 -> spine1 -> leaf2 and leaf1 -> spine1 -> leaf0 -> spine0
/// -> leaf3, as if the links spine0-leaf2 and spine1-leaf3 had failed and the spines rerouted
/// before the leaves did (Hu et al., HotNets 2016). The two paths close the cycle leaf0 ->
/// spine0 -> leaf1 -> spine1 -> leaf0, where leaf0 -> spine0 and leaf1 -> spine1 carry both.
rs::SimResult deadlock_bounce(std::int64_t* bound_ps = nullptr) {
  const json d = json::parse(R"({
    "name": "bounce", "duration": "50ms",
    "topology": {"kind": "leaf_spine", "leaves": 4, "hosts_per_leaf": 2, "spines": 2, "link_rate": "100Gbps"},
    "nic": {"cc": "none"},
    "switch": {"pfc": {"threshold_alpha": 0.125}},
    "flows": [{"src": "h0", "dst": "h4"}, {"src": "h2", "dst": "h6"}]
  })");
  const rs::Scenario s = rs::parse_scenario(d, "bounce.yaml", ".");
  rs::Engine engine(s.event_scheduler, s.seed);
  rs::Network net(s, engine);
  const rs::FabricGraph& g = net.graph();
  const int leaf0 = g.hosts, leaf1 = g.hosts + 1, spine0 = g.hosts + 4, spine1 = g.hosts + 5;
  EXPECT_EQ(g.names[static_cast<std::size_t>(spine1)], "spine1");
  const std::uint16_t up0 = 2, up1 = 3;  // a leaf's ports: its 2 hosts, then spine0, spine1
  // Towards h4: leaf0 up to spine0, spine0 down to leaf1 (not leaf2), leaf1 up to spine1.
  net.set_route(leaf0, 4, {up0});
  net.set_route(spine0, 4, {1});
  net.set_route(leaf1, 4, {up1});
  // Towards h6: leaf1 up to spine1, spine1 down to leaf0 (not leaf3), leaf0 up to spine0.
  net.set_route(leaf1, 6, {up1});
  net.set_route(spine1, 6, {0});
  net.set_route(leaf0, 6, {up0});
  if (bound_ps != nullptr) *bound_ps = rs::deadlock_bound_ps(g, s.sw);
  const auto t0 = std::chrono::steady_clock::now();
  net.run();
  return net.result(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
}

}  // namespace

TEST(SimDeadlock, BoundIsEightPausesOrTwoBufferDrains) {
  const rs::Scenario s = deadlock_example("incast-16to1.yaml");
  const rs::FabricGraph g = rs::build_fabric(s.topology);
  // 100 Gb/s: 8 x 65535 x 512 bit = 2684.3 us; 2 x 16 MiB x 8 bit = 2684.4 us.
  EXPECT_NEAR(static_cast<double>(rs::deadlock_bound_ps(g, s.sw)) * 1e-6, 2684.35, 0.1);
  rs::SwitchSpec sw = s.sw;
  sw.buffer_bytes = 1 << 20;
  EXPECT_EQ(rs::deadlock_bound_ps(g, sw), 8 * rs::pause_duration_ps(65535, 100e9));
  sw.pause_quanta = 1000;
  EXPECT_NEAR(static_cast<double>(rs::deadlock_bound_ps(g, sw)) * 1e-6, 2.0 * 8 * 1048576 / 100e9 * 1e6, 0.01);
}

TEST(SimDeadlock, XoffBelowXonOffsetNeverClears) {
  // A static XOFF threshold of 32 KiB and XON 64 KiB below it: once paused, never resumed.
  const rs::SimResult r = rs::run_scenario(
      deadlock_example("incast-16to1.yaml", {"switch.pfc.xoff_bytes=32KiB", "switch.pfc.xon_offset_bytes=64KiB"}));
  ASSERT_TRUE(r.deadlock.has_value());
  const rs::DeadlockFinding& d = *r.deadlock;
  std::printf("%s\n", rs::deadlock_text(d).c_str());
  EXPECT_EQ(d.kind, "pause_never_clears");
  EXPECT_TRUE(deadlock_names(d, "h0:0->sw0 prio 3")) << rs::deadlock_text(d);
  EXPECT_EQ(d.ports.size(), 16u) << rs::deadlock_text(d);  // every sender
  EXPECT_NE(d.detail.find("at sw0 the xon offset is 65536 bytes, the threshold 32768 bytes now"), std::string::npos) << d.detail;
  // Stopped there: the run is shorter than the scenario's 20 ms, and the rates are over it.
  EXPECT_EQ(r.duration_ps, d.at_ps);
  EXPECT_LT(d.at_ps, 20'000'000'000);
  EXPECT_GE(d.at_ps - d.since_ps, 2'684'000'000);
  EXPECT_GT(r.find_port("h0", 0)->paused_us[3], 0.8 * rs::ps_to_us(d.at_ps));
}

TEST(SimDeadlock, TwoHostsNoCongestionStillDeadlockWhenXonCannotBeSent) {
  // 4 KiB is below one frame, the XON offset two frames: the first packet pauses h0 for good.
  const json d = json::parse(R"({
    "duration": "10ms",
    "topology": {"kind": "single_switch", "hosts": 2, "link_rate": "100Gbps"},
    "nic": {"cc": "none"},
    "switch": {"pfc": {"xoff_bytes": 4096}},
    "flows": [{"src": "h0", "dst": "h1"}]
  })");
  const rs::SimResult r = rs::run_scenario(rs::parse_scenario(d, "two.yaml", "."));
  ASSERT_TRUE(r.deadlock.has_value());
  EXPECT_EQ(r.deadlock->kind, "pause_never_clears");
  // h0's data is paused; h1 sends only ACKs, whose pause never clears either.
  EXPECT_TRUE(deadlock_names(*r.deadlock, "h0:0->sw0 prio 3")) << rs::deadlock_text(*r.deadlock);
}

TEST(SimDeadlock, CycleOfPausesThroughBouncingRoutes) {
  std::int64_t bound = 0;
  const rs::SimResult r = deadlock_bounce(&bound);
  ASSERT_TRUE(r.deadlock.has_value()) << "goodput " << r.totals.goodput_Gbps;
  const rs::DeadlockFinding& d = *r.deadlock;
  std::printf("%s\n%s\n", rs::deadlock_text(d).c_str(), d.detail.c_str());
  EXPECT_EQ(d.kind, "cycle");
  const std::vector<std::string> cycle = {"leaf0:2->spine0 prio 3", "spine0:1->leaf1 prio 3", "leaf1:3->spine1 prio 3",
                                          "spine1:0->leaf0 prio 3"};
  ASSERT_EQ(d.ports.size(), 4u) << rs::deadlock_text(d);
  // The cycle in its order, from whichever port the search met first.
  const auto first = std::find(cycle.begin(), cycle.end(), d.ports[0]);
  ASSERT_NE(first, cycle.end()) << rs::deadlock_text(d);
  for (std::size_t i = 0; i < 4; ++i)
    EXPECT_EQ(d.ports[i], cycle[(static_cast<std::size_t>(first - cycle.begin()) + i) % 4]) << rs::deadlock_text(d);
  EXPECT_EQ(r.duration_ps, d.at_ps);
  EXPECT_LT(d.at_ps, 50'000'000'000);
  EXPECT_GE(d.at_ps - d.since_ps, bound);
  // Nothing moved in the end: the last samples carry no goodput.
  for (const auto& f : r.series.flow_Gbps) EXPECT_EQ(f.back(), 0.0);
}

TEST(SimDeadlock, CongestionWithoutDeadlockIsNotReported) {
  // 16:1 with PFC alone: 2000 pauses in 20 ms, every sender paused again and again, never stuck.
  const rs::SimResult incast = rs::run_scenario(deadlock_example("incast-16to1.yaml", {"nic.cc=none"}));
  EXPECT_FALSE(incast.deadlock.has_value()) << rs::deadlock_text(*incast.deadlock);
  EXPECT_EQ(incast.duration_ps, 20'000'000'000);
  EXPECT_GT(incast.totals.pause_tx, 1000u);
  // A shallow buffer: far more pauses.
  const rs::SimResult shallow = rs::run_scenario(deadlock_example("incast-16to1.yaml", {"nic.cc=none", "switch.buffer_bytes=2MiB"}));
  EXPECT_FALSE(shallow.deadlock.has_value()) << rs::deadlock_text(*shallow.deadlock);
  // A lossless priority starved by a strict one: paused and not draining, but not deadlocked.
  const json d = json::parse(R"({
    "duration": "10ms",
    "topology": {"kind": "single_switch", "hosts": 3, "link_rate": "100Gbps"},
    "nic": {"cc": "none"},
    "switch": {"pfc": {"priorities": [3, 5]}, "scheduler": "strict"},
    "flows": [{"src": "h0", "dst": "h2", "priority": 3}, {"src": "h1", "dst": "h2", "priority": 5}]
  })");
  const rs::SimResult starved = rs::run_scenario(rs::parse_scenario(d, "prio.yaml", "."));
  EXPECT_FALSE(starved.deadlock.has_value()) << rs::deadlock_text(*starved.deadlock);
  EXPECT_GT(starved.find_port("h0", 0)->paused_us[3], 9000.0);
}
