// The algorithm and protocol choice (issue 29): NCCL's cost model (latency + bytes / bandwidth,
// the least among the allowed pairs) with the model's own estimates, NCCL_ALGO / NCCL_PROTO
// honoured, every candidate reported.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <string>

#include "sim/collective.hpp"

namespace rs = railkit::sim;

namespace {

constexpr std::uint64_t kGiBytes = 1ull << 30;

rs::ClusterSpec two_node_cluster() {
  return rs::load_cluster(std::string(RAILKIT_SIM_EXAMPLES) + "/cluster-4x8-1to1.yaml", {"topology.nodes=2"});
}

rs::CollOutcome flow_outcome(const rs::ClusterSpec& c, const std::vector<std::pair<std::string, std::string>>& env,
                         rs::CollKind k = rs::CollKind::AllReduce, std::uint64_t bytes = kGiBytes) {
  return rs::simulate_collective(c, rs::read_nccl_settings(env), {k, bytes, 0}, rs::Fidelity::Flow);
}

const rs::AlgoCandidate& find_candidate(const rs::CollPlan& p, rs::Algo a, rs::Proto pr) {
  const auto it = std::find_if(p.candidates.begin(), p.candidates.end(),
                               [&](const rs::AlgoCandidate& k) { return k.algo == a && k.proto == pr; });
  if (it == p.candidates.end()) throw std::runtime_error(std::string("no candidate ") + rs::algo_name(a) + "/" + rs::proto_name(pr));
  return *it;
}

bool has_plan_note(const rs::CollPlan& p, const std::string& text) {
  return std::any_of(p.notes.begin(), p.notes.end(), [&](const std::string& n) { return n.find(text) != std::string::npos; });
}

double allreduce_busbw_GBps(const rs::CollOutcome& o, int n) { return kGiBytes / (o.time_us * 1e-6) / 1e9 * 2.0 * (n - 1) / n; }

}  // namespace

// The case: 1 GiB all-reduce on 2 x 8 GPUs, where the model's tree (its NICs carry 1/8 of
// the size each, the ring's 15/64) beats its ring; the choice used to be Ring.
TEST(SimAlgoChoice, TwoNodeGiBAllReducePicksTheFasterAlgorithm) {
  const rs::ClusterSpec c = two_node_cluster();
  const rs::CollOutcome ring = flow_outcome(c, {{"NCCL_ALGO", "Ring"}, {"NCCL_PROTO", "Simple"}});
  const rs::CollOutcome tree = flow_outcome(c, {{"NCCL_ALGO", "Tree"}, {"NCCL_PROTO", "Simple"}});
  const rs::CollOutcome chosen = flow_outcome(c, {});
  std::printf("[ figure ] 2 x 8 GPUs, all-reduce 1 GiB, flow: Ring %.1f us (busbw %.1f GB/s), Tree %.1f us (%.1f GB/s); "
              "chosen %s/%s %.1f us\n",
              ring.time_us, allreduce_busbw_GBps(ring, 16), tree.time_us, allreduce_busbw_GBps(tree, 16), rs::algo_name(chosen.plan.algo),
              rs::proto_name(chosen.plan.proto), chosen.time_us);
  ASSERT_LT(tree.time_us, ring.time_us);
  EXPECT_EQ(chosen.plan.algo, rs::Algo::Tree);
  EXPECT_EQ(chosen.plan.proto, rs::Proto::Simple);
  EXPECT_DOUBLE_EQ(chosen.time_us, tree.time_us);
  // The predictions are the simulated times' own estimates: within 5% of them here.
  for (const auto& [algo, run] : {std::pair{rs::Algo::Ring, &ring}, std::pair{rs::Algo::Tree, &tree}}) {
    const rs::AlgoCandidate& k = find_candidate(chosen.plan, algo, rs::Proto::Simple);
    std::printf("[ figure ] %s/Simple predicted %.1f us (latency %.1f + bandwidth %.1f, busiest: %s), simulated %.1f us\n",
                rs::algo_name(algo), k.predicted_us, k.latency_us, k.bandwidth_us, k.busiest_link.c_str(), run->time_us);
    EXPECT_NEAR(k.predicted_us, run->time_us, 0.05 * run->time_us) << rs::algo_name(algo);
  }
  EXPECT_TRUE(has_plan_note(chosen.plan, "algorithm Tree, protocol Simple: NCCL's cost model")) << chosen.plan.notes.front();
  EXPECT_TRUE(has_plan_note(chosen.plan, "Tree/Simple")) << chosen.plan.notes.back();
  EXPECT_TRUE(has_plan_note(chosen.plan, "(chosen)"));
}

