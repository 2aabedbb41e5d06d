#include "sim/plan_progress.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "core/error.hpp"

namespace railkit::sim {
namespace {

void check_transfer(const ClusterSpec& c, const Step& s, std::size_t k, std::size_t i) {
  const Transfer& t = s.transfers[i];
  const auto fail = [&](const std::string& what) {
    throw Error(ErrorCode::Internal, fmt::format("collective plan: step {}: transfer {} ({} -> {}): {}", k + 1, i, t.src, t.dst, what));
  };
  for (int g : {t.src, t.dst})
    if (g < 0 || g >= c.gpus()) fail(fmt::format("GPU {} out of range (0..{})", g, c.gpus() - 1));
  if (t.net && t.relay >= c.gpus()) fail(fmt::format("relay GPU {} out of range (0..{})", t.relay, c.gpus() - 1));
  const int hosts = c.fabric.topology.host_count();
  for (const auto& [h, what] : {std::pair{t.nic_src, "nic_src"}, std::pair{t.nic_dst, "nic_dst"}})
    if (t.net && (h < 0 || h >= hosts)) fail(fmt::format("{} {} is not a fabric host (0..{})", what, h, hosts - 1));
  for (std::uint32_t a : t.after)
    if (a >= s.transfers.size()) fail(fmt::format("after names transfer {} of {}", a, s.transfers.size()));
}

}  // namespace

void normalize_plan(const ClusterSpec& c, std::vector<Step>& steps) {
  steps.erase(std::remove_if(steps.begin(), steps.end(), [](const Step& s) { return s.repeat < 1; }), steps.end());
  for (std::size_t k = 0; k < steps.size(); ++k) {
    Step& s = steps[k];
    if (!(s.latency_us >= 0) || s.latency_us > 1e12)
      throw Error(ErrorCode::Internal, fmt::format("collective plan: step {}: latency_us {} is not a time", k + 1, s.latency_us));
    if (s.transfers.empty()) s.transfers.push_back(Transfer{});  // 0 bytes on GPU 0: its runs take the latency
    for (std::size_t i = 0; i < s.transfers.size(); ++i) check_transfer(c, s, k, i);
  }
}

PlanProgress::PlanProgress(std::span<const Step> steps) : steps_(steps) {
  first_.push_back(0);
  for (const Step& s : steps) {
    first_.push_back(first_.back() + static_cast<std::uint32_t>(s.transfers.size()));
    repeat_.push_back(s.repeat);
  }
  const std::uint32_t n = first_.back();
  step_of_.resize(n);
  done_.assign(n, 0);
  busy_.assign(n, 0);
  waiters_.resize(n);
  barrier_members_.resize(steps.size());
  runs_count_.resize(steps.size());
  finished_in_step_.assign(steps.size(), 0);
  for (std::size_t k = 0; k < steps.size(); ++k) {
    for (std::uint32_t i = 0; i < size(k); ++i) {
      const std::uint32_t id = first_[k] + i;
      step_of_[id] = k;
      const std::vector<std::uint32_t>& after = steps[k].transfers[i].after;
      if (after.empty()) barrier_members_[k].push_back(id);
      for (std::uint32_t a : after) waiters_[first_[k] + a].push_back(id);
    }
    if (!barrier_members_[k].empty()) runs_count_[k].assign(static_cast<std::size_t>(repeat_[k]), 0);
  }
}

std::vector<std::uint32_t> PlanProgress::initial() {
  std::vector<std::uint32_t> ready;
  if (steps_.empty()) return ready;
  for (std::uint32_t id = first_[0]; id < first_[1]; ++id) offer(id, ready);
  return ready;
}

bool PlanProgress::may_start(std::uint32_t id) const {
  const std::size_t k = step_of_[id];
  const int r = done_[id];
  if (busy_[id] || r >= repeat_[k]) return false;
  const std::vector<std::uint32_t>& after = steps_[k].transfers[id - first_[k]].after;
  if (r == 0) return k == 0 || finished_in_step_[k - 1] == size(k - 1);
  if (after.empty()) return runs_count_[k][static_cast<std::size_t>(r - 1)] == size(k);
  return std::all_of(after.begin(), after.end(), [&](std::uint32_t a) { return done_[first_[k] + a] >= r; });
}

void PlanProgress::offer(std::uint32_t id, std::vector<std::uint32_t>& ready) {
  if (!may_start(id)) return;
  busy_[id] = 1;
  ready.push_back(id);
}

void PlanProgress::done(std::uint32_t id, std::vector<std::uint32_t>& ready) {
  const std::size_t k = step_of_[id];
  if (!busy_[id]) throw Error(ErrorCode::Internal, fmt::format("collective plan: transfer {} done without running", id));
  busy_[id] = 0;
  const int r = done_[id]++;
  offer(id, ready);
  for (std::uint32_t w : waiters_[id]) offer(w, ready);
  if (!runs_count_[k].empty() && ++runs_count_[k][static_cast<std::size_t>(r)] == size(k))
    for (std::uint32_t w : barrier_members_[k]) offer(w, ready);
  if (done_[id] < repeat_[k] || ++finished_in_step_[k] < size(k)) return;
  ++finished_steps_;
  if (k + 1 < repeat_.size())
    for (std::uint32_t w = first_[k + 1]; w < first_[k + 2]; ++w) offer(w, ready);
}

void PlanProgress::skip(std::size_t step, int runs) {
  if (!pipelined(step)) throw Error(ErrorCode::Internal, "collective plan: runs skipped in a step with barriers");
  for (std::uint32_t id = first_[step]; id < first_[step + 1]; ++id) {
    done_[id] += runs;
    if (done_[id] >= repeat_[step])
      throw Error(ErrorCode::Internal, fmt::format("collective plan: transfer {} skipped past its last run", id));
  }
}

}  // namespace railkit::sim
