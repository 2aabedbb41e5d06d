#include "core/stats.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <stdexcept>

namespace railkit {

double percentile_sorted(std::span<const double> sorted, double q) {
  if (sorted.empty()) return 0.0;
  q = std::clamp(q, 0.0, 100.0);
  const double pos = q / 100.0 * static_cast<double>(sorted.size() - 1);
  const auto lo = static_cast<size_t>(std::floor(pos));
  const auto hi = std::min(lo + 1, sorted.size() - 1);
  const double frac = pos - static_cast<double>(lo);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * frac;
}

Summary summarize(std::span<const double> samples) {
  Summary s;
  if (samples.empty()) return s;
  std::vector<double> v(samples.begin(), samples.end());
  std::sort(v.begin(), v.end());
  const double n = static_cast<double>(v.size());
  s.avg = std::accumulate(v.begin(), v.end(), 0.0) / n;
  s.min = v.front();
  s.max = v.back();
  s.p50 = percentile_sorted(v, 50);
  s.p99 = percentile_sorted(v, 99);
  double var = 0;
  for (double x : v) var += (x - s.avg) * (x - s.avg);
  var /= n;
  s.cv = s.avg > 0 ? std::sqrt(var) / s.avg : 0.0;
  return s;
}

double median(std::span<const double> samples) {
  if (samples.empty()) return 0.0;
  std::vector<double> v(samples.begin(), samples.end());
  std::sort(v.begin(), v.end());
  return percentile_sorted(v, 50);
}

double t95(int df) noexcept {
  static constexpr double kT[] = {12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
                                  2.201,  2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
                                  2.080,  2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042};
  if (df < 1) return INFINITY;
  if (df <= 30) return kT[df - 1];
  if (df <= 60) return 2.042 - (2.042 - 2.000) * (df - 30) / 30.0;
  if (df <= 120) return 2.000 - (2.000 - 1.980) * (df - 60) / 60.0;
  return 1.960;
}

namespace {

/// Continued fraction of the incomplete beta function (modified Lentz).
double beta_cf(double a, double b, double x) {
  constexpr double kTiny = 1e-300;
  const double qab = a + b, qap = a + 1, qam = a - 1;
  double c = 1, d = 1 - qab * x / qap;
  if (std::fabs(d) < kTiny) d = kTiny;
  d = 1 / d;
  double h = d;
  for (int m = 1; m <= 500; ++m) {
    const int m2 = 2 * m;
    double aa = m * (b - m) * x / ((qam + m2) * (a + m2));
    d = 1 + aa * d;
    if (std::fabs(d) < kTiny) d = kTiny;
    c = 1 + aa / c;
    if (std::fabs(c) < kTiny) c = kTiny;
    d = 1 / d;
    h *= d * c;
    aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2));
    d = 1 + aa * d;
    if (std::fabs(d) < kTiny) d = kTiny;
    c = 1 + aa / c;
    if (std::fabs(c) < kTiny) c = kTiny;
    d = 1 / d;
    const double del = d * c;
    h *= del;
    if (std::fabs(del - 1) < 1e-15) break;
  }
  return h;
}

/// The regularized incomplete beta function I_x(a, b).
double incomplete_beta(double a, double b, double x) {
  if (x <= 0) return 0;
  if (x >= 1) return 1;
  const double front = std::exp(std::lgamma(a + b) - std::lgamma(a) - std::lgamma(b) + a * std::log(x) + b * std::log1p(-x));
  if (x < (a + 1) / (a + b + 2)) return front * beta_cf(a, b, x) / a;
  return 1 - front * beta_cf(b, a, 1 - x) / b;
}

/// P(|T| > t) for Student's t with df degrees of freedom.
double t_two_sided_tail(double t, int df) {
  const double v = static_cast<double>(df);
  return incomplete_beta(v / 2, 0.5, v / (v + t * t));
}

}  // namespace

double t_quantile(int df, double confidence) noexcept {
  if (df < 1 || !(confidence > 0) || !(confidence < 1)) return INFINITY;
  if (confidence == 0.95) return t95(df);
  const double tail = 1 - confidence;
  double lo = 0, hi = 1;
  while (t_two_sided_tail(hi, df) > tail && hi < 1e12) hi *= 2;
  for (int i = 0; i < 200 && hi - lo > 1e-9 * std::max(1.0, hi); ++i) {
    const double mid = (lo + hi) / 2;
    if (t_two_sided_tail(mid, df) > tail) lo = mid;
    else hi = mid;
  }
  return (lo + hi) / 2;
}

double bonferroni_confidence(double family_confidence, int m) noexcept {
  if (m <= 1) return family_confidence;
  return 1 - (1 - family_confidence) / static_cast<double>(m);
}

PairedRatio paired_ratio(const std::vector<double>& baseline, const std::vector<double>& tuned, double confidence) {
  if (baseline.size() != tuned.size() || baseline.empty()) throw std::invalid_argument("paired_ratio: need equal, non-empty series");
  if (!(confidence > 0) || !(confidence < 1)) throw std::invalid_argument("paired_ratio: confidence must be in (0, 1)");
  const size_t n = baseline.size();
  std::vector<double> l(n);
  double mean = 0;
  for (size_t i = 0; i < n; ++i) {
    if (!(baseline[i] > 0) || !(tuned[i] > 0)) throw std::invalid_argument("paired_ratio: values must be > 0");
    l[i] = std::log(tuned[i] / baseline[i]);
    mean += l[i];
  }
  mean /= static_cast<double>(n);
  PairedRatio r;
  r.n = static_cast<int>(n);
  r.confidence = confidence;
  r.ratio = std::exp(mean);
  if (n < 2) {
    r.lo = r.hi = r.ratio;
    return r;
  }
  double ss = 0;
  for (double x : l) ss += (x - mean) * (x - mean);
  const double se = std::sqrt(ss / static_cast<double>(n - 1) / static_cast<double>(n));
  const double h = t_quantile(static_cast<int>(n) - 1, confidence) * se;
  r.lo = std::exp(mean - h);
  r.hi = std::exp(mean + h);
  return r;
}

}  // namespace railkit
