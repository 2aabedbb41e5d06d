// Unit tests of `railkit rdma-loopback`'s pure parts: the perftest parser on recorded-format
// outputs (tests/fixtures/perftest) and the plan (argv per NIC) on the generated DGX fixture.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "topology/analyze.hpp"
#include "topology/probe.hpp"
#include "fabric/rdma_loopback.hpp"

using namespace railkit;
using namespace railkit::fabric;

namespace {

std::string fixture(const std::string& name) {
  return read_file(std::string(RAILKIT_TESTS_DIR) + "/fixtures/perftest/" + name);
}

bool has(const std::vector<std::string>& argv, const std::string& a) {
  return std::find(argv.begin(), argv.end(), a) != argv.end();
}

}  // namespace

TEST(PerftestParse, RoceWithMsgRate) {
  const auto r = parse_perftest_bw(fixture("roce_write_bw.txt"));
  ASSERT_TRUE(r);
  EXPECT_EQ(r->bytes, 1048576u);
  EXPECT_EQ(r->iterations, 233012u);
  EXPECT_DOUBLE_EQ(r->average_Gbps, 390.87);
  EXPECT_DOUBLE_EQ(r->peak_Gbps, 0.0);
  ASSERT_TRUE(r->msg_rate_Mpps);
  EXPECT_DOUBLE_EQ(*r->msg_rate_Mpps, 0.046595);
}

TEST(PerftestParse, CudaLinesAroundTheTable) {
  const auto r = parse_perftest_bw(fixture("roce_write_bw_cuda.txt"));
  ASSERT_TRUE(r);
  EXPECT_DOUBLE_EQ(r->average_Gbps, 120.02);
}

TEST(PerftestParse, MBPerSecWithoutMsgRate) {
  const auto r = parse_perftest_bw(fixture("ib_no_msgrate_mbps.txt"));
  ASSERT_TRUE(r);
  EXPECT_EQ(r->bytes, 65536u);
  EXPECT_FALSE(r->msg_rate_Mpps);
  EXPECT_NEAR(r->average_Gbps, 11200.0 * 1048576 * 8 / 1e9, 1e-9);  // perftest's MB is MiB
}

TEST(PerftestParse, CouldNotConnectSaysWhy) {
  std::string why;
  EXPECT_FALSE(parse_perftest_bw(fixture("couldnt_connect.txt"), &why));
  EXPECT_EQ(why, "Couldn't connect to 127.0.0.1:18515");
  EXPECT_FALSE(parse_perftest_bw("", &why));
  EXPECT_EQ(why, "no result table in ib_write_bw's output");
}

TEST(PerftestParse, HeaderWithoutDataLine) {
  std::string why;
  const std::string server =
      " #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]\n"
      "---------------------------------------------------------------------------------------\n";
  EXPECT_FALSE(parse_perftest_bw(server, &why));
  EXPECT_NE(why.find("no result line"), std::string::npos) << why;
}

// Found by fuzz_perftest: a #bytes value beyond 2^64 (here a hex float strtod reads) was cast
// to an integer (undefined behaviour); negative, inf and nan columns passed as numbers.
TEST(PerftestParse, ValuesNoPerftestPrintsAreNotAResult) {
  const std::string header = " #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]\n";
  std::string why;
  EXPECT_FALSE(parse_perftest_bw(header + " 0x006f000000000000000000000000      5000     11.0     10.0\n", &why));
  EXPECT_NE(why.find("#bytes"), std::string::npos) << why;
  EXPECT_FALSE(parse_perftest_bw(header + " 65536      5000     -11.0     10.0\n", &why));
  EXPECT_FALSE(parse_perftest_bw(header + " 65536      5000     inf     nan\n", &why));
  const auto ok = parse_perftest_bw(header + " 65536      5000     11.5     10.25\n", &why);
  ASSERT_TRUE(ok) << why;
  EXPECT_EQ(ok->bytes, 65536u);
  EXPECT_DOUBLE_EQ(ok->average_Gbps, 10.25);
}

