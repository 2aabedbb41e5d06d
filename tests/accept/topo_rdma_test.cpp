// The node-local stages' judging: topo.lint from `railkit topo --lint`'s document, homogeneity
// against the majority, rdma.loopback from `railkit rdma-loopback`'s document, NIC discovery.
#include <gtest/gtest.h>

#include <filesystem>

#include "accept/topo_rdma.hpp"
#include "test_util.hpp"

using namespace railkit::accept;
using nlohmann::json;
using railkit::LaunchResult;
using railkit::Verdict;

namespace {

LaunchResult exited(int code) {
  LaunchResult lr;
  lr.end = LaunchResult::End::Exited;
  lr.exit_code = code;
  return lr;
}

const json kFindings = json::parse(R"({"findings":[
    {"check":"pcie.acs_enabled","severity":"error","subject":"0000:17:00.0","message":"ACS on"},
    {"check":"numa.unknown","severity":"warning","subject":"gpu0","message":"-"},
    {"check":"x","severity":"info","subject":"y","message":"z"}]})");

}  // namespace

TEST(AcceptTopo, LintFailsOnAnErrorFinding) {
  const AcceptCheck c = lint_check("/fx/acs", kFindings, exited(10), "");
  EXPECT_EQ(c.check, "topo.lint");
  EXPECT_EQ(c.verdict, Verdict::Fail);
  EXPECT_EQ(c.measured, "1 error, 1 warning");
  EXPECT_EQ(c.rule, "lint");
  EXPECT_EQ(c.evidence, "root /fx/acs: pcie.acs_enabled 0000:17:00.0: ACS on");
}

TEST(AcceptTopo, LintPassesWithoutErrorsWhenTheToolRan) {
  const json clean = json::parse(R"({"findings":[]})");
  AcceptCheck c = lint_check("/", clean, exited(0), "");
  EXPECT_EQ(c.verdict, Verdict::Pass);
  EXPECT_EQ(c.measured, "0 errors, 0 warnings");
  EXPECT_EQ(c.evidence, "root /");
  EXPECT_EQ(lint_check("/", clean, exited(10), "").verdict, Verdict::Pass);  // exit 10 is lint's own verdict
  EXPECT_EQ(lint_check("/", clean, exited(1), "").verdict, Verdict::Fail);   // a crash after writing is not clean
  c = lint_check("/r", std::nullopt, exited(9), "railkit: error: cannot read /r/sys");
  EXPECT_EQ(c.verdict, Verdict::Fail);
  EXPECT_EQ(c.measured, "no document");
  EXPECT_EQ(c.evidence, "railkit topo --root /r: exit code 9: railkit: error: cannot read /r/sys");
}

TEST(AcceptTopo, HomogeneityAgainstTheMajority) {
  const railkit::topo::NodeFacts a{"a", "h1", {{"gpus", "8"}}}, b{"b", "h1", {{"gpus", "8"}}}, c{"c", "h2", {{"gpus", "7"}}};
  EXPECT_TRUE(homogeneity_checks({a}).empty());  // one node: nothing to compare
  const auto checks = homogeneity_checks({a, b, c});
  ASSERT_EQ(checks.size(), 3u);
  EXPECT_EQ(checks[0].verdict, Verdict::Pass);
  EXPECT_EQ(checks[0].expected, "fingerprint h1");
  EXPECT_EQ(checks[2].verdict, Verdict::Fail);
  EXPECT_EQ(checks[2].measured, "differs");
  EXPECT_EQ(checks[2].evidence, "gpus = 7 (majority 8)");
  // Two nodes that differ: no majority, nobody fails.
  const auto tie = homogeneity_checks({a, c});
  ASSERT_EQ(tie.size(), 2u);
  for (const AcceptCheck& t : tie) {
    EXPECT_EQ(t.verdict, Verdict::Reported);  // no rule could judge them: reported, not passed
    EXPECT_EQ(t.rule, "none");
    EXPECT_EQ(t.measured, "no majority");
  }
}

TEST(AcceptTopo, NicNamesFromTheDocumentOrSysfs) {
  EXPECT_EQ(nic_names(json::parse(R"({"nics":[{"name":"mlx5_0"},{"port":1}]})")),
            (std::vector<std::string>{"mlx5_0", "?"}));
  EXPECT_TRUE(nic_names(json::parse(R"({"findings":[]})")).empty());
  EXPECT_TRUE(nic_names(json()).empty());  // no document
  EXPECT_TRUE(nic_names(json::parse("[1]")).empty());
  railkit::test::TempDir dir("railkit-accept");
  std::filesystem::create_directories(dir.path / "sys/class/infiniband/mlx5_1");
  AcceptNode with{"a", "a", {0}, dir.path.string()}, without{"b", "b", {1}, (dir.path / "none").string()};
  EXPECT_EQ(sysfs_nics({with, without}), (std::vector<std::vector<std::string>>{{"mlx5_1"}, {}}));
}

