#pragma once
// Which transfers of a collective plan may start, from the transfers done so far: the dependency
// rules of Transfer::after, shared by the flow-level and the packet-level executors. Pure: no
// ns-3, no time here (the executors add the step's latency and keep the clock).
#include <cstdint>
#include <span>
#include <vector>

#include "sim/collective.hpp"

namespace railkit::sim {

/// Removes the steps with repeat < 1 and gives a step without transfers one transfer of 0 bytes
/// (its runs then still take the step's latency). Checks every `after` index and GPU index;
/// throws Error(Internal) naming the step and transfer otherwise.
void normalize_plan(const ClusterSpec& c, std::vector<Step>& steps);

/// Runs of the transfers of a normalized plan. A transfer is named by its id, the steps'
/// transfers numbered one after another (first(k) + index in step k). Run r of a transfer may
/// start once its run r - 1 is done and: r = 0: at once in step 0, and in step k > 0 once every
/// transfer of step k - 1 has done all its runs; r > 0: once the transfers of its step it names in
/// `after` have done run r - 1 (none named: all of them, a barrier).
class PlanProgress {
 public:
  explicit PlanProgress(std::span<const Step> steps);

  /// The ids whose run 0 may start at once (step 0's).
  std::vector<std::uint32_t> initial();
  /// Records that id's current run is done; appends the ids whose next run may now start.
  void done(std::uint32_t id, std::vector<std::uint32_t>& ready);
  /// Adds `runs` done runs to every transfer of `step` (the flow level's jump over identical
  /// periods). Throws Error(Internal) for a step with barrier transfers (an empty `after`).
  void skip(std::size_t step, int runs);

  std::size_t transfers() const noexcept { return step_of_.size(); }
  std::size_t step_of(std::uint32_t id) const { return step_of_[id]; }
  std::uint32_t index_of(std::uint32_t id) const { return id - first_[step_of_[id]]; }
  std::uint32_t first(std::size_t step) const { return first_[step]; }
  std::uint32_t size(std::size_t step) const { return first_[step + 1] - first_[step]; }
  /// Runs of id done so far (its current or next run's index).
  int runs_done(std::uint32_t id) const { return done_[id]; }
  bool busy(std::uint32_t id) const { return busy_[id] != 0; }
  /// Whether every transfer of `step` names what it waits for (no barrier).
  bool pipelined(std::size_t step) const { return barrier_members_[step].empty(); }
  bool finished() const noexcept { return finished_steps_ == repeat_.size(); }

 private:
  bool may_start(std::uint32_t id) const;
  void offer(std::uint32_t id, std::vector<std::uint32_t>& ready);

  std::span<const Step> steps_;
  std::vector<std::uint32_t> first_;      ///< per step, and one past the last id
  std::vector<int> repeat_;               ///< per step
  std::vector<std::size_t> step_of_;      ///< per id
  std::vector<int> done_;                 ///< per id: runs done
  std::vector<char> busy_;                ///< per id: its current run was handed out, not done
  std::vector<std::vector<std::uint32_t>> waiters_;  ///< per id: ids of its step that name it
  std::vector<std::vector<std::uint32_t>> barrier_members_;  ///< per step: ids with an empty `after`
  std::vector<std::vector<std::uint32_t>> runs_count_;  ///< per step, per run: transfers done with it
  std::vector<std::uint32_t> finished_in_step_;  ///< per step: transfers done with every run
  std::size_t finished_steps_ = 0;
};

}  // namespace railkit::sim
