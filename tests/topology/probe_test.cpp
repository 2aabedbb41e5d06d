// The probe on generated fixtures: discovery, paths and rails.
#include <gtest/gtest.h>

#include <map>

#include "core/error.hpp"
#include "fixture_util.hpp"
#include "topology/live.hpp"
#include "test_util.hpp"

namespace railkit::topo {
namespace {
using testing::fixture_src;
using testing::probe_fixture;

// GPU -> NIC pairing of DGX H100 (anchors.md), with the NICs' BDFs.
const std::map<std::string, std::pair<std::string, std::string>> kDgxPairs = {
    {"GPU0", {"mlx5_0", "0000:18:00.0"}},  {"GPU1", {"mlx5_3", "0000:40:00.0"}},  {"GPU2", {"mlx5_4", "0000:4f:00.0"}},
    {"GPU3", {"mlx5_5", "0000:5e:00.0"}},  {"GPU4", {"mlx5_6", "0000:9a:00.0"}},  {"GPU5", {"mlx5_9", "0000:c0:00.0"}},
    {"GPU6", {"mlx5_10", "0000:ce:00.0"}}, {"GPU7", {"mlx5_11", "0000:dc:00.0"}},
};

TEST(TopoProbe, DgxGpusInBusOrder) {
  auto t = probe_fixture("dgx-h100");
  ASSERT_EQ(t.gpus.size(), 8u);
  const char* bdfs[] = {"0000:1b:00.0", "0000:43:00.0", "0000:52:00.0", "0000:61:00.0",
                        "0000:9d:00.0", "0000:c3:00.0", "0000:d1:00.0", "0000:df:00.0"};
  for (int i = 0; i < 8; ++i) {
    EXPECT_EQ(t.gpus[i].name, "GPU" + std::to_string(i));
    EXPECT_EQ(t.gpus[i].bdf, bdfs[i]);
    EXPECT_EQ(t.gpus[i].model, "H100 SXM5 80GB");
    EXPECT_EQ(t.gpus[i].sm, 90);
    EXPECT_EQ(t.gpus[i].numa, i < 4 ? 0 : 1);
  }
  EXPECT_EQ(t.nics.size(), 12u);
  EXPECT_EQ(t.numa_nodes.size(), 2u);
  EXPECT_EQ(t.host, "dgx-h100-01");
  EXPECT_EQ(t.cpu_vendor, "GenuineIntel");
  EXPECT_TRUE(t.gdr_module);
}

TEST(TopoProbe, DgxPairsEachGpuWithItsNicAtPxb) {
  auto t = probe_fixture("dgx-h100");
  ASSERT_EQ(t.rails.size(), 8u);
  for (const auto& r : t.rails) {
    const auto& [nic, bdf] = kDgxPairs.at(r.gpu);
    EXPECT_EQ(r.nic, nic) << r.gpu;
    EXPECT_EQ(t.nic(nic)->bdf, bdf);
    EXPECT_EQ(r.path.type, PathType::PXB) << r.gpu;
    EXPECT_FALSE(r.shared);
    EXPECT_EQ(t.gpu(r.gpu)->numa, t.nic(nic)->numa);
  }
  EXPECT_EQ(t.nccl_ib_hca, "=mlx5_0:1,mlx5_3:1,mlx5_4:1,mlx5_5:1,mlx5_6:1,mlx5_9:1,mlx5_10:1,mlx5_11:1");
  EXPECT_EQ(t.per_rank_hca.at(5), "mlx5_9:1");
}

TEST(TopoProbe, DgxOtherNicsAreNodeOnTheSocketAndSysAcross) {
  auto t = probe_fixture("dgx-h100");
  for (const auto& g : t.gpus)
    for (const auto& n : t.nics) {
      const auto* p = t.path(g.name, n.name);
      ASSERT_NE(p, nullptr);
      if (kDgxPairs.at(g.name).first == n.name) continue;
      EXPECT_EQ(p->path.type, *g.numa == *n.numa ? PathType::NODE : PathType::SYS) << g.name << "-" << n.name;
    }
}

TEST(TopoProbe, DgxStorageNicsAreNotRails) {
  auto t = probe_fixture("dgx-h100");
  for (const char* s : {"mlx5_1", "mlx5_2", "mlx5_7", "mlx5_8"}) {
    EXPECT_FALSE(t.nic(s)->rail) << s;
    EXPECT_TRUE(t.nic(s)->gpus.empty());
  }
  // The two ports of one dual-port card are functions of one device: PIX to each other.
  EXPECT_EQ(t.path("mlx5_1", "mlx5_2")->path.type, PathType::PIX);
}

TEST(TopoProbe, GpuGpuIsUnknownWithoutAnNvlinkSource) {
  auto t = probe_fixture("dgx-h100");
  const auto* p = t.path("GPU0", "GPU1");
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->path.type, PathType::Unknown);
  EXPECT_EQ(p->pci, "NODE");
  EXPECT_EQ(t.path("GPU0", "GPU4")->pci, "SYS");
}

TEST(TopoProbe, NvlinkFromNvidiaSmiCapture) {
  auto t = probe_fixture("dgx-h100", fixture_src("dgx-h100.nvsmi-topo.txt"));
  EXPECT_EQ(t.nvlink_source, "nvidia-smi");
  const auto* p = t.path("GPU0", "GPU7");
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->path.type, PathType::NV);
  EXPECT_EQ(p->path.str(), "NV18");
  EXPECT_EQ(testing::find_finding(t, "nvlink.unknown", t.host), nullptr);
}

