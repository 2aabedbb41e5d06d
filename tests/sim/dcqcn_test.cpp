#include <gtest/gtest.h>

#include <cmath>

#include "core/error.hpp"
#include "core/tunables.hpp"
#include "sim/dcqcn.hpp"

namespace rs = railkit::sim;

namespace {
constexpr std::int64_t kUs = 1'000'000;  // picoseconds
constexpr double kLine = 100e9;

rs::RpConfig nvidia(const rs::NvidiaDcqcn& d = rs::nvidia_defaults()) { return rs::rp_config(d, kLine, 1); }

/// A CNP at `t_ps` and the cut it leads to (NVIDIA: at the next check of the rate, on the
/// rate_reduce_monitor_period grid that starts at the first CNP). Returns the time of the cut.
std::int64_t cnp_and_cut(rs::ReactionPoint& rp, std::int64_t t_ps) {
  if (rp.on_cnp(t_ps)) return t_ps;
  const std::int64_t at = rp.pending_cut_ps();
  rp.on_pending_cut(at);
  return at;
}
}  // namespace

TEST(SimDcqcn, DefaultsComeFromCoresTable) {
  const rs::NvidiaDcqcn d = rs::nvidia_defaults();
  for (const auto& f : rs::nvidia_fields()) {
    const railkit::Tunable* t = railkit::find_tunable(f.name);
    ASSERT_NE(t, nullptr) << f.name << " is not in core's tunables table";
    EXPECT_EQ(d.*f.member, *railkit::tunable_int(*t, t->default_value)) << f.name;
  }
  EXPECT_EQ(d.rpg_time_reset, 300);
  EXPECT_EQ(d.rpg_ai_rate, 5);
}

TEST(SimDcqcn, AttributesAreValidatedByCoresTable) {
  rs::NvidiaDcqcn d = rs::nvidia_defaults();
  rs::set_nvidia_attribute(d, "roce_rp.rpg_ai_rate", "20", "test");
  EXPECT_EQ(d.rpg_ai_rate, 20);
  EXPECT_THROW(rs::set_nvidia_attribute(d, "roce_rp.rpg_gd", "99", "test"), railkit::UsageError);
  EXPECT_THROW(rs::set_nvidia_attribute(d, "rpg_ai_rate", "20", "test"), railkit::UsageError);  // needs the prefix
  EXPECT_THROW(rs::set_nvidia_attribute(d, "NCCL_ALGO", "Ring", "test"), railkit::UsageError);
}

TEST(SimDcqcn, NvidiaFirstCnpHalvesAndKeepsTheTarget) {
  const auto c = nvidia();
  rs::ReactionPoint rp(&c);
  EXPECT_FALSE(rp.active());
  EXPECT_DOUBLE_EQ(rp.rate_bps(), kLine);
  // HPCC's mlx model: the first CNP sets alpha; the rate is checked 4 us later and cut then.
  EXPECT_FALSE(rp.on_cnp(0));
  EXPECT_TRUE(rp.active());
  EXPECT_DOUBLE_EQ(rp.rate_bps(), kLine);
  EXPECT_EQ(rp.pending_cut_ps(), 4 * kUs);
  rp.on_pending_cut(4 * kUs);
  // alpha = 1023/1024 (no alpha update yet: the first period had no CNP after the first),
  // cut = alpha / 2^(11-10)... decayed over the 4 periods without a CNP: (1019/1024)^4.
  const double alpha = 1023.0 / 1024 * std::pow(1019.0 / 1024, 4);
  EXPECT_NEAR(rp.rate_bps(), kLine * (1 - alpha / 2), 1e3);
  EXPECT_DOUBLE_EQ(rp.target_bps(), kLine);  // clamp_tgt_rate = 0, no timer increase yet
  EXPECT_EQ(rp.timer_deadline_ps(), 304 * kUs);
}

