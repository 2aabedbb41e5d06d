// late-start and waits-least: the collectives of a communicator aligned across its ranks by
// (op, seq), each rank's start against the median of its peers' starts, and its time against theirs.
#include <algorithm>
#include <cmath>
#include <set>

#include <fmt/format.h>

#include "core/stats.hpp"
#include "monitor/judge/judge.hpp"

namespace railkit::monitor {
namespace {

using ojson = nlohmann::ordered_json;

/// One rank's record of one aligned collective.
struct Point {
  int rank = 0;
  std::int64_t start_ns = 0;
  double time_us = 0;
};

/// What one rank showed over the collectives aligned with its peers.
struct RankTally {
  int rank = 0;
  std::string host, gpu;
  int judged = 0, late = 0, least = 0;
  std::vector<double> delays_us;  ///< start minus the peers' median start, per aligned collective
  ojson examples = ojson::array();
};

/// Median of `sorted` without one occurrence of `value` (which it holds); 2 values at least.
double median_without(const std::vector<double>& sorted, double value) {
  const std::size_t skip = static_cast<std::size_t>(std::lower_bound(sorted.begin(), sorted.end(), value) - sorted.begin());
  const std::size_t m = sorted.size() - 1;
  const auto at = [&](std::size_t j) { return sorted[j < skip ? j : j + 1]; };
  return m % 2 == 1 ? at(m / 2) : (at(m / 2 - 1) + at(m / 2)) / 2;
}

std::string ms_text(double us) { return fmt::format("{:+.2f} ms", us / 1000.0); }

/// Tallies one aligned collective into the ranks' records.
void tally_collective(const std::string& op, std::uint64_t seq, const std::vector<Point>& pts, const JudgeOptions& o,
                      std::map<int, RankTally>& tallies) {
  std::int64_t base = pts.front().start_ns;
  for (const Point& p : pts) base = std::min(base, p.start_ns);
  std::vector<double> starts, times;
  for (const Point& p : pts) {
    starts.push_back(static_cast<double>(p.start_ns - base) / 1000.0);
    times.push_back(p.time_us);
  }
  std::sort(starts.begin(), starts.end());
  std::sort(times.begin(), times.end());
  const double threshold_us = std::max(o.late_us, o.late_time_share * median(times));
  for (const Point& p : pts) {
    RankTally& t = tallies[p.rank];
    const double start_us = static_cast<double>(p.start_ns - base) / 1000.0;
    const double delay_us = start_us - median_without(starts, start_us);
    const double peers_time_us = median_without(times, p.time_us);
    const bool is_late = delay_us > threshold_us;
    const bool unique_min = p.time_us == times.front() && (times.size() < 2 || times[1] > times.front());
    const bool waits_least = unique_min && peers_time_us - p.time_us > threshold_us;
    ++t.judged;
    t.late += is_late ? 1 : 0;
    t.least += waits_least ? 1 : 0;
    t.delays_us.push_back(delay_us);
    if ((is_late || waits_least) && t.examples.size() < 5)
      t.examples.push_back({{"op", op}, {"seq", seq}, {"delay_us", delay_us}, {"time_us", p.time_us},
                            {"peers_median_time_us", peers_time_us}, {"threshold_us", threshold_us}});
  }
}

std::string rule_text(const JudgeOptions& o) {
  return fmt::format(
      "late-start: over the collectives aligned by (comm, op, seq) with at least {} ranks, a start later than the "
      "median of the peers' starts by more than max({} us, {:g}% of the collective's median time) in at least {:g}% "
      "of at least {} of them; across hosts (clocks not synchronized) only when waits-least corroborates it. "
      "waits-least: the shortest time of the collective, below the peers' median time by the same margin, in at least "
      "{:g}% of them",
      o.min_ranks, o.late_us, o.late_time_share * 100, o.late_fraction * 100, o.min_aligned, o.late_fraction * 100,
      o.least_fraction * 100);
}

Finding base_finding(const std::string& check, const std::string& job, const std::string& comm, const JudgeOptions& o) {
  Finding f;
  f.check = check;
  f.job = job;
  f.comm = comm;
  f.rule = check == "late-start" ? "peers' median start" : "shortest time";
  f.rule_text = rule_text(o);
  return f;
}

ojson tally_evidence(const RankTally& t, bool one_clock) {
  std::vector<double> d = t.delays_us;
  return {{"aligned", t.judged}, {"late", t.late}, {"waits_least", t.least}, {"median_delay_us", median(d)},
          {"max_delay_us", d.empty() ? 0.0 : *std::max_element(d.begin(), d.end())},
          {"one_clock", one_clock}, {"examples", t.examples}};
}

/// The findings of one judged rank that was late or waited least.
void rank_findings(const RankTally& t, bool one_clock, const std::string& job, const std::string& comm,
                   const JudgeOptions& o, MonitorVerdict& out) {
  const bool late = t.late >= o.late_fraction * t.judged;
  const bool least = t.least >= o.least_fraction * t.judged;
  const auto subject = [&](Finding f) {
    f.rank = t.rank;
    f.host = t.host;
    f.gpu = t.gpu;
    f.evidence = tally_evidence(t, one_clock);
    return f;
  };
  std::vector<double> d = t.delays_us;
  if (late) {
    Finding f = subject(base_finding("late-start", job, comm, o));
    f.measured = fmt::format("rank {} late in {}/{} (median {})", t.rank, t.late, t.judged, ms_text(median(d)));
    f.expected = fmt::format("late in < {:g}%", o.late_fraction * 100);
    f.verdict = (least || one_clock) ? Verdict::Fail : Verdict::Reported;
    f.reason = least       ? "starts late and waits least: its peers wait for it"
               : one_clock ? "starts late against peers on the same host (one clock)"
                           : "starts late, but does not wait least: an offset between the hosts' clocks could explain it";
    out.findings.push_back(std::move(f));
  }
  if (least) {
    Finding f = subject(base_finding("waits-least", job, comm, o));
    f.measured = fmt::format("rank {} shortest in {}/{}", t.rank, t.least, t.judged);
    f.expected = fmt::format("shortest in < {:g}%", o.least_fraction * 100);
    f.verdict = late ? Verdict::Fail : Verdict::Reported;
    f.reason = late ? "corroborates late-start without a clock" : "waits least, but its start is not late: not named on one sign";
    out.findings.push_back(std::move(f));
  }
}

}  // namespace

void judge_stragglers(const std::string& job, const std::string& comm, const std::vector<const RankStream*>& ranks,
                      const JudgeOptions& o, MonitorVerdict& out) {
  std::map<std::pair<std::string, std::uint64_t>, std::vector<Point>> aligned;
  std::map<int, RankTally> tallies;
  std::set<std::string> hosts;
  int with_samples = 0;
  for (const RankStream* s : ranks) {
    const Window& last = s->windows.back();
    hosts.insert(last.host);
    std::map<std::pair<std::string, std::uint64_t>, Point> own;  // one record per (op, seq) and rank
    for (const Window& w : s->windows)
      for (const WindowSample& x : w.samples) own[{x.op, x.seq}] = Point{last.rank, x.start_unix_ns, x.time_us};
    with_samples += own.empty() ? 0 : 1;
    for (auto& [k, p] : own) aligned[k].push_back(p);
    RankTally& t = tallies[last.rank];
    t.rank = last.rank;
    t.host = last.host;
    t.gpu = last.gpu;
  }
  int n_aligned = 0;
  for (const auto& [k, pts] : aligned)
    if (static_cast<int>(pts.size()) >= o.min_ranks) {
      tally_collective(k.first, k.second, pts, o, tallies);
      ++n_aligned;
    }
  const bool one_clock = hosts.size() == 1;
  std::vector<const RankTally*> judged;
  for (const auto& [r, t] : tallies)
    if (t.judged >= o.min_aligned) judged.push_back(&t);
  if (judged.empty()) {
    for (const char* check : {"late-start", "waits-least"}) {
      Finding f = base_finding(check, job, comm, o);
      f.verdict = Verdict::Skipped;
      f.measured = fmt::format("{} aligned", n_aligned);
      f.expected = fmt::format(">= {} aligned, {} ranks", o.min_aligned, o.min_ranks);
      f.reason = with_samples < o.min_ranks
                     ? fmt::format("{} rank{} with samples: a peers' median needs {}", with_samples,
                                   with_samples == 1 ? "" : "s", o.min_ranks)
                     : fmt::format("no rank has {} collectives aligned with {} ranks (most: {})", o.min_aligned,
                                   o.min_ranks, n_aligned);
      f.evidence = {{"ranks", ranks.size()}, {"ranks_with_samples", with_samples}, {"aligned", n_aligned}};
      out.findings.push_back(std::move(f));
    }
    return;
  }
  const std::size_t before = out.findings.size();
  ojson per_rank = ojson::array();
  for (const RankTally* t : judged) {
    rank_findings(*t, one_clock, job, comm, o, out);
    per_rank.push_back({{"rank", t->rank}, {"host", t->host}, {"aligned", t->judged}, {"late", t->late}, {"waits_least", t->least}});
  }
  for (const RankTally* t : judged) {
    bool flagged = false;
    for (std::size_t i = before; i < out.findings.size(); ++i)
      flagged |= out.findings[i].check == "late-start" && out.findings[i].verdict == Verdict::Fail && out.findings[i].rank == t->rank;
    out.series.push_back({"railkit_monitor_straggler", {{"job", job}, {"rank", std::to_string(t->rank)}, {"host", t->host}}, flagged ? 1 : 0});
  }
  if (out.findings.size() == before) {
    for (const char* check : {"late-start", "waits-least"}) {
      Finding f = base_finding(check, job, comm, o);
      f.verdict = Verdict::Pass;
      f.measured = fmt::format("0 of {} ranks, {} aligned", judged.size(), n_aligned);
      f.expected = fmt::format("no rank in >= {:g}%", (std::string(check) == "late-start" ? o.late_fraction : o.least_fraction) * 100);
      f.evidence = {{"aligned", n_aligned}, {"one_clock", one_clock}, {"ranks", per_rank}};
      out.findings.push_back(std::move(f));
    }
  }
}

}  // namespace railkit::monitor
