// The packet-level collective executor (run_packet_plan) on hand-built plans with known answers,
// and packet against flow level on a planned ring all-reduce (issue 16: flow vs packet within 10%).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>

#include <fmt/format.h>

#include "core/error.hpp"
#include "sim/collective.hpp"
#include "sim/roce.hpp"

namespace rs = railkit::sim;
using nlohmann::json;

namespace {

constexpr std::uint64_t kMiB = 1ull << 20;

/// nodes x gpus at `rate_Gbps`, 1 us links, NVLink 3.6 Tb/s with 1 us per hop; `spines` spines
/// whose links run at the speed that gives `oversubscription` (nodes x rate / (oversubscription x
/// spines)).
rs::ClusterSpec cluster(int nodes, int gpus, double rate_Gbps = 100, const std::string& cc = "dcqcn_nvidia",
                        double oversubscription = 1, int spines = 1) {
  json d = {{"name", "test"},
            {"topology",
             {{"nodes", nodes},
              {"gpus_per_node", gpus},
              {"spines", spines},
              {"fabric_rate", fmt::format("{}Gbps", nodes * rate_Gbps / (oversubscription * spines))},
              {"link_rate", fmt::format("{}Gbps", rate_Gbps)},
              {"link_delay", "1us"}}},
            {"nvlink", {{"rate", "3600Gbps"}, {"delay", "1us"}}},
            {"nic", {{"cc", cc}}}};
  return rs::parse_cluster(d, "test.yaml", ".");
}

/// A network transfer from GPU `src` to GPU `dst` through their own NICs (or `relay`'s NIC).
rs::Transfer net(int src, int dst, std::uint64_t bytes, int relay = -1, int qps = 1) {
  rs::Transfer t;
  t.src = src;
  t.dst = dst;
  t.bytes = bytes;
  t.net = true;
  t.relay = relay;
  t.nic_src = relay >= 0 ? relay : src;
  t.nic_dst = dst;
  t.qps = qps;
  return t;
}

rs::Transfer nvlink(int src, int dst, std::uint64_t bytes) {
  rs::Transfer t;
  t.src = src;
  t.dst = dst;
  t.bytes = bytes;
  return t;
}

rs::CollPlan plan(std::vector<rs::Transfer> transfers, int repeat = 1, double latency_us = 0) {
  rs::CollPlan p;
  p.steps.push_back(rs::Step{std::move(transfers), repeat, latency_us});
  return p;
}

/// `bytes` through one 100 Gb/s link after another (store and forward), 1 us each: the packets
/// back to back on the first link, the last one again on the second, two propagation delays.
double one_hop_pair_us(std::uint64_t bytes) {
  const std::uint64_t pkts = bytes / 4096;
  return static_cast<double>(pkts + 1) * static_cast<double>(rs::serialization_ps(rs::data_wire_bytes(4096), 100e9)) * 1e-6 + 2.0;
}

void measured(const std::string& key, double value) {
  std::printf("[ measured ] %s = %.6g\n", key.c_str(), value);
  ::testing::Test::RecordProperty(key, std::to_string(value));
}

}  // namespace

TEST(SimPacketCollective, OneTransferTakesItsWireTime) {
  // n0g0 -> n1g0: the same rail, through rail0's leaf only.
  const auto o = rs::run_packet_plan(cluster(2, 2), plan({net(0, 2, 4 * kMiB)}));
  EXPECT_EQ(o.fidelity, rs::Fidelity::Packet);
  EXPECT_NEAR(o.time_us, one_hop_pair_us(4 * kMiB), 0.01);  // 344.6 us
  EXPECT_DOUBLE_EQ(o.latency_us, 0);
  EXPECT_EQ(o.counters.net_bytes, 4 * kMiB);
  EXPECT_EQ(o.counters.spine_bytes, 0u);
  EXPECT_EQ(o.counters.nvlink_bytes, 0u);
  // 1024 data packets and 64 ACKs, two links each, less the last ACK's second link: the run ends
  // when the last byte lands.
  EXPECT_EQ(o.counters.packet_hops, 2u * (1024 + 64) - 1);
  EXPECT_EQ(o.counters.ecn_marked + o.counters.pause_tx + o.counters.drops + o.counters.retransmitted_packets, 0u);
  EXPECT_GT(o.counters.events, 0u);
  EXPECT_TRUE(o.plan.steps.empty());
}