TEST(AcceptRdma, EachNicAgainstItsLineRate) {
  const json doc = json::parse(R"({"nics":[
      {"name":"mlx5_0","port":1,"numa":0,"gpu":3,"status":"ok","line_rate_Gbps":400,"measured_Gbps":380},
      {"name":"mlx5_1","port":1,"status":"ok","line_rate_Gbps":400,"measured_Gbps":200},
      {"name":"mlx5_2","status":"skipped","error":"port DOWN"},
      {"name":"mlx5_3","status":"failed","error":"ib_write_bw: timeout"},
      {"name":"mlx5_4","status":"ok","measured_Gbps":90}]})");
  std::string unavailable;
  const auto c = rdma_checks("/", 0.9, doc, exited(0), "", unavailable);
  EXPECT_TRUE(unavailable.empty());
  ASSERT_EQ(c.size(), 5u);
  EXPECT_EQ(c[0].check, "rdma.loopback.mlx5_0");
  EXPECT_EQ(c[0].verdict, Verdict::Pass);
  EXPECT_EQ(c[0].measured, "380.00 Gb/s");
  EXPECT_EQ(c[0].expected, ">= 360.0 Gb/s (0.9 x line rate 400 Gb/s)");
  EXPECT_EQ(c[0].evidence, "ib_write_bw loopback on mlx5_0 port 1, NUMA 0, GPU3 memory: 380.00 of 400 Gb/s line rate (0.95)");
  EXPECT_EQ(c[1].verdict, Verdict::Fail);
  EXPECT_EQ(c[1].evidence,
            "ib_write_bw loopback on mlx5_1 port 1, NUMA -, host memory: 200.00 of 400 Gb/s line rate (0.50), below 0.9 x "
            "line rate");
  EXPECT_EQ(c[2].verdict, Verdict::Skipped);
  EXPECT_EQ(c[2].evidence, "mlx5_2: port DOWN");
  EXPECT_EQ(c[3].verdict, Verdict::Fail);
  EXPECT_EQ(c[3].measured, "failed");
  EXPECT_EQ(c[4].verdict, Verdict::Reported);  // measured, but no line rate to judge it by
  EXPECT_EQ(c[4].rule, "none");
  EXPECT_EQ(c[4].expected, "line rate unknown");
}

TEST(AcceptRdma, UnavailableIsSkippedAndACrashFails) {
  std::string unavailable;
  auto c = rdma_checks("/", 0.9, json::parse(R"({"reason":"no ib_write_bw: install perftest"})"), exited(5), "", unavailable);
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(c[0].check, "rdma.loopback");
  EXPECT_EQ(c[0].verdict, Verdict::Skipped);
  EXPECT_EQ(c[0].evidence, "no ib_write_bw: install perftest");
  EXPECT_EQ(unavailable, "no ib_write_bw: install perftest");
  unavailable.clear();
  c = rdma_checks("/", 0.9, json(), exited(5), "", unavailable);
  EXPECT_EQ(unavailable, "exit 5");
  unavailable.clear();
  c = rdma_checks("/r", 0.9, json(), exited(1), "boom", unavailable);
  EXPECT_TRUE(unavailable.empty());
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(c[0].verdict, Verdict::Fail);
  EXPECT_EQ(c[0].measured, "no document");
  EXPECT_EQ(c[0].evidence, "railkit rdma-loopback --root /r: exit code 1: boom");
}

TEST(AcceptTopo, AMistypedDocumentFailsItsCheckNamingTheKey) {
  // Issue 14: a finding or NIC entry of the wrong type fails that check with a message naming it.
  const json bad = json::parse(R"({"findings":[{"check":"x","severity":5}]})");
  const AcceptCheck c = lint_check("/r", bad, exited(10), "");
  EXPECT_EQ(c.verdict, Verdict::Fail);
  EXPECT_EQ(c.evidence, "railkit topo --root /r: findings[0]: severity must be a string, not number");
  const json nics = json::parse(R"({"nics":[{"name":"mlx5_0","status":"ok","measured_Gbps":90,"port":"1"}]})");
  std::string unavailable;
  const auto checks = rdma_checks("/r", 0.8, nics, exited(0), "", unavailable);
  ASSERT_EQ(checks.size(), 1u);
  EXPECT_EQ(checks[0].verdict, Verdict::Fail);
  EXPECT_EQ(checks[0].evidence, "railkit rdma-loopback --root /r: nics[0]: port must be an integer, not string");
}
