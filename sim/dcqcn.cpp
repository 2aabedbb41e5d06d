#include "sim/dcqcn.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <string>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/tunables.hpp"

namespace railkit::sim {
namespace {

constexpr std::array kFields = {
    NvidiaField{"roce_rp.rpg_time_reset", &NvidiaDcqcn::rpg_time_reset},
    NvidiaField{"roce_rp.rpg_byte_reset", &NvidiaDcqcn::rpg_byte_reset},
    NvidiaField{"roce_rp.rpg_threshold", &NvidiaDcqcn::rpg_threshold},
    NvidiaField{"roce_rp.rpg_max_rate", &NvidiaDcqcn::rpg_max_rate},
    NvidiaField{"roce_rp.rpg_ai_rate", &NvidiaDcqcn::rpg_ai_rate},
    NvidiaField{"roce_rp.rpg_hai_rate", &NvidiaDcqcn::rpg_hai_rate},
    NvidiaField{"roce_rp.rpg_gd", &NvidiaDcqcn::rpg_gd},
    NvidiaField{"roce_rp.rpg_min_dec_fac", &NvidiaDcqcn::rpg_min_dec_fac},
    NvidiaField{"roce_rp.rpg_min_rate", &NvidiaDcqcn::rpg_min_rate},
    NvidiaField{"roce_rp.rate_to_set_on_first_cnp", &NvidiaDcqcn::rate_to_set_on_first_cnp},
    NvidiaField{"roce_rp.dce_tcp_g", &NvidiaDcqcn::dce_tcp_g},
    NvidiaField{"roce_rp.dce_tcp_rtt", &NvidiaDcqcn::dce_tcp_rtt},
    NvidiaField{"roce_rp.rate_reduce_monitor_period", &NvidiaDcqcn::rate_reduce_monitor_period},
    NvidiaField{"roce_rp.initial_alpha_value", &NvidiaDcqcn::initial_alpha_value},
    NvidiaField{"roce_rp.clamp_tgt_rate", &NvidiaDcqcn::clamp_tgt_rate},
    NvidiaField{"roce_rp.clamp_tgt_rate_after_time_inc", &NvidiaDcqcn::clamp_tgt_rate_after_time_inc},
    NvidiaField{"roce_np.min_time_between_cnps", &NvidiaDcqcn::min_time_between_cnps},
    NvidiaField{"roce_np.cnp_dscp", &NvidiaDcqcn::cnp_dscp},
    NvidiaField{"roce_np.cnp_802p_prio", &NvidiaDcqcn::cnp_802p_prio},
};

const NvidiaField* find_field(std::string_view name) noexcept {
  for (const auto& f : kFields)
    if (f.name == name) return &f;
  return nullptr;
}

}  // namespace

std::span<const NvidiaField> nvidia_fields() noexcept { return kFields; }

NvidiaDcqcn nvidia_defaults() {
  NvidiaDcqcn d;
  for (const auto& f : kFields) {
    const Tunable* t = find_tunable(f.name);
    if (t == nullptr) continue;  // an attribute core's table does not have: keep the built-in default
    if (auto v = tunable_int(*t, t->default_value)) d.*f.member = *v;
  }
  return d;
}

void set_nvidia_attribute(NvidiaDcqcn& d, std::string_view name, std::string_view value, std::string_view where) {
  const NvidiaField* f = find_field(name);
  const Tunable* t = find_tunable(name);
  if (f == nullptr || t == nullptr || t->scope != TunableScope::Dcqcn)
    throw UsageError(fmt::format("{}: unknown DCQCN attribute '{}' (names as `railkit dcqcn show`: "
                                 "roce_rp.rpg_time_reset, roce_np.min_time_between_cnps, ...)",
                                 where, name));
  validate_tunable_value(*t, value, where);
  d.*f->member = *tunable_int(*t, value);
}

RpConfig rp_config(const NvidiaDcqcn& d, double line_rate_bps, std::uint64_t byte_reset_unit_bytes) {
  RpConfig c;
  c.nvidia = true;
  c.max_rate_bps = d.rpg_max_rate > 0 ? std::min(line_rate_bps, static_cast<double>(d.rpg_max_rate) * 1e6)
                                      : line_rate_bps;
  c.min_rate_bps = std::min(static_cast<double>(d.rpg_min_rate) * 1e6, c.max_rate_bps);
  c.ai_bps = static_cast<double>(d.rpg_ai_rate) * 1e6;
  c.hai_bps = static_cast<double>(d.rpg_hai_rate) * 1e6;
  c.rate_timer_ps = d.rpg_time_reset * 1'000'000;
  c.byte_counter_bytes = static_cast<std::uint64_t>(d.rpg_byte_reset) * byte_reset_unit_bytes;
  c.f = static_cast<int>(d.rpg_threshold);
  c.cut_alpha_scale = 1024.0 / std::ldexp(1.0, static_cast<int>(d.rpg_gd));
  c.min_dec_factor = static_cast<double>(d.rpg_min_dec_fac) / 100.0;
  c.min_cut_interval_ps = d.rate_reduce_monitor_period * 1'000'000;
  c.g = static_cast<double>(d.dce_tcp_g) / 1024.0;
  c.alpha_period_ps = d.dce_tcp_rtt * 1'000'000;
  c.initial_alpha = static_cast<double>(d.initial_alpha_value) / 1024.0;
  c.first_cnp_rate_bps = std::min(static_cast<double>(d.rate_to_set_on_first_cnp) * 1e6, c.max_rate_bps);
  c.clamp_always = d.clamp_tgt_rate != 0;
  c.clamp_after_time_inc = d.clamp_tgt_rate_after_time_inc != 0;
  return c;
}

RpConfig rp_config(const PaperDcqcn& p, double line_rate_bps) {
  RpConfig c;
  c.nvidia = false;
  c.max_rate_bps = line_rate_bps;
  c.min_rate_bps = std::min(p.min_rate_bps, line_rate_bps);
  c.ai_bps = p.ai_rate_bps;
  c.hai_bps = p.hai_rate_bps;
  c.rate_timer_ps = p.rate_timer_ps;
  c.byte_counter_bytes = p.byte_counter_bytes;
  c.f = p.f;
  c.cut_alpha_scale = 0.5;
  c.min_dec_factor = 0;
  c.min_cut_interval_ps = 0;
  c.g = p.g;
  c.alpha_period_ps = p.alpha_timer_ps;
  c.initial_alpha = 1.0;
  c.first_cnp_rate_bps = 0;
  c.clamp_always = true;
  c.clamp_after_time_inc = true;
  return c;
}

ReactionPoint::ReactionPoint(const RpConfig* config) : c_(config), rc_(config->max_rate_bps), rt_(config->max_rate_bps) {}

double ReactionPoint::alpha_now(std::int64_t now_ps) {
  if (c_->alpha_period_ps <= 0) return alpha_;
  if (c_->nvidia) {
    // Every period: alpha = g * alpha + (1 - g) * [a CNP arrived in the period].
    const std::int64_t epoch = (now_ps - alpha_origin_ps_) / c_->alpha_period_ps;
    if (epoch > alpha_epoch_) {
      alpha_ = c_->g * alpha_ + (1.0 - c_->g) * (cnp_in_epoch_ ? 1.0 : 0.0);
      alpha_ *= std::pow(c_->g, static_cast<double>(epoch - alpha_epoch_ - 1));
      alpha_epoch_ = epoch;
      cnp_in_epoch_ = false;
    }
    return alpha_;
  }
  // Paper: alpha = (1 - g) * alpha every K without a CNP (the timer restarts at each CNP).
  const std::int64_t periods = (now_ps - alpha_origin_ps_) / c_->alpha_period_ps;
  if (periods > 0) {
    alpha_ *= std::pow(1.0 - c_->g, static_cast<double>(periods));
    alpha_origin_ps_ += periods * c_->alpha_period_ps;
  }
  return alpha_;
}

bool ReactionPoint::on_cnp(std::int64_t now_ps) {
  if (!active_) {
    active_ = true;
    alpha_ = c_->initial_alpha;
    alpha_origin_ps_ = now_ps;
    alpha_epoch_ = 0;
    cnp_in_epoch_ = false;
    cut_grid_origin_ps_ = now_ps;
    if (c_->first_cnp_rate_bps > 0) {
      rc_ = std::min(rc_, c_->first_cnp_rate_bps);
      rt_ = rc_;
      ++cuts_;
      restart_increase(now_ps);
      return true;
    }
    if (c_->nvidia && c_->min_cut_interval_ps > 0) {
      // HPCC's mlx model: the first CNP sets alpha; the rate is checked every period from it and
      // cut at a check when a CNP arrived since the previous one.
      pending_cut_ps_ = now_ps + c_->min_cut_interval_ps;
      return false;
    }
    cut(now_ps);
    if (!c_->nvidia) alpha_ = (1.0 - c_->g) * alpha_ + c_->g;
    return true;
  }
  alpha_now(now_ps);
  if (c_->nvidia) {
    cnp_in_epoch_ = true;
    const std::int64_t p = c_->min_cut_interval_ps;
    if (p <= 0) {
      cut(now_ps);
      return true;
    }
    if (pending_cut_ps_ < 0) pending_cut_ps_ = cut_grid_origin_ps_ + ((now_ps - cut_grid_origin_ps_) / p + 1) * p;
    return false;
  }
  cut(now_ps);
  alpha_ = (1.0 - c_->g) * alpha_ + c_->g;
  alpha_origin_ps_ = now_ps;
  return true;
}

void ReactionPoint::on_pending_cut(std::int64_t now_ps) {
  if (pending_cut_ps_ < 0 || now_ps != pending_cut_ps_) return;
  cut(now_ps);
}

void ReactionPoint::restart_increase(std::int64_t now_ps) {
  t_stage_ = bc_stage_ = 0;
  bytes_acc_ = 0;
  timer_inc_since_cut_ = false;
  timer_deadline_ps_ = now_ps + c_->rate_timer_ps;
}

void ReactionPoint::cut(std::int64_t now_ps) {
  const double a = alpha_now(now_ps);
  if (c_->clamp_always || (c_->clamp_after_time_inc && timer_inc_since_cut_)) rt_ = rc_;
  const double factor = std::max(1.0 - a * c_->cut_alpha_scale, c_->min_dec_factor);
  rc_ = std::max(c_->min_rate_bps, rc_ * factor);
  restart_increase(now_ps);
  pending_cut_ps_ = -1;
  ++cuts_;
}

void ReactionPoint::on_timer(std::int64_t now_ps) {
  if (!active_ || now_ps != timer_deadline_ps_) return;
  ++t_stage_;
  timer_inc_since_cut_ = true;
  timer_deadline_ps_ = now_ps + c_->rate_timer_ps;
  increase();
}

void ReactionPoint::on_sent(std::uint64_t bytes) {
  if (!active_ || c_->byte_counter_bytes == 0) return;
  bytes_acc_ += bytes;
  while (active_ && bytes_acc_ >= c_->byte_counter_bytes) {
    bytes_acc_ -= c_->byte_counter_bytes;
    ++bc_stage_;
    increase();
  }
}

void ReactionPoint::increase() {
  // t_stage_ and bc_stage_ count this event too. A stage of F events of fast recovery, then the
  // state machine advances (NVIDIA: rpg_threshold is "the number of times rpByteStage or
  // rpTimeStage can count before the RP rate control state machine advances states"; HPCC's
  // rdma-hw.cc tests the stage before counting the event: F steps). With the byte counter off the
  // timer alone decides (HPCC: one additive step at stage F, hyper after it); with both counters,
  // additive once either passed F and hyper once both did (paper).
  const bool bytes_on = c_->byte_counter_bytes > 0;
  const int hi = bytes_on ? std::max(t_stage_, bc_stage_) : t_stage_;
  const int lo = bytes_on ? std::min(t_stage_, bc_stage_) : t_stage_ - 1;
  if (hi > c_->f) {
    if (lo > c_->f)
      rt_ += c_->nvidia ? c_->hai_bps : c_->hai_bps * (lo - c_->f);  // NVIDIA: R_HAI; paper: i x R_HAI
    else
      rt_ += c_->ai_bps;
  }
  rt_ = std::min(rt_, c_->max_rate_bps);
  rc_ = (rt_ + rc_) / 2;
  ++increases_;
  if (rt_ >= c_->max_rate_bps && c_->max_rate_bps - rc_ <= 1e-3 * c_->max_rate_bps) {
    rc_ = rt_ = c_->max_rate_bps;  // recovered: idle until the next CNP
    active_ = false;
    timer_deadline_ps_ = -1;
    pending_cut_ps_ = -1;
  }
}

}  // namespace railkit::sim
