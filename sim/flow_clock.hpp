#pragma once
// Flows that start at different times on shared links (the flow level of pipelined collectives,
// and the NVLink copies of the packet level): every flow is a slot with a fixed path that can be
// started again once it completed; at every instant the active flows share the links max-min
// fairly (progressive filling). A start or a completion changes the rates of the flows that share
// links with it, directly or through others (its component), only: only that component is solved
// again, and completions come from a heap of projected completion times. Pure: no ns-3 here.
#include <cstdint>
#include <span>
#include <vector>

namespace railkit::sim {

class FlowClock {
 public:
  /// A link of `bytes_per_s` (> 0); returns its index. Throws Error(Internal) otherwise.
  int add_link(double bytes_per_s);
  std::size_t link_count() const noexcept { return capacity_.size(); }
  /// A slot over `links` (empty: a flow on it completes at once); returns its index.
  std::uint32_t add_slot(std::span<const int> links);

  /// Starts a flow of `bytes` on idle slot `s` now. Throws Error(Internal) if it is active.
  void start(std::uint32_t s, double bytes);
  /// When the next active flow completes, in seconds (now() when one is due; +inf when none).
  double next_completion();
  /// Advances the clock to `t_s` (now() <= t_s <= next_completion()) and appends the slots whose
  /// flows completed by then to `done`, in slot order (a flow within a relative 1e-9 of its bytes
  /// or 1e-12 of the time from its end completes).
  void advance(double t_s, std::vector<std::uint32_t>& done);
  /// Moves the clock and every active flow with it by `dt_s`, rates unchanged.
  void shift(double dt_s);

  double now() const noexcept { return now_s_; }
  bool active(std::uint32_t s) const { return active_[s] != 0; }
  /// Bytes left of the flow on `s` now (0 when idle).
  double remaining(std::uint32_t s) const;
  std::size_t slots() const noexcept { return rate_.size(); }
  std::size_t active_count() const noexcept { return active_count_; }
  /// Max-min solutions computed so far (one per start or completion batch that changed rates).
  std::uint64_t solutions() const noexcept { return solutions_; }

 private:
  struct Due {
    double t = 0;
    std::uint32_t slot = 0;
    std::uint32_t gen = 0;
    bool operator>(const Due& o) const { return t != o.t ? t > o.t : slot > o.slot; }
  };
  void solve();
  void component(std::vector<std::uint32_t>& flows, std::vector<std::uint32_t>& links);
  void fill(const std::vector<std::uint32_t>& flows, const std::vector<std::uint32_t>& links);
  void project(std::uint32_t f);
  void stop(std::uint32_t f);

  std::vector<double> capacity_;
  std::vector<std::uint32_t> path_start_{0};  ///< slot s's links: path_links_[path_start_[s] .. path_start_[s+1])
  std::vector<std::uint32_t> path_links_;
  std::vector<std::vector<std::uint32_t>> on_link_;  ///< per link: its active flows
  std::vector<double> bytes_;   ///< per slot: its current flow's size
  std::vector<double> left0_;   ///< per slot: bytes left at t0_
  std::vector<double> t0_;      ///< per slot: when left0_ and rate_ were set
  std::vector<double> rate_;
  std::vector<std::uint32_t> gen_;  ///< per slot: bumped at every new rate (older heap entries are stale)
  std::vector<char> active_;
  std::size_t active_count_ = 0;
  std::vector<Due> heap_;           ///< projected completions (a min-heap by time)
  std::vector<std::uint32_t> dirty_links_;
  std::vector<std::uint32_t> mark_flow_, mark_link_;  ///< visit epochs of component()
  std::uint32_t epoch_ = 0;
  std::vector<std::uint32_t> users_;  ///< fill's scratch, per link
  std::vector<double> spare_;         ///< fill's scratch, per link
  std::vector<char> frozen_;          ///< fill's scratch, per slot
  double now_s_ = 0;
  std::uint64_t solutions_ = 0;
};

}  // namespace railkit::sim
