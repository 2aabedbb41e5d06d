// monitor/node rates and derived signals as pure functions: samples and the interval injected,
// each signal at and just past its threshold, counters that go backwards, the exposition's names.
#include <gtest/gtest.h>

#include <stdexcept>

#include "monitor/node/exposition.hpp"
#include "monitor/node/rates.hpp"

namespace railkit::monitor {
namespace {

CounterReading rdma(const std::string& dev, const std::string& counter, std::uint64_t v) {
  return {std::string(kRdmaCounter), {{"device", dev}, {"port", "1"}, {"counter", counter}}, v, 1};
}

CounterReading pause_us(const std::string& nd, std::uint64_t v) {
  return {std::string(kPauseDuration), {{"netdev", nd}, {"priority", "3"}, {"direction", "rx"}}, v, 1e6};
}

CounterReading pause_frames(const std::string& nd, std::uint64_t v) {
  return {std::string(kPauseFrames), {{"netdev", nd}, {"priority", "3"}, {"direction", "tx"}}, v, 1};
}

NodeSample at(double t, std::vector<CounterReading> c) {
  NodeSample s;
  s.mono_s = t;
  s.unix_s = 1.7e9 + t;
  s.counters = std::move(c);
  return s;
}

// The signals of one interval of `dt` seconds from counters `a` to `b`.
std::vector<Signal> signals_of(std::vector<CounterReading> a, std::vector<CounterReading> b, double dt = 2,
                               const SignalThresholds& t = {}) {
  const NodeSample p = at(100, std::move(a)), c = at(100 + dt, std::move(b));
  const IntervalRates r = compute_rates(p, c);
  return derive_signals(c, &r, t);
}

const Signal* find_signal(const std::vector<Signal>& v, const std::string& sig, const std::string& subject) {
  for (const auto& s : v)
    if (s.signal == sig && s.subject == subject) return &s;
  return nullptr;
}

TEST(Rates, KnownInterval) {
  const auto r = compute_rates(at(10, {rdma("mlx5_0", "np_cnp_sent", 1000), pause_us("e0", 0)}),
                               at(12.5, {rdma("mlx5_0", "np_cnp_sent", 6000), pause_us("e0", 750000)}));
  EXPECT_DOUBLE_EQ(r.interval_s, 2.5);
  ASSERT_EQ(r.rates.size(), 2u);
  EXPECT_DOUBLE_EQ(r.rates[0].rate_per_s, 2000);
  EXPECT_DOUBLE_EQ(r.rates[0].delta, 5000);
  EXPECT_DOUBLE_EQ(r.rates[1].rate_per_s, 0.3);  // 0.75 s paused in 2.5 s
  EXPECT_TRUE(r.notes.empty());
}

TEST(Rates, BackwardsCounterHasNoRateAndANote) {
  const auto r = compute_rates(at(0, {rdma("mlx5_0", "out_of_sequence", 500), rdma("mlx5_0", "packet_seq_err", 1)}),
                               at(1, {rdma("mlx5_0", "out_of_sequence", 3), rdma("mlx5_0", "packet_seq_err", 1)}));
  ASSERT_EQ(r.rates.size(), 1u);
  EXPECT_EQ(label_value(r.rates[0].labels, "counter"), "packet_seq_err");
  EXPECT_DOUBLE_EQ(r.rates[0].rate_per_s, 0);
  ASSERT_EQ(r.notes.size(), 1u);
  EXPECT_NE(r.notes[0].find("went backwards"), std::string::npos);
  // A counter that wrapped past 2^64 also goes backwards: still no negative rate.
  const auto w = compute_rates(at(0, {rdma("d", "c", 18446744073709551610ull)}), at(1, {rdma("d", "c", 5)}));
  EXPECT_TRUE(w.rates.empty());
}

TEST(Rates, NewCounterWaitsForTheNextInterval) {
  const auto r = compute_rates(at(0, {}), at(1, {rdma("mlx5_0", "np_cnp_sent", 7)}));
  EXPECT_TRUE(r.rates.empty());
  EXPECT_THROW(compute_rates(at(1, {}), at(1, {})), std::invalid_argument);
}

TEST(Signals, PauseStormByRatioAtTheThreshold) {
  // 0.2 s of a 2 s interval = exactly 10%: not over it; one microsecond more is.
  auto s = signals_of({pause_us("e0", 0)}, {pause_us("e0", 200000)});
  ASSERT_TRUE(find_signal(s, "pause_storm", "e0"));
  EXPECT_FALSE(find_signal(s, "pause_storm", "e0")->holds);
  s = signals_of({pause_us("e0", 0)}, {pause_us("e0", 200004)});
  EXPECT_TRUE(find_signal(s, "pause_storm", "e0")->holds);
  EXPECT_NE(find_signal(s, "pause_storm", "e0")->evidence.find("prio3 rx"), std::string::npos);
}

TEST(Signals, PauseStormByFrames) {
  auto s = signals_of({pause_frames("e1", 0)}, {pause_frames("e1", 20000)});
  EXPECT_FALSE(find_signal(s, "pause_storm", "e1")->holds);  // 10000/s
  s = signals_of({pause_frames("e1", 0)}, {pause_frames("e1", 20002)});
  EXPECT_TRUE(find_signal(s, "pause_storm", "e1")->holds);
  SignalThresholds t;
  t.pause_frames_per_s = 20000;
  s = signals_of({pause_frames("e1", 0)}, {pause_frames("e1", 20002)}, 2, t);
  EXPECT_FALSE(find_signal(s, "pause_storm", "e1")->holds);
}

TEST(Signals, CnpSurge) {
  auto s = signals_of({rdma("mlx5_0", "rp_cnp_handled", 0)}, {rdma("mlx5_0", "rp_cnp_handled", 100000)});
  EXPECT_FALSE(find_signal(s, "cnp_surge", "mlx5_0/1")->holds);
  s = signals_of({rdma("mlx5_0", "np_cnp_sent", 0), rdma("mlx5_0", "rp_cnp_handled", 0)},
                 {rdma("mlx5_0", "np_cnp_sent", 100002), rdma("mlx5_0", "rp_cnp_handled", 0)});
  EXPECT_TRUE(find_signal(s, "cnp_surge", "mlx5_0/1")->holds);
  EXPECT_FALSE(find_signal(s, "retransmit_surge", "mlx5_0/1"));  // no retransmit counter: not judged
}

TEST(Signals, RetransmitSurgeSumsTheThreeCounters) {
  const std::vector<CounterReading> zero = {rdma("mlx5_1", "out_of_sequence", 0), rdma("mlx5_1", "packet_seq_err", 0),
                                            rdma("mlx5_1", "local_ack_timeout_err", 0)};
  auto s = signals_of(zero, {rdma("mlx5_1", "out_of_sequence", 100), rdma("mlx5_1", "packet_seq_err", 50),
                             rdma("mlx5_1", "local_ack_timeout_err", 50)});
  EXPECT_FALSE(find_signal(s, "retransmit_surge", "mlx5_1/1")->holds);  // 200 in 2 s = 100/s
  s = signals_of(zero, {rdma("mlx5_1", "out_of_sequence", 100), rdma("mlx5_1", "packet_seq_err", 50),
                        rdma("mlx5_1", "local_ack_timeout_err", 52)});
  EXPECT_TRUE(find_signal(s, "retransmit_surge", "mlx5_1/1")->holds);
}

TEST(Signals, LinkFlap) {
  const auto carrier = [](std::uint64_t v) {
    return CounterReading{std::string(kCarrierChanges), {{"netdev", "ens1np0"}}, v, 1};
  };
  EXPECT_FALSE(find_signal(signals_of({carrier(4)}, {carrier(4)}), "link_flap", "ens1np0")->holds);
  EXPECT_TRUE(find_signal(signals_of({carrier(4)}, {carrier(5)}), "link_flap", "ens1np0")->holds);
  EXPECT_FALSE(find_signal(signals_of({carrier(4)}, {carrier(0)}), "link_flap", "ens1np0"));  // reset: not judged
}

TEST(Signals, PcieDowntrainedWithoutASecondSample) {
  NodeSample s = at(0, {});
  s.links.push_back({"0000:00:07.0", "nic", "16.0 GT/s", "32.0 GT/s", 16.0, 32.0, 16, 16});
  s.links.push_back({"0000:00:08.0", "nic", "32.0 GT/s", "32.0 GT/s", 32.0, 32.0, 16, 16});
  s.links.push_back({"0000:00:05.0", "gpu", "2.5 GT/s", "32.0 GT/s", 2.5, 32.0, 16, 16});  // idle GPU
  s.links.push_back({"0000:00:06.0", "gpu", "32.0 GT/s", "32.0 GT/s", 32.0, 32.0, 8, 16});
  s.links.push_back({"0000:00:09.0", "nic", "Unknown", "", std::nullopt, std::nullopt, std::nullopt, std::nullopt});
  const auto v = derive_signals(s, nullptr, {});
  ASSERT_EQ(v.size(), 4u);  // the link with nothing known is not judged; nothing needing rates is present
  EXPECT_TRUE(find_signal(v, "pcie_downtrained", "0000:00:07.0")->holds);
  EXPECT_FALSE(find_signal(v, "pcie_downtrained", "0000:00:08.0")->holds);
  EXPECT_FALSE(find_signal(v, "pcie_downtrained", "0000:00:05.0")->holds);
  EXPECT_TRUE(find_signal(v, "pcie_downtrained", "0000:00:06.0")->holds);
}

// Four ports: tx rates in 4-byte words per second over a 1 s interval.
std::vector<Signal> rails(std::vector<std::uint64_t> words_per_s, const SignalThresholds& t = {}) {
  std::vector<CounterReading> a, b;
  for (size_t i = 0; i < words_per_s.size(); ++i) {
    a.push_back(rdma("mlx5_" + std::to_string(i), "port_xmit_data", 0));
    b.push_back(rdma("mlx5_" + std::to_string(i), "port_xmit_data", words_per_s[i]));
  }
  return signals_of(a, b, 1, t);
}

TEST(Signals, RailRateOutlier) {
  const std::uint64_t w = 10'000'000'000ull / 4;  // 10 GB/s = 80 Gb/s
  auto s = rails({w, w, w, w * 49 / 100});
  EXPECT_TRUE(find_signal(s, "rail_rate_outlier", "mlx5_3/1")->holds);
  EXPECT_FALSE(find_signal(s, "rail_rate_outlier", "mlx5_0/1")->holds);
  s = rails({w, w, w, w / 2});  // exactly half the median: not below it
  EXPECT_FALSE(find_signal(s, "rail_rate_outlier", "mlx5_3/1")->holds);
  const std::uint64_t idle = 1'000'000'000ull / 8 / 4;  // median exactly 1 Gb/s: idle, judged clean
  EXPECT_FALSE(find_signal(rails({idle, idle, idle, 0}), "rail_rate_outlier", "mlx5_3/1")->holds);
  EXPECT_TRUE(rails({w}).empty());  // one port has no peers: not judged
}

TEST(Signals, NoneNeedingRatesBeforeTheSecondSample) {
  const NodeSample s = at(0, {rdma("mlx5_0", "np_cnp_sent", 1), pause_us("e0", 1)});
  EXPECT_TRUE(derive_signals(s, nullptr, {}).empty());
}

TEST(Exposition, ContractNamesAndValues) {
  const NodeSample p = at(0, {rdma("mlx5_0", "port_xmit_data", 0), pause_us("ens1np0", 0)});
  NodeSample c = at(0.5, {rdma("mlx5_0", "port_xmit_data", 1000), pause_us("ens1np0", 150000)});
  c.links.push_back({"0000:00:0a.0", "nic", "16.0 GT/s", "32.0 GT/s", 16.0, 32.0, 16, 16});
  const IntervalRates r = compute_rates(p, c);
  const auto sig = derive_signals(c, &r, {});
  const std::string text = render_exposition(c, &r, sig);
  for (const char* want :
       {"# TYPE railkit_node_rdma_counter_total counter\n",
        "railkit_node_rdma_counter_total{device=\"mlx5_0\",port=\"1\",counter=\"port_xmit_data\"} 1000\n",
        "railkit_node_rdma_rate_per_second{device=\"mlx5_0\",port=\"1\",counter=\"port_xmit_data\"} 2000\n",
        "railkit_node_port_bytes_per_second{device=\"mlx5_0\",port=\"1\",direction=\"tx\"} 8000\n",
        "railkit_node_pause_duration_seconds_total{netdev=\"ens1np0\",priority=\"3\",direction=\"rx\"} 0.15\n",
        "railkit_node_pause_duration_ratio{netdev=\"ens1np0\",priority=\"3\",direction=\"rx\"} 0.3\n",
        "railkit_node_pcie_link_downtrained{device=\"0000:00:0a.0\",speed=\"16.0GT/s\",max_speed=\"32.0GT/s\","
        "width=\"16\",max_width=\"16\"} 1\n",
        "railkit_node_signal{signal=\"pause_storm\",subject=\"ens1np0\"} 1\n",
        "railkit_node_signal{signal=\"pcie_downtrained\",subject=\"0000:00:0a.0\"} 1\n",
        "# TYPE railkit_node_sample_timestamp_seconds gauge\n"})
    EXPECT_NE(text.find(want), std::string::npos) << want << "\n---\n" << text;
  EXPECT_EQ(text.find("rail_rate_outlier"), std::string::npos);  // one port: not judged, absent
  const std::string table = render_node_table(2, c, &r, sig);
  EXPECT_NE(table.find("RAISED pause_storm"), std::string::npos) << table;
}

}  // namespace
}  // namespace railkit::monitor
