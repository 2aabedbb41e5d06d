// The harness with several ranks per process (nccl's -g N), on a host-memory stand-in for the
// NCCL backend: one process drives N slots, each its own rank, and every collective runs across
// the slots in one launch. Checks that buffers, in-place layouts, data checks, per-slot timings
// and the gathered blocks follow the slots (rank = slot here: one process).
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <map>
#include <numeric>

#include "bench/harness.hpp"
#include "bench/lone_bootstrap.hpp"
#include "core/error.hpp"

using namespace railkit::bench;
using railkit::ResultRecord;
using railkit::ResultsDocument;

namespace {

/// N ranks in one process on host memory (float, sum): each launch runs the collective across
/// every slot, with NCCL's in-place layout (the base class's). Records what the harness asks.
class SlotsCommunicator final : public Communicator, public EventTiming, public GraphCapture {
 public:
  explicit SlotsCommunicator(int slots, bool async = false, int corrupt_slot = -1)
      : slots_(slots), async_(async), corrupt_slot_(corrupt_slot) {}
  ~SlotsCommunicator() override { EXPECT_TRUE(owner_.empty()) << "buffers not released"; }

  int rank() const override { return 0; }
  int size() const override { return slots_; }
  int slots() const override { return slots_; }
  std::string name() const override { return "slots"; }
  std::string version() const override { return "test"; }
  std::string unsupported_reason(DType, RedOp) const override { return {}; }

  void* allocate(int slot, std::uint64_t bytes) override {
    void* p = std::malloc(bytes == 0 ? 1 : bytes);
    owner_[p] = slot;
    return p;
  }
  void release(int slot, void* p) noexcept override {
    if (!p) return;
    EXPECT_EQ(owner_[p], slot) << "released with another slot than allocated";
    owner_.erase(p);
    std::free(p);
  }

  void launch(std::span<const OpCall> calls) override {
    ASSERT_EQ(calls.size(), static_cast<size_t>(slots_));
    if (capturing_) {
      captured_.emplace_back(calls.begin(), calls.end());
      return;
    }
    if (one_in_flight_) EXPECT_EQ(in_flight_, 0) << "launched before the previous launch completed";
    ++in_flight_;
    run_now(calls);
  }
  void complete() override { in_flight_ = 0; }

  // -G: launches during a capture are recorded and replayed; graphs must be dropped after each
  // measurement and never while a capture is open.
  GraphCapture* graph_capture() override { return graphs_ ? this : nullptr; }
  void begin_capture() override {
    EXPECT_FALSE(graph_alive_) << "a graph of the previous measurement is still alive";
    capturing_ = true;
    captured_.clear();
  }
  void end_capture() override {
    capturing_ = false;
    graph_alive_ = true;
  }
  void replay(int times) override {
    EXPECT_TRUE(graph_alive_);
    for (int t = 0; t < times; ++t)
      for (const auto& calls : captured_) run_now(calls);
  }
  void drop_graphs() override {
    EXPECT_FALSE(capturing_) << "graph dropped while the stream is capturing";
    if (graph_alive_) ++drops_;
    graph_alive_ = false;
  }

  void run_now(std::span<const OpCall> calls) {
    ++launches_;
    const auto n = static_cast<size_t>(slots_);
    const size_t pc = calls[0].count;
    const Coll c = calls[0].coll;
    const size_t in_count = (c == Coll::ReduceScatter || c == Coll::AllToAll) ? pc * n : pc;
    std::vector<std::vector<float>> in(n, std::vector<float>(in_count));
    for (size_t k = 0; k < n; ++k) {
      EXPECT_EQ(calls[k].coll, c);
      std::memcpy(in[k].data(), calls[k].send, in_count * sizeof(float));
    }
    for (size_t k = 0; k < n; ++k) {
      auto* out = static_cast<float*>(calls[k].recv);
      const size_t root = static_cast<size_t>(calls[k].root);
      switch (c) {
        case Coll::AllReduce:
          for (size_t i = 0; i < pc; ++i) out[i] = sum(in, i);
          break;
        case Coll::Reduce:
          if (k == root)
            for (size_t i = 0; i < pc; ++i) out[i] = sum(in, i);
          break;
        case Coll::ReduceScatter:
          for (size_t i = 0; i < pc; ++i) out[i] = sum(in, k * pc + i);
          break;
        case Coll::AllGather:
          for (size_t j = 0; j < n; ++j) std::memcpy(out + j * pc, in[j].data(), pc * sizeof(float));
          break;
        case Coll::Broadcast:
          std::memcpy(out, in[root].data(), pc * sizeof(float));
          break;
        case Coll::AllToAll:
          for (size_t j = 0; j < n; ++j) std::memcpy(out + j * pc, in[j].data() + k * pc, pc * sizeof(float));
          break;
        case Coll::SendRecv:
          std::memcpy(out, in[(k + n - 1) % n].data(), pc * sizeof(float));
          break;
      }
      if (static_cast<int>(k) == corrupt_slot_) out[0] += 1000;
    }
  }
  EventTiming* event_timing() override { return async_ ? this : nullptr; }
  void start_event_timing(int iters) override { iters_ = iters; }
  /// Slot k's every launch takes 10 (k + 1) us.
  std::vector<std::vector<double>> event_times_us() override {
    std::vector<std::vector<double>> out;
    for (int k = 0; k < slots_; ++k) out.emplace_back(static_cast<size_t>(iters_), 10.0 * (k + 1));
    return out;
  }