TEST(SimPacketCollective, QueuePairsSplitTheBytes) {
  // Four QPs of 1 MiB share the NIC: the same wire time as one, plus the three extra ACK frames.
  const auto o = rs::run_packet_plan(cluster(2, 2), plan({net(0, 2, 4 * kMiB, -1, 4)}));
  EXPECT_NEAR(o.time_us, one_hop_pair_us(4 * kMiB), 0.5);
  EXPECT_EQ(o.counters.net_bytes, 4 * kMiB);
  EXPECT_GE(o.counters.packet_hops, 2u * (1024 + 60));  // 16 ACKs per QP; the last ones may still be under way
  EXPECT_LE(o.counters.packet_hops, 2u * (1024 + 64));
}

TEST(SimPacketCollective, TwoTransfersIntoOneNicShareIt) {
  // n0g0 and n1g0 both send to n2g0: its leaf port is the bottleneck, each gets half.
  const auto one = rs::run_packet_plan(cluster(3, 2, 100, "none"), plan({net(0, 4, 4 * kMiB)}));
  const auto two = rs::run_packet_plan(cluster(3, 2, 100, "none"), plan({net(0, 4, 4 * kMiB), net(2, 4, 4 * kMiB)}));
  measured("two_into_one_ratio", two.time_us / one.time_us);
  EXPECT_NEAR(two.time_us / one.time_us, 2.0, 0.03);
  EXPECT_EQ(two.counters.net_bytes, 8 * kMiB);
  EXPECT_EQ(two.counters.drops, 0u);
}

TEST(SimPacketCollective, RepeatsAndLatencyAdd) {
  const auto c = cluster(2, 2);
  const double t1 = rs::run_packet_plan(c, plan({net(0, 2, kMiB)})).time_us;
  const auto three = rs::run_packet_plan(c, plan({net(0, 2, kMiB)}, 3));
  EXPECT_NEAR(three.time_us, 3 * t1, 1e-3);
  EXPECT_EQ(three.counters.net_bytes, 3 * kMiB);
  const auto lat = rs::run_packet_plan(c, plan({net(0, 2, kMiB)}, 2, 5.0));
  EXPECT_NEAR(lat.time_us, 2 * (t1 + 5.0), 1e-3);
  EXPECT_DOUBLE_EQ(lat.latency_us, 10.0);
  // Steps run in order: a second step after the first.
  rs::CollPlan p = plan({net(0, 2, kMiB)}, 1, 1.0);
  p.steps.push_back(rs::Step{{net(2, 0, kMiB)}, 1, 2.0});
  const auto seq = rs::run_packet_plan(c, p);
  EXPECT_NEAR(seq.time_us, 2 * t1 + 3.0, 0.01);
  EXPECT_DOUBLE_EQ(seq.latency_us, 3.0);
}

TEST(SimPacketCollective, NvlinkOnlyStepsTakeBytesOverTheNvlinkRate) {
  const auto c = cluster(2, 2);
  const double wire_us = 64.0 * kMiB * 8 / 3.6e12 * 1e6;  // 149.1 us
  const auto one = rs::run_packet_plan(c, plan({nvlink(0, 1, 64 * kMiB)}));
  EXPECT_NEAR(one.time_us, wire_us + 1.0, 1e-3);
  EXPECT_EQ(one.counters.nvlink_bytes, 64 * kMiB);
  EXPECT_EQ(one.counters.net_bytes, 0u);
  EXPECT_EQ(one.counters.packet_hops, 0u);
  // Two copies out of GPU 0 share its NVLink egress; a copy 1 -> 0 at the same time does not.
  const auto shared = rs::run_packet_plan(c, plan({nvlink(0, 1, 64 * kMiB), nvlink(2, 1, 64 * kMiB), nvlink(1, 0, 64 * kMiB)}));
  EXPECT_NEAR(shared.time_us, 2 * wire_us + 1.0, 1e-3);
}

