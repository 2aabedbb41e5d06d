// run_flow_plan: a collective plan at flow level. Every transfer run starts when what it depends
// on is done (sim/plan_progress.hpp) plus its step's latency; running transfers share the links
// of sim/coll_links.hpp max-min fairly (sim/flow_clock.hpp); a transfer lands its
// path's propagation delay after its last byte left. Steps run one after the other (a step starts
// when the previous one is done). A repeated step whose whole state comes back the same one or
// more runs later (a period) is jumped over by whole periods, which keeps 2(n-1) ring steps of
// thousands of ranks cheap; one that does not repeat within a work budget is timed channel by
// channel instead (channel_progressive below), and the outcome says so.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <deque>
#include <limits>
#include <optional>
#include <queue>
#include <span>

#include <fmt/format.h>

#include "core/error.hpp"
#include "sim/coll_links.hpp"
#include "sim/collective.hpp"
#include "sim/flow_clock.hpp"
#include "sim/flow_model.hpp"
#include "sim/plan_progress.hpp"

namespace railkit::sim {
namespace {

/// Where a transfer's current run is.
enum class Phase : char { Waiting, Starting, Moving, Landing };

struct Event {
  double t = 0;
  std::uint64_t seq = 0;
  std::uint32_t id = 0;
  bool operator>(const Event& o) const { return t != o.t ? t > o.t : seq > o.seq; }
};
using EventQueue = std::priority_queue<Event, std::vector<Event>, std::greater<Event>>;

/// Snapshots kept for the period check: periods of up to this many runs are found (a ring's
/// NVLink hops run ahead of its network hop by up to GPUs per node - 1 runs, so its state can
/// come back only after several runs).
constexpr std::size_t kSnapshots = 32;

/// The state of a pipelined step relative to its first transfer's runs, at one of that
/// transfer's completions: the basis of the period check.
struct Snapshot {
  double t = 0;
  int ref_runs = 0;
  std::vector<int> runs;       ///< per transfer of the step: runs done - ref_runs
  std::vector<char> phase;     ///< per transfer
  std::vector<double> offset;  ///< per transfer: its pending event - t (Starting, Landing)
  std::vector<double> left;    ///< per slot: bytes left
};

/// One step's transfers as flows on the flow level's links (sim/coll_links.hpp).
struct StepFlows {
  std::vector<TransferFlows> transfers;
  std::vector<double> capacity;  ///< per link: bytes per second
};

StepFlows step_flows(CollLinks& links, const Step& st) {
  StepFlows m;
  m.transfers.reserve(st.transfers.size());
  for (const Transfer& t : st.transfers) m.transfers.push_back(links.flows_of(t));
  for (std::size_t l = 0; l < links.count(); ++l) m.capacity.push_back(links.capacity(static_cast<int>(l)));
  return m;
}

/// The exact run of one step, event by event: run() gives its duration, or nothing once it has
/// spent `budget` (active flows summed over its events) without finishing.
class FlowExecutor {
 public:
  FlowExecutor(std::span<const Step> step, const StepFlows& m, double budget)
      : steps_(step), progress_(step), budget_(budget) {
    for (double cap : m.capacity) clock_.add_link(cap);
    const std::size_t n = progress_.transfers();
    for (std::uint32_t id = 0; id < n; ++id) {
      first_slot_.push_back(static_cast<std::uint32_t>(slot_bytes_.size()));
      for (const TransferFlow& tf : m.transfers[id].flows) {
        clock_.add_slot(tf.links);
        slot_bytes_.push_back(static_cast<double>(tf.bytes));
        slot_owner_.push_back(id);
      }
      delay_s_.push_back(static_cast<double>(m.transfers[id].delay_ps) * 1e-12);
    }
    first_slot_.push_back(static_cast<std::uint32_t>(slot_bytes_.size()));
    phase_.assign(n, Phase::Waiting);
    event_t_.assign(n, 0);
    slots_left_.assign(n, 0);
  }

  /// Runs the step from time 0; its simulated duration in seconds, or nothing past the budget.
  std::optional<double> run() {
    schedule(progress_.initial());
    std::vector<std::uint32_t> done;
    while (true) {
      const double t_flow = clock_.next_completion();
      const double t_event = events_.empty() ? std::numeric_limits<double>::infinity() : events_.top().t;
      if (!(std::min(t_flow, t_event) < std::numeric_limits<double>::infinity())) break;
      work_ += static_cast<double>(clock_.active_count());
      if (work_ > budget_) return std::nullopt;
      done.clear();
      clock_.advance(std::min(t_flow, t_event), done);
      for (std::uint32_t s : done) slot_done(s);
      while (!events_.empty() && events_.top().t <= clock_.now()) {
        const Event e = events_.top();
        events_.pop();
        fire(e.id);
      }
    }
    if (!progress_.finished())
      throw Error(ErrorCode::Internal, "flow-level collective: transfers left waiting with nothing running (a dependency cycle)");
    return end_s_;
  }

