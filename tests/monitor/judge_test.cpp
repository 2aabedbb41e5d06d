// The judge on generated windows (judge_gen.hpp): the late rank, the lagging NIC and the hung
// communicator named; noise, clock offsets and thin evidence not named; inputs it cannot read reported.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <regex>

#include "core/error.hpp"
#include "judge_gen.hpp"
#include "monitor/judge/judge.hpp"

namespace railkit::monitor {
namespace {

using test::GenJob;
using test::TempDir;

MonitorVerdict judge_gen(const GenJob& g, JudgeOptions o = {}) {
  TempDir dir("railkit-judge");
  test::gen_write(g, dir);
  if (!o.now_unix_s) o.now_unix_s = g.end_unix_s();
  return judge(read_windows({dir.path}), o);
}

/// Copies of the findings of `check` with `verdict`, in order.
std::vector<Finding> with(const MonitorVerdict& v, const std::string& check, Verdict verdict) {
  std::vector<Finding> out;
  for (const Finding& f : v.findings)
    if (f.check == check && f.verdict == verdict) out.push_back(f);
  return out;
}

int series(const MonitorVerdict& v, const std::string& metric, const std::string& key, const std::string& value) {
  int found = -1;
  for (const VerdictSeries& s : v.series)
    if (s.metric == metric)
      for (const auto& [k, val] : s.labels)
        if (k == key && val == value) found = std::max(found, s.value);
  return found;
}

TEST(MonitorJudge, LateRankNamedWithHostAndGpu) {
  GenJob g;
  g.late_us[5] = 3000;
  const MonitorVerdict v = judge_gen(g);
  const auto late = with(v, "late-start", Verdict::Fail);
  ASSERT_EQ(late.size(), 1u) << to_json(v).dump(2);
  EXPECT_EQ(*late[0].rank, 5);
  EXPECT_EQ(late[0].host, "node2");
  EXPECT_EQ(late[0].gpu, "1");
  EXPECT_EQ(late[0].evidence["aligned"], 48);
  ASSERT_EQ(with(v, "waits-least", Verdict::Fail).size(), 1u);
  EXPECT_EQ(*with(v, "waits-least", Verdict::Fail)[0].rank, 5);
  EXPECT_EQ(v.overall(), Verdict::Fail);
  EXPECT_EQ(series(v, "railkit_monitor_straggler", "rank", "5"), 1);
  EXPECT_EQ(series(v, "railkit_monitor_straggler", "rank", "4"), 0);
  EXPECT_NE(v.reason().find("late-start (node2 rank 5)"), std::string::npos) << v.reason();
}

TEST(MonitorJudge, DelayWithinNoiseNotNamed) {
  GenJob g;
  g.late_us[5] = 200;  // below --late-us 500 and 20% of 1 ms
  const MonitorVerdict v = judge_gen(g);
  EXPECT_TRUE(with(v, "late-start", Verdict::Fail).empty());
  EXPECT_TRUE(with(v, "late-start", Verdict::Reported).empty());
  EXPECT_EQ(with(v, "late-start", Verdict::Pass).size(), 1u);
  EXPECT_EQ(series(v, "railkit_monitor_straggler", "rank", "5"), 0);
  EXPECT_EQ(v.overall(), Verdict::Pass);
}

TEST(MonitorJudge, LowerLateUsNamesTheSmallerDelay) {
  GenJob g;
  g.late_us[5] = 400;
  JudgeOptions o;
  o.late_us = 100;
  o.late_time_share = 0.1;
  const auto late = with(judge_gen(g, o), "late-start", Verdict::Fail);
  ASSERT_EQ(late.size(), 1u);
  EXPECT_EQ(*late[0].rank, 5);
}

TEST(MonitorJudge, ClockOffsetAloneIsReportedNotNamed) {
  GenJob g;
  g.ranks_per_host = 2;  // 4 hosts; node3's clock runs 5 ms ahead, no rank is late
  g.clock_offset_us["node3"] = 5000;
  const MonitorVerdict v = judge_gen(g);
  EXPECT_TRUE(with(v, "late-start", Verdict::Fail).empty()) << to_json(v).dump(2);
  const auto rep = with(v, "late-start", Verdict::Reported);
  ASSERT_EQ(rep.size(), 2u);
  EXPECT_EQ(rep[0].host, "node3");
  EXPECT_NE(rep[0].reason.find("clock"), std::string::npos);
  EXPECT_EQ(series(v, "railkit_monitor_straggler", "host", "node3"), 0);
}

TEST(MonitorJudge, OneHostNeedsNoCorroboration) {
  GenJob g;
  g.ranks_per_host = 8;
  g.late_us[2] = 3000;
  const auto late = with(judge_gen(g), "late-start", Verdict::Fail);
  ASSERT_EQ(late.size(), 1u);
  EXPECT_EQ(late[0].evidence["one_clock"], true);
}

TEST(MonitorJudge, LaggingNicNamedWithHostAndNic) {
  GenJob g;  // 2 hosts x 2 NICs
  g.nic_rate_GBps[{1, 1}] = 5;
  const MonitorVerdict v = judge_gen(g);
  const auto lag = with(v, "nic-lag", Verdict::Fail);
  ASSERT_EQ(lag.size(), 1u) << to_json(v).dump(2);
  EXPECT_EQ(lag[0].host, "node2");
  EXPECT_EQ(lag[0].nic, "mlx5_1");
  EXPECT_NEAR(lag[0].evidence["ratio"].get<double>(), 0.25, 0.01);
  EXPECT_EQ(series(v, "railkit_monitor_nic_lag", "nic", "mlx5_1"), 1);
  EXPECT_EQ(series(v, "railkit_monitor_nic_lag", "nic", "mlx5_0"), 0);
}

TEST(MonitorJudge, TooFewNicsSkippedWithReason) {
  GenJob g;
  g.nranks = 4;  // one host, 2 NICs
  const auto sk = with(judge_gen(g), "nic-lag", Verdict::Skipped);
  ASSERT_EQ(sk.size(), 1u);
  EXPECT_NE(sk[0].reason.find("2 NICs with traffic"), std::string::npos) << sk[0].reason;
  g.with_nics = false;
  const auto none = with(judge_gen(g), "nic-lag", Verdict::Skipped);
  ASSERT_EQ(none.size(), 1u);
  EXPECT_NE(none[0].reason.find("no NIC traffic"), std::string::npos);
}

TEST(MonitorJudge, HungCommNamedWithTheRanksThatNeverCompleted) {
  GenJob g;
  g.stuck_ranks = {0, 1, 2, 3, 4, 5, 6};  // rank 7 never entered the collective
  g.stuck_age_s = 60;
  const MonitorVerdict v = judge_gen(g);
  const auto hang = with(v, "hang", Verdict::Fail);
  ASSERT_EQ(hang.size(), 2u) << to_json(v).dump(2);
  EXPECT_TRUE(hang[0].host.empty());
  EXPECT_EQ(hang[0].evidence["ranks_not_completed"], nlohmann::ordered_json({0, 1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(*hang[1].rank, 7);
  EXPECT_EQ(hang[1].host, "node2");
  EXPECT_EQ(series(v, "railkit_monitor_hang", "comm", g.comm), 1);
}

TEST(MonitorJudge, InflightWithinTheUsualTimesIsNoHang) {
  GenJob g;
  g.stuck_ranks = {0, 1, 2, 3, 4, 5, 6, 7};
  g.stuck_age_s = 2;  // under --hang-min-s 5
  const MonitorVerdict v = judge_gen(g);
  EXPECT_EQ(with(v, "hang", Verdict::Pass).size(), 1u);
  EXPECT_EQ(series(v, "railkit_monitor_hang", "comm", g.comm), 0);
  JudgeOptions o;
  o.hang_min_s = 1;
  EXPECT_EQ(with(judge_gen(g, o), "hang", Verdict::Fail).size(), 1u);  // every rank waits: no suspect
}

TEST(MonitorJudge, SilentRankNamed) {
  GenJob g;
  g.windows = 8;
  g.silent_ranks = {3};
  g.silent_windows_missing = 4;
  const auto hang = with(judge_gen(g), "hang", Verdict::Fail);
  ASSERT_EQ(hang.size(), 2u);
  EXPECT_EQ(*hang[1].rank, 3);
  EXPECT_NE(hang[1].measured.find("no window for 40.0 s"), std::string::npos) << hang[1].measured;
}

TEST(MonitorJudge, EndedJobIsSkippedNotHung) {
  GenJob g;
  JudgeOptions o;
  o.now_unix_s = g.end_unix_s() + 600;
  const auto sk = with(judge_gen(g, o), "hang", Verdict::Skipped);
  ASSERT_EQ(sk.size(), 1u);
  EXPECT_NE(sk[0].reason.find("job ended"), std::string::npos);
}

TEST(MonitorJudge, NotEnoughEvidenceIsSkippedWithTheReason) {
  GenJob g;
  g.colls_per_window = 2;  // 6 aligned collectives, 8 needed
  g.late_us[5] = 3000;
  MonitorVerdict v = judge_gen(g);
  auto sk = with(v, "late-start", Verdict::Skipped);
  ASSERT_EQ(sk.size(), 1u);
  EXPECT_NE(sk[0].reason.find("no rank has 8 collectives aligned"), std::string::npos) << sk[0].reason;
  EXPECT_EQ(series(v, "railkit_monitor_straggler", "rank", "5"), -1);  // not judged: no series
  g = GenJob{};
  g.nranks = 2;
  g.late_us[1] = 3000;
  sk = with(judge_gen(g), "late-start", Verdict::Skipped);
  ASSERT_EQ(sk.size(), 1u);
  EXPECT_NE(sk[0].reason.find("2 ranks with samples"), std::string::npos) << sk[0].reason;
}

TEST(MonitorJudge, NothingJudgedIsNeverPass) {
  GenJob g;
  g.nranks = 2;
  g.with_samples = false;
  g.with_nics = false;
  JudgeOptions o;
  o.now_unix_s = g.end_unix_s() + 600;
  EXPECT_EQ(judge_gen(g, o).overall(), Verdict::Skipped);
}

TEST(MonitorJudge, SimulatedSourceCarriedOnEveryOutput) {
  GenJob g;
  g.source = "simulated";
  g.late_us[5] = 3000;
  const MonitorVerdict v = judge_gen(g);
  EXPECT_EQ(v.source, "simulated");
  const auto j = to_json(v);
  EXPECT_EQ(j["simulated"], true);
  EXPECT_EQ(j["groups"][0]["source"], "simulated");
  ASSERT_FALSE(v.notes.empty());
  EXPECT_NE(v.notes[0].find("simulated"), std::string::npos);
  const std::string prom = render_prometheus(v);
  EXPECT_NE(prom.find("railkit_monitor_straggler{job=\"1234\",rank=\"5\",host=\"node2\",simulated=\"true\"} 1"),
            std::string::npos)
      << prom;
  EXPECT_NE(prom.find("railkit_monitor_verdict_timestamp_seconds{simulated=\"true\"}"), std::string::npos);
}

TEST(MonitorJudge, PrometheusTextParses) {
  GenJob g;
  g.late_us[5] = 3000;
  const std::string prom = render_prometheus(judge_gen(g));
  const std::regex sample(R"re(^[a-z_]+(\{([a-z_]+="[^"\\\n]*",?)*\})? -?[0-9.]+$)re");
  int samples = 0;
  std::istringstream in(prom);
  for (std::string line; std::getline(in, line);) {
    if (line.starts_with("# HELP ") || line.starts_with("# TYPE ")) continue;
    EXPECT_TRUE(std::regex_match(line, sample)) << line;
    ++samples;
  }
  EXPECT_EQ(samples, 8 + 4 + 1 + 1);  // 8 ranks, 4 NICs, 1 comm, the timestamp
}

}  // namespace
}  // namespace railkit::monitor