TEST(SimPacketCollective, PxnRelayCountsNvlinkAndNetworkBytesAndStaysOnTheRail) {
  const auto c = cluster(2, 2);
  // n0g1 -> n1g0: with PXN through n0g0's NIC (rail 0); without, n0g1's own NIC (rail 1) and a spine.
  const auto pxn = rs::run_packet_plan(c, plan({net(1, 2, 4 * kMiB, 0)}));
  EXPECT_EQ(pxn.counters.nvlink_bytes, 4 * kMiB);
  EXPECT_EQ(pxn.counters.net_bytes, 4 * kMiB);
  EXPECT_EQ(pxn.counters.spine_bytes, 0u);
  EXPECT_NEAR(pxn.time_us, one_hop_pair_us(4 * kMiB), 0.01);  // the relay copy runs alongside
  const auto direct = rs::run_packet_plan(c, plan({net(1, 2, 4 * kMiB)}));
  EXPECT_EQ(direct.counters.nvlink_bytes, 0u);
  EXPECT_EQ(direct.counters.spine_bytes, 4 * kMiB);
  EXPECT_GT(direct.time_us, pxn.time_us + 1.9);  // two more links: leaf -> spine -> leaf
}

namespace {

/// Every GPU sends `bytes` to every GPU of the other nodes through its own NIC (no PXN).
rs::CollPlan all_to_all(const rs::ClusterSpec& c, std::uint64_t bytes) {
  std::vector<rs::Transfer> ts;
  for (int s = 0; s < c.gpus(); ++s)
    for (int d = 0; d < c.gpus(); ++d)
      if (s / c.gpus_per_node() != d / c.gpus_per_node()) ts.push_back(net(s, d, bytes));
  return plan(std::move(ts));
}

}  // namespace

TEST(SimPacketCollective, AllToAllAcrossRailsCongestsOversubscribedSpines) {
  const auto thin = cluster(4, 4, 100, "dcqcn_nvidia", 2, 2);
  const auto o = rs::run_packet_plan(thin, all_to_all(thin, kMiB));
  measured("a2a_2to1_time_us", o.time_us);
  measured("a2a_2to1_ecn_marked", static_cast<double>(o.counters.ecn_marked));
  measured("a2a_2to1_cnps", static_cast<double>(o.counters.cnps));
  measured("a2a_2to1_pause_tx", static_cast<double>(o.counters.pause_tx));
  EXPECT_EQ(o.counters.net_bytes, 16u * 12 * kMiB);
  EXPECT_EQ(o.counters.spine_bytes, 16u * 9 * kMiB);  // 9 of the 12 peers are on other rails
  EXPECT_GT(o.counters.ecn_marked, 0u);
  EXPECT_GT(o.counters.cnps, 0u);
  // The same traffic on 1:1 spines is faster; without congestion control, PFC pauses instead.
  const auto full = cluster(4, 4, 100, "dcqcn_nvidia", 1, 2);
  const auto f = rs::run_packet_plan(full, all_to_all(full, kMiB));
  measured("a2a_1to1_time_us", f.time_us);
  EXPECT_GT(o.time_us, 1.3 * f.time_us);
  const auto nocc = cluster(4, 4, 100, "none", 2, 2);
  const auto n = rs::run_packet_plan(nocc, all_to_all(nocc, kMiB));
  measured("a2a_2to1_nocc_time_us", n.time_us);
  measured("a2a_2to1_nocc_pause_tx", static_cast<double>(n.counters.pause_tx));
  EXPECT_GT(n.counters.pause_tx, 0u);
  EXPECT_EQ(n.counters.cnps, 0u);
}