#ifdef RAILKIT_TOPO_FIXTURES
TEST(LoopbackPlan, DgxRailsNumaGidAndCuda) {
  topo::Topology t = topo::probe_node(topo::ProbeOptions{std::string(RAILKIT_TOPO_FIXTURES) + "/dgx-h100", std::nullopt, false});
  topo::compute_paths(t);
  topo::assign_rails(t);
  LoopbackOptions o;
  o.ib_write_bw = "/usr/bin/ib_write_bw";
  o.numactl = "/usr/bin/numactl";
  o.duration_s = 3;
  const auto plan = plan_loopback(t, o);
  ASSERT_EQ(plan.size(), 12u);
  const auto& n0 = plan[0];  // mlx5_0: GPU0's rail, NUMA 0, RoCE v2 GID 3, 400 Gb/s
  EXPECT_EQ(n0.name, "mlx5_0");
  EXPECT_EQ(n0.status, "planned");
  EXPECT_EQ(n0.gpu, 0);
  EXPECT_EQ(n0.numa, 0);
  EXPECT_EQ(n0.gid_index, 3);
  EXPECT_EQ(n0.line_rate_Gbps, 400.0);
  const std::vector<std::string> want{"/usr/bin/numactl", "--cpunodebind=0", "--membind=0", "/usr/bin/ib_write_bw",
                                      "-d", "mlx5_0", "-i", "1", "-F", "--report_gbits", "-D", "3", "-s", "1048576",
                                      "-p", "18515", "-x", "3", "--use_cuda=0"};
  EXPECT_EQ(n0.server, want);
  auto client = want;
  client.push_back("127.0.0.1");
  EXPECT_EQ(n0.client, client);
  EXPECT_FALSE(has(plan[1].server, "--use_cuda=0"));  // mlx5_1 serves no GPU: host memory
  EXPECT_FALSE(plan[1].gpu);
  EXPECT_TRUE(has(plan[3].server, "--use_cuda=1"));   // mlx5_3 is GPU1's rail
  EXPECT_TRUE(has(plan[6].server, "--cpunodebind=1"));
  EXPECT_TRUE(has(plan[11].server, "18526"));         // a TCP port per NIC

  o.cuda = false;
  o.numactl.clear();
  const auto host = plan_loopback(t, o);
  EXPECT_EQ(host[0].server.front(), "/usr/bin/ib_write_bw");
  for (const auto& n : host)
    EXPECT_TRUE(std::none_of(n.server.begin(), n.server.end(), [](const std::string& a) { return a.starts_with("--use_cuda"); }));
}

TEST(LoopbackPlan, PortDownIsSkippedWithTheReason) {
  topo::Topology t =
      topo::probe_node(topo::ProbeOptions{std::string(RAILKIT_TOPO_FIXTURES) + "/dgx-port-down", std::nullopt, false});
  LoopbackOptions o;
  o.ib_write_bw = "ib_write_bw";
  const auto plan = plan_loopback(t, o);
  const auto down = std::find_if(plan.begin(), plan.end(), [](const NicLoopback& n) { return n.name == "mlx5_5"; });
  ASSERT_NE(down, plan.end());
  EXPECT_EQ(down->status, "skipped");
  EXPECT_NE(down->error.find("not ACTIVE"), std::string::npos) << down->error;
  EXPECT_TRUE(down->server.empty());
}

