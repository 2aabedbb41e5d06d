#pragma once
// DCQCN: the reaction point (sender rate control) in two variants and the parameters that drive
// it. The NVIDIA firmware variant takes the mlx5 attributes under the names and units of core's
// tunables table (roce_rp.rpg_time_reset in us, roce_rp.rpg_ai_rate in Mb/s, ...); the paper
// variant (Zhu et al., SIGCOMM'15) takes the paper's N, K, T, B, F, R_AI, R_HAI and g. No ns-3
// here: the state machine is driven by times in picoseconds, so it is tested on its own.
#include <cstdint>
#include <span>
#include <string_view>

namespace railkit::sim {

/// The mlx5 DCQCN attributes (core/tunables.hpp names without the roce_rp./roce_np. prefix),
/// each in the table's unit. Defaults: the table's defaults (nvidia_defaults()).
struct NvidiaDcqcn {
  std::int64_t rpg_time_reset = 300;           ///< us
  std::int64_t rpg_byte_reset = 32767;         ///< bytes x byte_reset_unit_bytes, 0 = off
  std::int64_t rpg_threshold = 1;              ///< increase events per stage (F)
  std::int64_t rpg_max_rate = 0;               ///< Mb/s, 0 = line rate
  std::int64_t rpg_ai_rate = 5;                ///< Mb/s
  std::int64_t rpg_hai_rate = 50;              ///< Mb/s
  std::int64_t rpg_gd = 11;                    ///< cut = rate * alpha / 2^rpg_gd (alpha in 1/1024)
  std::int64_t rpg_min_dec_fac = 50;           ///< %: new rate >= this share of the old one
  std::int64_t rpg_min_rate = 1;               ///< Mb/s
  std::int64_t rate_to_set_on_first_cnp = 0;   ///< Mb/s, 0 = off
  std::int64_t dce_tcp_g = 1019;               ///< 1/1024: weight alpha keeps each period
  std::int64_t dce_tcp_rtt = 1;                ///< us: alpha update period
  std::int64_t rate_reduce_monitor_period = 4; ///< us: minimum time between cuts
  std::int64_t initial_alpha_value = 1023;     ///< 1/1024: alpha after the first CNP
  std::int64_t clamp_tgt_rate = 0;             ///< 0/1
  std::int64_t clamp_tgt_rate_after_time_inc = 1;  ///< 0/1
  std::int64_t min_time_between_cnps = 4;      ///< us (notification point)
  std::int64_t cnp_dscp = 48;                  ///< no effect at layer 2; accepted and echoed
  std::int64_t cnp_802p_prio = 6;              ///< priority of CNPs
};

/// One attribute: its full tunable name (roce_rp.rpg_time_reset) and where it lives.
struct NvidiaField {
  std::string_view name;
  std::int64_t NvidiaDcqcn::*member;
};

/// Every attribute the simulator reads, in core's table order.
std::span<const NvidiaField> nvidia_fields() noexcept;

/// The attributes at core's table defaults.
NvidiaDcqcn nvidia_defaults();

/// Sets attribute `name` (a full tunable name) from `value` (text or integer as written),
/// validated by core's table. Throws UsageError "<where>: ..." for an unknown name or a bad value.
void set_nvidia_attribute(NvidiaDcqcn& d, std::string_view name, std::string_view value, std::string_view where);

/// The paper's parameters (SIGCOMM'15; defaults are the paper's 40G settings).
struct PaperDcqcn {
  std::int64_t cnp_interval_ps = 50'000'000;   ///< N: at most one CNP per flow per N
  std::int64_t alpha_timer_ps = 55'000'000;    ///< K: alpha decays every K without a CNP
  std::int64_t rate_timer_ps = 55'000'000;     ///< T: rate-increase timer
  std::uint64_t byte_counter_bytes = 10 * 1024 * 1024;  ///< B: rate-increase byte counter
  int f = 5;                                   ///< F: fast-recovery stages
  double ai_rate_bps = 40e6;                   ///< R_AI
  double hai_rate_bps = 200e6;                 ///< R_HAI
  double g = 1.0 / 256;                        ///< alpha gain
  double min_rate_bps = 1e6;                   ///< rate floor
  int cnp_priority = 6;                        ///< priority of CNPs
};

/// Everything the reaction point needs, in internal units, built from either variant.
struct RpConfig {
  bool nvidia = true;               ///< alpha, cut and hyper-increase rules of the NVIDIA variant, else the paper's
  double max_rate_bps = 0;          ///< line rate or rpg_max_rate
  double min_rate_bps = 0;
  double ai_bps = 0;
  double hai_bps = 0;
  std::int64_t rate_timer_ps = 0;   ///< increase timer period
  std::uint64_t byte_counter_bytes = 0;  ///< increase byte counter, 0 = off
  int f = 1;                        ///< stages of fast recovery
  double cut_alpha_scale = 0.5;     ///< new = rate * (1 - alpha * scale); NVIDIA: 1024 / 2^rpg_gd
  double min_dec_factor = 0;        ///< floor of new/old on a cut
  std::int64_t min_cut_interval_ps = 0;  ///< NVIDIA: rate_reduce_monitor_period, the grid of rate checks (0: cut on every CNP); paper: 0
  double g = 0;                     ///< NVIDIA: weight alpha keeps per period; paper: gain per CNP
  std::int64_t alpha_period_ps = 0; ///< NVIDIA: dce_tcp_rtt; paper: K
  double initial_alpha = 1.0;
  double first_cnp_rate_bps = 0;    ///< 0 = cut as usual on the first CNP
  bool clamp_always = true;         ///< target = current rate on every cut
  bool clamp_after_time_inc = true; ///< ... or when a timer increase happened since the last cut
};

/// The NVIDIA variant at `line_rate_bps`; rpg_byte_reset counts units of `byte_reset_unit_bytes`.
RpConfig rp_config(const NvidiaDcqcn& d, double line_rate_bps, std::uint64_t byte_reset_unit_bytes);

/// The paper's variant at `line_rate_bps`.
RpConfig rp_config(const PaperDcqcn& p, double line_rate_bps);

/// The DCQCN reaction point of one queue pair. Starts idle at the maximum rate; the first CNP
/// activates it; it goes idle again once the rate is back at the maximum. The caller (the NIC)
/// calls on_timer() at timer_deadline_ps() and on_pending_cut() at pending_cut_ps().
class ReactionPoint {
 public:
  explicit ReactionPoint(const RpConfig* config);

