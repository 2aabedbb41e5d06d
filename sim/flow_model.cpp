#include "sim/flow_model.hpp"

#include <algorithm>
#include <limits>

#include "core/error.hpp"

namespace railkit::sim {

int FlowSet::add_link(double bytes_per_s) {
  if (!(bytes_per_s > 0)) throw Error(ErrorCode::Internal, "flow model: a link needs a positive capacity");
  capacity_.push_back(bytes_per_s);
  return static_cast<int>(capacity_.size() - 1);
}

void FlowSet::add_flow(std::span<const int> links, double bytes) {
  for (int l : links) {
    if (l < 0 || static_cast<std::size_t>(l) >= capacity_.size()) throw Error(ErrorCode::Internal, "flow model: unknown link");
    path_links_.push_back(static_cast<std::uint32_t>(l));
  }
  path_start_.push_back(static_cast<std::uint32_t>(path_links_.size()));
  bytes_.push_back(std::max(0.0, bytes));
}

std::vector<double> FlowSet::maxmin(const std::vector<char>& active_in) const {
  const std::size_t nf = bytes_.size();
  const std::size_t nl = capacity_.size();
  std::vector<char> active = active_in.empty() ? std::vector<char>(nf, 1) : active_in;
  std::vector<double> rate(nf, 0.0);
  // Links -> their active flows (CSR), users and capacity left.
  std::vector<std::uint32_t> users(nl, 0);
  for (std::size_t f = 0; f < nf; ++f) {
    if (!active[f]) continue;
    if (path_start_[f] == path_start_[f + 1]) {  // no link: unconstrained, never limits anyone
      rate[f] = std::numeric_limits<double>::infinity();
      active[f] = 0;
      continue;
    }
    for (std::uint32_t k = path_start_[f]; k < path_start_[f + 1]; ++k) ++users[path_links_[k]];
  }
  std::vector<std::uint32_t> start(nl + 1, 0);
  for (std::size_t l = 0; l < nl; ++l) start[l + 1] = start[l] + users[l];
  std::vector<std::uint32_t> members(start[nl]);
  {
    std::vector<std::uint32_t> fill(start.begin(), start.end() - 1);
    for (std::size_t f = 0; f < nf; ++f)
      if (active[f])
        for (std::uint32_t k = path_start_[f]; k < path_start_[f + 1]; ++k) members[fill[path_links_[k]]++] = static_cast<std::uint32_t>(f);
  }
  std::vector<double> left = capacity_;
  std::vector<char> saturated(nl, 0);
  double level = 0;
  while (true) {
    // The link with the least capacity left per unfrozen flow saturates next.
    double delta = std::numeric_limits<double>::infinity();
    for (std::size_t l = 0; l < nl; ++l)
      if (users[l] > 0) delta = std::min(delta, left[l] / users[l]);
    if (delta == std::numeric_limits<double>::infinity()) break;
    delta = std::max(0.0, delta);
    level += delta;
    std::vector<std::size_t> full;
    for (std::size_t l = 0; l < nl; ++l) {
      if (users[l] == 0) continue;
      left[l] -= delta * users[l];
      if (left[l] <= 1e-9 * capacity_[l]) full.push_back(l);
    }
    for (std::size_t l : full) {
      saturated[l] = 1;
      for (std::uint32_t k = start[l]; k < start[l + 1]; ++k) {
        const std::uint32_t f = members[k];
        if (!active[f]) continue;
        active[f] = 0;
        rate[f] = level;
        for (std::uint32_t j = path_start_[f]; j < path_start_[f + 1]; ++j) --users[path_links_[j]];
      }
    }
  }
  return rate;
}

std::vector<double> FlowSet::drain(std::uint64_t* solutions) const {
  const std::size_t nf = bytes_.size();
  std::vector<double> done(nf, 0.0);
  std::vector<double> remaining = bytes_;
  std::vector<char> active(nf, 0);
  std::size_t left = 0;
  for (std::size_t f = 0; f < nf; ++f)
    if (remaining[f] > 0) {
      active[f] = 1;
      ++left;
    }
  double t = 0;
  while (left > 0) {
    const std::vector<double> rate = maxmin(active);
    if (solutions) ++*solutions;
    double dt = std::numeric_limits<double>::infinity();
    for (std::size_t f = 0; f < nf; ++f)
      if (active[f]) dt = std::min(dt, remaining[f] / rate[f]);
    if (!(dt < std::numeric_limits<double>::infinity()))
      throw Error(ErrorCode::Internal, "flow model: active flows without a rate");
    t += dt;
    for (std::size_t f = 0; f < nf; ++f) {
      if (!active[f]) continue;
      remaining[f] -= rate[f] * dt;
      // Flows within a relative 1e-9 of done complete together (equal shares finish at once).
      if (remaining[f] <= 1e-9 * bytes_[f] || remaining[f] / rate[f] <= 1e-12 * t) {
        active[f] = 0;
        done[f] = t;
        --left;
      }
    }
  }
  return done;
}

}  // namespace railkit::sim
