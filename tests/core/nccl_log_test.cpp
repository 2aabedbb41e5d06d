#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/error.hpp"
#include "core/nccl_log.hpp"

namespace fs = std::filesystem;
using railkit::NcclLogSummary;

namespace {

fs::path fixtures() { return fs::path(__FILE__).parent_path().parent_path() / "fixtures" / "nccl-logs"; }

/// Every file of a fixture scenario, sorted (one per rank).
std::vector<fs::path> scenario(const std::string& name) {
  std::vector<fs::path> out;
  for (const auto& e : fs::directory_iterator(fixtures() / name))
    if (e.is_regular_file()) out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

NcclLogSummary read_scenario(const std::string& name) { return railkit::read_nccl_logs(scenario(name)); }

NcclLogSummary parse(const std::string& text) {
  std::istringstream in(text);
  return railkit::parse_nccl_log(in, "test");
}

bool mentions(const std::vector<std::string>& lines, const std::string& what) {
  return std::any_of(lines.begin(), lines.end(), [&](const auto& l) { return l.find(what) != std::string::npos; });
}

}  // namespace

TEST(NcclLogFixtures, PxnRunShowsRelaysOnRingsAndSendRecv) {
  auto s = read_scenario("roce-2x8-pxn");
  EXPECT_EQ(s.files.size(), 16u);
  EXPECT_TRUE(s.pxn());
  EXPECT_EQ(s.pxn_relays, 256);       // 32 ring sends + 224 alltoall sends to a GPU of another index
  EXPECT_EQ(s.p2p_pxn_relays, 224);
  EXPECT_EQ(s.direct_net_connections, 32);  // alltoall sends to the same GPU index
  EXPECT_EQ(s.send_net_connections, 288);
  EXPECT_EQ(s.recv_net_connections, 288);
  EXPECT_EQ(s.relay_ranks.size(), 16u);
  EXPECT_TRUE(s.gdr());
  EXPECT_EQ(s.gdr_connections, 576);
  EXPECT_EQ(s.net, "IB");
  EXPECT_EQ(s.nics_used(), (std::vector<std::string>{"mlx5_0", "mlx5_3", "mlx5_4", "mlx5_5", "mlx5_6", "mlx5_9",
                                                      "mlx5_10", "mlx5_11"}));
  EXPECT_EQ(s.ring_pxn, true);
  EXPECT_EQ(s.ring_gdr, true);
  EXPECT_EQ(s.channels(), 16);
  EXPECT_EQ(s.graph_channels, 8);
  ASSERT_EQ(s.patterns.size(), 2u);  // ring and tree, each printed by 16 ranks, kept once
  EXPECT_EQ(s.patterns[0].pattern, 4);
  EXPECT_EQ(s.patterns[0].type_inter, "PXN");
  EXPECT_EQ(s.patterns[0].n_channels, 8);
  EXPECT_EQ(s.nccl_version, "2.28.9+cuda13.0");
  EXPECT_EQ(s.nranks, 16);
  EXPECT_EQ(s.nnodes, 2);
  EXPECT_EQ(s.hosts, (std::set<std::string>{"dgx-a01", "dgx-a02"}));
  EXPECT_FALSE(s.tuner_plugin);
  EXPECT_TRUE(s.warnings.empty()) << s.warnings.front();
  EXPECT_EQ(s.transports.at("NET"), 576);
  EXPECT_GT(s.transports.at("P2P"), 0);
}

TEST(NcclLogFixtures, RoceLogReportsRoceTransportOnTheIbNet) {
  // `NET/IB : Using [0]mlx5_0:1/RoCE ...`: NCCL's IB net plugin over RoCE NICs.
  auto s = read_scenario("roce-2x8-pxn");
  EXPECT_EQ(s.net, "IB");  // what NCCL_NET names and `via NET/IB/` says
  EXPECT_EQ(s.transport, "RoCE");
  auto j = railkit::to_json(s);
  EXPECT_EQ(j["net"], "IB");
  EXPECT_EQ(j["transport"], "RoCE");
  EXPECT_EQ(read_scenario("roce-2x8-nopxn").transport, "RoCE");
  EXPECT_EQ(read_scenario("interleaved").transport, "RoCE");  // NIC links looked up per process
  auto ib = read_scenario("ib-2x4-nogdr-tuner");
  EXPECT_EQ(ib.net, "IB");
  EXPECT_EQ(ib.transport, "IB");
  auto sock = read_scenario("socket-2x1");
  EXPECT_EQ(sock.net, "Socket");
  EXPECT_EQ(sock.transport, "Socket");
  EXPECT_FALSE(read_scenario("garbled").transport);  // NET/IB/1 maps to no listed NIC
  EXPECT_TRUE(railkit::to_json(read_scenario("garbled"))["transport"].is_null());
}

TEST(NcclLogFixtures, ContradictionsNameTheTransport) {
  auto s = read_scenario("roce-2x8-pxn");
  auto c = railkit::nccl_log_contradictions(s, {{"NCCL_IB_DISABLE", "1"}});
  ASSERT_EQ(c.size(), 1u);
  EXPECT_NE(c[0].find("NET/IB (RoCE)"), std::string::npos) << c[0];
  c = railkit::nccl_log_contradictions(s, {{"NCCL_NET", "Socket"}});
  ASSERT_EQ(c.size(), 1u);
  EXPECT_NE(c[0].find("NET/IB (RoCE)"), std::string::npos) << c[0];
  // NCCL_NET takes the net plugin's name: IB covers RoCE NICs, and RoCE is no network name.
  EXPECT_TRUE(railkit::nccl_log_contradictions(s, {{"NCCL_NET", "IB"}}).empty());
  // NCCL_IB_HCA applies to RoCE NICs of NET/IB too.
  EXPECT_EQ(railkit::nccl_log_contradictions(s, {{"NCCL_IB_HCA", "mlx5_0"}}).size(), 1u);
}

TEST(NcclLogFixtures, NicsInNaturalOrderAsTopoPrintsThem) {
  auto s = read_scenario("roce-2x8-pxn");
  const std::vector<std::string> natural{"mlx5_0", "mlx5_3", "mlx5_4", "mlx5_5", "mlx5_6", "mlx5_9", "mlx5_10", "mlx5_11"};
  EXPECT_EQ(s.nics_used(), natural);
  EXPECT_EQ(s.nics_listed(), natural);
  auto j = railkit::to_json(s);
  EXPECT_EQ(j["nics_used"].get<std::vector<std::string>>(), natural);
  EXPECT_EQ(j["nics_available"].get<std::vector<std::string>>(), natural);
  auto c = railkit::nccl_log_contradictions(s, {{"NCCL_IB_HCA", "=mlx5_0"}});
  ASSERT_EQ(c.size(), 1u);
  EXPECT_NE(c[0].find("mlx5_3, mlx5_4, mlx5_5, mlx5_6, mlx5_9, mlx5_10, mlx5_11"), std::string::npos) << c[0];
  // Numbers compare as numbers wherever they sit; leading zeros do not reorder.
  auto p = parse(
      "h:1:1 [0] NCCL INFO NET/IB : Using [0]mlx5_bond_10:1/RoCE [1]mlx5_bond_2:1/RoCE [2]mlx5_2:1/RoCE [3]mlx5_12:1/RoCE "
      "[RO]; OOB eth0:10.0.0.1<0>\n");
  EXPECT_EQ(p.nics_listed(), (std::vector<std::string>{"mlx5_2", "mlx5_12", "mlx5_bond_2", "mlx5_bond_10"}));
}

TEST(NcclLogFixtures, BootstrapInterface) {
  // NCCL_DEBUG_SUBSYS with BOOTSTRAP: `Bootstrap: Using eth0:10.10.0.1<0>` on every rank.
  auto s = read_scenario("roce-2x8-pxn");
  EXPECT_EQ(s.bootstrap_interfaces, std::set<std::string>{"eth0"});
  EXPECT_EQ(s.ib_oob_interfaces, std::set<std::string>{"eth0"});
  auto j = railkit::to_json(s);
  EXPECT_EQ(j["bootstrap_interfaces"], nlohmann::json::array({"eth0"}));
  EXPECT_EQ(j["ib_oob_interfaces"], nlohmann::json::array({"eth0"}));
  EXPECT_EQ(read_scenario("socket-2x1").bootstrap_interfaces, std::set<std::string>{"eth0"});
  EXPECT_EQ(read_scenario("interleaved").bootstrap_interfaces, std::set<std::string>{"eth0"});
  // INIT,NET,GRAPH (railkit-bench's default): no Bootstrap line; NET/IB's OOB interface is still there.
  auto ib = read_scenario("ib-2x4-nogdr-tuner");
  EXPECT_TRUE(ib.bootstrap_interfaces.empty());
  EXPECT_EQ(ib.ib_oob_interfaces, std::set<std::string>{"ib0"});
  EXPECT_EQ(railkit::to_json(ib)["bootstrap_interfaces"], nlohmann::json::array());
}

TEST(NcclLogFixtures, NicIndicesMapThroughTheUsingLine) {
  // Rank 1 (GPU 1) receives ring traffic on NET/IB/1, which the Using line names mlx5_3.
  std::ifstream in(fixtures() / "roce-2x8-nopxn" / "nccl.dgx-a01.41002.log");
  auto s = railkit::parse_nccl_log(in, "rank1");
  EXPECT_EQ(s.nics_used(), std::vector<std::string>{"mlx5_3"});
  EXPECT_EQ(s.nics_available.size(), 8u);
}

TEST(NcclLogFixtures, PxnDisabledRunIsDirect) {
  auto s = read_scenario("roce-2x8-nopxn");
  EXPECT_FALSE(s.pxn());
  EXPECT_EQ(s.pxn_relays, 0);
  EXPECT_EQ(s.direct_net_connections, 288);
  EXPECT_EQ(s.ring_pxn, false);
  EXPECT_TRUE(s.gdr());
  EXPECT_EQ(s.nics_used().size(), 8u);
  EXPECT_EQ(s.patterns.at(0).cross_nic, 1);
  EXPECT_TRUE(railkit::nccl_log_contradictions(s, {{"NCCL_PXN_DISABLE", "1"}}).empty());
}

TEST(NcclLogFixtures, PxnContradictions) {
  auto s = read_scenario("roce-2x8-pxn");
  EXPECT_TRUE(railkit::nccl_log_contradictions(s, {}).empty());
  EXPECT_TRUE(railkit::nccl_log_contradictions(s, {{"NCCL_PXN_DISABLE", "0"}}).empty());
  auto c = railkit::nccl_log_contradictions(s, {{"NCCL_PXN_DISABLE", "1"}});
  ASSERT_EQ(c.size(), 1u);
  EXPECT_NE(c[0].find("NCCL_PXN_DISABLE=1"), std::string::npos) << c[0];
  EXPECT_NE(c[0].find("256"), std::string::npos) << c[0];
  c = railkit::nccl_log_contradictions(s, {{"NCCL_P2P_PXN_LEVEL", "0"}});
  ASSERT_EQ(c.size(), 1u);
  EXPECT_NE(c[0].find("224"), std::string::npos) << c[0];
  EXPECT_TRUE(railkit::nccl_log_contradictions(s, {{"NCCL_P2P_PXN_LEVEL", "2"}}).empty());
}

TEST(NcclLogFixtures, HcaGdrAndNetContradictions) {
  auto s = read_scenario("roce-2x8-pxn");
  auto c = railkit::nccl_log_contradictions(s, {{"NCCL_IB_HCA", "mlx5_0:1,mlx5_3"}});
  ASSERT_EQ(c.size(), 1u);
  EXPECT_NE(c[0].find("mlx5_11"), std::string::npos) << c[0];
  EXPECT_EQ(c[0].find("mlx5_3,"), std::string::npos) << c[0];
  EXPECT_TRUE(railkit::nccl_log_contradictions(s, {{"NCCL_IB_HCA", "mlx5"}}).empty());     // prefix match
  EXPECT_TRUE(railkit::nccl_log_contradictions(s, {{"NCCL_IB_HCA", "^mlx5_2"}}).empty());  // excludes an unused one
  EXPECT_EQ(railkit::nccl_log_contradictions(s, {{"NCCL_IB_HCA", "^mlx5_1"}}).size(), 1u);  // prefix of mlx5_10, 11
  EXPECT_EQ(railkit::nccl_log_contradictions(s, {{"NCCL_IB_HCA", "mlx5_0:2"}}).size(), 1u);
  c = railkit::nccl_log_contradictions(s, {{"NCCL_NET_GDR_LEVEL", "LOC"}});
  ASSERT_EQ(c.size(), 1u);
  EXPECT_NE(c[0].find("GDRDMA"), std::string::npos) << c[0];
  EXPECT_TRUE(railkit::nccl_log_contradictions(s, {{"NCCL_NET_GDR_LEVEL", "PXB"}}).empty());
  EXPECT_EQ(railkit::nccl_log_contradictions(s, {{"NCCL_IB_DISABLE", "1"}}).size(), 1u);
  EXPECT_EQ(railkit::nccl_log_contradictions(s, {{"NCCL_NET", "Socket"}}).size(), 1u);
  EXPECT_TRUE(railkit::nccl_log_contradictions(s, {{"NCCL_NET", "ib"}}).empty());
  // Several at once: one line each.
  EXPECT_EQ(railkit::nccl_log_contradictions(
                s, {{"NCCL_PXN_DISABLE", "1"}, {"NCCL_IB_HCA", "=mlx5_0"}, {"NCCL_NET_GDR_LEVEL", "loc"}})
                .size(),
            3u);
}

TEST(NcclLogFixtures, GdrOffWithTunerPlugin) {
  auto s = read_scenario("ib-2x4-nogdr-tuner");
  EXPECT_FALSE(s.gdr());
  EXPECT_EQ(s.gdr_connections, 0);
  EXPECT_EQ(s.ring_gdr, false);
  EXPECT_FALSE(s.pxn());
  EXPECT_EQ(s.send_net_connections, 80);
  EXPECT_EQ(s.direct_net_connections, 80);
  EXPECT_EQ(s.tuner_plugin, "railkit");
  EXPECT_EQ(s.tuner_plugin_abi, "v5");
  EXPECT_EQ(s.env_from_log.at("NCCL_NET_GDR_LEVEL"), "LOC");
  EXPECT_EQ(s.nics_used(), (std::vector<std::string>{"mlx5_0", "mlx5_1", "mlx5_2", "mlx5_3"}));
  EXPECT_EQ(s.nics_available.begin()->link, "IB");
  EXPECT_EQ(s.channels(), 8);
  EXPECT_EQ(s.patterns.at(0).type_inter, "PHB");
  EXPECT_TRUE(railkit::nccl_log_contradictions(s, s.env_from_log).empty());
  EXPECT_TRUE(railkit::nccl_log_contradictions(s, {{"NCCL_TUNER_PLUGIN", "railkit"}}).empty());
  EXPECT_EQ(railkit::nccl_log_contradictions(s, {{"NCCL_TUNER_PLUGIN", "none"}}).size(), 1u);
  auto c = railkit::nccl_log_contradictions(s, {{"NCCL_IB_HCA", "mlx5_0,mlx5_1"}});
  ASSERT_EQ(c.size(), 1u);
  EXPECT_NE(c[0].find("mlx5_2, mlx5_3"), std::string::npos) << c[0];
  // A run without the tuner line, though one was asked for.
  auto pxn = read_scenario("roce-2x8-pxn");
  EXPECT_EQ(railkit::nccl_log_contradictions(pxn, {{"NCCL_TUNER_PLUGIN", "railkit"}}).size(), 1u);
}

TEST(NcclLogFixtures, SocketNetwork) {
  auto s = read_scenario("socket-2x1");
  EXPECT_EQ(s.net, "Socket");
  EXPECT_EQ(s.nics_used(), (std::vector<std::string>{"eth0", "eth1"}));
  EXPECT_EQ(s.nic_connections.at("eth0"), 8);
  EXPECT_FALSE(s.gdr());
  EXPECT_FALSE(s.pxn());
  EXPECT_EQ(s.send_net_connections, 8);
  EXPECT_EQ(s.channels(), 4);
  EXPECT_TRUE(s.warnings.empty());
  EXPECT_TRUE(railkit::nccl_log_contradictions(s, {{"NCCL_IB_HCA", "mlx5_0"}}).empty());  // IB not in use
  EXPECT_TRUE(railkit::nccl_log_contradictions(s, {{"NCCL_IB_DISABLE", "1"}}).empty());
  EXPECT_EQ(railkit::nccl_log_contradictions(s, {{"NCCL_NET", "IB"}}).size(), 1u);
}

TEST(NcclLogFixtures, GarbledFileIsReadWithoutCrashing) {
  auto s = read_scenario("garbled");
  EXPECT_EQ(s.files.size(), 2u);
  EXPECT_EQ(s.send_net_connections, 2);
  EXPECT_EQ(s.recv_net_connections, 1);
  EXPECT_EQ(s.gdr_connections, 3);
  EXPECT_EQ(s.nics_used(), std::vector<std::string>{"IB/1"});
  EXPECT_FALSE(s.ring_pxn);
  EXPECT_FALSE(s.tuner_plugin);
  EXPECT_EQ(s.patterns.size(), 1u);
  EXPECT_EQ(s.nccl_warnings.size(), 1u);
  EXPECT_TRUE(mentions(s.warnings, "6 NCCL line(s)")) << testing::PrintToString(s.warnings);
  EXPECT_TRUE(mentions(s.warnings, "IB/1")) << testing::PrintToString(s.warnings);
  EXPECT_EQ(s.nccl_version, "2.28.9+cuda13.0");
}

TEST(NcclLogFixtures, InterleavedStdoutMapsNicsPerProcess) {
  auto s = read_scenario("interleaved");
  // node-g lists [1]mlx5_1, node-h lists [1]mlx5_0: each process's NET/IB/1 is its own NIC.
  EXPECT_EQ(s.nic_connections, (std::map<std::string, std::int64_t>{{"mlx5_0", 2}, {"mlx5_1", 2}}));
  EXPECT_EQ(s.hosts, (std::set<std::string>{"node-g", "node-h"}));
  EXPECT_EQ(s.channels(), 2);
  EXPECT_EQ(s.patterns.size(), 1u);
  EXPECT_TRUE(s.warnings.empty());
}

TEST(NcclLogParse, PrefixesAndBareLines) {
  auto s = parse(
      "NCCL version 2.27.3+cuda12.9\n"
      "[2026-11-29 10:00:00] h1:10:11 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[0] [send] via NET/IB/0(2)/GDRDMA\r\n"
      "NCCL INFO Channel 01/0 : 0[1b000] -> 1[1c000] [send] via NET/IB/0\n"
      "h1:10:11 [0] NCCL INFO TUNER/Plugin: Using My Tuner (v4)\n");
  EXPECT_EQ(s.nccl_version, "2.27.3+cuda12.9");
  EXPECT_EQ(s.pxn_relays, 1);
  EXPECT_EQ(s.relay_ranks, std::set<int>{2});
  EXPECT_EQ(s.direct_net_connections, 1);
  EXPECT_EQ(s.gdr_connections, 1);
  EXPECT_EQ(s.tuner_plugin, "My Tuner");
  EXPECT_EQ(s.tuner_plugin_abi, "v4");
  EXPECT_EQ(s.hosts, std::set<std::string>{"h1"});
  EXPECT_EQ(s.lines, 4);
  EXPECT_EQ(s.nccl_lines, 4);
}

TEST(NcclLogParse, PluginNetAndLoadedLine) {
  auto s = parse(
      "h:1:1 [0] NCCL INFO NET/Plugin: Loaded net plugin AWS Libfabric (v10)\n"
      "h:1:1 [0] NCCL INFO Using network AWS Libfabric\n"
      "h:1:1 [0] NCCL INFO Channel 00/0 : 0[0] -> 8[0] [send] via NET/AWS Libfabric/3/GDRDMA\n");
  EXPECT_EQ(s.net, "AWS Libfabric");
  EXPECT_EQ(s.net_plugin, "AWS Libfabric");
  EXPECT_EQ(s.nics_used(), std::vector<std::string>{"AWS Libfabric/3"});
  EXPECT_EQ(s.warnings.size(), 1u);
}

TEST(NcclLogParse, AnnouncedNetWithoutConnections) {
  auto s = parse("h:1:1 [0] NCCL INFO Using network IB\nh:1:1 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via SHM/direct/direct\n");
  EXPECT_EQ(s.net, "IB");
  EXPECT_TRUE(s.nics_used().empty());
  EXPECT_EQ(s.transports.at("SHM"), 1);
  auto none = parse("hello\nworld\n");
  EXPECT_FALSE(none.net);
  EXPECT_EQ(none.lines, 2);
  EXPECT_TRUE(mentions(none.warnings, "no NCCL log lines"));
}

TEST(NcclLogParse, NicListVariants) {
  auto s = parse(
      "h:1:1 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1:2/RoCE [1]mlx5_1:1::3/IB [2]mlx5_bond_0:1/RoCE ; OOB bond0:1.2.3.4<0>\n"
      "h:1:1 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] [send] via NET/IB/2\n");
  ASSERT_EQ(s.nics_available.size(), 3u);
  EXPECT_EQ(s.nics_used(), std::vector<std::string>{"mlx5_bond_0"});
  for (const auto& n : s.nics_available) {
    EXPECT_EQ(n.port, 1) << n.name;
    EXPECT_FALSE(n.link.empty()) << n.name;
  }
}

TEST(NcclLogParse, IncompleteNicListEntriesAreIgnoredWithAWarning) {
  // NCCL cuts a line at 2047 characters: "[3]mlx5" is not a NIC called mlx5, and NCCL_IB_HCA
  // naming mlx5_3 must not read as a contradiction.
  auto s = parse(
      "h:1:1 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/RoCE [1]mlx5_1:1/RoCE [2]mlx5_2:1/RoCE [3]mlx5\n"
      "h:1:1 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[0] [send] via NET/IB/0\n"
      "h:1:1 [0] NCCL INFO Channel 01/0 : 0[0] -> 1[0] [send] via NET/IB/3\n");
  EXPECT_EQ(s.nics_listed(), (std::vector<std::string>{"mlx5_0", "mlx5_1", "mlx5_2"}));
  EXPECT_EQ(s.nics_used(), (std::vector<std::string>{"IB/3", "mlx5_0"}));
  EXPECT_TRUE(mentions(s.warnings, "'[3]mlx5'")) << ::testing::PrintToString(s.warnings);
  EXPECT_TRUE(mentions(s.warnings, "IB/3")) << ::testing::PrintToString(s.warnings);
  EXPECT_EQ(s.transport, "RoCE");
  EXPECT_TRUE(railkit::nccl_log_contradictions(s, {{"NCCL_IB_HCA", "mlx5_0,mlx5_1,mlx5_2,mlx5_3"}}).empty());
  // Every way an entry can stop short, on IB and on sockets; [RO] is a flag, not an entry.
  auto t = parse(
      "h:1:1 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_1 [2]mlx5_2: [3]mlx5_3:1 [4]mlx5_4:1/ [5]:1/IB "
      "[6]mlx5_6:x/IB [RO]; OOB ib0:10.0.0.1<0>\n"
      "g:2:2 [0] NCCL INFO NET/Socket : Using [0]eth0:10.0.0.2<0> [1]eth [2]eth2: [3]eth3:10.0.\n");
  EXPECT_EQ(t.nics_listed(), (std::vector<std::string>{"eth0", "mlx5_0"}));
  ASSERT_EQ(t.warnings.size(), 1u) << ::testing::PrintToString(t.warnings);
  EXPECT_NE(t.warnings[0].find("ignored 9 NIC list entries"), std::string::npos) << t.warnings[0];
  EXPECT_FALSE(mentions(t.warnings, "[RO]"));
  EXPECT_EQ(t.ib_oob_interfaces, std::set<std::string>{"ib0"});
}

// One `NET/IB : Using` line of `nics` entries and a connection on every NIC, checked against
// NCCL_IB_HCA and printed as text: no step may compare every NIC with every other (that took
// hours at 200k NICs).
static void check_long_nic_list(int nics) {
  std::string log = "h:1:1 [0] NCCL INFO NET/IB : Using";
  for (int i = 0; i < nics; ++i) log += " [" + std::to_string(i) + "]mlx5_" + std::to_string(i) + ":1/RoCE";
  log += " [RO]; OOB eth0:10.0.0.1<0>\n";
  for (int i = 0; i < nics; ++i)
    log += "h:1:1 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[0] [send] via NET/IB/" + std::to_string(i) + "\n";
  auto s = parse(log);
  EXPECT_EQ(s.nics_available.size(), static_cast<std::size_t>(nics));
  EXPECT_EQ(s.nics_used().size(), static_cast<std::size_t>(nics));
  EXPECT_EQ(s.nics_listed()[11], "mlx5_11");  // natural order
  EXPECT_TRUE(s.warnings.empty()) << ::testing::PrintToString(s.warnings);
  auto c = railkit::nccl_log_contradictions(s, {{"NCCL_IB_HCA", "^mlx5_1"}});
  ASSERT_EQ(c.size(), 1u);
  auto text = railkit::to_text(s, c);
  EXPECT_NE(text.find("NICs used      " + std::to_string(nics) + ": mlx5_0, mlx5_1, mlx5_2, "), std::string::npos)
      << text.substr(0, 400);
}

// 5k NICs: a step comparing every NIC with every other (hours at 200k, so seconds here) would push
// this case past the default tier's 2 s limit for a unit case (scripts/test.sh), which names it.
TEST(NcclLogParse, LongNicListIsReadInOnePass) { check_long_nic_list(5000); }

// The size of the original report (the slow tier: about 15 s under the sanitizers).
TEST(NcclLogParse, SlowLongNicListOf200kIsReadInOnePass) { check_long_nic_list(200000); }

TEST(NcclLogParse, BootstrapLineVariants) {
  // 2.24+ (src/bootstrap.cc:121 in 2.28.9), 2.8-2.23 ("Bootstrap : Using"), 2.7 (an indexed
  // list), IPv6, and the net-plugin bootstrap of NCCL_OOB_NET_ENABLE=1 (src/bootstrap.cc:541).
  auto s = parse(
      "a:1:1 [0] NCCL INFO Bootstrap: Using eth0:10.0.0.1<0>\n"
      "b:2:2 [0] NCCL INFO Bootstrap : Using ens1f0np0:10.0.0.2<0>\n"
      "c:3:3 [0] NCCL INFO Bootstrap : Using [0]bond0:10.0.0.3<0> [1]eth1:10.0.1.3<0>\n"
      "d:4:4 [0] NCCL INFO Bootstrap: Using eth2:fe80::1%eth2<0>\n"
      "e:5:5 [0] NCCL INFO Bootstrap: Using mlx5_0:1\n"
      "f:6:6 [0] NCCL INFO Bootstrap: Using N/A:-1\n"
      "g:7:7 [0] NCCL INFO Bootstrap timings total 0.004127 (create 0.000031, send 0.000198, recv 0.002216, ring "
      "0.000912, delay 0.000001)\n");
  EXPECT_EQ(s.bootstrap_interfaces, (std::set<std::string>{"bond0", "ens1f0np0", "eth0", "eth2", "mlx5_0"}));
  EXPECT_EQ(railkit::to_json(s)["bootstrap_interfaces"],
            nlohmann::json::array({"bond0", "ens1f0np0", "eth0", "eth2", "mlx5_0"}));
  EXPECT_TRUE(s.warnings.empty()) << s.warnings.front();
  // NET/IB without a device still prints its OOB interface (src/transport/net_ib.cc:839), with or
  // without relaxed ordering.
  auto oob = parse("a:1:1 [0] NCCL INFO NET/IB : Using ; OOB eth0:10.0.0.1<0>\n"
                   "b:2:2 [0] NCCL INFO NET/IB : Using [RO]; OOB ens3:10.0.0.2<0>\n");
  EXPECT_EQ(oob.ib_oob_interfaces, (std::set<std::string>{"ens3", "eth0"}));
  EXPECT_TRUE(oob.nics_available.empty());
  EXPECT_TRUE(oob.bootstrap_interfaces.empty());
}

TEST(NcclLogParse, TransportFollowsTheNicsThatCarriedTraffic) {
  const std::string nics =
      "h:1:1 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/RoCE [1]mlx5_1:1/IB [RO]; OOB eth0:10.0.0.1<0>\n";
  // Connections on the IB port only: the transport is IB though a RoCE NIC is listed.
  auto ib = parse(nics + "h:1:1 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[0] [send] via NET/IB/1/GDRDMA\n");
  EXPECT_EQ(ib.transport, "IB");
  EXPECT_TRUE(ib.warnings.empty()) << ib.warnings.front();
  // Both: the busier one, and a warning naming both.
  auto both = parse(nics + "h:1:1 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[0] [send] via NET/IB/1\n"
                           "h:1:1 [0] NCCL INFO Channel 01/0 : 0[0] -> 1[0] [send] via NET/IB/0\n"
                           "h:1:1 [0] NCCL INFO Channel 02/0 : 0[0] -> 1[0] [send] via NET/IB/0\n");
  EXPECT_EQ(both.transport, "RoCE");
  EXPECT_TRUE(mentions(both.warnings, "IB (1), RoCE (2)")) << testing::PrintToString(both.warnings);
  // No connection yet: the link all listed NICs share, none when they differ.
  EXPECT_EQ(parse("h:1:1 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/RoCE [1]mlx5_1:1/RoCE ; OOB eth0:10.0.0.1<0>\n"
                  "h:1:1 [0] NCCL INFO Using network IB\n")
                .transport,
            "RoCE");
  EXPECT_FALSE(parse(nics + "h:1:1 [0] NCCL INFO Using network IB\n").transport);
  // An external net plugin prints no link layer NCCL's way: unknown, not guessed.
  auto plugin = parse(nics + "h:1:1 [0] NCCL INFO Using network AWS Libfabric\n");
  EXPECT_EQ(plugin.net, "AWS Libfabric");
  EXPECT_FALSE(plugin.transport);
}

TEST(NcclLogParse, MergeWarnsOnDifferentTransports) {
  auto a = parse("a:1:1 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/RoCE [RO]; OOB eth0:10.0.0.1<0>\n"
                 "a:1:1 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[0] [send] via NET/IB/0\n");
  auto b = parse("b:2:2 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB [RO]; OOB ib0:10.0.0.2<0>\n"
                 "b:2:2 [0] NCCL INFO Channel 00/0 : 1[0] -> 0[0] [send] via NET/IB/0\n");
  railkit::merge_nccl_log(a, b);
  EXPECT_EQ(a.transport, "RoCE");
  EXPECT_TRUE(mentions(a.warnings, "logs disagree on the transport: RoCE and IB")) << testing::PrintToString(a.warnings);
  EXPECT_EQ(a.ib_oob_interfaces, (std::set<std::string>{"eth0", "ib0"}));
}

TEST(NcclLogParse, MergeWarnsOnDifferentVersions) {
  auto a = parse("NCCL version 2.28.9+cuda13.0\n");
  auto b = parse("NCCL version 2.27.3+cuda12.9\n");
  railkit::merge_nccl_log(a, b);
  EXPECT_EQ(a.nccl_version, "2.28.9+cuda13.0");
  EXPECT_TRUE(mentions(a.warnings, "2.27.3"));
  EXPECT_EQ(a.files.size(), 2u);
}

TEST(NcclLogParse, IbHcaSyntax) {
  using railkit::nccl_ib_hca_allows;
  EXPECT_TRUE(nccl_ib_hca_allows("", "mlx5_7", 1));
  EXPECT_TRUE(nccl_ib_hca_allows("mlx5_0,mlx5_1", "mlx5_1", 1));
  EXPECT_TRUE(nccl_ib_hca_allows("mlx5_1", "mlx5_10", 1));  // prefix
  EXPECT_FALSE(nccl_ib_hca_allows("=mlx5_1", "mlx5_10", 1));
  EXPECT_TRUE(nccl_ib_hca_allows("=mlx5_1", "mlx5_1", 1));
  EXPECT_FALSE(nccl_ib_hca_allows("^mlx5_0", "mlx5_0", 1));
  EXPECT_TRUE(nccl_ib_hca_allows("^mlx5_0", "mlx5_3", 1));
  EXPECT_FALSE(nccl_ib_hca_allows("^=mlx5_1", "mlx5_1", 1));
  EXPECT_TRUE(nccl_ib_hca_allows("^=mlx5_1", "mlx5_10", 1));
  EXPECT_FALSE(nccl_ib_hca_allows("mlx5_0:2", "mlx5_0", 1));
  EXPECT_TRUE(nccl_ib_hca_allows("mlx5_0:2", "mlx5_0", std::nullopt));
  EXPECT_TRUE(nccl_ib_hca_allows(" mlx5_0:1 , mlx5_3:1 ", "mlx5_3", 1));
}

TEST(NcclLogJson, KeysAndTypes) {
  auto j = railkit::to_json(read_scenario("roce-2x8-pxn"));
  for (const char* k : {"pxn", "pxn_relays", "direct_net_connections", "gdr", "nics_used", "net", "channels", "patterns",
                        "ring_pxn", "ring_gdr", "tuner_plugin", "nccl_version", "files", "lines", "warnings"})
    EXPECT_TRUE(j.contains(k)) << k;
  EXPECT_TRUE(j["pxn"].get<bool>());
  EXPECT_EQ(j["pxn_relays"].get<int>(), 256);
  EXPECT_EQ(j["net"], "IB");
  EXPECT_TRUE(j["tuner_plugin"].is_null());
  EXPECT_EQ(j["channels"], 16);
  EXPECT_EQ(j["patterns"][0]["name"], "ring");
  EXPECT_EQ(j["patterns"][0]["type"], "NVL/PXN");
  EXPECT_EQ(j["patterns"][0]["crossNic"], 0);
  EXPECT_EQ(j["patterns"][0]["nChannels"], 8);
  EXPECT_EQ(j["patterns"][0]["sameChannels"], 0);
  EXPECT_EQ(j["nics_used"].size(), 8u);
  EXPECT_EQ(j["files"].size(), 16u);
  auto empty = railkit::to_json(NcclLogSummary{});
  EXPECT_TRUE(empty["net"].is_null());
  EXPECT_FALSE(empty["pxn"].get<bool>());
  EXPECT_TRUE(empty["ring_pxn"].is_null());
}

TEST(NcclLogText, RoceRunSummary) {
  // The whole text, line by line (a golden output).
  auto s = read_scenario("roce-2x8-pxn");
  EXPECT_EQ(railkit::to_text(s, railkit::nccl_log_contradictions(s, {})),
            "run            NCCL 2.28.9+cuda13.0, 16 rank(s) on 2 node(s) (dgx-a01, dgx-a02); 16 file(s)\n"
            "network        NET/IB over RoCE\n"
            "NICs used      8: mlx5_0, mlx5_3, mlx5_4, mlx5_5, mlx5_6, mlx5_9, mlx5_10, mlx5_11\n"
            "bootstrap      eth0\n"
            "PXN            on: 256 relayed send(s) (224 send/recv) through 16 relay rank(s); 32 direct\n"
            "GDR            on: 576 NET connection(s) with GDRDMA\n"
            "graph          16 channel(s) (graph search 8); ring NVL/PXN x8, balanced_tree NVL/PXN x8\n"
            "tuner plugin   none loaded\n"
            "contradictions none found\n");
}

TEST(NcclLogText, SaysWhatTheLogDoesNotShow) {
  auto s = read_scenario("ib-2x4-nogdr-tuner");
  auto c = railkit::nccl_log_contradictions(s, {{"NCCL_IB_HCA", "mlx5_0"}});
  auto text = railkit::to_text(s, c);
  EXPECT_NE(text.find("network        NET/IB over InfiniBand\n"), std::string::npos) << text;
  EXPECT_NE(text.find("bootstrap      not in the log (NCCL 2.23+ prints it when NCCL_DEBUG_SUBSYS includes BOOTSTRAP); "
                      "NET/IB out-of-band interface: ib0\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("PXN            off: 80 direct send(s)\n"), std::string::npos) << text;
  EXPECT_NE(text.find("GDR            off\n"), std::string::npos) << text;
  EXPECT_NE(text.find("tuner plugin   railkit (v5)\n"), std::string::npos) << text;
  EXPECT_NE(text.find("CONTRADICTION  NCCL_IB_HCA=mlx5_0 but NIC(s) outside it carried traffic: mlx5_1, mlx5_2, mlx5_3\n"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("contradictions none"), std::string::npos) << text;
  auto sock = railkit::to_text(read_scenario("socket-2x1"), {});
  EXPECT_NE(sock.find("network        NET/Socket (TCP sockets)\n"), std::string::npos) << sock;
  EXPECT_NE(sock.find("NICs used      2: eth0, eth1\n"), std::string::npos) << sock;
  // A log with nothing in it says so instead of inventing values; warnings are listed.
  auto garbled = railkit::to_text(read_scenario("garbled"), {});
  EXPECT_NE(garbled.find("network        NET/IB (transport not in the log)\n"), std::string::npos) << garbled;
  EXPECT_NE(garbled.find("NCCL WARN      1 line(s), first: socketStartConnect"), std::string::npos) << garbled;
  EXPECT_NE(garbled.find("warning        "), std::string::npos) << garbled;
  auto empty = railkit::to_text(NcclLogSummary{}, {});
  EXPECT_NE(empty.find("network        not in the log\n"), std::string::npos) << empty;
  EXPECT_NE(empty.find("NICs used      not in the log\n"), std::string::npos) << empty;
}

TEST(NcclLogFiles, MissingFileIsAUsageErrorNamingIt) {
  try {
    railkit::read_nccl_logs({fixtures() / "socket-2x1" / "nope.log"});
    FAIL() << "no error";
  } catch (const railkit::UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("nope.log"), std::string::npos) << e.what();
  }
  EXPECT_THROW(railkit::read_nccl_logs({fixtures() / "socket-2x1"}), railkit::UsageError);
}

TEST(NcclLogParse, InvalidUtf8NeverBreaksTheJson) {
  auto s = parse(std::string("h\xff:1:1 [0] misc.cc:1 NCCL WARN bad \xc3\x28 bytes \xe2\x82\n") +
                 "h:1:1 [0] NCCL INFO TUNER/Plugin: Using t\xff\xfe (v5)\n"
                 "h:1:1 [0] NCCL INFO NCCL version 2.28.9\xc0\xaf\n");
  ASSERT_EQ(s.nccl_warnings.size(), 1u);
  EXPECT_EQ(s.nccl_warnings[0], "bad ?( bytes ??");
  EXPECT_EQ(s.tuner_plugin, "t??");
  EXPECT_NO_THROW((void)railkit::to_json(s).dump());
  auto ok = parse("h:1:1 [0] NCCL INFO TUNER/Plugin: Using caf\xc3\xa9 (v5)\n");  // valid UTF-8 is kept
  EXPECT_EQ(ok.tuner_plugin, "caf\xc3\xa9");
}
