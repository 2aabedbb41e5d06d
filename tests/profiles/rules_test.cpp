// The tuner plugin's decisions without the C ABI: CSV lines, profile decisions, the cost-table edit.
#include "profiles/plugin/rules.hpp"

#include <gtest/gtest.h>

#include "profiles/plugin/nccl_tuner_abi.h"

namespace {

namespace abi = railkit::nccl_abi;
using namespace railkit::tuner_plugin;

Loaded csv(std::string_view text) {
  Loaded out;
  rules_from_csv(text, "t.conf", out);
  return out;
}

TEST(PluginRules, CsvFieldsAndWildcards) {
  const auto l = csv("allreduce,0,65536,tree,simple,2,1,-1,-1,1\r\n"
                     "reducescatter,-1,-1,-1,ll,-1,4,32,2\n"
                     "  # indented comment\n\n"
                     "AllGather,10,20,NVLS_TREE,LL128,0,-1,-1\n");
  ASSERT_TRUE(l.log.empty()) << l.log[0].text;
  ASSERT_EQ(l.rules.size(), 3u);
  const Rule& a = l.rules[0];
  EXPECT_EQ(a.coll, abi::kFuncAllReduce);
  EXPECT_EQ(a.min_bytes, 0u);
  EXPECT_EQ(a.max_bytes, 65536u);
  EXPECT_EQ(a.algos, 1u << abi::kAlgoTree);
  EXPECT_EQ(a.protos, 1u << abi::kProtoSimple);
  EXPECT_EQ(a.channels, 2);
  EXPECT_EQ(a.nodes, 1);
  EXPECT_EQ(a.ranks, -1);
  EXPECT_EQ(a.pipe_ops, -1);
  EXPECT_EQ(a.reg_buff, 1);
  EXPECT_EQ(a.origin, "t.conf:1");
  const Rule& b = l.rules[1];
  EXPECT_EQ(b.coll, abi::kFuncReduceScatter);
  EXPECT_EQ(b.min_bytes, 0u);
  EXPECT_EQ(b.max_bytes, std::numeric_limits<std::uint64_t>::max());
  EXPECT_EQ(b.algos, kAnyAlgo);
  EXPECT_EQ(b.protos, 1u << abi::kProtoLL);
  EXPECT_EQ(b.channels, 0);
  EXPECT_EQ(b.pipe_ops, 2);
  EXPECT_EQ(b.reg_buff, -1);
  const Rule& c = l.rules[2];
  EXPECT_EQ(c.coll, abi::kFuncAllGather);
  EXPECT_EQ(c.algos, 1u << abi::kAlgoNvlsTree);
  EXPECT_EQ(c.origin, "t.conf:5");
}

TEST(PluginRules, CsvByteOrderMarkIsIgnored) {
  const auto l = csv("\xEF\xBB\xBF" "allreduce,0,10,ring,simple,64,-1,-1\n");
  EXPECT_TRUE(l.log.empty());
  ASSERT_EQ(l.rules.size(), 1u);
  EXPECT_EQ(l.rules[0].channels, 64);
}

TEST(PluginRules, CsvMalformedLinesAreSkippedWithAWarning) {
  const auto l = csv("allreduce,0,10,ring,simple,-1,-1,-1\n"
                     "allreduce,0,10,ring,simple,-1,-1\n"
                     "allreduce,0,10,ring,simple,-2,-1,-1\n"
                     "allreduce,0,10,ring,lol,-1,-1,-1\n"
                     "allreduce,0,,ring,simple,-1,-1,-1\n"
                     "allreduce,0,10,ring,simple,-1,x,-1\n"
                     "sendrecv,0,10,ring,simple,-1,-1,-1\n"
                     "allreduce,0,10,ring,simple,99999,-1,-1\n");
  ASSERT_EQ(l.rules.size(), 1u);
  ASSERT_EQ(l.log.size(), 7u);
  for (const auto& line : l.log) EXPECT_EQ(line.severity, Severity::Warn);
  EXPECT_EQ(l.log[0].text, "t.conf:2: skipped: 7 fields, want 8 to 10 (collective_type,min_bytes,max_bytes,algorithm,"
                           "protocol,channels,nNodes,nRanks[,numPipeOps[,regBuff]])");
  EXPECT_EQ(l.log[1].text, "t.conf:3: skipped: channels -2 is below -1 (-1 = any)");
  EXPECT_EQ(l.log[2].text, "t.conf:4: skipped: unknown protocol 'lol' (ll, ll128, simple or -1)");
  EXPECT_EQ(l.log[3].text, "t.conf:5: skipped: max_bytes '' is not an integer");
  EXPECT_EQ(l.log[4].text, "t.conf:6: skipped: nNodes 'x' is not an integer");
  EXPECT_EQ(l.log[5].text, "t.conf:7: skipped: unknown collective_type 'sendrecv' (broadcast, reduce, allgather, "
                           "reducescatter, allreduce)");
  EXPECT_EQ(l.log[6].text, "t.conf:8: skipped: channels 99999 is above 64 (NCCL's MAXCHANNELS)");
}

railkit::ProfileDecision decision(std::string coll, std::map<std::string, std::string> env) {
  railkit::ProfileDecision d;
  d.coll = std::move(coll);
  d.min_bytes = 1;
  d.max_bytes = 2;
  d.env = std::move(env);
  return d;
}

TEST(PluginRules, ProfileEnvToMasksInNcclSyntax) {
  railkit::ProfileDocument p;
  p.decisions = {
      decision("all_reduce", {{"NCCL_ALGO", "ring"}, {"NCCL_PROTO", "LL128"}, {"NCCL_MAX_NCHANNELS", "16"}}),
      decision("all_reduce", {{"NCCL_ALGO", "Ring,Tree"}, {"NCCL_PROTO", "^LL"}}),
      decision("broadcast", {{"NCCL_ALGO", "Tree;broadcast:Ring;AllReduce:NVLS"}}),
      decision("all_gather", {{"NCCL_MIN_CTAS", "3"}}),
      decision("sendrecv", {{"NCCL_ALGO", "Ring"}}),
      decision("reduce", {{"NCCL_ALGO", "Ring"}, {"NCCL_MAX_NCHANNELS", "lots"}}),
      decision("reduce", {{"NCCL_ALGO", "Sideways"}}),
  };
  Loaded l;
  rules_from_profile(p, l);
  ASSERT_EQ(l.rules.size(), 4u);
  EXPECT_EQ(l.rules[0].algos, 1u << abi::kAlgoRing);
  EXPECT_EQ(l.rules[0].protos, 1u << abi::kProtoLL128);
  EXPECT_EQ(l.rules[0].channels, 16);
  EXPECT_EQ(l.rules[0].min_bytes, 1u);
  EXPECT_EQ(l.rules[0].max_bytes, 2u);
  EXPECT_EQ(l.rules[0].nodes, -1);
  EXPECT_EQ(l.rules[1].algos, (1u << abi::kAlgoRing) | (1u << abi::kAlgoTree));
  EXPECT_EQ(l.rules[1].protos, (1u << abi::kProtoLL128) | (1u << abi::kProtoSimple));
  EXPECT_EQ(l.rules[2].coll, abi::kFuncBroadcast);
  EXPECT_EQ(l.rules[2].algos, 1u << abi::kAlgoRing);
  EXPECT_EQ(l.rules[2].protos, kAnyProto);
  EXPECT_EQ(l.rules[3].algos, kAnyAlgo);
  EXPECT_EQ(l.rules[3].channels, 3);
  ASSERT_EQ(l.log.size(), 2u);
  EXPECT_EQ(l.log[0].text, "decisions[5] (reduce): skipped: NCCL_MAX_NCHANNELS=lots is not a channel count");
  EXPECT_EQ(l.log[1].text, "decisions[6] (reduce): skipped: 'Sideways' is not one of Tree, Ring, CollNetDirect, "
                           "CollNetChain, NVLS, NVLSTree, PAT");
}

TEST(PluginRules, FindRuleFirstMatchWins) {
  const auto l = csv("allreduce,0,100,ring,simple,-1,2,-1\n"
                     "allreduce,0,100,tree,simple,-1,-1,-1,1\n"
                     "allreduce,0,100,tree,ll,-1,-1,-1\n");
  ASSERT_EQ(l.rules.size(), 3u);
  EXPECT_EQ(find_rule(l.rules, abi::kFuncAllReduce, 50, 2, 16, 1, 0), &l.rules[0]);
  EXPECT_EQ(find_rule(l.rules, abi::kFuncAllReduce, 50, 1, 16, 1, 0), &l.rules[1]);
  EXPECT_EQ(find_rule(l.rules, abi::kFuncAllReduce, 50, 1, 16, 3, 0), &l.rules[2]);
  EXPECT_EQ(find_rule(l.rules, abi::kFuncAllReduce, 101, 1, 16, 3, 0), nullptr);
  EXPECT_EQ(find_rule(l.rules, abi::kFuncBroadcast, 50, 1, 16, 3, 0), nullptr);
}

TEST(PluginRules, ApplyPicksTheCheapestAllowedEnabledEntry) {
  float t[abi::kNumAlgorithms][abi::kNumProtocols];
  for (auto& row : t)
    for (auto& x : row) x = -1.0f;
  t[abi::kAlgoTree][abi::kProtoSimple] = 9.0f;
  t[abi::kAlgoRing][abi::kProtoLL] = 5.0f;
  t[abi::kAlgoRing][abi::kProtoSimple] = 3.0f;
  Rule r;
  r.algos = (1u << abi::kAlgoRing) | (1u << abi::kAlgoTree);
  r.protos = kAnyProto;
  r.channels = 6;
  int n = 0;
  const Applied a = apply(r, &t[0][0], abi::kNumAlgorithms, abi::kNumProtocols, &n);
  EXPECT_EQ(a.algo, abi::kAlgoRing);
  EXPECT_EQ(a.proto, abi::kProtoSimple);
  EXPECT_EQ(a.channels, 6);
  EXPECT_EQ(n, 6);
  EXPECT_EQ(t[abi::kAlgoRing][abi::kProtoSimple], 0.0f);
  EXPECT_EQ(t[abi::kAlgoRing][abi::kProtoLL], 5.0f);

  // CollNet: the entry is chosen, the channel count left to NCCL (it does not clamp CollNet's).
  t[abi::kAlgoCollNetChain][abi::kProtoSimple] = 1.0f;
  Rule collnet;
  collnet.algos = 1u << abi::kAlgoCollNetChain;
  collnet.channels = 6;
  n = 0;
  const Applied c = apply(collnet, &t[0][0], abi::kNumAlgorithms, abi::kNumProtocols, &n);
  EXPECT_EQ(c.algo, abi::kAlgoCollNetChain);
  EXPECT_EQ(c.channels, 0);
  EXPECT_EQ(n, 0);
  EXPECT_EQ(t[abi::kAlgoCollNetChain][abi::kProtoSimple], 0.0f);

  Rule any;  // allows everything: NCCL's choice, channels untouched
  any.channels = 6;
  n = 0;
  EXPECT_EQ(apply(any, &t[0][0], abi::kNumAlgorithms, abi::kNumProtocols, &n).algo, -1);
  EXPECT_EQ(n, 0);

  Rule off;  // only disabled entries allowed
  off.algos = 1u << abi::kAlgoPat;
  off.channels = 6;
  EXPECT_EQ(apply(off, &t[0][0], abi::kNumAlgorithms, abi::kNumProtocols, &n).algo, -1);
  EXPECT_EQ(n, 0);
}

TEST(PluginRules, LoadAppliesTheScaleRule) {
  const std::string dir = RAILKIT_PLUGIN_FIXTURES;
  const auto ok = load({dir + "/profile-2x16.json", std::nullopt}, 16, 2);
  EXPECT_EQ(ok.rules.size(), 7u);
  ASSERT_EQ(ok.log.size(), 7u);
  EXPECT_EQ(ok.log[0].severity, Severity::Info);
  EXPECT_EQ(ok.log[1].severity, Severity::Detail);
  const auto other = load({dir + "/profile-2x16.json", std::nullopt}, 16, 4);
  EXPECT_TRUE(other.rules.empty());
  ASSERT_EQ(other.log.size(), 1u);
  EXPECT_EQ(other.log[0].severity, Severity::Warn);
}

}  // namespace
