#pragma once
// Flow-level sharing of links: flows that start together on paths of shared links, each link
// shared max-min fairly (progressive filling), rates recomputed whenever a flow completes. No
// congestion control, no queues, no packets. (Flows that start at different times:
// sim/flow_clock.hpp.) Pure: no ns-3 here.
#include <cstdint>
#include <span>
#include <vector>

namespace railkit::sim {

/// Links (capacities in bytes per second) and flows (paths over them, sizes in bytes).
class FlowSet {
 public:
  /// A link of `bytes_per_s` (> 0); returns its index.
  int add_link(double bytes_per_s);
  /// A flow of `bytes` over `links` (indices from add_link; empty: it completes at once).
  void add_flow(std::span<const int> links, double bytes);

  std::size_t flows() const noexcept { return bytes_.size(); }
  std::size_t links() const noexcept { return capacity_.size(); }

  /// Completion time in seconds of every flow when all start at time 0. `solutions` (if given)
  /// is increased by the number of max-min rate solutions computed.
  std::vector<double> drain(std::uint64_t* solutions = nullptr) const;

  /// Max-min fair rates (bytes per second) of the flows marked in `active` (all when empty).
  std::vector<double> maxmin(const std::vector<char>& active) const;

  double bytes(std::size_t f) const { return bytes_[f]; }

 private:
  std::vector<double> capacity_;
  std::vector<std::uint32_t> path_start_{0};  ///< flow f's links: path_links_[path_start_[f] .. path_start_[f+1])
  std::vector<std::uint32_t> path_links_;
  std::vector<double> bytes_;
};

}  // namespace railkit::sim
