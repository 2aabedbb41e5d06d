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
  EXPECT_EQ(s.nics_used(), (std::vector<std::string>{"mlx5_0", "mlx5_10", "mlx5_11", "mlx5_3", "mlx5_4", "mlx5_5",
                                                      "mlx5_6", "mlx5_9"}));
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
