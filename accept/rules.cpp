#include "accept/rules.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "core/stats.hpp"
#include "core/strings.hpp"

namespace railkit::accept {

Judgement judge(const AcceptSuite& suite, std::string_view stage, std::string_view coll, std::uint64_t bytes,
                double measured, const std::vector<double>& peers) {
  Judgement j;
  for (const SuiteThreshold& t : suite.thresholds) {
    if ((t.stage.empty() || t.stage == stage) && t.coll == coll && t.bytes == bytes) {
      j.rule = "suite";
      j.expected_GBps = t.busbw_GBps;
      j.expected = fmt::format(">= {:.3f} GB/s", t.busbw_GBps);
      j.verdict = measured >= t.busbw_GBps ? Verdict::Pass : Verdict::Fail;
      return j;
    }
  }
  if (!peers.empty()) {
    const double med = median(peers);
    j.rule = "peers";
    j.expected_GBps = suite.peer_fraction * med;
    j.expected = fmt::format(">= {:.3f} GB/s ({:g} x peers' median {:.3f})", *j.expected_GBps, suite.peer_fraction, med);
    j.verdict = measured >= *j.expected_GBps ? Verdict::Pass : Verdict::Fail;
    return j;
  }
  j.rule = "none";
  j.expected = "-";
  j.verdict = Verdict::Reported;
  return j;
}

Judgement judge_expectation(const ProfileExpectation& e, double measured) {
  Judgement j;
  j.rule = "profile";
  j.expected_GBps = e.busbw_GBps * (1 - e.tolerance);
  j.expected = fmt::format(">= {:.3f} GB/s ({:.3f} - {:.3g}%)", *j.expected_GBps, e.busbw_GBps, e.tolerance * 100);
  j.verdict = measured >= *j.expected_GBps ? Verdict::Pass : Verdict::Fail;
  return j;
}

std::string Scale::describe() const {
  std::vector<std::string> parts;
  if (nodes > 0) parts.push_back(fmt::format("{} node{}", nodes, nodes == 1 ? "" : "s"));
  if (ranks_per_node > 0) parts.push_back(fmt::format("{} rank{} per node", ranks_per_node, ranks_per_node == 1 ? "" : "s"));
  std::string out = join(parts, " x ");
  if (ranks > 0) out += fmt::format("{}{} rank{}{}", out.empty() ? "" : " (", ranks, ranks == 1 ? "" : "s", out.empty() ? "" : ")");
  return out.empty() ? "an unrecorded scale" : out;
}

Scale profile_scale(const ProfileDocument& p) {
  return Scale{p.cluster.nodes, p.cluster.ranks_per_node, p.cluster.ranks};
}

std::optional<std::string> other_scale(const ProfileDocument& p, const Scale& run) {
  const Scale ps = profile_scale(p);
  const auto differs = [](int recorded, int actual) { return recorded > 0 && recorded != actual; };
  if (!differs(ps.nodes, run.nodes) && !differs(ps.ranks_per_node, run.ranks_per_node) && !differs(ps.ranks, run.ranks))
    return std::nullopt;
  return fmt::format("profile '{}' was measured on {}; this run is {}", p.name, ps.describe(), run.describe());
}

std::optional<double> Measured::of(const std::string& group, const std::string& coll) const {
  const auto g = busbw.find(group);
  if (g == busbw.end()) return std::nullopt;
  const auto c = g->second.find(coll);
  if (c == g->second.end()) return std::nullopt;
  return c->second;
}

namespace {

/// busbw from the loop time (avg), or from the median iteration (p50).
double busbw_of(const ResultRecord& r, const std::string& statistic) {
  if (statistic == "p50" && r.time_us.p50 > 0) return r.busbw_GBps * r.time_us.avg / r.time_us.p50;
  return r.busbw_GBps;
}

}  // namespace

Measured measured_of(const ResultsDocument& doc, const std::string& statistic) {
  Measured m;
  for (const ResultRecord& r : doc.results) m.bytes[r.op] = std::max(m.bytes[r.op], r.bytes);
  std::map<std::string, std::map<std::string, bool>> from_out;
  for (const ResultRecord& r : doc.results) {
    if (r.bytes != m.bytes[r.op]) continue;
    const std::string g = r.group.value_or("all");
    bool& out_seen = from_out[g][r.op];
    if (!r.in_place) {
      m.busbw[g][r.op] = busbw_of(r, statistic);
      out_seen = true;
    } else if (!out_seen) {
      m.busbw[g][r.op] = busbw_of(r, statistic);
    }
  }
  return m;
}

std::vector<GroupCheck> judge_groups(const AcceptSuite& suite, std::string_view stage, const Measured& m,
                                     const std::vector<std::string>& groups) {
  std::vector<GroupCheck> out;
  for (const std::string& coll : suite.colls) {
    if (!m.bytes.count(coll)) continue;
    for (const std::string& g : groups) {
      const std::optional<double> v = m.of(g, coll);
      if (!v) continue;
      std::vector<double> peers;
      for (const std::string& gk : groups)
        if (gk != g)
          if (const std::optional<double> p = m.of(gk, coll)) peers.push_back(*p);
      out.push_back(GroupCheck{g, coll, *v, judge(suite, stage, coll, m.bytes.at(coll), *v, peers)});
    }
  }
  return out;
}

std::string format_GBps(double v) { return fmt::format("{:.3f} GB/s", v); }

void explain_rails(AcceptReport& r) {
  std::vector<std::string> failed;
  for (const auto& e : r.nodes)
    if (e.verdict() == Verdict::Fail) failed.push_back(e.name);
  if (failed.empty()) return;
  for (auto& e : r.cluster) {
    if (!e.name.starts_with("rail")) continue;
    for (auto& c : e.checks) {
      if (c.verdict != Verdict::Fail) continue;
      c.verdict = Verdict::Explained;
      c.evidence += "; explained by the failed node" + std::string(failed.size() > 1 ? "s " : " ") + join(failed, ", ");
    }
  }
}

}  // namespace railkit::accept
