// The judge: groups the windows by job and communicator, runs each rule, and writes the verdict.
#include "monitor/judge/judge.hpp"

#include <chrono>
#include <set>

#include <fmt/format.h>

#include "core/clock.hpp"
#include "core/prom.hpp"
#include "core/version.hpp"

namespace railkit::monitor {
namespace {

using ojson = nlohmann::ordered_json;

/// The verdict's metrics: name and help, in the order verdict.prom writes them.
struct MetricDoc {
  const char* name;
  const char* help;
};
constexpr MetricDoc kVerdictMetrics[] = {
    {"railkit_monitor_straggler", "1 when railkit monitor judge named this rank late (late-start), 0 when judged clean"},
    {"railkit_monitor_nic_lag", "1 when railkit monitor judge named this NIC lagging (nic-lag), 0 when judged clean"},
    {"railkit_monitor_hang", "1 when railkit monitor judge named this communicator hung, 0 when judged clean"},
};

double clock_now_s() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

ojson group_json(const std::string& job, const std::string& comm, const std::vector<const RankStream*>& ranks) {
  std::set<std::string> hosts, sources;
  std::uint64_t windows = 0, dropped = 0;
  for (const RankStream* s : ranks) {
    hosts.insert(s->windows.back().host);
    windows += s->seen;
    for (const Window& w : s->windows) {
      sources.insert(w.source);
      dropped += w.dropped_events;
    }
  }
  const Window& w = ranks.front()->windows.back();
  return {{"job", job}, {"comm", comm}, {"comm_name", w.comm_name}, {"nranks", w.nranks},
          {"ranks_seen", ranks.size()}, {"hosts", std::vector<std::string>(hosts.begin(), hosts.end())},
          {"source", sources.count("simulated") ? "simulated" : "nccl"}, {"windows", windows},
          {"dropped_events", dropped}};
}

}  // namespace

MonitorVerdict judge(const Corpus& corpus, const JudgeOptions& opts) {
  MonitorVerdict v;
  v.options = opts;
  v.now_unix_s = opts.now_unix_s.value_or(clock_now_s());
  std::set<std::string> sources;
  std::map<std::pair<std::string, std::string>, std::vector<const RankStream*>> groups;
  std::map<std::string, std::vector<const RankStream*>> jobs;
  for (const auto& [key, stream] : corpus.streams) {
    if (stream.windows.empty()) continue;
    groups[{key.job, key.comm}].push_back(&stream);
    jobs[key.job].push_back(&stream);
    for (const Window& w : stream.windows) sources.insert(w.source);
  }
  for (const auto& [key, ranks] : groups) {
    v.groups.push_back(group_json(key.first, key.second, ranks));
    judge_stragglers(key.first, key.second, ranks, opts, v);
    judge_hang(key.first, key.second, ranks, opts, v.now_unix_s, v);
  }
  for (const auto& [job, streams] : jobs) judge_nics(job, streams, opts, v);
  v.source = sources.count("simulated") == 0 ? "nccl" : sources.count("nccl") ? "nccl+simulated" : "simulated";
  if (v.simulated())
    v.notes.push_back("simulated: windows with source simulated were judged (" + v.source +
                      "): this verdict names simulated ranks and hosts, never a measured fault");
  v.inputs = {{"dirs", corpus.dirs}, {"files", corpus.files}, {"lines", corpus.lines}, {"windows", corpus.windows},
              {"problems", corpus.problems}, {"problems_not_listed", corpus.problems_dropped}};
  const std::uint64_t problems = corpus.problems.size() + corpus.problems_dropped;
  if (problems > 0)
    v.notes.push_back(fmt::format("{} input problem{} (lines of another schema, not JSON, torn or with a bad field; the "
                                  "older part of a large file): see inputs.problems in verdict.json",
                                  problems, problems == 1 ? "" : "s"));
  return v;
}

Verdict MonitorVerdict::overall() const {
  bool pass = false, reported = false;
  for (const Finding& f : findings) {
    if (f.verdict == Verdict::Fail) return Verdict::Fail;
    pass |= f.verdict == Verdict::Pass || f.verdict == Verdict::Explained;
    reported |= f.verdict == Verdict::Reported;
  }
  return pass ? Verdict::Pass : reported ? Verdict::Reported : Verdict::Skipped;
}

std::map<std::string, int> MonitorVerdict::counts() const {
  std::map<std::string, int> out;
  for (Verdict x : {Verdict::Pass, Verdict::Fail, Verdict::Skipped, Verdict::Explained, Verdict::Reported})
    out[std::string(name(x))] = 0;
  for (const Finding& f : findings) ++out[std::string(name(f.verdict))];
  return out;
}

std::string MonitorVerdict::reason() const {
  const auto c = counts();
  const Verdict o = overall();
  std::string named;
  for (const Finding& f : findings) {
    if (f.verdict != Verdict::Fail || (f.host.empty() && f.check != "hang")) continue;
    std::string who = f.host.empty() ? "comm " + f.comm : f.host;
    if (f.rank) who += fmt::format(" rank {}", *f.rank);
    if (!f.nic.empty()) who += " " + f.nic;
    named += (named.empty() ? "" : ", ") + f.check + " (" + who + ")";
  }
  std::string extra;
  if (c.at("reported") > 0) extra += fmt::format("; {} reported without a rule that could name", c.at("reported"));
  if (c.at("skipped") > 0) extra += fmt::format("; {} skipped", c.at("skipped"));
  if (o == Verdict::Fail) return fmt::format("{} check{} failed: {}{}", c.at("fail"), c.at("fail") == 1 ? "" : "s", named, extra);
  if (o == Verdict::Pass) return fmt::format("{} check{} judged, all passed{}", c.at("pass"), c.at("pass") == 1 ? "" : "s", extra);
  return "nothing judged" + extra;
}

nlohmann::ordered_json to_json(const MonitorVerdict& v) {
  ojson checks = ojson::array();
  for (const Finding& f : v.findings) {
    ojson c = {{"check", f.check}, {"job", f.job}};
    if (!f.comm.empty()) c["comm"] = f.comm;
    if (f.rank) c["rank"] = *f.rank;
    if (!f.host.empty()) c["host"] = f.host;
    if (!f.gpu.empty()) c["gpu"] = f.gpu;
    if (!f.nic.empty()) c["nic"] = f.nic;
    c.update(ojson{{"verdict", name(f.verdict)}, {"measured", f.measured}, {"expected", f.expected}, {"rule", f.rule},
                   {"rule_text", f.rule_text}, {"reason", f.reason}, {"evidence", f.evidence}});
    checks.push_back(std::move(c));
  }
  const JudgeOptions& o = v.options;
  const ojson rules = {{"late_us", o.late_us}, {"late_time_share", o.late_time_share}, {"late_fraction", o.late_fraction},
                       {"min_aligned", o.min_aligned}, {"min_ranks", o.min_ranks}, {"least_fraction", o.least_fraction},
                       {"nic_fraction", o.nic_fraction}, {"min_nics", o.min_nics}, {"nic_min_busy_s", o.nic_min_busy_s},
                       {"hang_factor", o.hang_factor}, {"hang_min_s", o.hang_min_s}, {"silent_windows", o.silent_windows}};
  return {{"schema", kVerdictSchema}, {"railkit_version", kVersion}, {"created", utc_now_iso()},
          {"source", v.source}, {"simulated", v.simulated()}, {"now_unix_s", v.now_unix_s},
          {"verdict", name(v.overall())}, {"verdict_reason", v.reason()}, {"counts", v.counts()},
          {"rules", rules}, {"notes", v.notes}, {"inputs", v.inputs}, {"groups", v.groups}, {"checks", checks}};
}

std::string render_prometheus(const MonitorVerdict& v) {
  std::map<std::string, std::map<std::string, int>> by_metric;  // metric -> labels -> max value
  for (const VerdictSeries& s : v.series) {
    auto labels = s.labels;
    if (v.simulated()) labels.emplace_back("simulated", "true");
    int& value = by_metric[s.metric].try_emplace(prom_labels(labels), 0).first->second;
    value = std::max(value, s.value);
  }
  std::string out;
  for (const MetricDoc& m : kVerdictMetrics) {
    out += prom_help_type(m.name, m.help);
    for (const auto& [labels, value] : by_metric[m.name]) out += fmt::format("{}{{{}}} {}\n", m.name, labels, value);
  }
  out += prom_help_type("railkit_monitor_verdict_timestamp_seconds", "when railkit monitor judge judged (Unix time)");
  out += fmt::format("railkit_monitor_verdict_timestamp_seconds{} {:.3f}\n",
                     v.simulated() ? "{simulated=\"true\"}" : "", v.now_unix_s);
  return out;
}

}  // namespace railkit::monitor