  void fill_input(int slot, void* dst, std::uint64_t count, const CheckSpec& spec) override {
    EXPECT_EQ(spec.rank, slot);
    EXPECT_EQ(spec.nranks, slots_);
    fill_input_host(dst, count, spec);
  }
  void fill_sentinel(int, void* dst, std::uint64_t bytes) override { fill_sentinel_host(dst, bytes); }
  std::int64_t count_wrong(int slot, const void* out, const CheckSpec& spec) override {
    EXPECT_EQ(spec.rank, slot);
    ++checked_[slot];
    return count_wrong_host(out, spec);
  }

  int launches_ = 0;
  int in_flight_ = 0;           ///< launches since the last complete()
  bool one_in_flight_ = false;  ///< expect every launch completed before the next (--sync)
  std::map<int, int> checked_;
  bool graphs_ = false;
  bool capturing_ = false;
  bool graph_alive_ = false;
  int drops_ = 0;
  std::vector<std::vector<OpCall>> captured_;

 private:
  static float sum(const std::vector<std::vector<float>>& in, size_t i) {
    float s = 0;
    for (const auto& v : in) s += v[i];
    return s;
  }

  int slots_;
  bool async_;
  int corrupt_slot_;
  int iters_ = 0;
  std::map<void*, int> owner_;
};

struct HarnessRun {
  std::vector<ResultRecord> results;
  std::int64_t wrong = 0;
};

HarnessRun run_harness(const BenchOptions& o, SlotsCommunicator& comm) {
  const auto boot = make_lone_bootstrap("node0");
  Group all;
  for (int r = 0; r < comm.size(); ++r) all.ranks.push_back(r);
  const std::vector<Group> groups{all};
  Watchdog wd(*boot, 0, nullptr);
  ResultsSink sink(ResultsDocument{});
  Harness h(o, *boot, comm, groups, wd, sink, nullptr);
  HarnessRun r;
  r.wrong = h.run(make_plan(o, comm.size()));
  r.results = sink.snapshot().results;
  return r;
}

BenchOptions small_options() {
  BenchOptions o;
  o.min_bytes = 1 << 10;
  o.max_bytes = 1 << 12;
  o.step_factor = 4;
  o.iters = 3;
  o.warmup_iters = 1;
  o.check_passes = 1;
  return o;
}

}  // namespace

TEST(HarnessSlots, EveryCollectiveChecksRightOnEverySlot) {
  BenchOptions o = small_options();
  o.colls = {Coll::AllReduce, Coll::AllGather, Coll::ReduceScatter, Coll::Broadcast, Coll::Reduce, Coll::AllToAll,
             Coll::SendRecv};
  o.root = 2;
  SlotsCommunicator comm(4);
  const HarnessRun r = run_harness(o, comm);
  EXPECT_EQ(r.wrong, 0);
  // 7 collectives x 2 sizes x 2 placements (the stand-in runs every collective in place)
  ASSERT_EQ(r.results.size(), 28u);
  for (const ResultRecord& rec : r.results) {
    ASSERT_TRUE(rec.wrong.has_value());
    EXPECT_EQ(*rec.wrong, 0) << rec.op << " " << rec.bytes << (rec.in_place ? " in place" : "");
    EXPECT_GE(rec.ranks.slowest_rank, 0);
    EXPECT_LT(rec.ranks.slowest_rank, 4);
    EXPECT_EQ(rec.ranks.slowest_host, "node0");
  }
  // Every slot's output was checked (a reduce's non-roots and an out-of-place broadcast's root
  // too: count_wrong knows there is nothing to check there).
  for (int k = 0; k < 4; ++k) EXPECT_GT(comm.checked_[k], 0) << "slot " << k;
}

TEST(HarnessSlots, BusBandwidthAndCountsUseEveryRank) {
  BenchOptions o = small_options();
  o.colls = {Coll::AllReduce, Coll::AllGather};
  o.placement = Placement::Out;
  SlotsCommunicator comm(4);
  const HarnessRun r = run_harness(o, comm);
  ASSERT_EQ(r.results.size(), 4u);
  for (const ResultRecord& rec : r.results) {
    const double factor = rec.op == "all_reduce" ? 2.0 * 3 / 4 : 3.0 / 4;
    EXPECT_DOUBLE_EQ(rec.busbw_GBps, rec.algbw_GBps * factor) << rec.op;
    if (rec.op == "all_gather") {
      EXPECT_EQ(rec.count, rec.bytes / 4 / 4);  // per-rank count over 4 ranks
    }
  }
}

