// Pipelined collectives (issue 29): a transfer's run waits for what it names in `after` (its
// ring predecessor's previous run), not for the whole step; the rules (PlanProgress) and both
// executors on a plan whose pipelined time differs from the bulk-synchronous one.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>

#include "core/error.hpp"
#include "sim/collective.hpp"
#include "sim/plan_progress.hpp"

namespace rs = railkit::sim;
using nlohmann::json;

namespace {

constexpr std::uint64_t kMiBytes = 1ull << 20;

/// An NVLink copy (no network) from GPU `src` to GPU `dst` waiting for `after`.
rs::Transfer nvl_copy(int src, int dst, std::uint64_t bytes, std::vector<std::uint32_t> after) {
  rs::Transfer t;
  t.src = src;
  t.dst = dst;
  t.bytes = bytes;
  t.after = std::move(after);
  return t;
}

std::vector<std::uint32_t> sorted_ids(std::vector<std::uint32_t> v) {
  std::sort(v.begin(), v.end());
  return v;
}

/// One node of 8 GPUs, NVLink 3.6 Tb/s, no NVLink delay.
rs::ClusterSpec one_nvlink_node() {
  const json d = {{"name", "nvl"},
                  {"topology", {{"nodes", 1}, {"gpus_per_node", 8}, {"spines", 1}, {"link_rate", "100Gbps"}}},
                  {"nvlink", {{"rate", "3600Gbps"}}}};
  return rs::parse_cluster(d, "nvl.yaml", ".");
}

}  // namespace

TEST(SimPlanProgress, ARingEdgeWaitsOnlyForItsPredecessor) {
  // A ring of three edges 0 -> 1 -> 2 -> 0, run 3 times: edge i's run r waits for edge i-1's run r-1.
  std::vector<rs::Step> steps{rs::Step{{nvl_copy(0, 1, 1, {2}), nvl_copy(1, 2, 1, {0}), nvl_copy(2, 0, 1, {1})}, 3, 0}};
  rs::PlanProgress p(steps);
  EXPECT_EQ(sorted_ids(p.initial()), (std::vector<std::uint32_t>{0, 1, 2}));
  std::vector<std::uint32_t> ready;
  p.done(0, ready);  // edge 0's run 0: edge 1 still runs its run 0, edge 0 waits for edge 2
  EXPECT_TRUE(ready.empty());
  p.done(2, ready);  // edge 2 done: edge 0 may run again, while edge 1 is still on run 0 (no barrier)
  EXPECT_EQ(ready, std::vector<std::uint32_t>{0});
  EXPECT_TRUE(p.busy(1));
  EXPECT_EQ(p.runs_done(1), 0);
  ready.clear();
  p.done(0, ready);  // edge 0's run 1 done: nothing, edge 2 needs edge 1's run 0
  EXPECT_TRUE(ready.empty());
  p.done(1, ready);  // edge 1's run 0: edge 1 (needs edge 0's run 0) and edge 2 (needs edge 1's run 0)
  EXPECT_EQ(sorted_ids(ready), (std::vector<std::uint32_t>{1, 2}));
  EXPECT_TRUE(p.pipelined(0));
  EXPECT_FALSE(p.finished());
}

TEST(SimPlanProgress, EmptyAfterIsABarrierAndStepsFollowEachOther) {
  std::vector<rs::Step> steps{rs::Step{{nvl_copy(0, 1, 1, {}), nvl_copy(2, 3, 1, {})}, 2, 0}, rs::Step{{nvl_copy(4, 5, 1, {})}, 1, 0}};
  rs::PlanProgress p(steps);
  EXPECT_FALSE(p.pipelined(0));
  EXPECT_EQ(sorted_ids(p.initial()), (std::vector<std::uint32_t>{0, 1}));
  std::vector<std::uint32_t> ready;
  p.done(0, ready);
  EXPECT_TRUE(ready.empty());  // run 1 waits for the whole run 0
  p.done(1, ready);
  EXPECT_EQ(sorted_ids(ready), (std::vector<std::uint32_t>{0, 1}));
  ready.clear();
  p.done(1, ready);
  EXPECT_TRUE(ready.empty());  // step 2 waits for all of step 1
  p.done(0, ready);
  EXPECT_EQ(ready, std::vector<std::uint32_t>{2});
  ready.clear();
  p.done(2, ready);
  EXPECT_TRUE(p.finished());
  EXPECT_THROW(p.done(2, ready), railkit::Error);  // not running
  EXPECT_THROW(p.skip(0, 1), railkit::Error);      // barriers: no period jump
}