TEST(TopoProbe, NvidiaSmiCaptureOfAnotherNodeIsAUsageError) {
  ProbeOptions o;
  o.root = testing::fixture("pcie-2socket");  // 4 GPUs; the capture lists 8
  o.nvidia_smi_topo = fixture_src("dgx-h100.nvsmi-topo.txt");
  EXPECT_THROW(probe_node(o), UsageError);
}

TEST(TopoProbe, DgxRoceFacts) {
  auto t = probe_fixture("dgx-h100");
  const Port* p = t.nic("mlx5_0")->main_port();
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->link_layer, "Ethernet");
  EXPECT_EQ(p->state, "ACTIVE");
  EXPECT_EQ(p->phys_state, "LinkUp");
  EXPECT_DOUBLE_EQ(*p->rate_Gbps, 400.0);
  EXPECT_EQ(p->netdev, "enp24s0np0");
  EXPECT_EQ(*p->mtu_bytes, 9000);
  ASSERT_EQ(p->gids.size(), 4u);
  EXPECT_EQ(p->gids[3].type, "RoCE v2");
  EXPECT_TRUE(p->gids[3].ipv4);
  EXPECT_EQ(p->recommended_gid, 3);
  EXPECT_TRUE(p->ecn.present);
  EXPECT_TRUE(p->ecn.rp_enable.at(3));
  EXPECT_EQ(p->ecn.rp_params.at("rpg_min_dec_fac"), "50");
  EXPECT_EQ(p->ecn.np_params.at("cnp_dscp"), "48");
  ASSERT_TRUE(p->qos.pfc);
  EXPECT_TRUE((*p->qos.pfc)[3]);
  EXPECT_EQ(p->qos.trust, "dscp");
  // Storage NICs expose neither ECN nor QoS files: unknown, not off.
  const Port* s = t.nic("mlx5_1")->main_port();
  EXPECT_FALSE(s->ecn.present);
  EXPECT_FALSE(s->qos.pfc);
}

TEST(TopoProbe, DgxBridgesAndAcs) {
  auto t = probe_fixture("dgx-h100");
  const PciFunction* gpu0 = t.function("0000:1b:00.0");
  ASSERT_NE(gpu0, nullptr);
  EXPECT_EQ(gpu0->host_bridge, "pci0000:15");
  EXPECT_EQ(gpu0->bridges, (std::vector<std::string>{"0000:15:01.0", "0000:16:00.0", "0000:17:01.0", "0000:19:00.0",
                                                     "0000:1a:00.0"}));
  const PciFunction* dp = t.function("0000:17:01.0");
  ASSERT_NE(dp, nullptr);
  EXPECT_TRUE(dp->acs.config_complete);
  EXPECT_TRUE(dp->acs.present);
  EXPECT_EQ(dp->acs.control, 0);
  EXPECT_DOUBLE_EQ(*gpu0->link.cur_speed_GTps, 32.0);
  EXPECT_EQ(*gpu0->link.max_width, 16);
}

