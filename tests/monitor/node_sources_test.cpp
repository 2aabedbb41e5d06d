// monitor/node sources: ethtool text and per-driver names, the ioctl on this machine's netdevs,
// AER totals, and discovery and reading of the generated fixture node (tests/monitor/node_fixture.py).
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include "core/error.hpp"
#include "monitor/node/ethtool.hpp"
#include "monitor/node/sources.hpp"

namespace railkit::monitor {
namespace {
namespace fs = std::filesystem;

const fs::path kFixture = RAILKIT_MON_FIXTURE;

const CounterReading* find_counter(const std::vector<CounterReading>& v, std::string_view metric, const Labels& labels) {
  for (const auto& c : v)
    if (c.metric == metric && c.labels == labels) return &c;
  return nullptr;
}

size_t count_metric(const std::vector<CounterReading>& v, std::string_view metric) {
  return static_cast<size_t>(std::count_if(v.begin(), v.end(), [&](const auto& c) { return c.metric == metric; }));
}

TEST(EthtoolText, ParsesStatisticsAndSkipsHeaderAndGarbage) {
  int skipped = -1;
  const auto s = parse_ethtool_text(
      "NIC statistics:\n     rx_packets: 12\n     tx_prio3_pause: 18446744073709551615\n"
      "     weird line\n     rx_bytes: -4\n     port-rx-xoff_prio-3_events: 7\n",
      &skipped);
  ASSERT_EQ(s.size(), 3u);
  EXPECT_EQ(s[0], (std::pair<std::string, std::uint64_t>{"rx_packets", 12}));
  EXPECT_EQ(s[1].second, 18446744073709551615ull);
  EXPECT_EQ(s[2].first, "port-rx-xoff_prio-3_events");
  EXPECT_EQ(skipped, 2);
}

TEST(EthtoolMap, Mlx5PauseFramesDurationAndDiscards) {
  std::vector<CounterReading> out;
  map_ethtool_stats("mlx5_core", "ens1np0",
                    {{"rx_prio3_pause", 10}, {"tx_prio3_pause_duration", 2500000}, {"rx_discards_phy", 4},
                     {"rx_prio8_pause", 1}, {"rx_packets", 99}, {"tx_pfc_ena_frames_pri3", 5}},
                    out);
  ASSERT_EQ(out.size(), 3u);  // prio 8 is no priority; rx_packets and bnxt names are not mlx5's
  const auto* f = find_counter(out, kPauseFrames, {{"netdev", "ens1np0"}, {"priority", "3"}, {"direction", "rx"}});
  ASSERT_TRUE(f);
  EXPECT_EQ(f->raw, 10u);
  const auto* d = find_counter(out, kPauseDuration, {{"netdev", "ens1np0"}, {"priority", "3"}, {"direction", "tx"}});
  ASSERT_TRUE(d);
  EXPECT_DOUBLE_EQ(static_cast<double>(d->raw) / d->divisor, 2.5);  // microseconds -> seconds
  EXPECT_TRUE(find_counter(out, kNetdevEvents, {{"netdev", "ens1np0"}, {"counter", "rx_discards_phy"}}));
}

TEST(EthtoolMap, BnxtAndIceNames) {
  std::vector<CounterReading> out;
  map_ethtool_stats("bnxt_en", "eth0", {{"tx_pfc_ena_frames_pri5", 3}, {"pfc_pri5_rx_duration_us", 7}}, out);
  map_ethtool_stats("ice", "eth1", {{"rx_priority_2_xoff.nic", 8}, {"tx_priority_2_xon.nic", 9}}, out);
  ASSERT_EQ(out.size(), 3u);  // XON frames end a pause: not counted
  EXPECT_TRUE(find_counter(out, kPauseFrames, {{"netdev", "eth0"}, {"priority", "5"}, {"direction", "tx"}}));
  EXPECT_TRUE(find_counter(out, kPauseDuration, {{"netdev", "eth0"}, {"priority", "5"}, {"direction", "rx"}}));
  EXPECT_TRUE(find_counter(out, kPauseFrames, {{"netdev", "eth1"}, {"priority", "2"}, {"direction", "rx"}}));
  EXPECT_TRUE(ethtool_driver_mapped("ice"));
  EXPECT_FALSE(ethtool_driver_mapped("virtio_net"));
}

TEST(EthtoolMap, UnknownDriverTriesEveryTable) {
  std::vector<CounterReading> out;
  map_ethtool_stats("", "x", {{"rx_prio1_pause", 1}, {"rx_pfc_ena_frames_pri1", 2}}, out);
  EXPECT_EQ(out.size(), 2u);
}

TEST(EthtoolIoctl, MissingNetdevAndNoStatistics) {
  std::string why;
  EXPECT_FALSE(read_ethtool_ioctl("railkit-none0", &why));
  EXPECT_NE(why.find("No such device"), std::string::npos) << why;
  why.clear();
  EXPECT_FALSE(read_ethtool_ioctl("lo", &why));  // the loopback driver has no statistics
  EXPECT_FALSE(why.empty());
  EXPECT_FALSE(read_ethtool_ioctl(std::string(40, 'x'), &why));
}

// The ioctl on a real driver: every netdev of this machine with a driver that has statistics
// (virtio_net and veth have) must give named values; skipped when none has.
TEST(EthtoolIoctl, LiveDriverStatistics) {
  std::error_code ec;
  for (const auto& e : fs::directory_iterator("/sys/class/net", ec)) {
    std::string why;
    auto s = read_ethtool_ioctl(e.path().filename().string(), &why);
    if (!s) continue;
    ASSERT_FALSE(s->empty());
    for (const auto& [name, v] : *s) EXPECT_FALSE(name.empty());
    return;
  }
  GTEST_SKIP() << "no netdev here has driver statistics";
}

TEST(Aer, TotalLine) {
  EXPECT_EQ(parse_aer_total("RxErr 0\nBadTLP 3\nTOTAL_ERR_COR 7\n"), 7u);
  EXPECT_EQ(parse_aer_total("Undefined 0\nTOTAL_ERR_FATAL 0\n"), 0u);
  EXPECT_FALSE(parse_aer_total("RxErr 0\n"));
  EXPECT_FALSE(parse_aer_total("TOTAL_ERR_COR x\n"));
}

TEST(Discover, FixtureNode) {
  const NodeInventory inv = discover_node(kFixture);
  ASSERT_EQ(inv.ports.size(), 4u);
  EXPECT_EQ(inv.ports[0].device, "mlx5_0");
  EXPECT_EQ(inv.ports[0].netdev, "ens1np0");
  ASSERT_EQ(inv.netdevs.size(), 4u);
  EXPECT_EQ(inv.netdevs[3], (std::pair<std::string, std::string>{"ens4np0", "mlx5_core"}));
  EXPECT_EQ(inv.functions.size(), 6u);  // 4 NICs and 2 GPUs
  EXPECT_EQ(std::count_if(inv.functions.begin(), inv.functions.end(), [](auto& f) { return f.role == "gpu"; }), 2);
}

TEST(Discover, BadRoot) {
  try {
    discover_node(kFixture / "no-such-dir");
    FAIL() << "no error";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("--root"), std::string::npos);
  }
}

TEST(Sample, ReadsEverySourceOfTheFixture) {
  const NodeInventory inv = discover_node(kFixture);
  const topo::SysfsReader rd(SysRoot{kFixture});
  NodeSample s;
  read_sysfs_sources(inv, rd, s);
  read_ethtool_sources(inv, kFixture, false, s);
  EXPECT_EQ(count_metric(s.counters, kRdmaCounter), 4u * 16);  // 10 hw_counters + 6 counters; lifespan is not one
  EXPECT_FALSE(find_counter(s.counters, kRdmaCounter, {{"device", "mlx5_0"}, {"port", "1"}, {"counter", "lifespan"}}));
  const auto* cc = find_counter(s.counters, kCarrierChanges, {{"netdev", "ens2np0"}});
  ASSERT_TRUE(cc);
  EXPECT_EQ(cc->raw, 2u);
  EXPECT_EQ(count_metric(s.counters, kAerErrors), 6u * 3);
  EXPECT_EQ(count_metric(s.counters, kPauseFrames), 4u * 16);
  EXPECT_EQ(count_metric(s.counters, kPauseDuration), 4u * 16);
  EXPECT_EQ(count_metric(s.counters, kNetdevEvents), 4u * 2);  // rx_discards_phy, tx_pause_storm_warning_events
  ASSERT_EQ(s.links.size(), 6u);
  EXPECT_TRUE(s.notes.empty()) << s.notes.front();
}

TEST(Sample, MissingEthtoolTextIsANote) {
  NodeInventory inv;
  inv.netdevs.emplace_back("ens9np0", "mlx5_core");
  NodeSample s;
  read_ethtool_sources(inv, kFixture, false, s);
  EXPECT_TRUE(s.counters.empty());
  ASSERT_EQ(s.notes.size(), 1u);
  EXPECT_NE(s.notes[0].find("ens9np0"), std::string::npos);
}

}  // namespace
}  // namespace railkit::monitor