TEST(SimPacketCollective, SameSeedSameRun) {
  const auto c = cluster(4, 4, 100, "dcqcn_nvidia", 2, 2);
  const auto a = rs::run_packet_plan(c, all_to_all(c, 256 * 1024));
  const auto b = rs::run_packet_plan(c, all_to_all(c, 256 * 1024));
  EXPECT_EQ(a.counters.events, b.counters.events);
  EXPECT_EQ(a.counters.ecn_marked, b.counters.ecn_marked);
  EXPECT_DOUBLE_EQ(a.time_us, b.time_us);
}

TEST(SimPacketCollective, EmptyPlansAndBadTransfers) {
  const auto c = cluster(2, 2);
  EXPECT_DOUBLE_EQ(rs::run_packet_plan(c, rs::CollPlan{}).time_us, 0);
  EXPECT_DOUBLE_EQ(rs::run_packet_plan(c, plan({}, 1, 3.0)).time_us, 3.0);  // latency only
  rs::Transfer bad = net(0, 2, kMiB);
  bad.nic_dst = 9;
  try {
    rs::run_packet_plan(c, plan({bad}));
    FAIL() << "host 9 of 4";
  } catch (const railkit::Error& e) {
    EXPECT_EQ(e.code(), railkit::ErrorCode::Internal);
    EXPECT_NE(std::string(e.what()).find("nic_dst 9"), std::string::npos) << e.what();
  }
  EXPECT_THROW(rs::run_packet_plan(c, plan({net(0, 2, kMiB)}, 1, -1.0)), railkit::Error);
  // The engine is free again after an error.
  EXPECT_DOUBLE_EQ(rs::run_packet_plan(c, plan({nvlink(0, 1, 0)}, 2, 1.5)).time_us, 3.0);
}

TEST(SimPacketCollective, FlowAndPacketLevelAgreeOnRingAllReduce) {
  // Issue 16: flow vs packet within 10% where no congestion control is active. 2 nodes x 8
  // GPUs at 400 Gb/s, 64 MiB, NCCL_ALGO=Ring, nic.cc none.
  rs::ClusterSpec c = rs::load_cluster(std::string(RAILKIT_SIM_EXAMPLES) + "/cluster-4x8-1to1.yaml",
                                       {"topology.nodes=2", "nic.cc=none"});
  const rs::NcclSettings s = rs::read_nccl_settings({{"NCCL_ALGO", "Ring"}});
  const rs::CollRequest r{rs::CollKind::AllReduce, 64 * kMiB, 0};
  const auto flow = rs::run_flow_plan(c, rs::plan_collective(c, s, r));
  const auto packet = rs::run_packet_plan(c, rs::plan_collective(c, s, r));
  const double factor = 2.0 * (c.gpus() - 1) / c.gpus();
  const double flow_busbw = 64.0 * kMiB / (flow.time_us * 1e-6) / 1e9 * factor;
  const double packet_busbw = 64.0 * kMiB / (packet.time_us * 1e-6) / 1e9 * factor;
  measured("ring_2x8_64MiB_flow_busbw_GBps", flow_busbw);
  measured("ring_2x8_64MiB_packet_busbw_GBps", packet_busbw);
  measured("ring_2x8_64MiB_packet_over_flow", packet_busbw / flow_busbw);
  measured("ring_2x8_64MiB_packet_hops", static_cast<double>(packet.counters.packet_hops));
  measured("ring_2x8_64MiB_packet_wall_s", packet.wall_s);
  measured("ring_2x8_64MiB_packet_hops_per_s", static_cast<double>(packet.counters.packet_hops) / packet.wall_s);
  EXPECT_NEAR(packet_busbw / flow_busbw, 1.0, 0.10);
  EXPECT_EQ(packet.counters.net_bytes, flow.counters.net_bytes);
  EXPECT_EQ(packet.counters.nvlink_bytes, flow.counters.nvlink_bytes);
  EXPECT_EQ(packet.counters.spine_bytes, flow.counters.spine_bytes);
  EXPECT_EQ(packet.plan.algo, rs::Algo::Ring);
  EXPECT_EQ(packet.counters.drops, 0u);
}