TEST(PairPlan, NamedNicsInOrderWithTheirPortsGidAndCuda) {
  topo::Topology t = topo::probe_node(topo::ProbeOptions{std::string(RAILKIT_TOPO_FIXTURES) + "/dgx-h100", std::nullopt, false});
  topo::compute_paths(t);
  topo::assign_rails(t);
  LoopbackOptions o;
  o.ib_write_bw = "/usr/bin/ib_write_bw";
  o.server_address = "10.0.0.7";
  o.base_port = 18600;
  const auto plan = plan_pair(t, o, {"mlx5_3", "mlx5_0"});
  ASSERT_EQ(plan.size(), 2u);
  EXPECT_EQ(plan[0].name, "mlx5_3");  // the order given: the k-th talks to the partner's k-th
  EXPECT_EQ(plan[0].tcp_port, 18600);
  EXPECT_EQ(plan[1].tcp_port, 18601);
  EXPECT_TRUE(has(plan[0].server, "--use_cuda=1"));  // GPU1's rail
  EXPECT_TRUE(has(plan[1].server, "--use_cuda=0"));
  EXPECT_TRUE(has(plan[0].server, "-x"));
  EXPECT_EQ(plan[0].client.back(), "10.0.0.7");
  EXPECT_TRUE(has(plan[0].client, "18600"));
  const auto doc = pair_json("h", plan, o, false);
  EXPECT_EQ(doc["schema"], "railkit.rdma-pair/1");
  EXPECT_EQ(doc["role"], "client");
  EXPECT_EQ(doc["peer"], "10.0.0.7");
  EXPECT_EQ(doc["nics"][1]["tcp_port"], 18601);
  EXPECT_EQ(doc["nics"][0]["command"].get<std::string>().substr(doc["nics"][0]["command"].get<std::string>().size() - 8),
            "10.0.0.7");
  EXPECT_FALSE(doc["nics"][0].contains("server_command"));
  const auto srv = pair_json("h", plan, o, true);
  EXPECT_EQ(srv["role"], "server");
  EXPECT_TRUE(srv["peer"].is_null());
  EXPECT_EQ(srv["nics"][0]["command"].get<std::string>().find("10.0.0.7"), std::string::npos);
  try {
    plan_pair(t, o, {"mlx5_99"});
    FAIL() << "an unknown NIC was planned";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("--nic mlx5_99: no such RDMA device"), std::string::npos) << e.what();
  }
}

// Issue 32: a --peer starting with '-' reached ib_write_bw as an option (it ends the client's argv).
TEST(PairPlan, PeerThatReadsAsAnOptionIsRefused) {
  topo::Topology t = topo::probe_node(topo::ProbeOptions{std::string(RAILKIT_TOPO_FIXTURES) + "/dgx-h100", std::nullopt, false});
  LoopbackOptions o;
  o.ib_write_bw = "/usr/bin/ib_write_bw";
  for (const char* peer : {"-h", "--use_cuda=0", "10.0.0.7 -x", "host\n-R", "host\x1b[2J"}) {
    o.server_address = peer;
    try {
      (void)plan_pair(t, o, {"mlx5_0"});
      ADD_FAILURE() << "planned a client for --peer " << peer;
    } catch (const UsageError& e) {
      const std::string what = e.what();
      EXPECT_EQ(what.rfind("--peer ", 0), 0u) << what;
      EXPECT_EQ(what.find('\n'), std::string::npos) << what;
      EXPECT_EQ(what.find('\x1b'), std::string::npos) << what;
    }
  }
  EXPECT_THROW(check_peer_address(""), UsageError);
  EXPECT_NO_THROW(check_peer_address("node-7.cluster"));
  EXPECT_NO_THROW(check_peer_address("fe80::1%eth0"));
  o.server_address = "node-7";
  EXPECT_EQ(plan_pair(t, o, {"mlx5_0"})[0].client.back(), "node-7");
}
#endif

TEST(LoopbackReport, JsonFields) {
  NicLoopback n;
  n.name = "mlx5_3";
  n.numa = 0;
  n.gpu = 1;
  n.line_rate_Gbps = 400;
  n.measured_Gbps = 120;
  n.status = "ok";
  n.client = {"ib_write_bw", "-d", "mlx5_3", "127.0.0.1"};
  const auto j = loopback_json("h", {n}, LoopbackOptions{});
  EXPECT_EQ(j["schema"], kRdmaLoopbackSchema);
  EXPECT_EQ(j["host"], "h");
  const auto& x = j["nics"][0];
  EXPECT_EQ(x["name"], "mlx5_3");
  EXPECT_DOUBLE_EQ(x["ratio"].get<double>(), 0.3);
  EXPECT_EQ(x["command"], "ib_write_bw -d mlx5_3 127.0.0.1");
  EXPECT_TRUE(x["gid_index"].is_null());
  EXPECT_EQ(x["status"], "ok");
}
