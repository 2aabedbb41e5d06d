#pragma once
// Summary statistics over samples (per-iteration times in microseconds).
#include <span>
#include <vector>

namespace railkit {

/// avg/min/max/p50/p99 in the samples' unit; cv = stddev/mean (a ratio, not percent).
struct Summary {
  double avg = 0, min = 0, max = 0, p50 = 0, p99 = 0, cv = 0;
};

/// Percentile q in [0,100] with linear interpolation between closest ranks (numpy's default).
/// Requires a non-empty sorted input.
double percentile_sorted(std::span<const double> sorted, double q);

/// Summarizes samples; an empty span gives all zeros. cv uses the population standard deviation.
Summary summarize(std::span<const double> samples);

/// Median of samples (copying); empty gives 0.
double median(std::span<const double> samples);

}  // namespace railkit