  std::uint64_t solutions() const noexcept { return clock_.solutions(); }

 private:
  void push(std::uint32_t id, double t) {
    event_t_[id] = t;
    events_.push(Event{t, seq_++, id});
  }

  void schedule(const std::vector<std::uint32_t>& ready) {
    for (std::uint32_t id : ready) {
      phase_[id] = Phase::Starting;
      push(id, clock_.now() + steps_[0].latency_us * 1e-6);
    }
  }

  void fire(std::uint32_t id) {
    if (phase_[id] == Phase::Landing) return finish(id);
    phase_[id] = Phase::Moving;
    slots_left_[id] = first_slot_[id + 1] - first_slot_[id];
    for (std::uint32_t s = first_slot_[id]; s < first_slot_[id + 1]; ++s) clock_.start(s, slot_bytes_[s]);
    if (slots_left_[id] == 0) land(id);
  }

  void slot_done(std::uint32_t s) {
    const std::uint32_t id = slot_owner_[s];
    if (--slots_left_[id] == 0) land(id);
  }

  void land(std::uint32_t id) {
    if (delay_s_[id] <= 0) return finish(id);
    phase_[id] = Phase::Landing;
    push(id, clock_.now() + delay_s_[id]);
  }

  void finish(std::uint32_t id) {
    phase_[id] = Phase::Waiting;
    end_s_ = std::max(end_s_, clock_.now());
    std::vector<std::uint32_t> ready;
    progress_.done(id, ready);
    schedule(ready);
    if (id == 0 && progress_.pipelined(0) && steps_[0].repeat >= 4) check_period();
  }

  Snapshot snapshot() const;
  bool same(const Snapshot& a, const Snapshot& b, double period) const;
  void check_period();
  void jump(int runs, double dt);