TEST(TopoProbe, TwoSocketServer) {
  auto t = probe_fixture("pcie-2socket");
  ASSERT_EQ(t.gpus.size(), 4u);
  ASSERT_EQ(t.rails.size(), 4u);
  EXPECT_EQ(t.rails[0].nic, "mlx5_0");
  EXPECT_EQ(t.rails[0].path.type, PathType::PIX);  // one PCIe switch between them
  EXPECT_EQ(t.rails[1].nic, "mlx5_0");  // PIX beats the free NODE NIC
  EXPECT_TRUE(t.rails[1].shared);
  EXPECT_EQ(t.rails[2].nic, "mlx5_1");  // both NICs are SYS: spread
  EXPECT_EQ(t.rails[2].path.type, PathType::SYS);
  EXPECT_EQ(t.rails[3].nic, "mlx5_1");
  EXPECT_EQ(t.path("GPU0", "GPU1")->pci, "PIX");
  EXPECT_EQ(t.path("GPU2", "GPU3")->pci, "PIX");
  EXPECT_EQ(t.path("GPU0", "mlx5_1")->path.type, PathType::NODE);
}

TEST(TopoProbe, VmFlatLayout) {
  auto t = probe_fixture("vm-flat");
  ASSERT_EQ(t.gpus.size(), 2u);
  ASSERT_EQ(t.nics.size(), 2u);
  ASSERT_EQ(t.numa_nodes.size(), 1u);  // no node directory: one node with the online CPUs
  EXPECT_EQ(t.numa_nodes[0].cpulist, "0-15");
  EXPECT_EQ(t.gpus[0].numa, 0);
  EXPECT_EQ(t.rails[0].nic, "mlx5_0");
  EXPECT_EQ(t.rails[1].nic, "mlx5_1");
  EXPECT_EQ(t.rails[0].path.type, PathType::PHB);
  EXPECT_FALSE(t.function(t.gpus[0].bdf)->link.cur_speed_GTps);  // no link files: unknown
}

TEST(TopoProbe, MissingRootIsAUsageError) {
  ProbeOptions o;
  o.root = testing::fixture("no-such-fixture");
  try {
    probe_node(o);
    FAIL() << "no exception";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("no-such-fixture"), std::string::npos);
    EXPECT_EQ(exit_code(e.code()), 6);
  }
}

TEST(TopoProbe, EmptyRootFindsNothingAndSaysWhy) {
  const railkit::test::TempDir empty{"railkit-empty-root"};
  ProbeOptions o;
  o.root = empty.path;
  Topology t = probe_node(o);
  analyze(t, {});
  EXPECT_TRUE(t.gpus.empty());
  EXPECT_NE(testing::find_finding(t, "input.unreadable", "node"), nullptr);
}

}  // namespace
}  // namespace railkit::topo

