#pragma once
// Summary statistics over samples (per-iteration times in microseconds), and the paired
// comparison of two series measured round by round (tune's A/B validation, sweep's rounds).
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

/// The two-sided 95% Student-t quantile for `df` degrees of freedom (df >= 1), from the
/// published table (3 decimals; linear between 30, 60, 120; 1.96 beyond); +inf for df < 1.
double t95(int df) noexcept;

/// The two-sided Student-t quantile: the t with P(|T| <= t) = `confidence` (0 < confidence < 1)
/// for `df` degrees of freedom; t95(df) when confidence is 0.95, else computed from the
/// regularized incomplete beta function (within 1e-6). +inf for df < 1.
double t_quantile(int df, double confidence) noexcept;

/// The confidence of each of `m` intervals so that all hold together with `family_confidence`
/// (Bonferroni): 1 - (1 - family_confidence) / m; family_confidence itself for m <= 1.
double bonferroni_confidence(double family_confidence, int m) noexcept;

/// The paired ratio tuned/baseline over rounds: geometric mean of the per-round ratios and the
/// Student-t interval of the mean log ratio at `confidence` (n >= 2; n = 1 gives [ratio, ratio]).
struct PairedRatio {
  double ratio = 1, lo = 1, hi = 1;
  int n = 0;
  double confidence = 0.95;
};
/// `baseline[i]` and `tuned[i]` were measured in the same round. Throws std::invalid_argument
/// for different lengths, empty series or values that are not positive.
PairedRatio paired_ratio(const std::vector<double>& baseline, const std::vector<double>& tuned, double confidence = 0.95);

}  // namespace railkit