TEST(SimAlgoChoice, NcclAlgoAndProtoRestrictOrForceTheChoice) {
  const rs::ClusterSpec c = two_node_cluster();
  // A single algorithm forces it, though the other is predicted faster.
  const rs::CollOutcome ring = flow_outcome(c, {{"NCCL_ALGO", "Ring"}});
  EXPECT_EQ(ring.plan.algo, rs::Algo::Ring);
  const rs::AlgoCandidate& tree_simple = find_candidate(ring.plan, rs::Algo::Tree, rs::Proto::Simple);
  EXPECT_FALSE(tree_simple.allowed);
  EXPECT_LT(tree_simple.predicted_us, find_candidate(ring.plan, rs::Algo::Ring, ring.plan.proto).predicted_us);
  EXPECT_TRUE(has_plan_note(ring.plan, "Tree/Simple")) << ring.plan.notes.back();
  EXPECT_TRUE(has_plan_note(ring.plan, "(not allowed)"));
  EXPECT_EQ(flow_outcome(c, {{"NCCL_ALGO", "^Tree"}}).plan.algo, rs::Algo::Ring);
  // A list restricts: both allowed, the faster wins.
  EXPECT_EQ(flow_outcome(c, {{"NCCL_ALGO", "Ring,Tree"}}).plan.algo, rs::Algo::Tree);
  // A single protocol forces it; a list leaves the choice among its members.
  const rs::CollOutcome ll = flow_outcome(c, {{"NCCL_PROTO", "LL"}});
  EXPECT_EQ(ll.plan.proto, rs::Proto::LL);
  EXPECT_DOUBLE_EQ(ll.plan.protocol_factor, 0.5);
  EXPECT_EQ(flow_outcome(c, {{"NCCL_PROTO", "LL,LL128"}}).plan.proto, rs::Proto::LL128);
  EXPECT_EQ(flow_outcome(c, {{"NCCL_PROTO", "LL,LL128"}}, rs::CollKind::AllReduce, 4096).plan.proto, rs::Proto::LL);
  // Tree only where the collective has no tree: Ring, said so.
  const rs::CollOutcome ag = flow_outcome(c, {{"NCCL_ALGO", "Tree"}}, rs::CollKind::AllGather);
  EXPECT_EQ(ag.plan.algo, rs::Algo::Ring);
  EXPECT_TRUE(has_plan_note(ag.plan, "NCCL_ALGO allows only Tree"));
}

TEST(SimAlgoChoice, CandidatesAreEveryModelledPairWithNcclsLatencies) {
  const rs::ClusterSpec c = two_node_cluster();
  const rs::CollPlan p = rs::plan_collective(c, rs::read_nccl_settings({}), {rs::CollKind::AllReduce, kGiBytes, 0});
  ASSERT_EQ(p.candidates.size(), 6u);  // Tree then Ring (NCCL's order), each LL, LL128, Simple
  EXPECT_EQ(p.candidates[0].algo, rs::Algo::Tree);
  EXPECT_EQ(p.candidates[0].proto, rs::Proto::LL);
  EXPECT_EQ(p.candidates[5].algo, rs::Algo::Ring);
  EXPECT_EQ(p.candidates[5].proto, rs::Proto::Simple);
  for (const rs::AlgoCandidate& k : p.candidates) {
    EXPECT_TRUE(k.allowed);
    EXPECT_DOUBLE_EQ(k.predicted_us, k.latency_us + k.bandwidth_us);
    EXPECT_FALSE(k.busiest_link.empty());
  }
  // NCCL's latencies on 2 x 8 (src/graph/tuning.cc): Ring Simple 8.4 + 28 x 3.4 + 2 x 14;
  // Tree Simple 8.4 + 2 (7 x 4 + 1 x 14); Ring LL 6.6 + 28 x 0.6 + 2 x 2.7.
  EXPECT_NEAR(find_candidate(p, rs::Algo::Ring, rs::Proto::Simple).latency_us, 131.6, 1e-9);
  EXPECT_NEAR(find_candidate(p, rs::Algo::Tree, rs::Proto::Simple).latency_us, 92.4, 1e-9);
  EXPECT_NEAR(find_candidate(p, rs::Algo::Ring, rs::Proto::LL).latency_us, 28.8, 1e-9);
  // A protocol moves bytes / its payload share: LL twice Simple's bandwidth term, LL128 1/0.92.
  const double simple = find_candidate(p, rs::Algo::Ring, rs::Proto::Simple).bandwidth_us;
  EXPECT_NEAR(find_candidate(p, rs::Algo::Ring, rs::Proto::LL).bandwidth_us, 2 * simple, 1e-9 * simple);
  EXPECT_NEAR(find_candidate(p, rs::Algo::Ring, rs::Proto::LL128).bandwidth_us, simple / 0.92, 1e-9 * simple);
  // Ring only for the other collectives; none for point-to-point (no choice, said so).
  const rs::CollPlan ag = rs::plan_collective(c, rs::read_nccl_settings({}), {rs::CollKind::AllGather, kGiBytes, 0});
  ASSERT_EQ(ag.candidates.size(), 3u);
  EXPECT_TRUE(std::all_of(ag.candidates.begin(), ag.candidates.end(), [](const rs::AlgoCandidate& k) { return k.algo == rs::Algo::Ring; }));
  const rs::CollPlan a2a = rs::plan_collective(c, rs::read_nccl_settings({}), {rs::CollKind::AllToAll, kGiBytes, 0});
  EXPECT_TRUE(a2a.candidates.empty());
  EXPECT_TRUE(has_plan_note(a2a, "point-to-point"));
  // One node: no tree here.
  const rs::ClusterSpec one = rs::load_cluster(std::string(RAILKIT_SIM_EXAMPLES) + "/cluster-4x8-1to1.yaml", {"topology.nodes=1"});
  EXPECT_EQ(rs::plan_collective(one, rs::read_nccl_settings({}), {rs::CollKind::AllReduce, kGiBytes, 0}).candidates.size(), 3u);
}