TEST(SimPlanProgress, PlansNamingMissingTransfersAreRefused) {
  const rs::ClusterSpec c = one_nvlink_node();
  std::vector<rs::Step> steps{rs::Step{{nvl_copy(0, 1, 1, {5})}, 2, 0}};
  EXPECT_THROW(rs::normalize_plan(c, steps), railkit::Error);
  steps = {rs::Step{{nvl_copy(0, 9, 1, {0})}, 2, 0}};  // GPU 9 of 8
  EXPECT_THROW(rs::normalize_plan(c, steps), railkit::Error);
  steps = {rs::Step{{}, 2, 1.5}, rs::Step{{nvl_copy(0, 1, 1, {})}, 0, 0}};
  rs::normalize_plan(c, steps);  // the step without runs goes; the empty one gets a 0-byte transfer
  ASSERT_EQ(steps.size(), 1u);
  EXPECT_EQ(steps[0].transfers.size(), 1u);
}

// Two channels on GPU 0's NVLink egress, run twice: channel A is a ring of A1 (GPU 0 -> 1, 2 MiB)
// and A2 (GPU 3 -> 4, 2.5 MiB); channel B is B1 (GPU 0 -> 2, 1 MiB) alone. With u = 1 MiB at the
// NVLink rate: bulk-synchronous, each run ends when A1 does (sharing GPU 0 with B1): 3u, 6u in
// all. Pipelined, B1 runs again at 2u without waiting for A (and shares GPU 0 with A1 until 4u);
// A1 and A2 run again at 4u when each has its predecessor's run 0, A2's second run ends at 6.5u.
TEST(SimPipelined, ChannelsRunAheadOfEachOtherAtBothFidelities) {
  const rs::ClusterSpec c = one_nvlink_node();
  rs::CollPlan p;
  p.steps.push_back(rs::Step{{nvl_copy(0, 1, 2 * kMiBytes, {1}), nvl_copy(3, 4, 5 * kMiBytes / 2, {0}), nvl_copy(0, 2, kMiBytes, {2})}, 2, 0});
  const double u_us = kMiBytes / (3.6e12 / 8) * 1e6;
  const rs::CollOutcome flow = rs::run_flow_plan(c, p);
  EXPECT_NEAR(flow.time_us, 6.5 * u_us, 1e-6 * u_us);
  const rs::CollOutcome packet = rs::run_packet_plan(c, p);
  EXPECT_NEAR(packet.time_us, 6.5 * u_us, 1e-4);  // picosecond clock
  EXPECT_EQ(flow.counters.nvlink_bytes, 2 * (2 + 1) * kMiBytes + 5 * kMiBytes);
  EXPECT_EQ(packet.counters.nvlink_bytes, flow.counters.nvlink_bytes);
  // The same transfers with barriers (no `after`): 6u at both fidelities.
  for (rs::Transfer& t : p.steps[0].transfers) t.after.clear();
  EXPECT_NEAR(rs::run_flow_plan(c, p).time_us, 6 * u_us, 1e-6 * u_us);
  EXPECT_NEAR(rs::run_packet_plan(c, p).time_us, 6 * u_us, 1e-4);
}

TEST(SimPipelined, LatencyComesBeforeEveryRun) {
  // One edge run 3 times with 2 us of step latency: 3 x (2 us + its copy).
  const rs::ClusterSpec c = one_nvlink_node();
  rs::CollPlan p;
  p.steps.push_back(rs::Step{{nvl_copy(0, 1, kMiBytes, {0})}, 3, 2.0});
  const double u_us = kMiBytes / (3.6e12 / 8) * 1e6;
  const rs::CollOutcome flow = rs::run_flow_plan(c, p);
  EXPECT_NEAR(flow.time_us, 3 * (2.0 + u_us), 1e-6);
  EXPECT_DOUBLE_EQ(flow.latency_us, 6.0);
  EXPECT_NEAR(rs::run_packet_plan(c, p).time_us, 3 * (2.0 + u_us), 1e-4);
}
