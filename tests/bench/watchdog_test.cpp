#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "bench/lone_bootstrap.hpp"
#include "bench/watchdog.hpp"

using namespace railkit::bench;

namespace {

RankState state(int rank, std::int64_t seq, const std::string& st) {
  RankState s;
  s.rank = rank;
  s.host = "h" + std::to_string(rank);
  s.seq = seq;
  s.state = st;
  s.at = OpPoint{"all_reduce", 1024, 3, false};
  return s;
}

}  // namespace

TEST(Watchdog, StatusEncodingRoundTrips) {
  RankState s = state(3, 42, "stalled");
  s.waited_s = 1.5;
  const RankState back = Watchdog::decode(Watchdog::encode(s));
  EXPECT_EQ(back.rank, 3);
  EXPECT_EQ(back.seq, 42);
  EXPECT_EQ(back.state, "stalled");
  EXPECT_EQ(back.at.phase, "all_reduce");
  EXPECT_EQ(back.at.bytes, 1024u);
  EXPECT_EQ(back.at.iteration, 3);
  EXPECT_DOUBLE_EQ(back.waited_s, 1.5);
}

TEST(Watchdog, ReportNamesStalledBehindAndSilentRanks) {
  const std::vector<std::string> hosts{"h0", "h1", "h2", "h3", "h4"};
  const TimeoutReport r = Watchdog::make_report(
      5, state(0, 10, "waiting"), {state(1, 10, "waiting"), state(2, 9, "stalled"), state(3, 8, "waiting")}, 5, hosts,
      true);
  EXPECT_EQ(r.not_arrived, (std::vector<int>{2, 3, 4}));
  ASSERT_EQ(r.ranks.size(), 5u);
  EXPECT_EQ(r.ranks[4].state, "no answer");
  EXPECT_NE(r.message.find("all_reduce 1024 B iteration 3 did not complete within 5 s"), std::string::npos) << r.message;
  EXPECT_NE(r.message.find("2 (h2), 3 (h3), 4 (h4)"), std::string::npos) << r.message;
}

TEST(Watchdog, ReportWithoutSideChannelSaysPositionsUnknown) {
  const TimeoutReport r = Watchdog::make_report(2, state(0, 4, "waiting"), {}, 4, {"a", "b", "c", "d"}, false);
  EXPECT_TRUE(r.not_arrived.empty());
  EXPECT_NE(r.message.find("positions unknown"), std::string::npos);
}

TEST(WatchdogDeathTest, FiresWithTimeoutCodeAndReports) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        const auto boot = make_lone_bootstrap("node-a");
        Watchdog wd(*boot, 1, [](const TimeoutReport& r) { std::fprintf(stderr, "REPORT %s\n", r.message.c_str()); });
        wd.enter(OpPoint{"broadcast", 64, 0, true});
        std::this_thread::sleep_for(std::chrono::seconds(30));
      },
      ::testing::ExitedWithCode(4), "REPORT timeout: broadcast 64 B in-place iteration 0 did not complete within 1 s");
}

TEST(Watchdog, QuietWhenOperationsComplete) {
  const auto boot = make_lone_bootstrap("node-a");
  bool fired = false;
  {
    Watchdog wd(*boot, 1, [&](const TimeoutReport&) { fired = true; });
    for (int i = 0; i < 20; ++i) {
      wd.enter(OpPoint{"all_reduce", 8, i, false});
      std::this_thread::sleep_for(std::chrono::milliseconds(60));
      wd.leave();
    }
  }
  EXPECT_FALSE(fired);
}
