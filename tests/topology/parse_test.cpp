#include "topology/parse.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

namespace railkit::topo {
namespace {

TEST(TopoParse, Hex) {
  EXPECT_EQ(parse_hex("0x10de\n"), 0x10deu);
  EXPECT_EQ(parse_hex("030200"), 0x030200u);
  EXPECT_FALSE(parse_hex("0xzz"));
  EXPECT_FALSE(parse_hex(""));
  EXPECT_FALSE(parse_hex("0x123456789"));
}

TEST(TopoParse, LinkSpeedAndRate) {
  EXPECT_DOUBLE_EQ(*parse_link_speed_GTps("32.0 GT/s PCIe"), 32.0);
  EXPECT_DOUBLE_EQ(*parse_link_speed_GTps("2.5 GT/s"), 2.5);
  EXPECT_DOUBLE_EQ(*parse_link_speed_GTps("8 GT/s"), 8.0);
  EXPECT_FALSE(parse_link_speed_GTps("Unknown"));
  EXPECT_FALSE(parse_link_speed_GTps("16 Gb/s"));
  EXPECT_DOUBLE_EQ(*parse_rate_Gbps("400 Gb/sec (4X NDR)"), 400.0);
  EXPECT_DOUBLE_EQ(*parse_rate_Gbps("2.5 Gb/sec (1X SDR)"), 2.5);
  EXPECT_FALSE(parse_rate_Gbps("fast"));
}

TEST(TopoParse, PortState) {
  EXPECT_EQ(parse_port_state("4: ACTIVE\n"), "ACTIVE");
  EXPECT_EQ(parse_port_state("5: LinkUp"), "LinkUp");
  EXPECT_EQ(parse_port_state("DOWN"), "DOWN");
}

TEST(TopoParse, CpuListAndMap) {
  EXPECT_EQ(*parse_cpulist("0-3,8,10-11"), (std::vector<int>{0, 1, 2, 3, 8, 10, 11}));
  EXPECT_TRUE(parse_cpulist("")->empty());
  EXPECT_FALSE(parse_cpulist("3-1"));
  EXPECT_FALSE(parse_cpulist("a-b"));
  EXPECT_EQ(cpus_to_cpumap({0, 1, 2, 3}), "0000000f");
  EXPECT_EQ(cpus_to_cpumap({0, 32, 63}), "80000001,00000001");
}

TEST(TopoParse, Gids) {
  EXPECT_TRUE(gid_is_ipv4_mapped("0000:0000:0000:0000:0000:ffff:0a00:0001"));
  EXPECT_FALSE(gid_is_ipv4_mapped("fe80:0000:0000:0000:b83f:d203:0018:0000"));
  EXPECT_TRUE(gid_is_zero("0000:0000:0000:0000:0000:0000:0000:0000"));
  EXPECT_FALSE(gid_is_zero("0000:0000:0000:0000:0000:ffff:0a00:0001"));
  EXPECT_FALSE(gid_is_zero("garbage"));
}

std::vector<std::uint8_t> config_with_acs(std::uint16_t control, size_t size = 4096) {
  std::vector<std::uint8_t> cfg(4096, 0);
  auto put32 = [&](size_t off, std::uint32_t v) { std::memcpy(&cfg[off], &v, 4); };
  put32(0x100, 0x0001u | (1u << 16) | (0x200u << 20));  // AER -> 0x200
  put32(0x200, 0x0019u | (1u << 16) | (0x300u << 20));  // secondary PCIe -> 0x300
  put32(0x300, 0x000Du | (1u << 16));                    // ACS, last
  cfg[0x304] = 0x5f;
  cfg[0x306] = static_cast<std::uint8_t>(control & 0xff);
  cfg[0x307] = static_cast<std::uint8_t>(control >> 8);
  cfg.resize(size);
  return cfg;
}

TEST(TopoParse, AcsWalksTheExtendedList) {
  auto st = parse_acs(config_with_acs(0x001d));
  EXPECT_TRUE(st.config_complete);
  ASSERT_TRUE(st.present);
  EXPECT_EQ(st.capability, 0x5f);
  EXPECT_EQ(st.control, 0x1d);
  EXPECT_EQ(acs_control_bits(0x1d), (std::vector<std::string>{"SrcValid", "ReqRedir", "CmpltRedir", "UpstreamFwd"}));
  EXPECT_EQ(parse_acs(config_with_acs(0)).control, 0);
}

TEST(TopoParse, AcsShortOrLoopingConfig) {
  auto short_cfg = parse_acs(config_with_acs(0x1d, 64));
  EXPECT_FALSE(short_cfg.config_complete);
  EXPECT_FALSE(short_cfg.present);
  std::vector<std::uint8_t> loop(4096, 0);
  std::uint32_t self = 0x0001u | (0x100u << 20);  // points at itself
  std::memcpy(&loop[0x100], &self, 4);
  auto st = parse_acs(loop);
  EXPECT_TRUE(st.config_complete);
  EXPECT_FALSE(st.present);
}

TEST(TopoParse, PfcLayouts) {
  auto a = parse_pfc("0 0 0 1 0 0 0 0\n");
  ASSERT_TRUE(a);
  EXPECT_TRUE((*a)[3]);
  EXPECT_FALSE((*a)[0]);
  auto b = parse_pfc("PFC configuration:\n\tpriority    0   1   2   3   4   5   6   7\n\tenabled     0   0   0   1   1   0   0   0\n");
  ASSERT_TRUE(b);
  EXPECT_TRUE((*b)[3]);
  EXPECT_TRUE((*b)[4]);
  EXPECT_TRUE(parse_pfc("0,0,0,1,0,0,0,0"));
  EXPECT_FALSE(parse_pfc("0 0 1"));
  EXPECT_FALSE(parse_pfc("on"));
  EXPECT_EQ(parse_trust("Priority trust state: dscp"), "dscp");
  EXPECT_EQ(parse_trust("pcp\n"), "pcp");
  EXPECT_EQ(parse_trust("???"), "");
}

TEST(TopoParse, NvidiaSmiMatrix) {
  const char* text =
      "\x1b[4mGPU0\tGPU1\tNIC0\tCPU Affinity\tNUMA Affinity\x1b[0m\n"
      "GPU0\t X \tNV12\tPXB\t0-7\t0\n"
      "GPU1\tNV12\t X \tSYS\t8-15\t1\n"
      "NIC0\tPXB\tSYS\t X\n\nLegend:\n  X = Self\n";
  auto m = parse_nvsmi_topo(text);
  ASSERT_TRUE(m);
  EXPECT_EQ(m->columns, (std::vector<std::string>{"GPU0", "GPU1", "NIC0"}));
  EXPECT_EQ((m->cells.at({"GPU0", "GPU1"})), "NV12");
  EXPECT_EQ((m->cells.at({"GPU1", "NIC0"})), "SYS");
  EXPECT_EQ(parse_nv_cell("NV12"), 12);
  EXPECT_FALSE(parse_nv_cell("NODE"));
  EXPECT_FALSE(parse_nvsmi_topo("no matrix here"));
}

TEST(TopoParse, NaturalOrderAndHash) {
  EXPECT_TRUE(natural_less("mlx5_2", "mlx5_10"));
  EXPECT_FALSE(natural_less("mlx5_10", "mlx5_2"));
  EXPECT_TRUE(natural_less("GPU1", "GPU10"));
  EXPECT_EQ(fnv1a64_hex(""), "cbf29ce484222325");
  EXPECT_EQ(fnv1a64_hex("a"), "af63dc4c8601ec8c");
}

}  // namespace
}  // namespace railkit::topo
