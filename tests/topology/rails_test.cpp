// Rail recognition: a rail NIC sits behind its GPU's PCIe switch; a GPU whose rail NIC is
// missing is named, and in-band (storage) NICs never become rails.
#include <gtest/gtest.h>

#include <algorithm>

#include "fixture_util.hpp"
#include "topology/render.hpp"

namespace railkit::topo {
namespace {
using testing::find_finding;
using testing::probe_fixture;

const Rail* rail_of(const Topology& t, const std::string& gpu) {
  for (const auto& r : t.rails)
    if (r.gpu == gpu) return &r;
  return nullptr;
}

TEST(TopoRails, MissingRailNicIsNamed) {
  // dgx-missing-nic: mlx5_0, GPU0's rail NIC, is gone. The nearest NIC left is mlx5_1, a
  // storage/in-band NIC on another host bridge (NODE).
  const Topology t = probe_fixture("dgx-missing-nic");
  const Finding* f = find_finding(t, "rail.nic_missing", "GPU0");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->severity, Severity::Error);
  EXPECT_NE(f->message.find("GPU0 has no NIC behind its PCIe switch 0000:16:00.0"), std::string::npos) << f->message;
  EXPECT_NE(f->message.find("its rail NIC is missing"), std::string::npos) << f->message;
  EXPECT_NE(f->message.find("nearest is mlx5_1 (NODE), an in-band NIC on another switch"), std::string::npos) << f->message;
  EXPECT_NE(f->fix.find("0000:16:00.0"), std::string::npos) << f->fix;
  // The one finding for GPU0: no "far NIC" advice, and nothing at all about the in-band NICs
  // (their MTU 1500 and missing QoS files are fine for storage).
  EXPECT_EQ(find_finding(t, "rail.nic_far", "GPU0"), nullptr);
  std::vector<std::string> inband;
  for (const char* s : {"mlx5_1", "mlx5_2", "mlx5_7", "mlx5_8"}) {
    inband.push_back(s);
    for (const auto& nd : t.nic(s)->netdevs) inband.push_back(nd);
  }
  for (const auto& g : t.findings) {
    EXPECT_NE(g.check, "netdev.mtu_low") << g.subject << ": " << g.message;
    EXPECT_EQ(std::find(inband.begin(), inband.end(), g.subject), inband.end()) << g.check << ": " << g.message;
  }
  // Only GPU0 is named: every other GPU has its NIC.
  EXPECT_EQ(std::count_if(t.findings.begin(), t.findings.end(), [](const Finding& x) { return x.check == "rail.nic_missing"; }),
            1);
}

TEST(TopoRails, InBandNicsNeverBecomeRails) {
  const Topology t = probe_fixture("dgx-missing-nic");
  EXPECT_TRUE(t.rail_optimized);
  for (const char* s : {"mlx5_1", "mlx5_2", "mlx5_7", "mlx5_8"}) {
    EXPECT_FALSE(t.nic(s)->rail) << s;
    EXPECT_TRUE(t.nic(s)->in_band) << s;
    EXPECT_EQ(t.nccl_ib_hca.find(std::string(s) + ":"), std::string::npos) << t.nccl_ib_hca;
  }
  // GPU0 falls back to the nearest rail NIC (GPU1's, same socket), marked borrowed and shared.
  const Rail* r0 = rail_of(t, "GPU0");
  ASSERT_NE(r0, nullptr);
  EXPECT_EQ(r0->nic, "mlx5_3");
  EXPECT_EQ(r0->path.type, PathType::NODE);
  EXPECT_TRUE(r0->borrowed);
  EXPECT_TRUE(r0->shared);
  EXPECT_EQ(t.per_rank_hca.at(0), "mlx5_3:1");
  for (const auto& r : t.rails) {
    if (r.gpu != "GPU0") {
      EXPECT_FALSE(r.borrowed) << r.gpu;
    }
  }
  EXPECT_EQ(t.nccl_ib_hca, "=mlx5_3:1,mlx5_4:1,mlx5_5:1,mlx5_6:1,mlx5_9:1,mlx5_10:1,mlx5_11:1");
  // The table and the document say it too.
  const std::string table = render_table(t, TableOptions{});
  EXPECT_NE(table.find("(borrowed: its own rail NIC is missing)"), std::string::npos) << table;
  EXPECT_NE(table.find("error   rail.nic_missing"), std::string::npos) << table;
  const auto j = to_json(t);
  EXPECT_EQ(j["rail_optimized"], true);
  EXPECT_EQ(j["rails"][0]["borrowed"], true);
  EXPECT_EQ(j["nics"][0]["name"], "mlx5_1");
  EXPECT_EQ(j["nics"][0]["in_band"], true);
}

TEST(TopoRails, MissingRailNicOnTheOtherSocket) {
  // mlx5_9 gone: GPU5's nearest NIC is GPU4's rail NIC mlx5_6 (NODE), which it now shares.
  const Topology t = probe_fixture("dgx-missing-nic-socket1");
  const Finding* f = find_finding(t, "rail.nic_missing", "GPU5");
  ASSERT_NE(f, nullptr);
  EXPECT_NE(f->message.find("nearest is mlx5_6 (NODE), the rail NIC of GPU4"), std::string::npos) << f->message;
  EXPECT_NE(f->message.find("GPU5 falls back to mlx5_6 (NODE), shared"), std::string::npos) << f->message;
  EXPECT_FALSE(t.nic("mlx5_7")->rail);
  EXPECT_FALSE(t.nic("mlx5_8")->rail);
}

TEST(TopoRails, HealthyDgxIsRailOptimizedWithItsStorageNicsInBand) {
  const Topology t = probe_fixture("dgx-h100");
  EXPECT_TRUE(t.rail_optimized);
  for (const auto& n : t.nics) EXPECT_EQ(n.in_band, !n.rail) << n.name;
  for (const auto& r : t.rails) EXPECT_FALSE(r.borrowed) << r.gpu;
  EXPECT_EQ(find_finding(t, "rail.nic_missing", "GPU0"), nullptr);
}

TEST(TopoRails, WithoutPerGpuNicsTheNearestNicServes) {
  // pcie-2socket: only GPU0/GPU1 have a NIC behind their switch (2 of 4 GPUs): not rail-optimized,
  // so GPU2/GPU3 use the nearest NIC (mlx5_1, SYS) and nothing is called in-band or missing.
  const Topology p = probe_fixture("pcie-2socket");
  EXPECT_FALSE(p.rail_optimized);
  EXPECT_EQ(rail_of(p, "GPU2")->nic, "mlx5_1");
  for (const auto& n : p.nics) EXPECT_FALSE(n.in_band) << n.name;
  for (const auto& r : p.rails) EXPECT_FALSE(r.borrowed) << r.gpu;
  // vm-flat: no PCIe switch at all; both NICs are rails.
  const Topology v = probe_fixture("vm-flat");
  EXPECT_FALSE(v.rail_optimized);
  EXPECT_EQ(v.nccl_ib_hca, "=mlx5_0:1,mlx5_1:1");
}

}  // namespace
}  // namespace railkit::topo
