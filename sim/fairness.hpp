#pragma once
// Fairness figures: Jain's index and max-min fair rates (progressive filling). Pure functions.
#include <cstddef>
#include <vector>

namespace railkit::sim {

/// Jain's fairness index of `rates`: (sum x)^2 / (n * sum x^2); 1 when all are equal, 1/n when one
/// takes everything; 1 for an empty list or all zeros.
double jain_index(const std::vector<double>& rates) noexcept;

/// Max-min fair rates of flows whose paths are lists of link indices into `capacity` (any unit;
/// the result is in the same unit). A flow with an empty path gets 0.
std::vector<double> maxmin_rates(const std::vector<std::vector<int>>& paths, const std::vector<double>& capacity);

}  // namespace railkit::sim