  double rate_bps() const noexcept { return rc_; }
  double target_bps() const noexcept { return rt_; }
  bool active() const noexcept { return active_; }
  /// alpha as of the last update (0..1).
  double alpha() const noexcept { return alpha_; }

  /// A CNP arrived at `now_ps`. Returns true when the rate was cut now; otherwise a cut may be
  /// pending until pending_cut_ps().
  bool on_cnp(std::int64_t now_ps);
  /// Time of a deferred cut (NVIDIA: rate_reduce_monitor_period), or -1.
  std::int64_t pending_cut_ps() const noexcept { return pending_cut_ps_; }
  /// Applies the deferred cut when `now_ps` is its time.
  void on_pending_cut(std::int64_t now_ps);
  /// Expiry of the rate-increase timer, or -1 when idle.
  std::int64_t timer_deadline_ps() const noexcept { return timer_deadline_ps_; }
  /// The increase timer expired (ignored unless now_ps is timer_deadline_ps()).
  void on_timer(std::int64_t now_ps);
  /// `bytes` were sent: feeds the byte counter.
  void on_sent(std::uint64_t bytes);

  std::uint64_t cuts() const noexcept { return cuts_; }
  std::uint64_t increases() const noexcept { return increases_; }

 private:
  void cut(std::int64_t now_ps);
  /// Restarts the increase timer, byte counter and stages (after a cut or a rate set).
  void restart_increase(std::int64_t now_ps);
  void increase();
  double alpha_now(std::int64_t now_ps);

  const RpConfig* c_;
  double rc_;
  double rt_;
  double alpha_ = 1.0;
  bool active_ = false;
  int t_stage_ = 0;
  int bc_stage_ = 0;
  std::uint64_t bytes_acc_ = 0;
  bool timer_inc_since_cut_ = false;
  std::int64_t timer_deadline_ps_ = -1;
  std::int64_t pending_cut_ps_ = -1;
  std::int64_t cut_grid_origin_ps_ = 0;  ///< NVIDIA: the first CNP, origin of the grid of rate checks
  std::int64_t alpha_origin_ps_ = 0;   ///< NVIDIA: start of the alpha period grid; paper: last CNP
  std::int64_t alpha_epoch_ = 0;       ///< NVIDIA: index of the open alpha period
  bool cnp_in_epoch_ = false;          ///< NVIDIA: a CNP arrived in the open period
  std::uint64_t cuts_ = 0;
  std::uint64_t increases_ = 0;
};

}  // namespace railkit::sim
