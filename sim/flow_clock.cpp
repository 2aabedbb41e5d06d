#include "sim/flow_clock.hpp"

#include <algorithm>
#include <functional>
#include <limits>

#include "core/error.hpp"

namespace railkit::sim {

int FlowClock::add_link(double bytes_per_s) {
  if (!(bytes_per_s > 0)) throw Error(ErrorCode::Internal, "flow model: a link needs a positive capacity");
  capacity_.push_back(bytes_per_s);
  on_link_.emplace_back();
  mark_link_.push_back(0);
  users_.push_back(0);
  spare_.push_back(0);
  return static_cast<int>(capacity_.size() - 1);
}

std::uint32_t FlowClock::add_slot(std::span<const int> links) {
  for (int l : links) {
    if (l < 0 || static_cast<std::size_t>(l) >= capacity_.size()) throw Error(ErrorCode::Internal, "flow model: unknown link");
    path_links_.push_back(static_cast<std::uint32_t>(l));
  }
  path_start_.push_back(static_cast<std::uint32_t>(path_links_.size()));
  for (auto* v : {&bytes_, &left0_, &t0_, &rate_}) v->push_back(0);
  gen_.push_back(0);
  active_.push_back(0);
  mark_flow_.push_back(0);
  frozen_.push_back(0);
  return static_cast<std::uint32_t>(rate_.size() - 1);
}

double FlowClock::remaining(std::uint32_t s) const {
  return active_[s] ? std::max(0.0, left0_[s] - rate_[s] * (now_s_ - t0_[s])) : 0.0;
}

void FlowClock::start(std::uint32_t s, double bytes) {
  if (s >= rate_.size() || active_[s]) throw Error(ErrorCode::Internal, "flow clock: a slot started twice at once");
  active_[s] = 1;
  ++active_count_;
  bytes_[s] = left0_[s] = std::max(0.0, bytes);
  t0_[s] = now_s_;
  rate_[s] = 0;
  ++gen_[s];
  if (path_start_[s] == path_start_[s + 1] || bytes_[s] <= 0) {  // completes at once, limits nobody
    heap_.push_back(Due{now_s_, s, gen_[s]});
    std::push_heap(heap_.begin(), heap_.end(), std::greater<Due>());
    return;
  }
  for (std::uint32_t k = path_start_[s]; k < path_start_[s + 1]; ++k) {
    on_link_[path_links_[k]].push_back(s);
    dirty_links_.push_back(path_links_[k]);
  }
}

void FlowClock::stop(std::uint32_t f) {
  active_[f] = 0;
  --active_count_;
  ++gen_[f];
  if (bytes_[f] <= 0) return;
  for (std::uint32_t k = path_start_[f]; k < path_start_[f + 1]; ++k) {
    std::vector<std::uint32_t>& on = on_link_[path_links_[k]];
    const auto it = std::find(on.begin(), on.end(), f);
    if (it != on.end()) {
      *it = on.back();
      on.pop_back();
    }
    dirty_links_.push_back(path_links_[k]);
  }
}

void FlowClock::component(std::vector<std::uint32_t>& flows, std::vector<std::uint32_t>& links) {
  // Every active flow that shares a link with a changed one, directly or through others.
  ++epoch_;
  std::vector<std::uint32_t> todo;
  for (std::uint32_t l : dirty_links_)
    if (mark_link_[l] != epoch_) {
      mark_link_[l] = epoch_;
      links.push_back(l);
      todo.push_back(l);
    }
  dirty_links_.clear();
  while (!todo.empty()) {
    const std::uint32_t l = todo.back();
    todo.pop_back();
    for (std::uint32_t f : on_link_[l]) {
      if (mark_flow_[f] == epoch_) continue;
      mark_flow_[f] = epoch_;
      flows.push_back(f);
      for (std::uint32_t k = path_start_[f]; k < path_start_[f + 1]; ++k) {
        const std::uint32_t l2 = path_links_[k];
        if (mark_link_[l2] == epoch_) continue;
        mark_link_[l2] = epoch_;
        links.push_back(l2);
        todo.push_back(l2);
      }
    }
  }
}

void FlowClock::fill(const std::vector<std::uint32_t>& flows, const std::vector<std::uint32_t>& links) {
  // Progressive filling: the link with the least capacity left per unfrozen flow saturates next
  // and freezes its flows at the level reached.
  for (std::uint32_t l : links) {
    users_[l] = static_cast<std::uint32_t>(on_link_[l].size());
    spare_[l] = capacity_[l];
  }
  for (std::uint32_t f : flows) frozen_[f] = 0;
  double level = 0;
  std::vector<std::uint32_t> full;
  while (true) {
    double delta = std::numeric_limits<double>::infinity();
    for (std::uint32_t l : links)
      if (users_[l] > 0) delta = std::min(delta, spare_[l] / users_[l]);
    if (delta == std::numeric_limits<double>::infinity()) break;
    delta = std::max(0.0, delta);
    level += delta;
    full.clear();
    for (std::uint32_t l : links) {
      if (users_[l] == 0) continue;
      spare_[l] -= delta * users_[l];
      if (spare_[l] <= 1e-9 * capacity_[l]) full.push_back(l);
    }
    for (std::uint32_t l : full)
      for (std::uint32_t f : on_link_[l]) {
        if (frozen_[f]) continue;
        frozen_[f] = 1;
        rate_[f] = level;
        for (std::uint32_t k = path_start_[f]; k < path_start_[f + 1]; ++k) --users_[path_links_[k]];
      }
  }
}

void FlowClock::project(std::uint32_t f) {
  ++gen_[f];
  if (!(rate_[f] > 0)) throw Error(ErrorCode::Internal, "flow model: an active flow without a rate");
  heap_.push_back(Due{now_s_ + left0_[f] / rate_[f], f, gen_[f]});
  std::push_heap(heap_.begin(), heap_.end(), std::greater<Due>());
}

void FlowClock::solve() {
  if (dirty_links_.empty()) return;
  std::vector<std::uint32_t> flows, links;
  component(flows, links);
  if (flows.empty()) return;
  ++solutions_;
  for (std::uint32_t f : flows) {
    left0_[f] = remaining(f);
    t0_[f] = now_s_;
  }
  fill(flows, links);
  for (std::uint32_t f : flows) project(f);
  if (heap_.size() > 4 * active_count_ + 1024) {  // drop the stale entries
    std::erase_if(heap_, [&](const Due& d) { return !active_[d.slot] || d.gen != gen_[d.slot]; });
    std::make_heap(heap_.begin(), heap_.end(), std::greater<Due>());
  }
}

double FlowClock::next_completion() {
  solve();
  while (!heap_.empty() && (!active_[heap_.front().slot] || heap_.front().gen != gen_[heap_.front().slot])) {
    std::pop_heap(heap_.begin(), heap_.end(), std::greater<Due>());
    heap_.pop_back();
  }
  return heap_.empty() ? std::numeric_limits<double>::infinity() : std::max(now_s_, heap_.front().t);
}

void FlowClock::advance(double t_s, std::vector<std::uint32_t>& done) {
  solve();
  now_s_ = std::max(now_s_, t_s);
  const std::size_t first = done.size();
  while (!heap_.empty()) {
    const Due d = heap_.front();
    const bool stale = !active_[d.slot] || d.gen != gen_[d.slot];
    // As FlowSet::drain: within a relative 1e-9 of its bytes (or 1e-12 of the time) from its end.
    const double slack = rate_[d.slot] > 0 ? 1e-9 * bytes_[d.slot] / rate_[d.slot] : 0.0;
    if (!stale && d.t > now_s_ + std::max(slack, 1e-12 * now_s_)) break;
    std::pop_heap(heap_.begin(), heap_.end(), std::greater<Due>());
    heap_.pop_back();
    if (stale) continue;
    stop(d.slot);
    done.push_back(d.slot);
  }
  std::sort(done.begin() + static_cast<std::ptrdiff_t>(first), done.end());
}

void FlowClock::shift(double dt_s) {
  now_s_ += dt_s;
  for (std::size_t f = 0; f < rate_.size(); ++f)
    if (active_[f]) t0_[f] += dt_s;
  for (Due& d : heap_) d.t += dt_s;
}

}  // namespace railkit::sim
