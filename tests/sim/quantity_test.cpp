#include <gtest/gtest.h>

#include "core/error.hpp"
#include "sim/quantity.hpp"
#include "sim/roce.hpp"

namespace rs = railkit::sim;
using nlohmann::json;

TEST(SimQuantity, RatesNeedAUnit) {
  EXPECT_DOUBLE_EQ(rs::parse_rate_bps("100Gbps", "k"), 100e9);
  EXPECT_DOUBLE_EQ(rs::parse_rate_bps("400 Gb/s", "k"), 400e9);
  EXPECT_DOUBLE_EQ(rs::parse_rate_bps("2.5Mbps", "k"), 2.5e6);
  EXPECT_DOUBLE_EQ(rs::parse_rate_bps("1Tbit/s", "k"), 1e12);
  try {
    rs::parse_rate_bps(json(100), "topology.link_rate");
    FAIL() << "a bare number is not a rate";
  } catch (const railkit::UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("topology.link_rate"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("needs a unit"), std::string::npos);
  }
  EXPECT_THROW(rs::parse_rate_bps("100", "k"), railkit::UsageError);
  EXPECT_THROW(rs::parse_rate_bps("100GBps", "k"), railkit::UsageError);  // bytes are not a rate unit here
  EXPECT_THROW(rs::parse_rate_bps("0Gbps", "k"), railkit::UsageError);
  EXPECT_THROW(rs::parse_rate_bps("-1Gbps", "k"), railkit::UsageError);
}

TEST(SimQuantity, TimesNeedAUnit) {
  EXPECT_EQ(rs::parse_time_ps("1us", "k"), 1'000'000);
  EXPECT_EQ(rs::parse_time_ps("500ns", "k"), 500'000);
  EXPECT_EQ(rs::parse_time_ps("2.5 ms", "k"), 2'500'000'000);
  EXPECT_EQ(rs::parse_time_ps("10ps", "k"), 10);
  EXPECT_EQ(rs::parse_time_ps("1s", "k"), 1'000'000'000'000);
  EXPECT_THROW(rs::parse_time_ps(json(5), "k"), railkit::UsageError);
  EXPECT_THROW(rs::parse_time_ps("5 min", "k"), railkit::UsageError);
}

TEST(SimQuantity, BytesAreIntegersOrBinarySizes) {
  EXPECT_EQ(rs::parse_bytes(json(4096), "k"), 4096u);
  EXPECT_EQ(rs::parse_bytes("16MiB", "k"), 16u << 20);
  EXPECT_EQ(rs::parse_bytes("64K", "k"), 65536u);
  EXPECT_THROW(rs::parse_bytes(json(-1), "k"), railkit::UsageError);
  EXPECT_THROW(rs::parse_bytes(json(1.5), "k"), railkit::UsageError);
}

TEST(SimRoce, FrameSizes) {
  EXPECT_EQ(rs::data_wire_bytes(4096), 4096u + 62 + 20);
  EXPECT_EQ(rs::ack_wire_bytes(), 86u);
  EXPECT_EQ(rs::cnp_wire_bytes(), 98u);
  EXPECT_EQ(rs::pause_wire_bytes(), 84u);
}

TEST(SimRoce, WireTimes) {
  EXPECT_EQ(rs::serialization_ps(1, 100e9), 80);        // one byte at 100 Gb/s
  EXPECT_EQ(rs::serialization_ps(4178, 400e9), 83'560);  // a 4 KiB packet at 400 Gb/s
  EXPECT_EQ(rs::pause_duration_ps(65535, 100e9), 335'539'200);  // 65535 x 512 bits at 100 Gb/s
  EXPECT_EQ(rs::pause_duration_ps(1, 25e9), 20'480);
}

TEST(SimRoce, EcnMarkingProbability) {
  EXPECT_EQ(rs::ecn_mark_probability(5'000, 5'000, 200'000, 0.01), 0.0);
  EXPECT_NEAR(rs::ecn_mark_probability(102'500, 5'000, 200'000, 0.01), 0.005, 1e-12);
  EXPECT_NEAR(rs::ecn_mark_probability(200'000, 5'000, 200'000, 0.01), 0.01, 1e-12);
  EXPECT_EQ(rs::ecn_mark_probability(200'001, 5'000, 200'000, 0.01), 1.0);
}

TEST(SimRoce, Mlx5Headroom) {
  // (301 + 2.16 x 7 m) x 100 Gb/s + 2.72 x 4158 B = 31612 + 11309.76 -> 42922 B
  EXPECT_EQ(rs::mlx5_headroom_bytes(100, 7, 4158), 42922u);
  EXPECT_DOUBLE_EQ(rs::cable_m_from_delay(1'000'000), 200.0);  // 1 us of fibre
}

TEST(SimRoce, HpccThresholdsScaleWithRate) {
  const auto t = rs::hpcc_ecn_thresholds(100e9);
  EXPECT_EQ(t.kmin_bytes, 400'000u);
  EXPECT_EQ(t.kmax_bytes, 1'600'000u);
  EXPECT_DOUBLE_EQ(t.pmax, 0.2);
}
