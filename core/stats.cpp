#include "core/stats.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

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

}  // namespace railkit
