#include "bench/harness.hpp"

#include <algorithm>
#include <chrono>
#include <numeric>
#include <thread>

#include <fmt/format.h>

#include "bench/prom_report.hpp"
#include "core/atomic_file.hpp"
#include "core/collectives.hpp"
#include "core/error.hpp"
#include "core/units.hpp"

namespace railkit::bench {
namespace {

using Clock = std::chrono::steady_clock;

double us_between(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::micro>(b - a).count();
}

/// Frees every slot's buffers on every exit path.
struct Buffers {
  Communicator& comm;
  std::vector<void*>& send;
  std::vector<void*>& recv;
  ~Buffers() {
    for (std::size_t s = 0; s < send.size(); ++s) comm.release(static_cast<int>(s), send[s]);
    for (std::size_t s = 0; s < recv.size(); ++s) comm.release(static_cast<int>(s), recv[s]);
    send.clear();
    recv.clear();
  }
};

}  // namespace

void ResultsSink::add(const ResultRecord& r) {
  std::lock_guard lk(mu_);
  doc_.results.push_back(r);
  if (path_.empty()) return;
  ResultsDocument d = doc_;
  update_summary(d);
  d.summary.complete = false;
  write_file_atomic(path_, dump_results(d));
}

void ResultsSink::write(const ResultsDocument& doc) const {
  std::lock_guard lk(mu_);
  if (!path_.empty()) write_file_atomic(path_, dump_results(doc));
  if (!prom_path_.empty()) {
    const double now = std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
    write_file_atomic(prom_path_, render_bench_prometheus(doc, now));
  }
}

ResultsDocument ResultsSink::snapshot() const {
  std::lock_guard lk(mu_);
  ResultsDocument d = doc_;
  update_summary(d);
  return d;
}

Plan make_plan(const BenchOptions& o, int nranks) {
  Plan p;
  p.sizes = size_sequence(o.min_bytes, o.max_bytes, o.step_factor, o.step_bytes);
  const std::size_t esz = info(o.dtype).size_bytes;
  for (Coll c : o.colls) {
    int rounded = 0, skipped = 0;
    std::uint64_t first_kept = 0;
    for (std::uint64_t b : p.sizes) {
      const CollSizes s = coll_sizes(c, b, esz, nranks);
      if (s.param_count == 0) {
        ++skipped;
        continue;
      }
      if (first_kept == 0) first_kept = b;
      if (s.rounded) ++rounded;
      p.buffer_bytes = std::max(p.buffer_bytes, s.bytes);
      p.max_count = std::max(p.max_count, s.param_count);
    }
    const auto name = info(c).name;
    const bool per_rank = collective(c).per_rank == PerRankRule::Shared;
    // nccl-tests' rule: per-rank blocks are whole multiples of 16 B (of one element when larger).
    const std::size_t block = std::max(esz, kPerRankAlignBytes);
    const std::size_t unit = per_rank ? block * static_cast<std::size_t>(nranks) : esz;
    if (rounded > 0)
      p.notes.push_back(fmt::format("{}: {} size{} rounded down to a multiple of {} B ({}); rows show the size used", name,
                                    rounded, rounded == 1 ? "" : "s", unit,
                                    per_rank ? fmt::format("{} ranks x {} B, as nccl-tests", nranks, block)
                                             : fmt::format("{} B elements", esz)));
    if (skipped > 0)
      p.notes.push_back(fmt::format("{}: {} size{} below {} B skipped: {} per rank", name, skipped,
                                    skipped == 1 ? "" : "s", unit,
                                    per_rank ? fmt::format("less than {} B", block)
                                             : fmt::format("less than one {} element", info(o.dtype).name)));
  }
  return p;
}

double reduce_across_ranks(std::span<const double> v, Average a) {
  if (v.empty()) return 0;
  switch (a) {
    case Average::Rank0: return v.front();
    case Average::Avg: return std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
    case Average::Min: return *std::min_element(v.begin(), v.end());
    case Average::Max: return *std::max_element(v.begin(), v.end());
  }
  return v.front();
}

ResultRecord make_record(Coll c, const CollSizes& s, const BenchOptions& o, bool in_place, int cycle,
                         std::span<const double> blocks, std::span<const int> members, bool checked,
                         const std::vector<std::string>& hosts) {
  const std::size_t block = block_size(o.iters);
  const std::size_t n = members.size();
  std::vector<double> loop(n);
  std::int64_t wrong_sum = 0;
  for (std::size_t r = 0; r < n; ++r) {
    loop[r] = blocks[r * block];
    wrong_sum += static_cast<std::int64_t>(blocks[r * block + 1]);
  }
  std::vector<double> per_iter(static_cast<std::size_t>(o.iters));
  std::vector<double> across(n);
  for (int i = 0; i < o.iters; ++i) {
    for (std::size_t r = 0; r < n; ++r) across[r] = blocks[r * block + 2 + static_cast<std::size_t>(i)];
    per_iter[static_cast<std::size_t>(i)] = reduce_across_ranks(across, o.average);
  }
  ResultRecord rec;
  const CollInfo& ci = info(c);
  rec.op = std::string(ci.name);
  rec.dtype = std::string(info(o.dtype).name);
  rec.redop = ci.has_redop ? std::string(info(o.redop).name) : "none";
  rec.root = ci.has_root ? o.root : -1;
  rec.bytes = s.bytes;
  rec.count = s.param_count;
  rec.in_place = in_place;
  rec.cycle = cycle;
  rec.iters = o.iters;
  rec.time_us = summarize(per_iter);
  rec.time_us.avg = reduce_across_ranks(loop, o.average);
  rec.algbw_GBps = algbw_GBps(static_cast<double>(s.bytes), rec.time_us.avg);
  rec.busbw_GBps = rec.algbw_GBps * busbw_factor(c, static_cast<int>(n));
  if (checked) rec.wrong = wrong_sum;
  const auto [mn, mx] = std::minmax_element(loop.begin(), loop.end());
  rec.ranks.time_us_min = *mn;
  rec.ranks.time_us_max = *mx;
  rec.ranks.slowest_rank = members[static_cast<std::size_t>(mx - loop.begin())];
  if (rec.ranks.slowest_rank < static_cast<int>(hosts.size()))
    rec.ranks.slowest_host = hosts[static_cast<std::size_t>(rec.ranks.slowest_rank)];
  return rec;
}

Harness::Harness(const BenchOptions& o, Bootstrap& boot, Communicator& comm, const std::vector<Group>& groups,
                 Watchdog& wd, ResultsSink& sink, Reporter* reporter)
    : o_(o), boot_(boot), comm_(comm), groups_(groups), wd_(wd), sink_(sink), reporter_(reporter) {
  // A backend that places its slots itself (sim: simulated nodes) names this process's hosts.
  for (std::size_t p = 0; p < boot_.hosts().size(); ++p)
    for (int k = 0; k < comm_.slots(); ++k) {
      const std::string own = static_cast<int>(p) == boot_.rank() ? comm_.host(k) : std::string();
      rank_hosts_.push_back(own.empty() ? boot_.hosts()[p] : own);
    }
  group_size_ = groups_.empty() ? comm_.size() : static_cast<int>(groups_.front().ranks.size());
  idle_ = group_of(groups_, boot_.rank() * comm_.slots()) < 0;
}

void Harness::control(const char* what, const std::function<void()>& f) {
  wd_.enter(OpPoint{what, 0, -1, false});
  f();
  wd_.leave();
}

std::int64_t Harness::run(const Plan& plan) {
  const auto slots = static_cast<std::size_t>(comm_.slots());
  Buffers guard{comm_, send_, recv_};
  send_.assign(slots, nullptr);
  recv_.assign(slots, nullptr);
  for (std::size_t k = 0; k < slots; ++k) {
    const int slot = static_cast<int>(k);
    send_[k] = comm_.allocate(slot, plan.buffer_bytes);
    recv_[k] = comm_.allocate(slot, plan.buffer_bytes);
    // Touch every page now so that no timed iteration pays for first-touch page faults.
    comm_.fill_sentinel(slot, send_[k], plan.buffer_bytes);
    comm_.fill_sentinel(slot, recv_[k], plan.buffer_bytes);
  }
  const std::size_t esz = info(o_.dtype).size_bytes;
  for (int cycle = 0; cycle < o_.run_cycles; ++cycle) {
    for (Coll c : o_.colls) {
      if (reporter_) reporter_->coll_start(c, cycle);
      for (std::uint64_t b : plan.sizes) {
        const CollSizes s = coll_sizes(c, b, esz, group_size_);  // counts every slot's rank
        if (s.param_count == 0) continue;
        std::vector<ResultRecord> out, in;
        if (o_.placement != Placement::In) out = measure(c, s, false, cycle);
        if (o_.placement != Placement::Out && comm_.supports_in_place(c)) in = measure(c, s, true, cycle);
        if (!reporter_) continue;
        for (std::size_t g = 0; g < groups_.size(); ++g) {
          Row row{c, s, std::nullopt, std::nullopt, groups_[g].name};
          if (!out.empty()) row.out = out[g];
          if (!in.empty()) row.in = in[g];
          reporter_->row(row);
        }
      }
    }
  }
  return wrong_total_;
}

void Harness::time_loop(std::span<const OpCall> calls, OpPoint& point, std::uint64_t delay_us, bool stall_here,
                        std::vector<double>& mine) {
  EventTiming* const timing = comm_.event_timing();  // null: synchronous, timed by the host clock
  const bool async = timing != nullptr;
  const std::size_t block = block_size(o_.iters);
  const std::size_t slots = calls.size();
  if (async) timing->start_event_timing(o_.iters);
  // One clock read per iteration: each iteration ends where the next begins, so the loop time
  // is exactly the sum of the iteration times.
  const auto t0 = Clock::now();
  auto ti = t0;
  for (int i = 0; i < o_.iters; ++i) {
    if (delay_us > 0) std::this_thread::sleep_for(std::chrono::microseconds(delay_us));
    point.iteration = i;
    if (stall_here) {
      stalled_once_ = true;
      wd_.stall(point);
    }
    wd_.enter(point);
    comm_.launch(calls);
    if (!async) {
      wd_.leave();
      const auto te = Clock::now();
      for (std::size_t k = 0; k < slots; ++k) mine[k * block + static_cast<std::size_t>(i) + 2] = us_between(ti, te);
      ti = te;
    }
  }
  if (async) {
    // As nccl-tests: launch every iteration, then wait once (for every slot's stream); the
    // watchdog covers the wait.
    point.iteration = o_.iters - 1;
    wd_.enter(point);
    comm_.complete();
    wd_.leave();
  }
  // Every slot of this process shares the host clock's loop time.
  const double loop_us = us_between(t0, Clock::now()) / o_.iters;
  for (std::size_t k = 0; k < slots; ++k) mine[k * block] = loop_us;
  if (async) {
    const std::vector<std::vector<double>> ev = timing->event_times_us();
    for (std::size_t k = 0; k < slots && k < ev.size(); ++k)
      for (std::size_t i = 0; i < ev[k].size() && i < static_cast<std::size_t>(o_.iters); ++i)
        mine[k * block + i + 2] = ev[k][i];
    // A simulated clock: the loop time is the mean simulated time of its iterations; the host
    // clock measured the simulator.
    if (timing->simulated_clock()) {
      if (ev.size() < slots)
        throw Error(ErrorCode::Internal, fmt::format("{}: simulated times for {} of {} slots", comm_.name(), ev.size(), slots));
      for (std::size_t k = 0; k < slots; ++k) {
        if (ev[k].size() != static_cast<std::size_t>(o_.iters))
          throw Error(ErrorCode::Internal, fmt::format("{}: {} simulated times for {} iterations", comm_.name(),
                                                       ev[k].size(), o_.iters));
        mine[k * block] = std::accumulate(ev[k].begin(), ev[k].end(), 0.0) / o_.iters;
      }
    }
  }
}

void Harness::sync_loop(std::span<const OpCall> calls, OpPoint& point, std::uint64_t delay_us, bool stall_here,
                        std::vector<double>& mine) {
  const std::size_t block = block_size(o_.iters);
  const std::size_t slots = calls.size();
  double sum_us = 0;
  for (int i = 0; i < o_.iters; ++i) {
    // measure()'s barrier before the loop serves the first iteration.
    if (i > 0) control("barrier", [&] { boot_.barrier(); });
    // A fire drill's delay comes after the barrier: the other ranks wait for it inside the operation.
    if (delay_us > 0) std::this_thread::sleep_for(std::chrono::microseconds(delay_us));
    point.iteration = i;
    if (stall_here) {
      stalled_once_ = true;
      wd_.stall(point);
    }
    wd_.enter(point);
    const auto ts = Clock::now();
    comm_.launch(calls);
    comm_.complete();  // asynchronous backends (nccl): the wait for every slot's stream is timed
    const auto te = Clock::now();
    wd_.leave();
    const double us = us_between(ts, te);
    sum_us += us;
    for (std::size_t k = 0; k < slots; ++k) mine[k * block + static_cast<std::size_t>(i) + 2] = us;
  }
  // Every slot of this process shares the host clock.
  for (std::size_t k = 0; k < slots; ++k) mine[k * block] = sum_us / o_.iters;
}

std::vector<OpCall> Harness::calls_for(Coll c, const CollSizes& s, bool in_place,
                                       std::vector<InPlaceLayout>& layouts) const {
  const std::size_t esz = info(o_.dtype).size_bytes;
  const std::size_t slots = send_.size();
  layouts.assign(slots, InPlaceLayout{});
  std::vector<OpCall> calls;
  calls.reserve(slots);
  for (std::size_t k = 0; k < slots && !idle_; ++k) {
    if (in_place) layouts[k] = comm_.in_place_layout(c, s, static_cast<int>(k));
    char* recv = static_cast<char*>(recv_[k]);
    const void* send = in_place ? recv + layouts[k].input_offset * esz : send_[k];
    void* out = in_place ? recv + layouts[k].output_offset * esz : recv_[k];
    calls.push_back(OpCall{c, o_.dtype, o_.redop, o_.root, send, out, s.param_count, in_place});
  }
  return calls;
}

std::vector<ResultRecord> Harness::measure(Coll c, const CollSizes& s, bool in_place, int cycle) {
  const std::size_t slots = send_.size();
  std::vector<InPlaceLayout> layouts;
  const std::vector<OpCall> calls = calls_for(c, s, in_place, layouts);
  const int world_rank = boot_.rank();  // fire drills name world ranks (processes)
  std::uint64_t delay_us = 0;
  for (const InjectDelay& d : o_.inject_delays)
    if (d.rank == world_rank) delay_us += d.delay_us;
  const bool stall_here = o_.inject_stall_rank && *o_.inject_stall_rank == world_rank && !stalled_once_;

  OpPoint point{std::string(info(c).name), s.bytes, -1, in_place};
  std::vector<double> mine(slots * block_size(o_.iters));
  const bool checked = o_.check_passes > 0;
  if (idle_) {
    // Left out of every group: keep in step with the others' control traffic only.
    control("barrier", [&] { boot_.barrier(); });
    if (o_.graph_launches > 0) control("barrier", [&] { boot_.barrier(); });
    if (o_.sync)  // sync_loop's barriers between the timed iterations
      for (int i = 1; i < o_.iters; ++i) control("barrier", [&] { boot_.barrier(); });
    if (checked) control("sum wrong", [&] { wrong_total_ += boot_.allreduce_sum(0); });
    return records_of(c, s, in_place, cycle, mine, checked, nullptr);
  }
  for (int w = 0; w < o_.warmup_iters; ++w) {
    wd_.enter(point);
    comm_.run(calls);
    wd_.leave();
  }
  control("barrier", [&] { boot_.barrier(); });
  if (o_.graph_launches > 0) graph_loop(calls, point, stall_here, mine);
  else if (o_.sync) sync_loop(calls, point, delay_us, stall_here, mine);
  else time_loop(calls, point, delay_us, stall_here, mine);
  const SelfObserved* const self = comm_.self_observed();
  const nlohmann::json observed = self ? self->timed_observed() : nlohmann::json(nullptr);
  if (checked) check_passes(c, s, in_place, cycle, calls, layouts, mine);
  return records_of(c, s, in_place, cycle, mine, checked, observed);
}

void Harness::graph_loop(std::span<const OpCall> calls, OpPoint& point, bool stall_here, std::vector<double>& mine) {
  // As nccl-tests' -G: capture the -n launches once, then time the graph's replays.
  point.iteration = 0;
  if (stall_here) {
    stalled_once_ = true;
    wd_.stall(point);
  }
  GraphCapture* const graphs = comm_.graph_capture();
  if (!graphs) throw Error(ErrorCode::Internal, fmt::format("{}: no CUDA graphs for -G", comm_.name()));
  // Launches made during the capture can block (NCCL connects peers then): watched too.
  wd_.enter(point);
  graphs->begin_capture();
  for (int i = 0; i < o_.iters; ++i) comm_.launch(calls);
  graphs->end_capture();
  wd_.leave();
  control("barrier", [&] { boot_.barrier(); });
  const auto g0 = Clock::now();
  wd_.enter(point);
  graphs->replay(o_.graph_launches);
  comm_.complete();
  wd_.leave();
  // As nccl-tests, right after the measurement: a live graph keeps NCCL's communicator busy.
  graphs->drop_graphs();
  const double per_op = us_between(g0, Clock::now()) / (static_cast<double>(o_.iters) * o_.graph_launches);
  // No per-launch times in a graph: every iteration gets the mean.
  const std::size_t block = block_size(o_.iters);
  for (std::size_t k = 0; k < calls.size(); ++k)
    std::fill(mine.begin() + static_cast<std::ptrdiff_t>(k * block),
              mine.begin() + static_cast<std::ptrdiff_t>((k + 1) * block), per_op);
}

void Harness::check_passes(Coll c, const CollSizes& s, bool in_place, int cycle, std::span<const OpCall> calls,
                           const std::vector<InPlaceLayout>& layouts, std::vector<double>& mine) {
  const std::size_t esz = info(o_.dtype).size_bytes;
  const std::size_t slots = calls.size();
  const int first = comm_.rank();  // rank of slot 0 in this process's group
  const std::string phase = "check " + std::string(info(c).name);
  std::vector<std::int64_t> wrong(slots, 0);
  for (int pass = 0; pass < o_.check_passes; ++pass) {
    const int rep = pass + 1 + cycle * o_.check_passes;
    const auto spec = [&](std::size_t k) {
      return CheckSpec{c, o_.dtype, o_.redop, o_.root, comm_.size(), first + static_cast<int>(k), rep, s};
    };
    for (std::size_t k = 0; k < slots; ++k) {
      char* recv = static_cast<char*>(recv_[k]);
      comm_.fill_sentinel(static_cast<int>(k), recv, std::max(s.send_count, s.recv_count) * esz);
      void* input = in_place ? recv + layouts[k].input_offset * esz : send_[k];
      comm_.fill_input(static_cast<int>(k), input, s.send_count, spec(k));
    }
    wd_.enter(OpPoint{phase, s.bytes, -1, in_place});
    comm_.run(calls);
    wd_.leave();
    for (std::size_t k = 0; k < slots; ++k) {
      // An out-of-place broadcast's root has its data in its receive buffer on NCCL (checked, as
      // nccl-tests does); MPI_Bcast's root keeps it in the one buffer it passed.
      const bool root_bcast = c == Coll::Broadcast && !in_place && first + static_cast<int>(k) == o_.root &&
                              !comm_.broadcast_root_receives();
      if (!root_bcast)
        wrong[k] += comm_.count_wrong(static_cast<int>(k), static_cast<char*>(recv_[k]) + layouts[k].output_offset * esz,
                                      spec(k));
    }
  }
  std::int64_t local = 0;
  const std::size_t block = block_size(o_.iters);
  for (std::size_t k = 0; k < slots; ++k) {
    mine[k * block + 1] = static_cast<double>(wrong[k]);
    local += wrong[k];
  }
  control("sum wrong", [&] { wrong_total_ += boot_.allreduce_sum(local); });
}

std::vector<ResultRecord> Harness::records_of(Coll c, const CollSizes& s, bool in_place, int cycle,
                                              const std::vector<double>& mine, bool checked,
                                              const nlohmann::json& observed) {
  const std::size_t block = block_size(o_.iters);
  std::vector<double> gathered;
  control("gather timings", [&] { gathered = boot_.gather_to_root(mine); });
  if (boot_.rank() != 0) return {};
  std::vector<ResultRecord> records;
  for (const Group& g : groups_) {
    std::vector<double> blocks;
    for (int r : g.ranks)
      blocks.insert(blocks.end(), gathered.begin() + static_cast<std::ptrdiff_t>(static_cast<std::size_t>(r) * block),
                    gathered.begin() + static_cast<std::ptrdiff_t>((static_cast<std::size_t>(r) + 1) * block));
    ResultRecord rec = make_record(c, s, o_, in_place, cycle, blocks, g.ranks, checked, rank_hosts_);
    if (!g.name.empty()) rec.group = g.name;
    rec.observed = observed;
    sink_.add(rec);
    records.push_back(std::move(rec));
  }
  return records;
}

}  // namespace railkit::bench