namespace railkit::topo {
namespace {

PciFunction fn(std::string bdf, std::string hb, std::vector<std::string> bridges, std::optional<int> numa = 0) {
  PciFunction f;
  f.bdf = std::move(bdf);
  f.host_bridge = std::move(hb);
  f.bridges = std::move(bridges);
  f.numa = numa;
  return f;
}

TEST(TopoPaths, ClassifyCountsSwitchesNotBridges) {
  // root port R, switch S1 (up U1, downs D1a/D1b), a second-level switch S2 (U2, D2) below D1b.
  const auto a = fn("0000:04:00.0", "pci0000:00", {"R", "U1", "D1a"});
  const auto b = fn("0000:05:00.0", "pci0000:00", {"R", "U1", "D1b"});
  const auto c = fn("0000:07:00.0", "pci0000:00", {"R", "U1", "D1b", "U2", "D2"});
  const auto on_rp = fn("0000:02:00.0", "pci0000:00", {"R"});
  const auto other_rp = fn("0000:09:00.0", "pci0000:00", {"R2"});
  const auto root_bus = fn("0000:00:05.0", "pci0000:00", {});
  const auto other_hb = fn("0000:81:00.0", "pci0000:80", {"R3"});
  const auto other_numa = fn("0000:c1:00.0", "pci0000:c0", {"R4"}, 1);
  const auto numa_unknown = fn("0000:e1:00.0", "pci0000:e0", {"R5"}, std::nullopt);
  EXPECT_EQ(classify_pci(a, b), PathType::PIX);  // one switch
  EXPECT_EQ(classify_pci(a, c), PathType::PXB);  // two switches
  EXPECT_EQ(classify_pci(b, c), PathType::PXB);
  EXPECT_EQ(classify_pci(on_rp, a), PathType::PIX);
  EXPECT_EQ(classify_pci(on_rp, c), PathType::PXB);
  EXPECT_EQ(classify_pci(a, other_rp), PathType::PHB);
  EXPECT_EQ(classify_pci(root_bus, a), PathType::PHB);
  EXPECT_EQ(classify_pci(a, other_hb), PathType::NODE);
  EXPECT_EQ(classify_pci(a, other_numa), PathType::SYS);
  EXPECT_EQ(classify_pci(a, numa_unknown), PathType::SYS);
  EXPECT_EQ(classify_pci(a, a), PathType::PIX);
}

TEST(TopoProbe, OddLayouts) {
  auto t = testing::probe_fixture("odd-layouts");
  ASSERT_EQ(t.gpus.size(), 2u);
  EXPECT_EQ(t.gpus[0].bdf, "0000:01:00.0");
  EXPECT_EQ(t.gpus[1].bdf, "0001:03:00.0");  // second domain sorts after the first
  EXPECT_EQ(t.gpus[1].numa, 2);
  ASSERT_EQ(t.numa_nodes.size(), 2u);
  EXPECT_EQ(t.numa_nodes[1].id, 2);
  ASSERT_EQ(t.nics.size(), 2u);  // rxe0 has no PCI function: not a NIC of the matrix
  const Nic* ib = t.nic("mlx5_0");
  ASSERT_NE(ib, nullptr);
  ASSERT_EQ(ib->ports.size(), 2u);
  EXPECT_EQ(ib->ports[0].netdev, "ibp4s0");
  EXPECT_EQ(ib->ports[1].netdev, "ibp4s0d1");
  EXPECT_EQ(ib->ports[1].state, "DOWN");
  EXPECT_EQ(ib->main_port()->num, 1);
  EXPECT_EQ(t.path("GPU1", "mlx5_0")->path.type, PathType::PIX);
  EXPECT_EQ(t.path("GPU0", "mlx5_1")->path.type, PathType::PHB);
  EXPECT_EQ(t.path("GPU0", "mlx5_0")->path.type, PathType::SYS);
  ASSERT_EQ(t.rails.size(), 2u);
  EXPECT_EQ(t.rails[0].nic, "mlx5_1");
  EXPECT_EQ(t.rails[1].nic, "mlx5_0");
  EXPECT_EQ(t.nccl_ib_hca, "=mlx5_1:1,mlx5_0:1");
}

}  // namespace
}  // namespace railkit::topo

namespace railkit::topo {
namespace {

TEST(TopoNvml, CountsSwitchAndDirectLinksThroughDlopen) {
  ProbeOptions o;
  o.root = testing::fixture("dgx-h100");
  Topology t = probe_node(o);
  ASSERT_TRUE(apply_nvml(t, RAILKIT_TOPO_FAKE_NVML));
  analyze(t, {});
  EXPECT_EQ(t.nvlink_source, "nvml");
  // 16 links each to the NVSwitches, plus 2 direct links between GPU 2k and 2k+1.
  EXPECT_EQ(t.path("GPU0", "GPU1")->path.str(), "NV18");
  EXPECT_EQ(t.path("GPU0", "GPU2")->path.str(), "NV16");
  EXPECT_EQ(t.path("GPU6", "GPU7")->path.str(), "NV18");
  EXPECT_EQ(t.path("GPU3", "GPU4")->path.str(), "NV16");
  EXPECT_EQ(t.path("GPU3", "GPU4")->pci, "SYS");
}

TEST(TopoNvml, AbsentLibraryLeavesNvlinkUnknown) {
  ProbeOptions o;
  o.root = testing::fixture("dgx-h100");
  Topology t = probe_node(o);
  EXPECT_FALSE(apply_nvml(t, "libnvidia-ml-does-not-exist.so.1"));
  analyze(t, {});
  EXPECT_EQ(t.nvlink_source, "");
  EXPECT_EQ(t.path("GPU0", "GPU1")->path.type, PathType::Unknown);
}

}  // namespace
}  // namespace railkit::topo
