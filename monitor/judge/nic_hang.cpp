// nic-lag (a NIC's bytes per busy second against the job's NICs) and hang (a communicator whose
// oldest collective in flight outlived N x its usual time, or whose ranks stopped writing windows).
#include <algorithm>
#include <cmath>
#include <set>

#include <fmt/format.h>

#include "core/stats.hpp"
#include "monitor/judge/judge.hpp"

namespace railkit::monitor {
namespace {

using ojson = nlohmann::ordered_json;

/// A NIC of the job: its traffic summed over the kept windows of every rank on its host.
struct NicTotal {
  double bytes = 0, busy_us = 0;
  std::set<int> ranks;
  double rate_GBps() const { return busy_us > 0 ? bytes / busy_us / 1e3 : 0; }
};

std::string nic_rule_text(const JudgeOptions& o) {
  return fmt::format("nic-lag: a NIC whose proxy bytes per busy second is below {:g} x the median of the job's NICs "
                     "(at least {} NICs with traffic, each busy at least {:g} s)",
                     o.nic_fraction, o.min_nics, o.nic_min_busy_s);
}

/// One rank's state at "now" for the hang rule.
struct RankNow {
  int rank = 0;
  std::string host, gpu;
  bool silent = false, stuck = false;
  double end_age_s = 0, inflight_age_s = 0;
  const Window* last = nullptr;
};

std::string hang_rule_text(const JudgeOptions& o) {
  return fmt::format("hang: the oldest collective in flight older than max({:g} x the communicator's median collective "
                     "time, {:g} s), or a rank whose last window ended more than {:g} windows ago while its peers go "
                     "on; the ranks that stand out (silent, or the smaller side of stuck and not stuck) are named",
                     o.hang_factor, o.hang_min_s, o.silent_windows);
}

/// Median of the communicator's collective times (bucket medians), seconds; of `op` when it has one.
std::optional<double> usual_time_s(const std::vector<const RankStream*>& ranks, const std::string& op) {
  std::vector<double> of_op, all;
  for (const RankStream* s : ranks)
    for (const Window& w : s->windows)
      for (const WindowColl& c : w.colls)
        if (c.count > 0 && c.time_p50_us > 0) {
          all.push_back(c.time_p50_us / 1e6);
          if (c.op == op) of_op.push_back(c.time_p50_us / 1e6);
        }
  if (!of_op.empty()) return median(of_op);
  if (!all.empty()) return median(all);
  return std::nullopt;
}

ojson rank_now_json(const RankNow& r) {
  ojson j = {{"rank", r.rank}, {"host", r.host}, {"last_window_age_s", r.end_age_s}, {"silent", r.silent}};
  if (r.last->inflight.count > 0)
    j["inflight"] = {{"count", r.last->inflight.count}, {"oldest_op", r.last->inflight.oldest_op},
                     {"oldest_seq", r.last->inflight.oldest_seq}, {"age_s", r.inflight_age_s}};
  return j;
}

/// The ranks that stand out in a hang: silent ones, and the smaller side of stuck and not stuck.
std::vector<std::pair<const RankNow*, std::string>> hang_suspects(const std::vector<RankNow>& rs) {
  std::vector<const RankNow*> stuck, fine;
  std::vector<std::pair<const RankNow*, std::string>> out;
  // Silent ranks stand out only beside peers that still write windows; when every rank went
  // silent, the communicator's finding says so and no rank is singled out.
  const bool all_silent = std::all_of(rs.begin(), rs.end(), [](const RankNow& r) { return r.silent; });
  for (const RankNow& r : rs) {
    if (r.silent && all_silent) continue;
    if (r.silent)
      out.emplace_back(&r, fmt::format("rank {} wrote no window for {:.1f} s while its peers go on", r.rank, r.end_age_s));
    else
      (r.stuck ? stuck : fine).push_back(&r);
  }
  if (stuck.empty() || fine.empty() || stuck.size() == fine.size()) return out;
  if (fine.size() < stuck.size())
    for (const RankNow* r : fine)
      out.emplace_back(r, fmt::format("rank {} is not in the collective its {} peers wait in", r->rank, stuck.size()));
  else
    for (const RankNow* r : stuck)
      out.emplace_back(r, fmt::format("rank {} has a collective in flight for {:.1f} s while its peers go on", r->rank,
                                      r->inflight_age_s));
  return out;
}

}  // namespace

void judge_nics(const std::string& job, const std::vector<const RankStream*>& streams, const JudgeOptions& o,
                MonitorVerdict& out) {
  std::map<std::pair<std::string, std::string>, NicTotal> nics;
  for (const RankStream* s : streams)
    for (const Window& w : s->windows)
      for (const WindowNic& n : w.nics) {
        NicTotal& t = nics[{w.host, n.name}];
        t.bytes += n.bytes;
        t.busy_us += n.busy_us;
        t.ranks.insert(w.rank);
      }
  std::vector<std::pair<const std::pair<std::string, std::string>*, const NicTotal*>> judged;
  ojson too_idle = ojson::array();
  for (const auto& [k, t] : nics) {
    if (t.bytes > 0 && t.busy_us >= o.nic_min_busy_s * 1e6)
      judged.emplace_back(&k, &t);
    else if (t.bytes > 0 || t.busy_us > 0)
      too_idle.push_back({{"host", k.first}, {"nic", k.second}, {"bytes", t.bytes}, {"busy_us", t.busy_us}});
  }
  Finding base;
  base.check = "nic-lag";
  base.job = job;
  base.rule = "NIC peers' median";
  base.rule_text = nic_rule_text(o);
  if (static_cast<int>(judged.size()) < o.min_nics) {
    Finding f = base;
    f.verdict = Verdict::Skipped;
    f.measured = fmt::format("{} NICs", judged.size());
    f.expected = fmt::format(">= {} NICs with traffic", o.min_nics);
    f.reason = nics.empty() ? "no NIC traffic in the windows (no net-plugin events: not InfiniBand/RoCE, or none seen)"
                            : fmt::format("{} NIC{} with traffic: a median of the job's NICs needs {}", judged.size(),
                                          judged.size() == 1 ? "" : "s", o.min_nics);
    f.evidence = {{"nics_seen", nics.size()}, {"nics_with_traffic", judged.size()}, {"too_idle", too_idle}};
    out.findings.push_back(std::move(f));
    return;
  }
  std::vector<double> rates;
  for (const auto& [k, t] : judged) rates.push_back(t->rate_GBps());
  const double med = median(rates);
  double lowest = 1e300;
  bool flagged_any = false;
  for (const auto& [k, t] : judged) {
    const double ratio = med > 0 ? t->rate_GBps() / med : 1.0;
    lowest = std::min(lowest, ratio);
    const bool lag = ratio < o.nic_fraction;
    out.series.push_back({"railkit_monitor_nic_lag", {{"job", job}, {"host", k->first}, {"nic", k->second}}, lag ? 1 : 0});
    if (!lag) continue;
    flagged_any = true;
    Finding f = base;
    f.host = k->first;
    f.nic = k->second;
    f.verdict = Verdict::Fail;
    f.measured = fmt::format("{} {:.2f} GB/s = {:.2f} x median", k->second, t->rate_GBps(), ratio);
    f.expected = fmt::format(">= {:g} x {:.2f} GB/s", o.nic_fraction, med);
    f.reason = fmt::format("{} on {} moves {:.2f} GB/s per busy second, the job's NICs {:.2f} GB/s (median of {})",
                           k->second, k->first, t->rate_GBps(), med, judged.size());
    std::vector<int> ranks(t->ranks.begin(), t->ranks.end());
    f.evidence = {{"bytes", t->bytes}, {"busy_us", t->busy_us}, {"rate_GBps", t->rate_GBps()},
                  {"median_GBps", med}, {"ratio", ratio}, {"nics_judged", judged.size()}, {"ranks", ranks}};
    out.findings.push_back(std::move(f));
  }
  if (flagged_any) return;
  Finding f = base;
  f.verdict = Verdict::Pass;
  f.measured = fmt::format("{} NICs, lowest {:.2f} x median", judged.size(), lowest);
  f.expected = fmt::format(">= {:g} x {:.2f} GB/s", o.nic_fraction, med);
  f.evidence = {{"nics_judged", judged.size()}, {"median_GBps", med}, {"lowest_ratio", lowest}, {"too_idle", too_idle}};
  out.findings.push_back(std::move(f));
}

namespace {

std::vector<RankNow> ranks_now(const std::vector<const RankStream*>& ranks, double now, double threshold_s,
                               const JudgeOptions& o) {
  // The window length: the median over every window kept, since the last one of a rank may be the
  // short partial window the plugin flushes when the communicator is finalized.
  std::vector<double> lens;
  for (const RankStream* s : ranks)
    for (const Window& w : s->windows) lens.push_back(w.end_unix_s - w.start_unix_s);
  const double window_s = std::max(median(lens), 1e-3);
  std::vector<RankNow> rs;
  for (const RankStream* s : ranks) {
    const Window& w = s->windows.back();
    RankNow r{w.rank, w.host, w.gpu};
    r.last = &w;
    r.end_age_s = std::max(0.0, now - w.end_unix_s);
    r.silent = r.end_age_s > o.silent_windows * window_s;
    if (w.inflight.count > 0) r.inflight_age_s = w.inflight.oldest_age_s + r.end_age_s;
    r.stuck = w.inflight.count > 0 && r.inflight_age_s > threshold_s;
    rs.push_back(r);
  }
  return rs;
}

}  // namespace

void judge_hang(const std::string& job, const std::string& comm, const std::vector<const RankStream*>& ranks,
                const JudgeOptions& o, double now, MonitorVerdict& out) {
  std::string op;
  for (const RankStream* s : ranks)
    if (s->windows.back().inflight.count > 0 && op.empty()) op = s->windows.back().inflight.oldest_op;
  const std::optional<double> usual_s = usual_time_s(ranks, op);
  const double threshold_s = std::max(o.hang_factor * usual_s.value_or(0), o.hang_min_s);
  const std::vector<RankNow> rs = ranks_now(ranks, now, threshold_s, o);
  Finding f;
  f.check = "hang";
  f.job = job;
  f.comm = comm;
  f.rule = "N x usual time";
  f.rule_text = hang_rule_text(o);
  f.expected = usual_s ? fmt::format("< {:.2f} s ({:g} x {:.3g} ms, min {:g} s)", threshold_s, o.hang_factor, *usual_s * 1e3, o.hang_min_s)
                       : fmt::format("< {:.2f} s (no usual time: min {:g} s)", threshold_s, o.hang_min_s);
  int alive = 0, stuck = 0, silent = 0, inflight = 0;
  double oldest = 0;
  ojson per_rank = ojson::array(), not_completed = ojson::array();
  for (const RankNow& r : rs) {
    alive += r.silent ? 0 : 1;
    silent += r.silent ? 1 : 0;
    stuck += r.stuck ? 1 : 0;
    inflight += r.last->inflight.count > 0 ? 1 : 0;
    oldest = std::max(oldest, r.inflight_age_s);
    per_rank.push_back(rank_now_json(r));
    if (r.stuck || r.silent) not_completed.push_back(r.rank);
  }
  f.evidence = {{"usual_time_s", usual_s ? ojson(*usual_s) : ojson()}, {"threshold_s", threshold_s},
                {"nranks", rs.front().last->nranks}, {"ranks_seen", rs.size()},
                {"ranks_not_completed", not_completed}, {"ranks", per_rank}};
  if (alive == 0 && inflight == 0) {
    f.verdict = Verdict::Skipped;
    f.measured = fmt::format("silent {:.1f} s", rs.front().end_age_s);
    f.reason = "every rank stopped writing windows with nothing in flight: the job ended (or was stopped)";
    out.findings.push_back(std::move(f));
    return;
  }
  const bool hung = stuck > 0 || (silent > 0 && alive > 0) || (alive == 0 && inflight > 0);
  out.series.push_back({"railkit_monitor_hang", {{"job", job}, {"comm", comm}}, hung ? 1 : 0});
  if (!hung) {
    f.verdict = Verdict::Pass;
    f.measured = fmt::format("oldest in flight {:.2f} s", oldest);
    out.findings.push_back(std::move(f));
    return;
  }
  f.verdict = Verdict::Fail;
  f.measured = stuck > 0 ? fmt::format("{} of {} ranks in flight {:.1f} s", stuck, rs.size(), oldest)
                         : fmt::format("{} of {} ranks silent", silent, rs.size());
  const auto suspects = hang_suspects(rs);
  f.reason = alive == 0 ? "every rank stopped writing windows with collectives in flight"
             : suspects.empty() ? "no rank stands out: every rank waits in the same collective"
                                : fmt::format("{} rank{} stand{} out", suspects.size(), suspects.size() == 1 ? "" : "s",
                                              suspects.size() == 1 ? "s" : "");
  ojson sj = ojson::array();
  for (const auto& [r, why] : suspects) sj.push_back({{"rank", r->rank}, {"host", r->host}, {"why", why}});
  f.evidence["suspects"] = sj;
  const Finding comm_finding = f;
  out.findings.push_back(std::move(f));
  for (const auto& [r, why] : suspects) {
    Finding h = comm_finding;
    h.rank = r->rank;
    h.host = r->host;
    h.gpu = r->gpu;
    h.measured = why;
    h.reason = why;
    h.evidence = {{"rank", rank_now_json(*r)}, {"comm_hang", comm_finding.measured}};
    out.findings.push_back(std::move(h));
  }
}

}  // namespace railkit::monitor
