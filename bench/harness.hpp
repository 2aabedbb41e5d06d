#pragma once
// The timing harness: for each cycle, collective, size and placement it warms up, times the
// loop with the host steady clock (plus per-iteration times; a backend with a simulated clock,
// the sim backend, gives the times itself; --sync: a barrier before each iteration and only the
// operation timed), runs the untimed data check, and
// reduces the figures across ranks. It reports rows through a Reporter on rank 0 only.
#include <cstdint>
#include <mutex>
#include <vector>

#include "bench/bootstrap.hpp"
#include "bench/communicator.hpp"
#include "bench/options.hpp"
#include "bench/report.hpp"
#include "bench/split.hpp"
#include "bench/watchdog.hpp"
#include "core/results.hpp"

namespace railkit::bench {

/// The document being built on rank 0, shared with the watchdog (which may snapshot it).
/// With a path (-J), every added record also rewrites the document atomically, marked
/// summary.complete = false until the end, so a run killed at any point leaves a valid document
/// holding everything measured so far. With a prom_path (--prom), write() also writes the
/// Prometheus textfile of the final document (render_bench_prometheus, ended now), atomically.
class ResultsSink {
 public:
  explicit ResultsSink(ResultsDocument doc, std::string path = {}, std::string prom_path = {})
      : doc_(std::move(doc)), path_(std::move(path)), prom_path_(std::move(prom_path)) {}
  void add(const ResultRecord& r);
  ResultsDocument snapshot() const;
  /// Writes `doc` to the path and the textfile to prom_path (each if any), serialized with the checkpoints.
  void write(const ResultsDocument& doc) const;

 private:
  mutable std::mutex mu_;
  ResultsDocument doc_;
  std::string path_;
  std::string prom_path_;
};

/// What the options ask of memory and which sizes run, computed before allocating.
struct Plan {
  std::uint64_t buffer_bytes = 0;         ///< capacity of each of the two buffers (send, recv)
  std::vector<std::uint64_t> sizes;       ///< requested sizes
  std::vector<std::string> notes;         ///< rounding and skipped sizes, for the header
  std::uint64_t max_count = 0;            ///< largest count passed to a collective
};

Plan make_plan(const BenchOptions& o, int nranks);

/// Reduces per-rank values as -a says: rank0, avg, min or max.
double reduce_across_ranks(std::span<const double> per_rank, Average a);

/// Doubles each rank contributes per measurement: loop time per op (us), wrong elements, then
/// one time per iteration (us). A process with several slots (-g) contributes one block per
/// slot, in slot order, so the gathered blocks are in rank order.
inline std::size_t block_size(int iters) { return static_cast<std::size_t>(iters) + 2; }

/// Builds one record for one group from the gathered per-rank blocks (pure; unit-tested).
/// `blocks` holds the group members' blocks in the order of `members` (world ranks).
/// `wrong` is taken from the blocks when `checked`.
ResultRecord make_record(Coll c, const CollSizes& s, const BenchOptions& o, bool in_place, int cycle,
                         std::span<const double> blocks, std::span<const int> members, bool checked,
                         const std::vector<std::string>& hosts);

class Harness {
 public:
  /// `comm` is this process's group communicator; `groups` every group of the split (one group
  /// of all ranks without a split), in the communicator's ranks (a rank in no group, left out by
  /// --split nodes:, takes part in the barriers and gathers only): with -g N, process p drives
  /// ranks pN .. pN + N - 1 (comm.slots() == N on every process). Groups run concurrently, in
  /// step from size to size.
  Harness(const BenchOptions& o, Bootstrap& boot, Communicator& comm, const std::vector<Group>& groups, Watchdog& wd,
          ResultsSink& sink, Reporter* reporter);

  /// Runs everything the options ask for. Returns the total of wrong elements (all ranks).
  std::int64_t run(const Plan& plan);

 private:
  /// On rank 0, one record per group; empty elsewhere.
  std::vector<ResultRecord> measure(Coll c, const CollSizes& s, bool in_place, int cycle);
  /// Gathers every rank's figures (`mine`: blocks of block_size(iters) per slot); on rank 0,
  /// one record per group, added to the sink, each with `observed` (the backend's
  /// timed_observed() on rank 0).
  std::vector<ResultRecord> records_of(Coll c, const CollSizes& s, bool in_place, int cycle,
                                       const std::vector<double>& mine, bool checked,
                                       const nlohmann::json& observed);
  void control(const char* what, const std::function<void()>& f);
  /// Every slot's call of one collective (and, in place, where each slot's input and output sit).
  std::vector<OpCall> calls_for(Coll c, const CollSizes& s, bool in_place, std::vector<InPlaceLayout>& layouts) const;
  /// -G: capture the -n launches, time the graph's replays, drop the graphs.
  void graph_loop(std::span<const OpCall> calls, OpPoint& point, bool stall_here, std::vector<double>& mine);
  /// The -c untimed data-check passes: wrong elements per slot into `mine`, summed over every rank.
  void check_passes(Coll c, const CollSizes& s, bool in_place, int cycle, std::span<const OpCall> calls,
                    const std::vector<InPlaceLayout>& layouts, std::vector<double>& mine);
  /// The timed loop without CUDA graphs: host clock around -n launches, per-launch times (a
  /// backend with a simulated clock: the mean of its simulated times instead).
  void time_loop(std::span<const OpCall> calls, OpPoint& point, std::uint64_t delay_us, bool stall_here,
                 std::vector<double>& mine);
  /// --sync: per iteration a barrier (not timed), then the host clock around one launch and its
  /// completion; the loop time is the mean of the iteration times.
  void sync_loop(std::span<const OpCall> calls, OpPoint& point, std::uint64_t delay_us, bool stall_here,
                 std::vector<double>& mine);

  const BenchOptions& o_;
  Bootstrap& boot_;
  Communicator& comm_;
  const std::vector<Group>& groups_;
  Watchdog& wd_;
  ResultsSink& sink_;
  Reporter* reporter_;  ///< null on ranks other than 0
  std::vector<std::string> rank_hosts_;  ///< host of every rank (all slots of all processes)
  std::vector<void*> send_;              ///< one per slot
  std::vector<void*> recv_;
  int group_size_ = 0;  ///< ranks of every group (an idle rank's own communicator is smaller)
  bool idle_ = false;   ///< in no group (--split nodes: left this rank's node out): measures nothing
  bool stalled_once_ = false;
  std::int64_t wrong_total_ = 0;
};

}  // namespace railkit::bench
