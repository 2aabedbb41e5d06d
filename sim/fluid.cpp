#include "sim/fluid.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>

#include "core/error.hpp"

namespace railkit::sim {
namespace {

/// p / ((1-p)^(-n) - 1), with its limit 1/n at p = 0 and 0 at p = 1.
double expiry_rate(double p, double n) noexcept {
  if (n <= 0) return 0.0;
  if (p <= 0) return 1.0 / n;
  if (p >= 1) return 0.0;
  const double denom = std::expm1(-n * std::log1p(-p));
  return denom > 0 ? p / denom : 1.0 / n;
}

/// (1-p)^n.
double survive(double p, double n) noexcept {
  if (p <= 0) return 1.0;
  if (p >= 1) return 0.0;
  return std::exp(n * std::log1p(-p));
}

struct State {
  double rc, rt, alpha, q;
};

void check(const FluidParams& p) {
  if (p.flows < 1) throw UsageError("fluid model: flows must be at least 1");
  if (!(p.dt_s > 0) || !(p.duration_s > p.dt_s)) throw UsageError("fluid model: need 0 < dt < duration");
  if (p.tau_star_s < p.dt_s) throw UsageError("fluid model: the step must not exceed the feedback delay");
  if (!(p.tau_s > 0) || !(p.tau_prime_s > 0) || !(p.timer_s > 0)) throw UsageError("fluid model: timers must be positive");
  if (!(p.capacity_pps > 0) || !(p.line_rate_pps > 0)) throw UsageError("fluid model: rates must be positive");
  if (p.kmax_pkts < p.kmin_pkts) throw UsageError("fluid model: Kmax below Kmin");
}

/// The probability of a CNP in a window tau, given the delayed rate `rd` and mark probability `pd`.
double cnp_probability(double rd, double pd, const FluidParams& p) noexcept { return 1.0 - survive(pd, p.tau_s * rd); }

/// Derivatives of one flow's state, given the delayed rate `rd`, delayed mark probability `pd` and
/// `a` = cnp_probability(rd, pd).
State derivative(const State& s, double rd, double pd, double a, const FluidParams& p) noexcept {
  const double b = expiry_rate(pd, p.byte_counter_pkts);
  const double c = b * survive(pd, p.f * p.byte_counter_pkts);
  const double d = expiry_rate(pd, p.timer_s * rd);
  const double e = d * survive(pd, p.f * p.timer_s * rd);
  State ds{};
  ds.rc = -s.rc * s.alpha * a / (2 * p.tau_s) + (s.rt - s.rc) * rd * b / 2 + (s.rt - s.rc) * rd * d / 2;
  ds.rt = -(s.rt - s.rc) * a / p.tau_s + p.ai_pps * rd * c + p.ai_pps * rd * e;
  ds.alpha = (p.g / p.tau_prime_s) * ((1.0 - survive(pd, p.tau_prime_s * rd)) - s.alpha);
  ds.q = p.flows * s.rc - p.capacity_pps;
  return ds;
}

}  // namespace

double fluid_mark_probability(double q_pkts, const FluidParams& p) noexcept {
  if (q_pkts <= p.kmin_pkts) return 0.0;
  if (q_pkts > p.kmax_pkts || p.kmax_pkts == p.kmin_pkts) return 1.0;
  return p.pmax * (q_pkts - p.kmin_pkts) / (p.kmax_pkts - p.kmin_pkts);
}

FluidResult integrate_dcqcn_fluid(const FluidParams& p) {
  check(p);
  const auto steps = static_cast<std::size_t>(std::llround(p.duration_s / p.dt_s));
  const auto delay = static_cast<std::size_t>(std::max<long long>(1, std::llround(p.tau_star_s / p.dt_s)));
  const auto sample_every = static_cast<std::size_t>(std::max<long long>(1, std::llround(p.sample_interval_s / p.dt_s)));
  // History of RC and p, one slot per step, read `delay` steps back.
  std::vector<double> rc_hist(delay + 1, p.line_rate_pps);
  std::vector<double> p_hist(delay + 1, 0.0);
  State s{p.line_rate_pps, p.line_rate_pps, 1.0, 0.0};
  FluidResult r;
  double q_sum = 0;
  double rc_sum = 0;
  double cnp_sum = 0;
  double window = 0;
  r.min_queue_pkts = INFINITY;
  r.max_queue_pkts = 0;
  for (std::size_t i = 0; i <= steps; ++i) {
    const double t = static_cast<double>(i) * p.dt_s;
    const std::size_t slot = i % (delay + 1);
    rc_hist[slot] = s.rc;
    p_hist[slot] = fluid_mark_probability(s.q, p);
    const std::size_t old = (i + 1) % (delay + 1);  // the slot written `delay` steps ago
    const double rd = i >= delay ? rc_hist[old] : p.line_rate_pps;
    const double pd = i >= delay ? p_hist[old] : 0.0;
    if (i % sample_every == 0) {
      r.t_s.push_back(t);
      r.queue_pkts.push_back(s.q);
      r.rate_pps.push_back(s.rc);
      r.target_pps.push_back(s.rt);
      r.alpha.push_back(s.alpha);
    }
    const double a = cnp_probability(rd, pd, p);
    cnp_sum += a / p.tau_s;  // CNPs per second
    if (t >= p.average_from_s) {
      q_sum += s.q;
      rc_sum += s.rc;
      window += 1;
      r.min_queue_pkts = std::min(r.min_queue_pkts, s.q);
      r.max_queue_pkts = std::max(r.max_queue_pkts, s.q);
    }
    const State ds = derivative(s, rd, pd, a, p);
    s.rc = std::clamp(s.rc + ds.rc * p.dt_s, p.min_rate_pps, p.line_rate_pps);
    s.rt = std::clamp(s.rt + ds.rt * p.dt_s, p.min_rate_pps, p.line_rate_pps);
    s.alpha = std::clamp(s.alpha + ds.alpha * p.dt_s, 0.0, 1.0);
    s.q = std::max(0.0, s.q + ds.q * p.dt_s);
  }
  r.mean_cnp_rate_per_s = cnp_sum / static_cast<double>(steps + 1);
  if (window > 0) {
    r.mean_queue_pkts = q_sum / window;
    r.mean_rate_pps = rc_sum / window;
  } else {
    r.min_queue_pkts = 0;
  }
  return r;
}

}  // namespace railkit::sim
