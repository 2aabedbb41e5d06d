#include "sim/fairness.hpp"

#include <algorithm>
#include <limits>

namespace railkit::sim {

double jain_index(const std::vector<double>& rates) noexcept {
  double sum = 0;
  double sq = 0;
  for (double r : rates) {
    sum += r;
    sq += r * r;
  }
  if (rates.empty() || sq == 0) return 1.0;
  return sum * sum / (static_cast<double>(rates.size()) * sq);
}

std::vector<double> maxmin_rates(const std::vector<std::vector<int>>& paths, const std::vector<double>& capacity) {
  std::vector<double> rate(paths.size(), 0.0);
  std::vector<bool> frozen(paths.size(), false);
  std::vector<double> left = capacity;
  for (std::size_t f = 0; f < paths.size(); ++f) frozen[f] = paths[f].empty();
  while (true) {
    // The link whose remaining capacity per unfrozen flow is smallest limits those flows.
    std::vector<int> users(capacity.size(), 0);
    for (std::size_t f = 0; f < paths.size(); ++f)
      if (!frozen[f])
        for (int l : paths[f]) ++users[static_cast<std::size_t>(l)];
    double share = std::numeric_limits<double>::infinity();
    for (std::size_t l = 0; l < capacity.size(); ++l)
      if (users[l] > 0) share = std::min(share, left[l] / users[l]);
    if (share == std::numeric_limits<double>::infinity()) break;
    for (std::size_t f = 0; f < paths.size(); ++f)
      if (!frozen[f]) rate[f] += share;
    for (std::size_t l = 0; l < capacity.size(); ++l) left[l] -= share * users[l];
    for (std::size_t f = 0; f < paths.size(); ++f) {
      if (frozen[f]) continue;
      for (int l : paths[f])
        if (left[static_cast<std::size_t>(l)] <= 1e-9 * capacity[static_cast<std::size_t>(l)]) frozen[f] = true;
    }
  }
  return rate;
}

}  // namespace railkit::sim