// Issue 29: flow against packet level on the congested cases, with the planner's own plans.
// All-to-all without PXN on 2:1 spines (every inter-node byte off the sender's rail crosses a
// spine) is one step of every peer at once, so it has no dependencies to pipeline: the two
// fidelities agree without congestion control, and the packet level's loss is DCQCN's.
TEST(SimPacketCollective, PxnOffAllToAllOnThinSpinesDiffersOnlyByDcqcn) {
  const rs::NcclSettings s = rs::read_nccl_settings({{"NCCL_PXN_DISABLE", "1"}});
  const rs::CollRequest r{rs::CollKind::AllToAll, 16 * kMiB, 0};  // 1 MiB per peer
  const auto nocc = cluster(4, 4, 100, "none", 2, 2);
  const auto flow = rs::run_flow_plan(nocc, rs::plan_collective(nocc, s, r));
  const auto packet_nocc = rs::run_packet_plan(nocc, rs::plan_collective(nocc, s, r));
  const auto dcqcn = cluster(4, 4, 100, "dcqcn_nvidia", 2, 2);
  const auto packet = rs::run_packet_plan(dcqcn, rs::plan_collective(dcqcn, s, r));
  measured("a2a_pxnoff_2to1_flow_us", flow.time_us);
  measured("a2a_pxnoff_2to1_packet_nocc_us", packet_nocc.time_us);
  measured("a2a_pxnoff_2to1_packet_dcqcn_us", packet.time_us);
  measured("a2a_pxnoff_2to1_packet_dcqcn_cnps", static_cast<double>(packet.counters.cnps));
  EXPECT_EQ(packet.counters.spine_bytes, flow.counters.spine_bytes);
  EXPECT_NEAR(packet_nocc.time_us / flow.time_us, 1.0, 0.01);
  // The flow level is max-min fair sharing, an ideal congestion control: DCQCN cuts rates below
  // it (the figures of sim/README.md), never above.
  EXPECT_GT(packet.counters.cnps, 0u);
  EXPECT_GT(packet.time_us, 0.99 * flow.time_us);
}

// Rings that cross the spines (NCCL_CROSS_NIC=1) are where pipelining shows without congestion
// control: at packet level the channels sharing a collided spine link drift apart and fill each
// other's per-step latency; at flow level they stay in lock-step and every step's latency and
// propagation delay is paid. The busiest link's bytes over its rate bound both from below.
TEST(SimPacketCollective, SpineCrossingRingLiesBetweenTheLinkBoundAndTheFlowLevel) {
  const rs::ClusterSpec c =
      rs::load_cluster(std::string(RAILKIT_SIM_EXAMPLES) + "/cluster-4x8-1to1.yaml", {"nic.cc=none"});
  const rs::NcclSettings s = rs::read_nccl_settings({{"NCCL_ALGO", "Ring"}, {"NCCL_PROTO", "Simple"}, {"NCCL_CROSS_NIC", "1"}});
  const rs::CollRequest r{rs::CollKind::AllReduce, 64 * kMiB, 0};
  const rs::CollPlan p = rs::plan_collective(c, s, r);
  const auto& k = *std::find_if(p.candidates.begin(), p.candidates.end(), [](const rs::AlgoCandidate& x) {
    return x.algo == rs::Algo::Ring && x.proto == rs::Proto::Simple;
  });
  const auto flow = rs::run_flow_plan(c, p);
  const auto packet = rs::run_packet_plan(c, p);
  measured("ring_xnic_4x8_64MiB_link_bound_us", k.bandwidth_us);
  measured("ring_xnic_4x8_64MiB_latency_us", k.latency_us);
  measured("ring_xnic_4x8_64MiB_flow_us", flow.time_us);
  measured("ring_xnic_4x8_64MiB_packet_nocc_us", packet.time_us);
  EXPECT_GT(packet.counters.spine_bytes, 0u);
  EXPECT_GE(packet.time_us, k.bandwidth_us);
  EXPECT_GE(flow.time_us, k.bandwidth_us + k.latency_us);
  EXPECT_LE(packet.time_us, flow.time_us);
}