TEST(SimDcqcn, NvidiaCutsAtMostOncePerMonitorPeriod) {
  const auto c = nvidia();
  rs::ReactionPoint rp(&c);
  cnp_and_cut(rp, 0);  // cut at 4 us
  const double after_first = rp.rate_bps();
  EXPECT_FALSE(rp.on_cnp(5 * kUs));  // the next check is at 8 us
  EXPECT_FALSE(rp.on_cnp(7 * kUs));  // coalesced into it
  EXPECT_DOUBLE_EQ(rp.rate_bps(), after_first);
  EXPECT_EQ(rp.pending_cut_ps(), 8 * kUs);
  rp.on_pending_cut(8 * kUs);
  EXPECT_LT(rp.rate_bps(), after_first);
  EXPECT_EQ(rp.pending_cut_ps(), -1);
  EXPECT_EQ(rp.cuts(), 2u);
  rp.on_cnp(13 * kUs);  // on the grid of the first CNP, not 4 us after the last cut
  EXPECT_EQ(rp.pending_cut_ps(), 16 * kUs);
}

TEST(SimDcqcn, NvidiaMinDecFacFloorsTheCut) {
  rs::NvidiaDcqcn d = rs::nvidia_defaults();
  d.rpg_gd = 10;  // cut = alpha: almost everything
  const auto c = nvidia(d);
  rs::ReactionPoint rp(&c);
  cnp_and_cut(rp, 0);
  EXPECT_DOUBLE_EQ(rp.rate_bps(), kLine * 0.5);  // rpg_min_dec_fac 50%
}

TEST(SimDcqcn, NvidiaAlphaDecaysEveryPeriodWithoutCnp) {
  const auto c = nvidia();
  rs::ReactionPoint rp(&c);
  cnp_and_cut(rp, 0);
  const double r1 = rp.rate_bps();
  cnp_and_cut(rp, 100 * kUs);  // cut at 104 us: alpha decayed for 100 periods, then the CNP's period
  const double g = 1019.0 / 1024;
  const double alpha = (g * 1023.0 / 1024 * std::pow(g, 100) + (1 - g)) * std::pow(g, 3);
  EXPECT_NEAR(rp.alpha(), alpha, 1e-12);
  EXPECT_NEAR(rp.rate_bps(), r1 * (1 - alpha / 2), 1e3);
}

TEST(SimDcqcn, NvidiaTimerIncreaseThenClampOnTheNextCut) {
  const auto c = nvidia();
  rs::ReactionPoint rp(&c);
  cnp_and_cut(rp, 0);  // cut at 4 us
  const double r1 = rp.rate_bps();
  rp.on_timer(303 * kUs);  // not the deadline: ignored
  EXPECT_DOUBLE_EQ(rp.rate_bps(), r1);
  rp.on_timer(304 * kUs);  // the first of F = 1 fast-recovery steps: halfway to RT (the line rate)
  EXPECT_NEAR(rp.rate_bps(), (kLine + r1) / 2, 1);
  EXPECT_DOUBLE_EQ(rp.target_bps(), kLine);
  EXPECT_EQ(rp.increases(), 1u);
  const double r2 = rp.rate_bps();
  EXPECT_EQ(cnp_and_cut(rp, 305 * kUs), 308 * kUs);  // a timer increase happened since the last cut: target = current rate
  EXPECT_DOUBLE_EQ(rp.target_bps(), r2);
  EXPECT_LT(rp.rate_bps(), r2);
}

TEST(SimDcqcn, NvidiaRecoversToIdle) {
  const auto c = nvidia();
  rs::ReactionPoint rp(&c);
  cnp_and_cut(rp, 0);
  for (int i = 0; i < 40 && rp.active(); ++i) rp.on_timer(rp.timer_deadline_ps());
  EXPECT_FALSE(rp.active());
  EXPECT_DOUBLE_EQ(rp.rate_bps(), kLine);
  EXPECT_EQ(rp.timer_deadline_ps(), -1);
}

TEST(SimDcqcn, NvidiaRateToSetOnFirstCnp) {
  rs::NvidiaDcqcn d = rs::nvidia_defaults();
  d.rate_to_set_on_first_cnp = 10'000;  // Mb/s
  const auto c = nvidia(d);
  rs::ReactionPoint rp(&c);
  rp.on_cnp(0);
  EXPECT_DOUBLE_EQ(rp.rate_bps(), 10e9);
  EXPECT_DOUBLE_EQ(rp.target_bps(), 10e9);
}

