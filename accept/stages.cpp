#include "accept/stages.hpp"

#include <algorithm>
#include <map>
#include <ostream>
#include <set>

#include <fmt/format.h>

#include "core/bench_flags.hpp"
#include "core/stats.hpp"
#include "core/strings.hpp"
#include "core/units.hpp"

namespace railkit::accept {
using ojson = nlohmann::ordered_json;

namespace {

/// One launch through the runner, counted and recorded in `r`; the document, or nullopt with
/// the reason in `why`.
std::optional<ResultsDocument> launch(const BenchStages& s, StageResult& r, const std::string& stage,
                                      const std::string& base, std::vector<std::string> args, std::string& why,
                                      const std::map<std::string, std::string>* env = nullptr) {
  BenchOutcome out = s.runner.run(stage, launch::BenchConfig{base, env ? *env : s.env, std::move(args)});
  ++r.launches;
  r.bench_seconds += out.command.elapsed_s;
  r.commands.push_back(std::move(out.command));
  if (!out.doc) why = out.why;
  return std::move(out.doc);
}

/// A stage's launch failed: a cluster-level failure naming why (nodes are not blamed). `which`
/// ("@round1", "@1 MiB") tells apart the checks of a stage that can lose several launches.
void launch_failed(StageResult& r, const std::string& stage, const std::string& why, const std::string& which = "") {
  r.cluster_checks.emplace_back("stage:" + stage, AcceptCheck{stage + ".launch" + which, "failed", std::nullopt, "runs",
                                                              "launch", Verdict::Fail, why});
}

/// The check of one group of a split launch; a failed group that passed the confirmation launch
/// (`second`, empty when there was none) passes, with both measurements as evidence.
AcceptCheck confirmed_check(const GroupCheck& c, const std::vector<GroupCheck>& second, const std::string& stage,
                            const std::string& what, std::uint64_t bytes, const std::string& statistic) {
  AcceptCheck a{fmt::format("{}.{}", stage, c.coll), format_GBps(c.busbw_GBps), c.busbw_GBps, c.j.expected, c.j.rule,
                c.j.verdict,
                fmt::format("{} {} at {} (--split {}, group {}, {} time)", c.coll, what, format_bytes(bytes), stage, c.group,
                            statistic)};
  if (!c.j.failed()) return a;
  const auto again = std::find_if(second.begin(), second.end(),
                                  [&](const GroupCheck& s2) { return s2.group == c.group && s2.coll == c.coll; });
  if (again == second.end()) return a;
  a.evidence += fmt::format("; confirmation launch: {} ({})", format_GBps(again->busbw_GBps), again->j.expected);
  if (!again->j.failed()) {
    a.verdict = Verdict::Pass;
    a.evidence += ": passed, the first launch was noise";
  }
  return a;
}

/// A split stage (node, rail): one launch; when a group fails, a second launch confirms it (a
/// group fails only when it fails both, so one noisy launch convicts nobody). Returns each
/// group's checks with the group's index.
std::vector<std::pair<std::size_t, AcceptCheck>> split_stage(const BenchStages& s, StageResult& r, const std::string& stage,
                                                             const std::vector<std::string>& groups,
                                                             const std::string& what) {
  std::string why;
  const auto doc = launch(s, r, stage, stage, {"--split", stage}, why);
  if (!doc) {
    launch_failed(r, stage, why);
    return {};
  }
  const Measured m = measured_of(*doc, s.suite.statistic);
  const std::vector<GroupCheck> first = judge_groups(s.suite, stage, m, groups);
  std::vector<GroupCheck> second;
  if (std::any_of(first.begin(), first.end(), [](const GroupCheck& c) { return c.j.failed(); })) {
    s.progress << fmt::format("railkit accept: {}: a group is suspect; confirming with a second launch\n", stage)
               << std::flush;
    if (const auto again = launch(s, r, stage, stage + "-confirm", {"--split", stage}, why))
      second = judge_groups(s.suite, stage, measured_of(*again, s.suite.statistic), groups);
    else
      launch_failed(r, stage, "confirmation: " + why);
  }
  std::vector<std::pair<std::size_t, AcceptCheck>> out;
  for (const GroupCheck& c : first) {
    const auto idx = static_cast<std::size_t>(std::find(groups.begin(), groups.end(), c.group) - groups.begin());
    out.emplace_back(idx, confirmed_check(c, second, stage, what, m.bytes.at(c.coll), s.suite.statistic));
  }
  return out;
}

}  // namespace

// ---------------------------------------------------------------------------- node, rail

StageResult node_stage(const BenchStages& s, std::size_t nodes, int ranks_per_node) {
  StageResult r;
  if (ranks_per_node < 2) {
    r.skipped = "one rank per node: nothing to measure inside a node";
    return r;
  }
  std::vector<std::string> groups;
  for (std::size_t i = 0; i < nodes; ++i) groups.push_back(fmt::format("node{}", i));
  r.node_checks = split_stage(s, r, "node", groups, "inside the node");
  return r;
}

StageResult rail_stage(const BenchStages& s, std::size_t nodes, int ranks_per_node) {
  StageResult r;
  if (nodes < 2) {
    r.skipped = "one node: a rail needs two";
    return r;
  }
  std::vector<std::string> groups;
  for (int i = 0; i < ranks_per_node; ++i) groups.push_back(fmt::format("rail{}", i));
  for (auto& [i, c] : split_stage(s, r, "rail", groups, "across the nodes"))
    r.cluster_checks.emplace_back(groups[i], std::move(c));
  return r;
}

// ---------------------------------------------------------------------------- pair

std::vector<PairResult> PairStage::results() const {
  std::vector<PairResult> out;
  for (const PairRecord& p : pairs) out.push_back(p.pair);
  return out;
}

namespace {

/// "nodes:0+3,1+2" for the pairs.
std::string pairs_split(const std::vector<std::pair<int, int>>& pairs) {
  std::vector<std::string> groups;
  for (const auto& [a, b] : pairs) groups.push_back(fmt::format("{}+{}", a, b));
  return "nodes:" + join(groups, ",");
}

std::string pair_group(int a, int b) { return fmt::format("nodes{}+{}", a, b); }

/// One launch per round, every pair of the round at once; the pairs measured, unjudged.
void measure_rounds(const BenchStages& s, PairStage& p, const std::vector<std::vector<std::pair<int, int>>>& rounds,
                    const std::string& coll) {
  for (std::size_t r = 0; r < rounds.size(); ++r) {
    std::string why;
    const auto doc = launch(s, p, "pair", fmt::format("pair-round{}", r), {"--split", pairs_split(rounds[r])}, why);
    if (!doc) {
      launch_failed(p, "pair", fmt::format("round {}: {}", r, why), fmt::format("@round{}", r));
      continue;
    }
    const Measured m = measured_of(*doc, s.suite.statistic);
    for (const auto& [a, b] : rounds[r])
      if (const auto v = m.of(pair_group(a, b), coll))
        p.pairs.push_back(PairRecord{static_cast<int>(r), PairResult{a, b, *v, false}, {}, std::nullopt});
    p.bytes = m.bytes.count(coll) ? m.bytes.at(coll) : 0;
  }
}

/// The suspect pairs of each round again (the round's other pairs sit out): a pair stays suspect
/// only when it is below the same bar again.
void confirm_pairs(const BenchStages& s, PairStage& p, std::size_t rounds, const std::string& coll) {
  for (std::size_t r = 0; r < rounds; ++r) {
    std::vector<PairRecord*> suspects;
    for (PairRecord& pr : p.pairs)
      if (pr.pair.suspect && pr.round == static_cast<int>(r)) suspects.push_back(&pr);
    if (suspects.empty()) continue;
    std::vector<std::pair<int, int>> again;
    for (const PairRecord* pr : suspects) again.emplace_back(pr->pair.a, pr->pair.b);
    std::string why;
    const auto doc = launch(s, p, "pair", fmt::format("pair-round{}-confirm", r), {"--split", pairs_split(again)}, why);
    if (!doc) {
      launch_failed(p, "pair", fmt::format("round {} confirmation: {}", r, why), fmt::format("@round{}-confirm", r));
      continue;
    }
    const Measured m = measured_of(*doc, s.suite.statistic);
    for (PairRecord* pr : suspects) {
      const auto v = m.of(pair_group(pr->pair.a, pr->pair.b), coll);
      if (!v) continue;
      pr->confirm_GBps = *v;
      if (!pr->judgement.expected_GBps || *v >= *pr->judgement.expected_GBps) pr->pair.suspect = false;
    }
  }
}

}  // namespace

PairStage pair_stage(const BenchStages& s, const std::vector<std::string>& names, const std::string& coll,
                     double per_launch_s) {
  PairStage p;
  const int n = static_cast<int>(names.size());
  if (n < 2) {
    p.skipped = "one node: no pair";
    return p;
  }
  if (n < kPairStageMinNodes) {
    p.skipped = fmt::format("{} nodes: the pair stage needs at least {} nodes to isolate (the only pair would be "
                            "compared with itself, and a slow pair of two cannot say which node is slow)",
                            n, kPairStageMinNodes);
    for (int i = 0; i < n; ++i)
      p.node_checks.emplace_back(static_cast<std::size_t>(i),
                                 AcceptCheck{fmt::format("pair.{}", coll), "not measured", std::nullopt,
                                             fmt::format("{}+ nodes", kPairStageMinNodes), "none", Verdict::Skipped,
                                             p.skipped});
    return p;
  }
  const auto rounds = circle_rounds(n);
  s.progress << fmt::format(
                    "railkit accept: pair stage: {} node{}, {} round{} of {} concurrent pair{} (circle method){}\n", n,
                    n == 1 ? "" : "s", rounds.size(), rounds.size() == 1 ? "" : "s", n / 2, n / 2 == 1 ? "" : "s",
                    per_launch_s > 0 ? ", estimated " + format_duration(per_launch_s * static_cast<double>(rounds.size()))
                                     : "")
             << std::flush;
  measure_rounds(s, p, rounds, coll);
  std::vector<double> all;
  for (const PairRecord& pr : p.pairs) all.push_back(pr.pair.busbw_GBps);
  for (PairRecord& pr : p.pairs) {
    pr.judgement = judge(s.suite, "pair", coll, p.bytes, pr.pair.busbw_GBps, all);
    pr.pair.suspect = pr.judgement.failed();
  }
  confirm_pairs(s, p, rounds.size(), coll);
  if (!p.pairs.empty()) {
    p.rule = p.pairs.front().judgement.rule;
    p.expected = p.pairs.front().judgement.expected;
  }
  return p;
}

ojson pairs_json(const PairStage& p, const std::vector<std::string>& names, const std::string& coll) {
  ojson out = ojson::array();
  for (const PairRecord& pr : p.pairs) {
    ojson pj;
    pj["round"] = pr.round;
    pj["nodes"] = {names[static_cast<std::size_t>(pr.pair.a)], names[static_cast<std::size_t>(pr.pair.b)]};
    pj["coll"] = coll;
    pj["bytes"] = p.bytes;
    pj["busbw_GBps"] = pr.pair.busbw_GBps;
    pj["confirm_busbw_GBps"] = pr.confirm_GBps ? ojson(*pr.confirm_GBps) : ojson(nullptr);
    pj["expected"] = pr.judgement.expected;
    pj["rule"] = pr.judgement.rule;
    pj["verdict"] = pr.pair.suspect ? "suspect" : "pass";
    out.push_back(pj);
  }
  return out;
}

// ---------------------------------------------------------------------------- all

namespace {

/// The record of `coll` at `bytes` in the first document that has it (out-of-place when measured).
const ResultRecord* find_record(const std::vector<ResultsDocument>& docs, const std::string& coll, std::uint64_t bytes) {
  for (const ResultsDocument& d : docs) {
    const ResultRecord* rec = nullptr;
    for (const ResultRecord& r : d.results)
      if (r.op == coll && r.bytes == bytes && !r.group && (!rec || rec->in_place)) rec = &r;
    if (rec) return rec;
  }
  return nullptr;
}

/// The settings an expectation was measured with when they are not every launch's (s.env): a
/// decision's other than settings.env. nullopt: measured with s.env.
using Env = std::map<std::string, std::string>;
std::optional<Env> own_env(const BenchStages& s, const ProfileExpectation& x) {
  if (!x.env || *x.env == s.env) return std::nullopt;
  return x.env;
}

/// The whole set's documents per environment they were measured with (nullopt: s.env).
using DocsByEnv = std::map<std::optional<Env>, std::vector<ResultsDocument>>;

/// A launch name's part for a decision's label: '/' and spaces become '_'.
std::string name_part(std::string label) {
  std::replace_if(label.begin(), label.end(), [](char c) { return c == '/' || c == ' '; }, '_');
  return label.empty() ? std::string("defaults") : label;
}

/// One launch per size (and settings) of the profile's expectations that no launch measured yet
/// (`-b S -e S --coll` the expectations' collectives at S, named "all-<S>", or "all-<S>@<config>"
/// with the settings of the decision an expectation was measured with); their documents are
/// added to `docs`.
void measure_expectation_sizes(const BenchStages& s, AllStage& a, const ProfileDocument& profile, DocsByEnv& docs) {
  struct Todo {
    std::set<std::string> colls;
    std::string config;
  };
  std::map<std::pair<std::optional<Env>, std::uint64_t>, Todo> todo;
  for (const ProfileExpectation& x : profile.expectations) {
    const std::optional<Env> env = own_env(s, x);
    if (find_record(docs[env], x.coll, x.bytes)) continue;
    Todo& t = todo[{env, x.bytes}];
    t.colls.insert(x.coll);
    t.config = x.config;
  }
  for (const auto& [key, t] : todo) {
    const auto& [env, bytes] = key;
    std::string why;
    const std::vector<std::string> args =
        bench_flag_args({{BenchFlag::MinBytes, std::to_string(bytes)},
                         {BenchFlag::MaxBytes, std::to_string(bytes)},
                         {BenchFlag::Coll, join(std::vector<std::string>(t.colls.begin(), t.colls.end()), ",")}});
    const std::string name = env ? fmt::format("all-{}@{}", bytes, name_part(t.config)) : fmt::format("all-{}", bytes);
    if (auto doc = launch(s, a, "all", name, args, why, env ? &*env : nullptr)) docs[env].push_back(std::move(*doc));
    else
      launch_failed(a, "all", fmt::format("the profile's expectations at {}: {}", format_bytes(bytes), why),
                    "@" + format_bytes(bytes) + (env ? "@" + name_part(t.config) : ""));
  }
}

/// The profile's expectations, each at its own size; the (coll, bytes) measured (so that the
/// suite's rules do not judge them a second time). A profile measured at another scale is not
/// applied: its expectation is reported, or the suite's threshold at that size judges.
std::set<std::pair<std::string, std::uint64_t>> expectation_checks(const BenchStages& s, AllStage& a,
                                                                   const ProfileDocument& profile, DocsByEnv& docs,
                                                                   const Scale& run) {
  const AcceptSuite& suite = s.suite;
  std::set<std::pair<std::string, std::uint64_t>> judged;
  const std::optional<std::string> other = other_scale(profile, run);
  const std::string profile_source = fmt::format("whole set, expectation of profile '{}'", profile.name);
  for (const ProfileExpectation& x : profile.expectations) {
    const std::optional<Env> env = own_env(s, x);
    const std::string name = fmt::format("all.{}@{}", x.coll, format_bytes(x.bytes));
    const ResultRecord* rec = find_record(docs[env], x.coll, x.bytes);
    const std::string source =
        env ? fmt::format("{}, measured with the settings of decision '{}' as the profile was", profile_source, x.config)
            : profile_source;
    if (!rec) {
      a.cluster_checks.emplace_back(
          "all", AcceptCheck{name, "not measured", std::nullopt, fmt::format(">= {:.3f} GB/s", x.busbw_GBps), "profile",
                             Verdict::Skipped,
                             fmt::format("railkit-bench did not measure {} at exactly {} (its launch failed, or the "
                                         "size does not divide among the ranks)",
                                         x.coll, format_bytes(x.bytes))});
      continue;
    }
    if (!env) judged.insert({x.coll, x.bytes});
    const Judgement j = judge_expectation(x, rec->busbw_GBps);
    if (!other) {
      a.cluster_checks.emplace_back("all", AcceptCheck{name, format_GBps(rec->busbw_GBps), rec->busbw_GBps, j.expected,
                                                       j.rule, j.verdict, source});
      continue;
    }
    // Another scale: not applied; a suite threshold at this size still judges.
    const std::string why = fmt::format("{}: {}: a profile measured at another scale is no evidence for this one, so "
                                        "its expectation ({}) is not applied",
                                        source, *other, j.expected);
    const Judgement t = judge(suite, "all", x.coll, x.bytes, rec->busbw_GBps, {});
    if (t.rule == "suite")
      a.cluster_checks.emplace_back("all", AcceptCheck{name, format_GBps(rec->busbw_GBps), rec->busbw_GBps, t.expected,
                                                       t.rule, t.verdict, why + "; the suite's threshold judged it"});
    else
      a.cluster_checks.emplace_back("all", AcceptCheck{name, format_GBps(rec->busbw_GBps), rec->busbw_GBps,
                                                       "not applied: " + j.expected, "profile (other scale)",
                                                       Verdict::Reported, why + ": reported"});
  }
  return judged;
}

Verdict verdict_of(const StageResult& r, const std::string& entity) {
  std::vector<const AcceptCheck*> checks;
  for (const auto& [e, c] : r.cluster_checks)
    if (e == entity) checks.push_back(&c);
  return overall_verdict(checks);
}

}  // namespace

AllStage all_stage(const BenchStages& s, const std::optional<ProfileDocument>& profile, const Scale& run) {
  AllStage a;
  std::string why;
  auto doc = launch(s, a, "all", "all", {}, why);
  if (!doc) {
    launch_failed(a, "all", why);
    return a;
  }
  const Measured m = measured_of(*doc, s.suite.statistic);
  DocsByEnv docs;
  docs[std::nullopt].push_back(std::move(*doc));
  std::set<std::pair<std::string, std::uint64_t>> judged;
  if (profile) {
    measure_expectation_sizes(s, a, *profile, docs);
    judged = expectation_checks(s, a, *profile, docs, run);
  }
  for (const std::string& coll : s.suite.colls) {
    const std::optional<double> v = m.of("all", coll);
    if (!m.bytes.count(coll) || !v) continue;
    const std::uint64_t bytes = m.bytes.at(coll);
    if (judged.count({coll, bytes})) continue;
    const Judgement j = judge(s.suite, "all", coll, bytes, *v, {});
    a.cluster_checks.emplace_back("all", AcceptCheck{fmt::format("all.{}@{}", coll, format_bytes(bytes)), format_GBps(*v),
                                                     *v, j.expected, j.rule, j.verdict, "whole set"});
  }
  a.verdict = verdict_of(a, "all");
  return a;
}

// ---------------------------------------------------------------------------- isolate

namespace {

/// Each node's pair check: the median of its pairs; fails when isolation convicted it or named
/// one of its links.
void pair_checks(IsolateStage& out, const std::vector<std::string>& names, const std::string& coll,
                 const PairStage& pairs, const Isolation& is) {
  for (std::size_t i = 0; i < names.size(); ++i) {
    const int me = static_cast<int>(i);
    std::vector<double> mine;
    std::vector<std::string> bad;
    for (const PairRecord& pr : pairs.pairs) {
      const PairResult& p = pr.pair;
      if (p.a != me && p.b != me) continue;
      mine.push_back(p.busbw_GBps);
      if (p.suspect)
        bad.push_back(fmt::format("{}+{} {:.3f} GB/s", names[static_cast<std::size_t>(p.a)],
                                  names[static_cast<std::size_t>(p.b)], p.busbw_GBps));
    }
    if (mine.empty()) continue;
    const double med = median(mine);
    AcceptCheck c{fmt::format("pair.{}", coll), format_GBps(med) + " (median of its pairs)", med, pairs.expected,
                  pairs.rule, Verdict::Pass, bad.empty() ? "" : "suspect pairs: " + join(bad, "; ")};
    if (std::count(is.guilty_nodes.begin(), is.guilty_nodes.end(), me)) {
      c.verdict = Verdict::Fail;
      c.rule += " + isolation";
      c.evidence = "guilty: " + is.evidence.at(me);
    } else {
      for (const auto& [a, b] : is.guilty_links) {
        if (a != me && b != me) continue;
        c.verdict = Verdict::Fail;
        c.rule += " + isolation";
        c.evidence = fmt::format("guilty link {} <-> {}: suspect pair whose nodes pass their other pairs; {}",
                                 names[static_cast<std::size_t>(a)], names[static_cast<std::size_t>(b)], c.evidence);
      }
    }
    out.node_checks.emplace_back(i, std::move(c));
  }
}

ojson pairs_isolation(const Isolation& is, const std::vector<std::string>& names) {
  ojson iso;
  iso["method"] = "pairs";
  ojson guilty = ojson::array(), links = ojson::array();
  for (int g : is.guilty_nodes)
    guilty.push_back({{"node", names[static_cast<std::size_t>(g)]}, {"evidence", is.evidence.at(g)}});
  for (const auto& [a, b] : is.guilty_links)
    links.push_back({names[static_cast<std::size_t>(a)], names[static_cast<std::size_t>(b)]});
  iso["guilty_nodes"] = guilty;
  iso["guilty_links"] = links;
  return iso;
}

/// The whole set failed without pair evidence: halves concurrently (--split nodes:A,B), into
/// the slower half, until one node is left.
void bisect(const BenchStages& s, IsolateStage& out, const std::vector<std::string>& names, const std::string& coll) {
  std::vector<int> set(names.size());
  for (std::size_t i = 0; i < set.size(); ++i) set[i] = static_cast<int>(i);
  const auto joined = [&](const std::vector<int>& g) {
    std::vector<std::string> v;
    for (int k : g) v.push_back(names[static_cast<std::size_t>(k)]);
    return join(v, "+");
  };
  ojson steps = ojson::array();
  std::vector<std::string> evidence;
  while (set.size() > 1) {
    const Halves h = halve(set);
    std::string why;
    const auto doc = launch(s, out, "isolate", fmt::format("bisect-{}", steps.size()),
                            {"--split", "nodes:" + node_list(h.a) + "," + node_list(h.b)}, why);
    if (!doc) {
      launch_failed(out, "isolate", why);
      break;
    }
    const Measured m = measured_of(*doc, s.suite.statistic);
    const double va = m.of("nodes" + node_list(h.a), coll).value_or(0.0);
    const double vb = m.of("nodes" + node_list(h.b), coll).value_or(0.0);
    steps.push_back({{"halves", {node_list(h.a), node_list(h.b)}}, {"busbw_GBps", {va, vb}}});
    evidence.push_back(fmt::format("{} {:.3f} vs {} {:.3f} GB/s", joined(h.a), va, joined(h.b), vb));
    const auto next = next_bisection_set(h, va, vb, s.suite.peer_fraction);
    if (!next) break;
    set = *next;
  }
  out.isolation["method"] = "bisection";
  out.isolation["steps"] = steps;
  if (set.size() != 1) {
    out.isolation["guilty_nodes"] = ojson::array();
    out.isolation["reason"] = "the halves measured alike: no single slow node";
    return;
  }
  const int g = set.front();
  out.isolation["guilty_nodes"] =
      ojson::array({{{"node", names[static_cast<std::size_t>(g)]}, {"evidence", join(evidence, "; ")}}});
  out.node_checks.emplace_back(
      static_cast<std::size_t>(g),
      AcceptCheck{"isolation", "slow half down to this node", std::nullopt,
                  fmt::format("neither half below {:g} x the other", s.suite.peer_fraction), "isolation", Verdict::Fail,
                  "bisection of the whole set: " + join(evidence, "; ")});
}

}  // namespace

IsolateStage isolate_stage(const BenchStages& s, const std::vector<std::string>& names, const std::string& coll,
                           const PairStage& pairs, Verdict whole_set) {
  IsolateStage out;
  const auto& ps = pairs.pairs;
  if (std::any_of(ps.begin(), ps.end(), [](const PairRecord& p) { return p.pair.suspect; })) {
    const Isolation is = isolate_pairs(pairs.results(), names);
    pair_checks(out, names, coll, pairs, is);
    out.isolation = pairs_isolation(is, names);
    return out;
  }
  pair_checks(out, names, coll, pairs, Isolation{});
  if (whole_set != Verdict::Fail) {
    const char* all = whole_set == Verdict::Pass       ? "the whole set passed"
                      : whole_set == Verdict::Reported ? "the whole set was measured, but no rule judged it"
                                                       : "the whole set was not measured";
    out.isolation = {{"method", "none"}, {"reason", fmt::format("no suspect pair and {}", all)}};
    out.skipped = "nothing to isolate";
    return out;
  }
  bisect(s, out, names, coll);
  return out;
}

}  // namespace railkit::accept
