#include "accept/rdma_pair.hpp"

#include <algorithm>
#include <map>
#include <ostream>

#include <fmt/format.h>

#include "accept/runner.hpp"
#include "accept/schedule.hpp"
#include "core/env.hpp"
#include "core/error.hpp"
#include "core/strings.hpp"
#include "fabric/rdma_loopback.hpp"
#include "launch/bench_run.hpp"

namespace railkit::accept {
namespace fs = std::filesystem;
using nlohmann::json;
using ojson = nlohmann::ordered_json;

namespace {

/// How long a pair's server waits for its client (s): the two launches start at once, but the
/// launcher may start one a few seconds after the other.
constexpr int kPairWaitS = 30;

/// One run judged: its bar, whether a rule judged it, whether it was slow.
struct RunJudgement {
  std::optional<double> rate_Gbps;  ///< the lower line rate of the two ports
  std::optional<double> bar_Gbps;
  bool judged = false;  ///< a rule judged it: a line rate is known, or it failed (a failed run is slow whatever the rate)
  bool slow = false;
  std::string figure;  ///< "97.10 Gb/s" or "failed: ..."
};

RunJudgement judge_run(const RdmaPairRun& r, double f) {
  RunJudgement j;
  if (r.rate_a_Gbps && r.rate_b_Gbps) j.rate_Gbps = std::min(*r.rate_a_Gbps, *r.rate_b_Gbps);
  else j.rate_Gbps = r.rate_a_Gbps ? r.rate_a_Gbps : r.rate_b_Gbps;
  if (j.rate_Gbps) j.bar_Gbps = f * *j.rate_Gbps;
  const bool measured = r.error.empty() && r.measured_Gbps;
  j.figure = measured ? fmt::format("{:.2f} Gb/s", *r.measured_Gbps) : "failed: " + r.error;
  j.slow = !measured || (j.bar_Gbps && *r.measured_Gbps < *j.bar_Gbps);
  j.judged = !measured || j.bar_Gbps.has_value();
  return j;
}

std::string end_name(const std::vector<std::string>& names, int node, const std::string& nic) {
  return names[static_cast<std::size_t>(node)] + ":" + nic;
}

std::string link_name(const std::vector<std::string>& names, const RdmaPairRun& r) {
  return end_name(names, r.a, r.nic_a) + " <-> " + end_name(names, r.b, r.nic_b);
}

std::string expected_text(const RunJudgement& j, double f) {
  return j.rate_Gbps ? fmt::format(">= {:.1f} Gb/s ({:g} x line rate {:g} Gb/s)", *j.bar_Gbps, f, *j.rate_Gbps)
                     : "line rate unknown";
}

/// What a node's rail check shows as measured: the lowest run's figure, with how many partners it
/// is the lowest of, and whether a guilty partner's runs were set aside.
std::string measured_text(const RdmaPairRun& lowest, int counted, bool guilty_aside) {
  if (!lowest.error.empty() || !lowest.measured_Gbps) return "failed";
  return fmt::format("{:.2f} Gb/s{}", *lowest.measured_Gbps,
                     counted > 1 ? fmt::format(" (lowest of {} partners{})", counted, guilty_aside ? ", a guilty one aside" : "")
                     : guilty_aside ? " (a guilty partner aside)" : "");
}

/// The check of node `me` on one rail from the runs of that rail (`idx` into runs).
AcceptCheck node_rail_check(int me, const std::vector<std::size_t>& idx, const std::vector<RdmaPairRun>& runs,
                            const std::vector<RunJudgement>& js, const std::vector<std::string>& names,
                            const Isolation& iso, const std::map<std::size_t, std::size_t>& result_of, double f) {
  std::string nic;
  std::vector<std::string> parts, unavailable;
  // The run with the lowest figure (a failed run is lowest) among those not explained by a
  // guilty partner (all of them when every one is).
  std::optional<std::size_t> lowest, lowest_explained;
  int ran = 0, judged = 0, explained = 0;
  const auto guilty = [&](int n) { return std::count(iso.guilty_nodes.begin(), iso.guilty_nodes.end(), n) > 0; };
  const auto value = [&](std::size_t k) { return runs[k].error.empty() && runs[k].measured_Gbps ? *runs[k].measured_Gbps : -1.0; };
  for (std::size_t k : idx) {
    const RdmaPairRun& r = runs[k];
    if (r.a != me && r.b != me) continue;
    nic = r.a == me ? r.nic_a : r.nic_b;
    if (!r.unavailable.empty()) {
      unavailable.push_back(r.unavailable);
      continue;
    }
    ++ran;
    if (js[k].judged) ++judged;
    const int partner = r.a == me ? r.b : r.a;
    const bool slow = js[k].judged && js[k].slow, excused = slow && !guilty(me) && guilty(partner);
    parts.push_back(fmt::format("with {} {}{}", end_name(names, partner, r.a == me ? r.nic_b : r.nic_a), js[k].figure,
                                excused ? " (slow: the partner is guilty)" : slow ? " (slow)" : ""));
    std::optional<std::size_t>& low = excused ? lowest_explained : lowest;
    if (excused) ++explained;
    if (!low || value(k) < value(*low)) low = k;
  }
  if (!lowest) lowest = lowest_explained;
  const int counted = explained < ran ? ran - explained : ran;
  AcceptCheck c{"rdma.pair." + nic, "", std::nullopt, "", "line rate", Verdict::Pass, ""};
  if (ran == 0) {
    c.measured = "skipped";
    c.expected = "line rate";
    c.rule = "none";
    c.verdict = Verdict::Skipped;
    c.evidence = "rdma-pair unavailable: " + (unavailable.empty() ? std::string("?") : unavailable.front());
    return c;
  }
  const RunJudgement& lj = js[*lowest];
  c.measured = measured_text(runs[*lowest], counted, explained > 0 && explained < ran);
  c.expected = expected_text(lj, f);
  const std::string figures = join(parts, "; ");
  if (judged == 0) {
    c.rule = "none";
    c.verdict = Verdict::Reported;
    c.evidence = "ib_write_bw " + figures + "; the ports' line rates are unknown";
    return c;
  }
  if (std::count(iso.guilty_nodes.begin(), iso.guilty_nodes.end(), me)) {
    const bool all = std::all_of(idx.begin(), idx.end(), [&](std::size_t k) {
      return (runs[k].a != me && runs[k].b != me) || !result_of.count(k) || js[k].slow;
    });
    c.verdict = Verdict::Fail;
    c.rule = "line rate + isolation";
    c.evidence = fmt::format("guilty: {} on {}: ib_write_bw {}",
                             all ? fmt::format("below the line rate with all {} partners", ran)
                                 : "below the line rate with 2 or more partners that pass their other pairs",
                             end_name(names, me, nic), figures);
    return c;
  }
  for (const auto& [a, b] : iso.guilty_links) {
    if (a != me && b != me) continue;
    for (std::size_t k : idx)
      if (result_of.count(k) && ((runs[k].a == a && runs[k].b == b) || (runs[k].a == b && runs[k].b == a))) {
        c.verdict = Verdict::Fail;
        c.rule = "line rate + isolation";
        c.evidence = fmt::format("guilty link {}: {}; ib_write_bw {}", link_name(names, runs[k]),
                                 ran > 1 ? "slow while its ends pass their other pairs"
                                         : "the only pair measured, so it cannot say which end is slow",
                                 figures);
      }
  }
  if (c.verdict == Verdict::Pass)
    c.evidence = fmt::format("ib_write_bw {}{}", figures,
                             explained > 0 ? "; its slow pairs are explained by a guilty partner" : "");
  return c;
}

}  // namespace

RdmaPairStage judge_rdma_pairs(const std::vector<RdmaPairRun>& runs, const std::vector<std::string>& names,
                               double f) {
  RdmaPairStage out;
  std::vector<RunJudgement> js;
  for (const RdmaPairRun& r : runs) js.push_back(judge_run(r, f));
  std::vector<std::string> rails;  // in order of first appearance
  for (const RdmaPairRun& r : runs)
    if (std::find(rails.begin(), rails.end(), r.rail) == rails.end()) rails.push_back(r.rail);
  ojson guilty_nodes = ojson::array(), guilty_links = ojson::array();
  std::vector<std::vector<AcceptCheck>> per_node(names.size());
  for (const std::string& rail : rails) {
    std::vector<std::size_t> idx;
    std::vector<PairResult> results;
    std::map<std::size_t, std::size_t> result_of;  // run -> its PairResult (judged runs only)
    for (std::size_t k = 0; k < runs.size(); ++k) {
      if (runs[k].rail != rail) continue;
      idx.push_back(k);
      if (!runs[k].unavailable.empty() || !js[k].judged) continue;
      result_of[k] = results.size();
      results.push_back(PairResult{runs[k].a, runs[k].b, runs[k].measured_Gbps.value_or(0.0), js[k].slow});
    }
    const Isolation iso = isolate_pairs(results, names);
    std::vector<int> members;
    for (std::size_t k : idx)
      for (int m : {runs[k].a, runs[k].b})
        if (std::find(members.begin(), members.end(), m) == members.end()) members.push_back(m);
    std::sort(members.begin(), members.end());
    for (int m : members) {
      AcceptCheck c = node_rail_check(m, idx, runs, js, names, iso, result_of, f);
      if (std::count(iso.guilty_nodes.begin(), iso.guilty_nodes.end(), m))
        guilty_nodes.push_back({{"node", names[static_cast<std::size_t>(m)]},
                                {"rail", rail},
                                {"nic", c.check.substr(std::string("rdma.pair.").size())},
                                {"evidence", c.evidence}});
      per_node[static_cast<std::size_t>(m)].push_back(std::move(c));
    }
    for (const auto& [a, b] : iso.guilty_links)
      for (std::size_t k : idx)
        if (result_of.count(k) && ((runs[k].a == a && runs[k].b == b) || (runs[k].a == b && runs[k].b == a)))
          guilty_links.push_back({{"link", link_name(names, runs[k])},
                                  {"rail", rail},
                                  {"nodes", {names[static_cast<std::size_t>(runs[k].a)], names[static_cast<std::size_t>(runs[k].b)]}},
                                  {"measured_Gbps", runs[k].measured_Gbps ? ojson(*runs[k].measured_Gbps) : ojson(nullptr)},
                                  {"error", runs[k].error}});
  }
  for (std::size_t i = 0; i < per_node.size(); ++i)
    for (AcceptCheck& c : per_node[i]) out.node_checks.emplace_back(i, std::move(c));
  for (std::size_t k = 0; k < runs.size(); ++k) {
    const RdmaPairRun& r = runs[k];
    const auto opt = [](const std::optional<double>& v) { return v ? ojson(*v) : ojson(nullptr); };
    const char* verdict = !r.unavailable.empty() ? "unavailable"
                          : !r.error.empty()     ? "failed"
                          : !js[k].judged        ? "reported"
                          : js[k].slow           ? "slow"
                                                 : "pass";
    out.pairs.push_back({{"round", r.round},
                         {"nodes", {names[static_cast<std::size_t>(r.a)], names[static_cast<std::size_t>(r.b)]}},
                         {"rail", r.rail},
                         {"nics", {r.nic_a, r.nic_b}},
                         {"measured_Gbps", opt(r.measured_Gbps)},
                         {"line_rate_Gbps", {opt(r.rate_a_Gbps), opt(r.rate_b_Gbps)}},
                         {"expected_Gbps", opt(js[k].bar_Gbps)},
                         {"verdict", verdict},
                         {"error", r.unavailable.empty() ? r.error : r.unavailable}});
  }
  out.isolation = {{"guilty_nodes", guilty_nodes}, {"guilty_links", guilty_links}};
  return out;
}

namespace {

/// A pair of a round with the rails both its nodes can test.
struct PlannedPair {
  int a = 0, b = 0;
  std::vector<std::pair<std::string, std::pair<std::string, std::string>>> rails;  ///< rail, (nic of a, nic of b)
  std::size_t server = 0, client = 0;  ///< their specs in the round
};

std::vector<PlannedPair> plan_round(const std::vector<std::pair<int, int>>& round,
                                    const std::vector<std::vector<RailNic>>& nics) {
  std::vector<PlannedPair> out;
  const auto of = [&](int i) -> const std::vector<RailNic>& {
    static const std::vector<RailNic> none;
    return static_cast<std::size_t>(i) < nics.size() ? nics[static_cast<std::size_t>(i)] : none;
  };
  for (const auto& [a, b] : round) {
    PlannedPair p{a, b, {}, 0, 0};
    for (const RailNic& x : of(a)) {
      if (!x.usable) continue;
      const auto y = std::find_if(of(b).begin(), of(b).end(), [&](const RailNic& n) { return n.rail == x.rail && n.usable; });
      if (y != of(b).end()) p.rails.push_back({x.rail, {x.nic, y->nic}});
    }
    if (!p.rails.empty()) out.push_back(std::move(p));
  }
  return out;
}

/// The figures of NIC k of one side's `railkit.rdma-pair/1` document.
struct Side {
  std::optional<double> rate_Gbps, measured_Gbps;
  std::string status, error;
};

Side side_of(const json& doc, std::size_t k) {
  Side s;
  if (!doc.is_object() || !doc.contains("nics") || !doc["nics"].is_array() || k >= doc["nics"].size()) return s;
  const json& x = doc["nics"][k];
  if (!x.is_object()) return s;
  if (x.contains("line_rate_Gbps") && x["line_rate_Gbps"].is_number()) s.rate_Gbps = x["line_rate_Gbps"].get<double>();
  if (x.contains("measured_Gbps") && x["measured_Gbps"].is_number()) s.measured_Gbps = x["measured_Gbps"].get<double>();
  if (x.contains("status") && x["status"].is_string()) s.status = x["status"].get<std::string>();
  if (x.contains("error") && x["error"].is_string()) s.error = x["error"].get<std::string>();
  return s;
}

/// Why a side could not run at all (exit 5), or "".
std::string unavailable_reason(const LaunchResult& lr, const json& doc, const std::string& err) {
  if (lr.end != LaunchResult::End::Exited || lr.exit_code != exit_code(ErrorCode::Unavailable)) return "";
  if (doc.is_object() && doc.contains("reason") && doc["reason"].is_string()) return doc["reason"].get<std::string>();
  return err.empty() ? "exit 5" : err;
}

/// The runs of one pair's rails from its server's and client's documents and launches: the
/// client's figure, or what failed on either end; `unavailable` when either end could not run.
void read_pair(int round, const PlannedPair& p, const std::vector<LaunchSpec>& specs,
               const std::vector<LaunchResult>& results, const std::vector<AcceptNode>& nodes,
               std::vector<RdmaPairRun>& runs) {
  const LaunchSpec &ss = specs[p.server], &cs = specs[p.client];
  const LaunchResult &sr = results[p.server], &cr = results[p.client];
  const json sdoc = read_json_or_null(ss.stdout_path), cdoc = read_json_or_null(cs.stdout_path);
  const std::string serr = launch::telling_stderr_line(file_tail(ss.stderr_path, 20));
  const std::string cerr = launch::telling_stderr_line(file_tail(cs.stderr_path, 20));
  std::string unavailable = unavailable_reason(sr, sdoc, serr);
  if (unavailable.empty()) unavailable = unavailable_reason(cr, cdoc, cerr);
  for (std::size_t k = 0; k < p.rails.size(); ++k) {
    RdmaPairRun run{round, p.a, p.b, p.rails[k].first, p.rails[k].second.first,
                    p.rails[k].second.second, std::nullopt, std::nullopt, std::nullopt, "", unavailable};
    const Side s = side_of(sdoc, k), c = side_of(cdoc, k);
    run.rate_a_Gbps = s.rate_Gbps;
    run.rate_b_Gbps = c.rate_Gbps;
    const std::string a = nodes[static_cast<std::size_t>(p.a)].name, b = nodes[static_cast<std::size_t>(p.b)].name;
    if (!cr.ok() || !cdoc.is_object())
      run.error = fmt::format("client on {}: railkit rdma-pair: {}{}", b, cr.describe(), cerr.empty() ? "" : ": " + cerr);
    else if (c.status != "ok" || !c.measured_Gbps)
      run.error = fmt::format("client on {}: {}", b, c.error.empty() ? c.status : c.error);
    else
      run.measured_Gbps = c.measured_Gbps;
    if (!run.error.empty() && (!sr.ok() || s.status != "ok"))
      run.error += fmt::format("; server on {}: {}", a,
                               !sr.ok() ? fmt::format("railkit rdma-pair: {}{}", sr.describe(), serr.empty() ? "" : ": " + serr)
                                        : (s.error.empty() ? s.status : s.error));
    runs.push_back(std::move(run));
  }
}

}  // namespace

RdmaPairStage rdma_pair_stage(const NodeTools& t, const std::vector<AcceptNode>& nodes,
                              const std::vector<std::vector<RailNic>>& nics, const AcceptSuite& suite,
                              std::ostream& progress) {
  RdmaPairStage out;
  if (t.emulated) {
    out.skipped = "emulated nodes share this machine's NICs: there is no link between them to test";
    return out;
  }
  const int n = static_cast<int>(nodes.size());
  if (n < 2) {
    out.skipped = "one node: no pair";
    return out;
  }
  const auto rounds = circle_rounds(n);
  std::vector<std::vector<PlannedPair>> plans;
  std::size_t pairs = 0;
  for (const auto& round : rounds) {
    plans.push_back(plan_round(round, nics));
    pairs += plans.back().size();
  }
  if (pairs == 0) {
    out.skipped = std::all_of(nics.begin(), nics.end(), [](const auto& v) { return v.empty(); })
                      ? "no RDMA device"
                      : "no two nodes have a usable NIC on the same rail";
    return out;
  }
  fs::create_directories(t.out_dir / "rdma-pair");
  std::string ib_write_bw = suite.ib_write_bw;
  if (ib_write_bw.empty()) ib_write_bw = env_value(t.envp, "RAILKIT_IB_WRITE_BW");
  progress << fmt::format("railkit accept: rdma-pair: ib_write_bw between the nodes of {} pair{}, {} round{} of "
                          "concurrent pairs (circle method), about {} s each ...\n",
                          pairs, pairs == 1 ? "" : "s", rounds.size(), rounds.size() == 1 ? "" : "s",
                          suite.rdma_duration_s + 2)
           << std::flush;
  const auto address = [&](int i) {
    const AcceptNode& nd = nodes[static_cast<std::size_t>(i)];
    const auto it = suite.rdma_addresses.find(nd.name);
    return it != suite.rdma_addresses.end() ? it->second : nd.host;
  };
  std::vector<RdmaPairRun> runs;
  for (std::size_t r = 0; r < plans.size(); ++r) {
    std::vector<LaunchSpec> specs;
    for (PlannedPair& p : plans[r]) {
      for (const bool server : {true, false}) {
        const int me = server ? p.a : p.b;
        const AcceptNode& nd = nodes[static_cast<std::size_t>(me)];
        std::vector<std::string> cmd{t.railkit, "rdma-pair", "--role", server ? "server" : "client"};
        if (!server) cmd.insert(cmd.end(), {"--peer", address(p.a)});
        cmd.insert(cmd.end(), {"--root", nd.topo_root, "--duration-s", std::to_string(suite.rdma_duration_s),
                               "--wait-s", std::to_string(kPairWaitS)});
        for (const auto& rail : p.rails) cmd.insert(cmd.end(), {"--nic", server ? rail.second.first : rail.second.second});
        if (!ib_write_bw.empty()) cmd.insert(cmd.end(), {"--ib-write-bw", ib_write_bw});
        LaunchSpec spec = node_tool_spec(t, nd, "rdma-pair",
                                         fmt::format("round{}-{}-{}", r, slug(nd.name), server ? "server" : "client"), cmd);
        spec.timeout_s = std::min(t.timeout_s, suite.rdma_duration_s + kPairWaitS + 60.0);
        (server ? p.server : p.client) = specs.size();
        specs.push_back(std::move(spec));
      }
    }
    const std::vector<LaunchResult> results = fabric::run_concurrently(specs, t.envp);
    out.launches += static_cast<int>(results.size());
    for (std::size_t k = 0; k < results.size(); ++k) {
      out.commands.push_back(CommandRecord{"rdma-pair", specs[k].argv, results[k].describe(), results[k].elapsed_s});
      if (results[k].end == LaunchResult::End::Interrupted) throw accept_interrupted(results[k].signal, t.out_dir);
    }
    for (const PlannedPair& p : plans[r]) read_pair(static_cast<int>(r), p, specs, results, nodes, runs);
  }
  RdmaPairStage judged = judge_rdma_pairs(runs, node_names(nodes), suite.rdma_fraction);
  out.node_checks = std::move(judged.node_checks);
  out.pairs = std::move(judged.pairs);
  out.isolation = std::move(judged.isolation);
  if (std::all_of(runs.begin(), runs.end(), [](const RdmaPairRun& r) { return !r.unavailable.empty(); }))
    out.skipped = "rdma-pair unavailable: " + runs.front().unavailable;
  return out;
}

}  // namespace railkit::accept