TEST(HarnessSlots, WrongValuesOfOneSlotAreCounted) {
  BenchOptions o = small_options();
  o.min_bytes = o.max_bytes = 1 << 12;
  o.placement = Placement::Out;
  SlotsCommunicator comm(3, false, /*corrupt_slot=*/1);
  const HarnessRun r = run_harness(o, comm);
  ASSERT_EQ(r.results.size(), 1u);
  EXPECT_EQ(r.results[0].wrong, 1);
  EXPECT_EQ(r.wrong, 1);
}

TEST(HarnessSlots, PerIterationTimesComeFromEachSlotsDevice) {
  BenchOptions o = small_options();
  o.min_bytes = o.max_bytes = 1 << 12;
  o.placement = Placement::Out;
  o.colls = {Coll::AllReduce};
  o.average = Average::Max;
  SlotsCommunicator slow(3, /*async=*/true);
  const HarnessRun mx = run_harness(o, slow);
  ASSERT_EQ(mx.results.size(), 1u);
  // slot k takes 10 (k + 1) us per launch: -a 3 reports the slowest GPU's, -a 2 the fastest's
  EXPECT_DOUBLE_EQ(mx.results[0].time_us.p50, 30);
  o.average = Average::Min;
  SlotsCommunicator fast(3, /*async=*/true);
  const HarnessRun mn = run_harness(o, fast);
  EXPECT_DOUBLE_EQ(mn.results[0].time_us.p50, 10);
  o.average = Average::Avg;
  SlotsCommunicator avg(3, /*async=*/true);
  EXPECT_DOUBLE_EQ(run_harness(o, avg).results[0].time_us.p50, 20);
}

TEST(HarnessSlots, OneSlotIsTheSingleRankPath) {
  BenchOptions o = small_options();
  o.colls = {Coll::AllReduce, Coll::AllGather};
  SlotsCommunicator comm(1);
  const HarnessRun r = run_harness(o, comm);
  EXPECT_EQ(r.wrong, 0);
  ASSERT_EQ(r.results.size(), 8u);  // 2 collectives x 2 sizes x 2 placements
  for (const ResultRecord& rec : r.results) EXPECT_EQ(rec.ranks.slowest_rank, 0);
}

TEST(HarnessSlots, CudaGraphsAreDroppedAfterEveryMeasurement) {
  // NCCL keeps a communicator alive while a graph that captured it lives (ncclCommFinalize and
  // ncclCommAbort wait for it): the harness destroys each -G measurement's graphs right after it.
  BenchOptions o = small_options();
  o.colls = {Coll::AllReduce, Coll::AllGather};
  o.graph_launches = 2;
  SlotsCommunicator comm(2, /*async=*/true);
  comm.graphs_ = true;
  const HarnessRun r = run_harness(o, comm);
  EXPECT_EQ(r.wrong, 0);
  ASSERT_EQ(r.results.size(), 8u);  // 2 collectives x 2 sizes x 2 placements
  EXPECT_EQ(comm.drops_, 8);
  EXPECT_FALSE(comm.graph_alive_);
  EXPECT_FALSE(comm.capturing_);
}

TEST(HarnessSlots, SyncTimesEveryLaunchAloneWithTheHostClock) {
  // --sync: each timed launch is completed before the next (its wait timed with it), and the
  // times are the host clock's, never the device events (10 (k + 1) us here).
  BenchOptions o = small_options();
  o.colls = {Coll::AllReduce, Coll::AllGather};
  o.placement = Placement::Out;
  o.iters = 5;
  o.sync = true;
  SlotsCommunicator comm(3, /*async=*/true);
  comm.one_in_flight_ = true;
  const HarnessRun r = run_harness(o, comm);
  EXPECT_EQ(r.wrong, 0);
  ASSERT_EQ(r.results.size(), 4u);  // 2 collectives x 2 sizes
  EXPECT_EQ(comm.launches_, 4 * (1 + 5 + 1));  // warm-up, timed, check
  for (const ResultRecord& rec : r.results) {
    EXPECT_GT(rec.time_us.min, 0) << rec.op;
    EXPECT_NE(rec.time_us.p50, 10) << rec.op;
    EXPECT_NE(rec.time_us.p50, 20) << rec.op;
    // -a avg: the mean over ranks of each rank's mean iteration, i.e. the mean of the iterations
    EXPECT_LE(rec.time_us.min, rec.time_us.avg * (1 + 1e-12)) << rec.op;
    EXPECT_GE(rec.time_us.max, rec.time_us.avg * (1 - 1e-12)) << rec.op;
  }
}