  std::span<const Step> steps_;
  PlanProgress progress_;
  double budget_;
  double work_ = 0;
  FlowClock clock_;
  std::vector<std::uint32_t> first_slot_;  ///< per transfer, and one past the last
  std::vector<double> slot_bytes_;
  std::vector<std::uint32_t> slot_owner_;
  std::vector<double> delay_s_;
  std::vector<Phase> phase_;
  std::vector<double> event_t_;
  std::vector<std::uint32_t> slots_left_;
  EventQueue events_;
  std::uint64_t seq_ = 0;
  double end_s_ = 0;
  std::deque<Snapshot> snapshots_;
};

Snapshot FlowExecutor::snapshot() const {
  Snapshot s;
  s.t = clock_.now();
  const std::uint32_t first = 0, n = progress_.size(0);
  s.ref_runs = progress_.runs_done(first);
  s.runs.reserve(n);
  s.phase.reserve(n);
  s.offset.reserve(n);
  for (std::uint32_t id = first; id < first + n; ++id) {
    s.runs.push_back(progress_.runs_done(id) - s.ref_runs);
    s.phase.push_back(static_cast<char>(phase_[id]));
    const bool pending = phase_[id] == Phase::Starting || phase_[id] == Phase::Landing;
    s.offset.push_back(pending ? event_t_[id] - s.t : 0.0);
  }
  for (std::uint32_t sl = first_slot_[first]; sl < first_slot_[first + n]; ++sl) s.left.push_back(clock_.remaining(sl));
  return s;
}

bool FlowExecutor::same(const Snapshot& a, const Snapshot& b, double period) const {
  if (a.runs != b.runs || a.phase != b.phase) return false;
  const double t_tol = 1e-7 * period;
  for (std::size_t i = 0; i < a.offset.size(); ++i)
    if (std::abs(a.offset[i] - b.offset[i]) > t_tol) return false;
  for (std::size_t i = 0; i < a.left.size(); ++i)
    if (std::abs(a.left[i] - b.left[i]) > 1e-7 * std::max(1.0, std::abs(a.left[i]))) return false;
  return true;
}

void FlowExecutor::check_period() {
  Snapshot now = snapshot();
  for (auto it = snapshots_.rbegin(); it != snapshots_.rend(); ++it) {  // the shortest period first
    const Snapshot& then = *it;
    const double period = now.t - then.t;
    const int runs = now.ref_runs - then.ref_runs;
    if (runs < 1 || !(period > 0) || !same(now, then, period)) continue;
    int furthest = 0;
    for (std::uint32_t id = 0; id < progress_.transfers(); ++id) furthest = std::max(furthest, progress_.runs_done(id));
    const int periods = (steps_[0].repeat - 1 - furthest) / runs;
    if (periods >= 1) jump(periods * runs, periods * period);
    snapshots_.clear();
    return;
  }
  snapshots_.push_back(std::move(now));
  if (snapshots_.size() > kSnapshots) snapshots_.pop_front();
}

void FlowExecutor::jump(int runs, double dt) {
  progress_.skip(0, runs);
  clock_.shift(dt);
  EventQueue shifted;
  while (!events_.empty()) {
    Event e = events_.top();
    events_.pop();
    e.t += dt;
    event_t_[e.id] = e.t;
    shifted.push(e);
  }
  events_ = std::move(shifted);
}

/// A repeated step timed channel by channel (the channels: the transfers its `after` links): the
/// max-min rates all transfers of the unfinished channels get together; a channel's run takes
/// the latency plus its slowest transfer (bytes / rate + propagation delay), its runs follow each
/// other; when a channel is done the others' rates are solved again. Seconds; `solutions` counts.
double channel_progressive(const Step& st, const StepFlows& m, std::uint64_t& solutions) {
  const std::size_t n = st.transfers.size();
  std::vector<std::size_t> root(n);
  for (std::size_t i = 0; i < n; ++i) root[i] = i;
  const auto find = [&](std::size_t i) {
    while (root[i] != i) i = root[i] = root[root[i]];
    return i;
  };
  for (std::size_t i = 0; i < n; ++i)
    for (std::uint32_t a : st.transfers[i].after) root[find(i)] = find(a);
  FlowSet set;
  for (double cap : m.capacity) set.add_link(cap);
  std::vector<std::size_t> owner;
  for (std::size_t i = 0; i < n; ++i)
    for (const TransferFlow& f : m.transfers[i].flows) {
      set.add_flow(f.links, static_cast<double>(f.bytes));
      owner.push_back(i);
    }
  std::vector<double> runs_left(n, static_cast<double>(st.repeat));  // per channel root
  std::vector<char> active(owner.size(), 1);
  double t = 0;
  while (true) {
    const std::vector<double> rate = set.maxmin(active);
    ++solutions;
    std::vector<double> period(n, 0.0);
    for (std::size_t i = 0; i < n; ++i) period[find(i)] = std::max(period[find(i)], static_cast<double>(m.transfers[i].delay_ps) * 1e-12);
    for (std::size_t f = 0; f < owner.size(); ++f)
      if (active[f]) {
        const std::size_t c = find(owner[f]);
        period[c] = std::max(period[c], set.bytes(f) / rate[f] + static_cast<double>(m.transfers[owner[f]].delay_ps) * 1e-12);
      }
    double dt = std::numeric_limits<double>::infinity();
    for (std::size_t c = 0; c < n; ++c)
      if (find(c) == c && runs_left[c] > 0) dt = std::min(dt, runs_left[c] * (period[c] + st.latency_us * 1e-6));
    if (!(dt < std::numeric_limits<double>::infinity())) return t;
    t += dt;
    for (std::size_t c = 0; c < n; ++c)
      if (find(c) == c && runs_left[c] > 0) {
        runs_left[c] -= dt / (period[c] + st.latency_us * 1e-6);
        if (runs_left[c] <= 1e-9 * st.repeat) runs_left[c] = 0;
      }
    for (std::size_t f = 0; f < owner.size(); ++f) active[f] = runs_left[find(owner[f])] > 0;
  }
}

}  // namespace

CollOutcome run_flow_plan(const ClusterSpec& c, CollPlan plan, double work_budget) {
  const auto t0 = std::chrono::steady_clock::now();
  CollOutcome out;
  out.fidelity = Fidelity::Flow;
  normalize_plan(c, plan.steps);
  CollLinks links(c);
  double time_s = 0;
  for (std::size_t k = 0; k < plan.steps.size(); ++k) {
    const Step& st = plan.steps[k];
    out.latency_us += st.latency_us * st.repeat;
    const StepFlows m = step_flows(links, st);
    const auto runs = static_cast<std::uint64_t>(st.repeat);
    for (const TransferFlows& f : m.transfers) {
      out.counters.net_bytes += f.net_bytes * runs;
      out.counters.spine_bytes += f.spine_bytes * runs;
      out.counters.nvlink_bytes += f.nvlink_bytes * runs;
    }
    FlowExecutor exec(std::span<const Step>(&st, 1), m, work_budget);
    const std::optional<double> exact = exec.run();
    out.counters.events += exec.solutions();
    if (exact) {
      time_s += *exact;
      continue;
    }
    time_s += channel_progressive(st, m, out.counters.events);
    plan.notes.push_back(fmt::format(
        "flow level: step {} ({} transfers x {} runs) did not repeat exactly within the work budget ({:g} active-flow "
        "solutions); it was timed channel by channel at the rates its transfers get together, not event by event",
        k + 1, st.transfers.size(), st.repeat, work_budget));
  }
  out.time_us = time_s * 1e6;
  plan.steps.clear();
  plan.steps.shrink_to_fit();
  out.plan = std::move(plan);
  out.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return out;
}

}  // namespace railkit::sim