TEST(SimDcqcn, NvidiaByteCounterIncreases) {
  rs::NvidiaDcqcn d = rs::nvidia_defaults();
  d.rpg_byte_reset = 1000;
  const auto c = rs::rp_config(d, kLine, 64);  // 64 kB per byte-counter event
  rs::ReactionPoint rp(&c);
  cnp_and_cut(rp, 0);
  const double r1 = rp.rate_bps();
  rp.on_sent(63'999);
  EXPECT_DOUBLE_EQ(rp.rate_bps(), r1);
  rp.on_sent(1);
  EXPECT_GT(rp.rate_bps(), r1);
}

TEST(SimDcqcn, PaperCutsOnEveryCnpAndUpdatesAlpha) {
  const rs::PaperDcqcn p;
  const auto c = rs::rp_config(p, 40e9);
  rs::ReactionPoint rp(&c);
  rp.on_cnp(0);  // alpha 1: halve
  EXPECT_DOUBLE_EQ(rp.rate_bps(), 20e9);
  EXPECT_DOUBLE_EQ(rp.target_bps(), 40e9 / 1.0);  // RT = RC before the cut
  EXPECT_DOUBLE_EQ(rp.alpha(), 1.0);               // (1 - g) x 1 + g
  rp.on_cnp(10 * kUs);                             // no decay within K = 55 us
  EXPECT_DOUBLE_EQ(rp.rate_bps(), 10e9);
  EXPECT_DOUBLE_EQ(rp.target_bps(), 20e9);
  rp.on_cnp(10 * kUs + 110 * kUs);  // two K periods without a CNP: alpha x (1-g)^2 before the cut
  const double a = std::pow(1 - 1.0 / 256, 2);
  EXPECT_NEAR(rp.rate_bps(), 10e9 * (1 - a / 2), 1);
}

TEST(SimDcqcn, PaperFastRecoveryThenAdditive) {
  const rs::PaperDcqcn p;
  const auto c = rs::rp_config(p, 40e9);
  rs::ReactionPoint rp(&c);
  rp.on_cnp(0);
  rp.on_cnp(1);  // RC 10 G, RT 20 G
  for (int i = 1; i <= 5; ++i) {  // F = 5 fast-recovery steps (HPCC's rdma-hw.cc: stage < F before counting)
    rp.on_timer(rp.timer_deadline_ps());
    EXPECT_DOUBLE_EQ(rp.target_bps(), 20e9) << "fast recovery step " << i;
  }
  EXPECT_NEAR(rp.rate_bps(), 20e9 - 10e9 / 32, 1);
  rp.on_timer(rp.timer_deadline_ps());  // the sixth timer event: additive (the byte counter is below F)
  EXPECT_DOUBLE_EQ(rp.target_bps(), 20e9 + 40e6);
  rp.on_sent(6 * p.byte_counter_bytes);  // byte counter passes F: AI for events 1..5, hyper at the sixth
  EXPECT_DOUBLE_EQ(rp.target_bps(), 20e9 + 40e6 + 5 * 40e6 + 200e6);
}

// NVIDIA (HPCC's mlx model): with the byte counter off the timer alone decides: F = rpg_threshold
// fast-recovery steps, one additive step, then hyper steps of a fixed rpg_hai_rate each.
TEST(SimDcqcn, NvidiaTimerStagesFastAdditiveThenFixedHyper) {
  rs::NvidiaDcqcn d = rs::nvidia_defaults();
  d.rpg_byte_reset = 0;
  d.rpg_threshold = 2;
  d.clamp_tgt_rate = 1;
  const auto c = rs::rp_config(d, 100e9, 64);
  rs::ReactionPoint rp(&c);
  cnp_and_cut(rp, 0);
  cnp_and_cut(rp, 5 * kUs);  // second cut (at 8 us): RT = RC before it
  const double rt = rp.target_bps();
  ASSERT_LT(rt, 60e9);
  for (int i = 1; i <= 2; ++i) {
    rp.on_timer(rp.timer_deadline_ps());
    EXPECT_DOUBLE_EQ(rp.target_bps(), rt) << "fast recovery step " << i;
  }
  rp.on_timer(rp.timer_deadline_ps());
  EXPECT_NEAR(rp.target_bps(), rt + 5e6, 1);  // additive: rpg_ai_rate
  rp.on_timer(rp.timer_deadline_ps());
  EXPECT_NEAR(rp.target_bps(), rt + 5e6 + 50e6, 1);  // hyper: rpg_hai_rate
  rp.on_timer(rp.timer_deadline_ps());
  EXPECT_NEAR(rp.target_bps(), rt + 5e6 + 100e6, 1);  // and again the same step, not twice it
}
