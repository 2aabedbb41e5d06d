// Printers: JSON document shape, NCCL XML structure, table layout.
#include <gtest/gtest.h>

#include <regex>
#include <set>
#include <sstream>

#include "fixture_util.hpp"
#include "topology/render.hpp"

namespace railkit::topo {
namespace {

size_t count(const std::string& s, const std::string& what) {
  size_t n = 0;
  for (size_t p = s.find(what); p != std::string::npos; p = s.find(what, p + 1)) ++n;
  return n;
}

TEST(TopoRender, JsonDocument) {
  auto t = testing::probe_fixture("dgx-h100");
  auto j = to_json(t);
  EXPECT_EQ(j["schema"], "railkit.topology/1");
  for (const char* k : {"gpus", "nics", "paths", "rails", "findings", "fingerprint"}) EXPECT_TRUE(j.contains(k)) << k;
  ASSERT_EQ(j["gpus"].size(), 8u);
  EXPECT_EQ(j["gpus"][1]["name"], "GPU1");
  EXPECT_EQ(j["gpus"][1]["index"], 1);
  EXPECT_EQ(j["gpus"][1]["bdf"], "0000:43:00.0");
  EXPECT_EQ(j["gpus"][1]["numa"], 0);
  EXPECT_EQ(j["gpus"][1]["nic"], "mlx5_3");
  // Every GPU-NIC and GPU-GPU pair, once.
  EXPECT_EQ(j["paths"].size(), 8u * 12u + 8u * 7u / 2u);
  std::set<std::pair<std::string, std::string>> pairs;
  for (const auto& p : j["paths"]) {
    ASSERT_TRUE(p.contains("from") && p.contains("to") && p.contains("type"));
    pairs.insert({p["from"].get<std::string>(), p["to"].get<std::string>()});
  }
  EXPECT_EQ(pairs.size(), j["paths"].size());
  EXPECT_EQ(j["rails"].size(), 8u);
  // GPU0 -> mlx5_0 crosses the shared upstream port 16:00.0 and the ports below it.
  EXPECT_EQ(j["rails"][0]["bridges"], nlohmann::json::parse(R"([{"bdf":"0000:16:00.0","acs_control":0},
      {"bdf":"0000:17:01.0","acs_control":0},{"bdf":"0000:19:00.0","acs_control":0},{"bdf":"0000:1a:00.0","acs_control":0},
      {"bdf":"0000:17:00.0","acs_control":0}])"));
  EXPECT_EQ(j["non_rail_nics"], nlohmann::json({"mlx5_1", "mlx5_2", "mlx5_7", "mlx5_8"}));
  EXPECT_EQ(j["nics"][0]["ports"][0]["recommended_gid_index"], 3);
  EXPECT_EQ(j["nics"][0]["ports"][0]["pfc_enabled_priorities"], nlohmann::json({3}));
  EXPECT_EQ(j["fingerprint"]["hash"].get<std::string>().size(), 16u);
  EXPECT_EQ(j["findings"][0]["check"], "nvlink.unknown");
  for (const char* k : {"check", "severity", "subject", "message", "fix"}) EXPECT_TRUE(j["findings"][0].contains(k)) << k;
}

TEST(TopoRender, NcclXml) {
  auto t = testing::probe_fixture("dgx-h100");
  const std::string xml = render_nccl_xml(t);
  EXPECT_EQ(xml.rfind("<system version=\"1\">", 0), 0u);
  EXPECT_EQ(count(xml, "<cpu "), 2u);
  EXPECT_EQ(count(xml, "<gpu "), 8u);
  EXPECT_EQ(count(xml, "<net "), 12u);
  EXPECT_EQ(count(xml, "<pci "), count(xml, "</pci>") + count(xml, "/>") - count(xml, "<gpu ") - count(xml, "<net "));
  // GPU0 sits below its switch chain, inside cpu numaid 0.
  const auto cpu0 = xml.find("<cpu numaid=\"0\"");
  const auto cpu1 = xml.find("<cpu numaid=\"1\"");
  const auto gpu0 = xml.find("busid=\"0000:1b:00.0\"");
  EXPECT_LT(cpu0, gpu0);
  EXPECT_LT(gpu0, cpu1);
  EXPECT_LT(xml.find("busid=\"0000:16:00.0\""), gpu0);  // switch upstream ports
  EXPECT_LT(xml.find("busid=\"0000:19:00.0\""), gpu0);
  EXPECT_EQ(xml.find("busid=\"0000:15:01.0\""), std::string::npos);  // root port: not a node
  EXPECT_EQ(xml.find("busid=\"0000:17:01.0\""), std::string::npos);  // downstream port: not a node
  EXPECT_NE(xml.find("class=\"0x030200\" vendor=\"0x10de\" device=\"0x2330\""), std::string::npos);
  EXPECT_NE(xml.find("link_speed=\"32.0 GT/s PCIe\" link_width=\"16\""), std::string::npos);
  EXPECT_NE(xml.find("<gpu dev=\"0\" sm=\"90\" rank=\"0\" gdr=\"1\"/>"), std::string::npos);
  EXPECT_NE(xml.find("<net name=\"mlx5_0\" dev=\"0\" speed=\"400000\" port=\"1\""), std::string::npos);
  EXPECT_NE(xml.find("affinity=\"000000ff,ffffffff,ffff0000,00000000,00ffffff,ffffffff\""), std::string::npos);
  EXPECT_NE(xml.find("vendor=\"GenuineIntel\" familyid=\"6\" modelid=\"143\""), std::string::npos);
}

TEST(TopoRender, TableMatrixRows) {
  auto t = testing::probe_fixture("dgx-h100", testing::fixture_src("dgx-h100.nvsmi-topo.txt"));
  const std::string table = render_table(t, TableOptions{});
  std::istringstream in(table);
  std::string line;
  std::vector<std::string> gpu0;
  while (std::getline(in, line)) {
    if (line.rfind("GPU0 ", 0) == 0) {
      std::istringstream ls(line);
      for (std::string tok; ls >> tok;) gpu0.push_back(tok);
      break;
    }
  }
  const std::vector<std::string> expect = {"GPU0", "X",    "NV18", "NV18", "NV18", "NV18", "NV18", "NV18",
                                           "NV18", "PXB",  "NODE", "NODE", "NODE", "NODE", "NODE", "SYS",
                                           "SYS",  "SYS",  "SYS",  "SYS",  "SYS",  "0-55,112-167", "0"};
  EXPECT_EQ(gpu0, expect);
  EXPECT_NE(table.find("  NIC11: mlx5_11\n"), std::string::npos);
  EXPECT_TRUE(std::regex_search(table, std::regex("GPU0 +-> mlx5_0:1 +PXB +400 Gb/s +enp24s0np0 +ACS off")));
  EXPECT_NE(table.find("NCCL_IB_HCA=\"=mlx5_0:1,mlx5_3:1,"), std::string::npos);
  EXPECT_NE(table.find("Not rails (serve no GPU: storage / in-band): mlx5_1, mlx5_2, mlx5_7, mlx5_8"), std::string::npos);
  EXPECT_TRUE(std::regex_search(table, std::regex("mlx5_0 +1 +Ethernet +enp24s0np0 +ACTIVE +LinkUp +400 +9000 +3 +on/on +on dscp")));
  EXPECT_NE(table.find("Findings on dgx-h100-01: 0 error(s), 0 warning(s), 0 info"), std::string::npos);
}

std::vector<std::string> row_tokens(const std::string& table, const std::string& dev) {
  std::istringstream in(table);
  std::vector<std::string> out;
  for (std::string line; std::getline(in, line);)
    if (line.rfind(dev + " ", 0) == 0) {
      std::istringstream ls(line);
      for (std::string tok; ls >> tok;) out.push_back(tok);
      break;
    }
  return out;
}

TEST(TopoRender, GpuGpuCellsShowThePciePathWhenNvlinkIsUnknown) {
  // No NVLink source: GPU-GPU cells are the PCIe path, as nvidia-smi prints for GPUs without NVLink.
  auto t = testing::probe_fixture("dgx-h100");
  ASSERT_TRUE(t.nvlink_source.empty());
  const std::string table = render_table(t, TableOptions{});
  const std::vector<std::string> gpu0 = {"GPU0", "X",    "NODE", "NODE", "NODE", "SYS",  "SYS",  "SYS",
                                         "SYS",  "PXB",  "NODE", "NODE", "NODE", "NODE", "NODE", "SYS",
                                         "SYS",  "SYS",  "SYS",  "SYS",  "SYS",  "0-55,112-167", "0"};
  EXPECT_EQ(row_tokens(table, "GPU0"), gpu0);
  const auto gpu5 = row_tokens(table, "GPU5");  // GPU5, then the GPU0..GPU7 cells
  ASSERT_GE(gpu5.size(), 9u);
  EXPECT_EQ(gpu5[4], "SYS");   // GPU3: across sockets
  EXPECT_EQ(gpu5[5], "NODE");  // GPU4: same socket, another host bridge
  EXPECT_EQ(gpu5[6], "X");
  EXPECT_EQ(gpu5[8], "NODE");
  EXPECT_EQ(table.substr(0, table.find("Legend:")).find(" ? "), std::string::npos) << table;  // no cell is "?"
  EXPECT_NE(table.find("GPU-GPU cells show the PCIe path: NVLink is unknown"), std::string::npos) << table;
  // One PCIe switch between GPU0 and GPU1 of the 2-socket server: PIX; across sockets SYS.
  const std::string pcie = render_table(testing::probe_fixture("pcie-2socket"), TableOptions{});
  auto p0 = row_tokens(pcie, "GPU0"), p2 = row_tokens(pcie, "GPU2");
  ASSERT_GE(p0.size(), 5u);
  ASSERT_GE(p2.size(), 5u);
  p0.resize(5);
  p2.resize(5);
  EXPECT_EQ(p0, (std::vector<std::string>{"GPU0", "X", "PIX", "SYS", "SYS"}));
  EXPECT_EQ(p2, (std::vector<std::string>{"GPU2", "SYS", "SYS", "X", "PIX"}));
  // With an NVLink source, NV# as before and no such legend line.
  const std::string nv = render_table(testing::probe_fixture("dgx-h100", testing::fixture_src("dgx-h100.nvsmi-topo.txt")),
                                      TableOptions{});
  EXPECT_EQ(row_tokens(nv, "GPU0").at(2), "NV18");
  EXPECT_EQ(nv.find("NVLink is unknown"), std::string::npos);
}

TEST(TopoRender, RdmaPortTableCarriesUnitsAndExplainsItsColumns) {
  auto t = testing::probe_fixture("dgx-h100");
  const std::string table = render_table(t, TableOptions{});
  EXPECT_TRUE(std::regex_search(table, std::regex("\n  NIC +port +layer +netdev +state +phys +Gb/s +MTU\\(B\\) +v2 GID +ECN p3 +"
                                                  "PFC p3 trust +use\n")))
      << table;
  EXPECT_TRUE(std::regex_search(table, std::regex("mlx5_0 +1 +Ethernet +enp24s0np0 +ACTIVE +LinkUp +400 +9000 +3 +on/on +on dscp +rail GPU0\n")));
  EXPECT_TRUE(std::regex_search(table, std::regex("mlx5_1 +1 +Ethernet +\\S+ +ACTIVE +LinkUp +200 +1500 +3 +n/a +n/a n/a +in-band\n")))
      << table;
  for (const char* legend : {"  Gb/s: port rate in Gb/s", "MTU(B): netdev MTU in bytes", "  v2 GID: the RoCE v2 GID index",
                             "  ECN p3: DCQCN reaction/notification point enabled on priority 3",
                             "  PFC p3 trust: PFC on priority 3, then the QoS trust mode", "  use: the GPUs this port is the rail of",
                             "n/a = not visible"})
    EXPECT_NE(table.find(legend), std::string::npos) << legend;
  // --priority moves the column headers and their explanation.
  const std::string p5 = render_table(t, TableOptions{5, false});
  EXPECT_NE(p5.find("  ECN p5: DCQCN reaction/notification point enabled on priority 5"), std::string::npos);
}

TEST(TopoRender, FindingsOnlyTable) {
  auto t = testing::probe_fixture("dgx-acs");
  const std::string table = render_table(t, TableOptions{3, true});
  EXPECT_EQ(table.find("NIC Legend"), std::string::npos);
  EXPECT_NE(table.find("error   pcie.acs_enabled"), std::string::npos);
  const std::string full = render_table(t, TableOptions{});
  EXPECT_NE(full.find("ACS on 0000:cd:00.0"), std::string::npos);
}

}  // namespace
}  // namespace railkit::topo
