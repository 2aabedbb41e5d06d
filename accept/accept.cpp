#include "accept/accept.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <fstream>
#include <ostream>
#include <sstream>

#include <fmt/format.h>

#include "core/atomic_file.hpp"
#include "core/clock.hpp"
#include "core/error.hpp"
#include "core/env.hpp"
#include "core/launch.hpp"
#include "core/results.hpp"
#include "core/strings.hpp"
#include "core/units.hpp"
#include "core/version.hpp"
#include "topology/compare.hpp"
#include "fabric/rdma_loopback.hpp"

namespace railkit::accept {
namespace fs = std::filesystem;
using nlohmann::json;
using ojson = nlohmann::ordered_json;

// ---------------------------------------------------------------------------- nodes

std::vector<AcceptNode> emulated_nodes(const std::string& hostname, int np, int k) {
  if (k < 1) throw UsageError(fmt::format("--ranks-per-node {}: must be >= 1", k));
  if (np < k || np % k != 0)
    throw UsageError(fmt::format("--np {} with --ranks-per-node {}: the ranks must fill whole nodes (np a multiple of K)",
                                 np, k));
  std::vector<AcceptNode> out;
  for (int i = 0; i < np / k; ++i) {
    AcceptNode n;
    n.name = fmt::format("{}:{}", hostname, i);
    n.host = hostname;
    for (int r = i * k; r < (i + 1) * k; ++r) n.ranks.push_back(r);
    out.push_back(std::move(n));
  }
  return out;
}

std::vector<AcceptNode> hostfile_nodes(const std::string& text, int ppn) {
  if (ppn < 1) throw UsageError(fmt::format("--ppn {}: must be >= 1", ppn));
  std::vector<AcceptNode> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (const auto h = line.find('#'); h != std::string::npos) line.erase(h);
    std::istringstream ls(line);
    std::string host;
    if (!(ls >> host)) continue;
    if (std::any_of(out.begin(), out.end(), [&](const AcceptNode& n) { return n.host == host; })) continue;
    AcceptNode n;
    n.name = host;
    n.host = host;
    const int i = static_cast<int>(out.size());
    for (int r = i * ppn; r < (i + 1) * ppn; ++r) n.ranks.push_back(r);
    out.push_back(std::move(n));
  }
  if (out.empty()) throw UsageError("--hostfile: no host in the file");
  return out;
}

// ---------------------------------------------------------------------------- suite

AcceptSuite suite_from_json(const json& j, const std::string& source) {
  const auto bad = [&](const std::string& where, const std::string& why) {
    return UsageError(fmt::format("{}: {}: {}", source, where, why));
  };
  if (!j.is_object()) throw bad("(document)", "expected a JSON object");
  if (!j.contains("schema") || j["schema"] != kAcceptSuiteSchema)
    throw bad("schema", std::string("expected \"") + kAcceptSuiteSchema + "\"");
  static const std::set<std::string> known{"schema",     "skip",       "peer_fraction", "oversubscribed_peer_fraction",
                                           "statistic",  "thresholds", "topo_roots",    "colls",
                                           "rdma_fraction", "rdma_duration_s", "ib_write_bw"};
  for (const auto& [k, v] : j.items())
    if (!known.count(k)) throw bad(k, "unknown field");
  AcceptSuite s;
  if (j.contains("skip")) {
    if (!j["skip"].is_array()) throw bad("skip", "expected an array of stage names");
    for (const auto& v : j["skip"]) {
      if (!v.is_string()) throw bad("skip", "expected stage names");
      const std::string st = v.get<std::string>();
      if (std::find(std::begin(kAcceptStages), std::end(kAcceptStages), st) == std::end(kAcceptStages))
        throw bad("skip", "unknown stage '" + st + "' (topo, rdma, node, rail, pair, all, isolate)");
      s.skip.insert(st);
    }
  }
  if (j.contains("peer_fraction")) {
    if (!j["peer_fraction"].is_number()) throw bad("peer_fraction", "expected a number");
    s.peer_fraction = j["peer_fraction"].get<double>();
    s.peer_fraction_set = true;
    if (!(s.peer_fraction > 0 && s.peer_fraction <= 1)) throw bad("peer_fraction", "expected 0 < value <= 1");
  }
  if (j.contains("oversubscribed_peer_fraction")) {
    const json& v = j["oversubscribed_peer_fraction"];
    if (!v.is_number() || !(v.get<double>() > 0 && v.get<double>() <= 1))
      throw bad("oversubscribed_peer_fraction", "expected a number, 0 < value <= 1");
    s.oversubscribed_peer_fraction = v.get<double>();
  }
  if (j.contains("rdma_fraction")) {
    const json& v = j["rdma_fraction"];
    if (!v.is_number() || !(v.get<double>() > 0 && v.get<double>() <= 1))
      throw bad("rdma_fraction", "expected a number, 0 < value <= 1");
    s.rdma_fraction = v.get<double>();
  }
  if (j.contains("rdma_duration_s")) {
    const json& v = j["rdma_duration_s"];
    if (!v.is_number_integer() || v.get<int>() < 1 || v.get<int>() > 3600)
      throw bad("rdma_duration_s", "expected whole seconds, 1 to 3600");
    s.rdma_duration_s = v.get<int>();
  }
  if (j.contains("ib_write_bw")) {
    if (!j["ib_write_bw"].is_string() || j["ib_write_bw"].get<std::string>().empty())
      throw bad("ib_write_bw", "expected the path of ib_write_bw on the nodes");
    s.ib_write_bw = j["ib_write_bw"].get<std::string>();
  }
  if (j.contains("statistic")) {
    if (!j["statistic"].is_string() || (j["statistic"] != "p50" && j["statistic"] != "avg"))
      throw bad("statistic", "expected \"p50\" or \"avg\"");
    s.statistic = j["statistic"].get<std::string>();
  }
  if (j.contains("colls")) {
    if (!j["colls"].is_array() || j["colls"].empty()) throw bad("colls", "expected a non-empty array of collectives");
    s.colls.clear();
    for (const auto& v : j["colls"]) {
      if (!v.is_string()) throw bad("colls", "expected collective names");
      s.colls.push_back(v.get<std::string>());
    }
  }
  if (j.contains("thresholds")) {
    if (!j["thresholds"].is_array()) throw bad("thresholds", "expected an array");
    for (size_t i = 0; i < j["thresholds"].size(); ++i) {
      const json& t = j["thresholds"][i];
      const std::string where = fmt::format("thresholds[{}]", i);
      if (!t.is_object() || !t.contains("coll") || !t["coll"].is_string() || !t.contains("bytes") ||
          !t.contains("busbw_GBps") || !t["busbw_GBps"].is_number())
        throw bad(where, "expected {\"stage\"?, \"coll\", \"bytes\", \"busbw_GBps\"}");
      SuiteThreshold th;
      th.coll = t["coll"].get<std::string>();
      if (t.contains("stage")) {
        if (!t["stage"].is_string()) throw bad(where + ".stage", "expected node, rail, pair or all");
        th.stage = t["stage"].get<std::string>();
        if (th.stage != "node" && th.stage != "rail" && th.stage != "pair" && th.stage != "all")
          throw bad(where + ".stage", "expected node, rail, pair or all, got '" + th.stage + "'");
      }
      if (t["bytes"].is_number_unsigned()) {
        th.bytes = t["bytes"].get<std::uint64_t>();
      } else if (t["bytes"].is_string()) {
        th.bytes = parse_size_bytes(t["bytes"].get<std::string>(), source + ": " + where + ".bytes");
      } else {
        throw bad(where + ".bytes", "expected a size (1048576, \"1M\")");
      }
      th.busbw_GBps = t["busbw_GBps"].get<double>();
      if (!(th.busbw_GBps > 0)) throw bad(where + ".busbw_GBps", "expected a positive number");
      s.thresholds.push_back(th);
    }
  }
  if (j.contains("topo_roots")) {
    if (!j["topo_roots"].is_object()) throw bad("topo_roots", "expected an object: node name -> directory");
    for (const auto& [k, v] : j["topo_roots"].items()) {
      if (!v.is_string()) throw bad("topo_roots." + k, "expected a directory");
      s.topo_roots[k] = v.get<std::string>();
    }
  }
  return s;
}

AcceptSuite load_suite(const fs::path& path) {
  std::ifstream in(path);
  if (!in) throw UsageError("--suite " + path.string() + ": cannot read the file");
  json j;
  try {
    j = json::parse(in);
  } catch (const json::exception& e) {
    throw UsageError("--suite " + path.string() + ": not JSON: " + e.what());
  }
  return suite_from_json(j, path.string());
}

// ---------------------------------------------------------------------------- schedule, rules

std::vector<std::vector<std::pair<int, int>>> circle_rounds(int n) {
  std::vector<std::vector<std::pair<int, int>>> rounds;
  if (n < 2) return rounds;
  const int m = n % 2 == 0 ? n : n + 1;  // node m-1 is the bye when n is odd
  std::vector<int> ring(static_cast<size_t>(m));
  for (int i = 0; i < m; ++i) ring[static_cast<size_t>(i)] = i;
  for (int r = 0; r < m - 1; ++r) {
    std::vector<std::pair<int, int>> round;
    for (int i = 0; i < m / 2; ++i) {
      const int a = ring[static_cast<size_t>(i)], b = ring[static_cast<size_t>(m - 1 - i)];
      if (a >= n || b >= n) continue;  // the bye
      round.emplace_back(std::min(a, b), std::max(a, b));
    }
    std::sort(round.begin(), round.end());
    rounds.push_back(std::move(round));
    // Keep ring[0] fixed, rotate the rest by one.
    std::rotate(ring.begin() + 1, ring.end() - 1, ring.end());
  }
  return rounds;
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t h = v.size() / 2;
  return v.size() % 2 ? v[h] : (v[h - 1] + v[h]) / 2;
}

Judgement judge(const AcceptSuite& suite, std::string_view stage, std::string_view coll, std::uint64_t bytes,
                double measured, const std::vector<double>& peers) {
  Judgement j;
  for (const SuiteThreshold& t : suite.thresholds) {
    if ((t.stage.empty() || t.stage == stage) && t.coll == coll && t.bytes == bytes) {
      j.rule = "suite";
      j.expected_GBps = t.busbw_GBps;
      j.expected = fmt::format(">= {:.3f} GB/s", t.busbw_GBps);
      j.pass = measured >= t.busbw_GBps;
      return j;
    }
  }
  if (!peers.empty()) {
    const double med = median(peers);
    j.rule = "peers";
    j.expected_GBps = suite.peer_fraction * med;
    j.expected = fmt::format(">= {:.3f} GB/s ({:g} x peers' median {:.3f})", *j.expected_GBps, suite.peer_fraction, med);
    j.pass = measured >= *j.expected_GBps;
    return j;
  }
  j.rule = "none (reported)";
  j.expected = "-";
  j.pass = true;
  return j;
}

Judgement judge_expectation(const ProfileExpectation& e, double measured) {
  Judgement j;
  j.rule = "profile";
  j.expected_GBps = e.busbw_GBps * (1 - e.tolerance);
  j.expected = fmt::format(">= {:.3f} GB/s ({:.3f} - {:.3g}%)", *j.expected_GBps, e.busbw_GBps, e.tolerance * 100);
  j.pass = measured >= *j.expected_GBps;
  return j;
}

Isolation isolate_pairs(const std::vector<PairResult>& pairs, const std::vector<std::string>& names) {
  const auto name = [&](int i) {
    return i >= 0 && static_cast<size_t>(i) < names.size() ? names[static_cast<size_t>(i)] : std::to_string(i);
  };
  std::map<int, int> total, suspect;
  for (const PairResult& p : pairs) {
    ++total[p.a];
    ++total[p.b];
    if (p.suspect) {
      ++suspect[p.a];
      ++suspect[p.b];
    }
  }
  // Whether every pair of `node` other than the one with `except` passed.
  const auto others_pass = [&](int node, int except) {
    return std::none_of(pairs.begin(), pairs.end(), [&](const PairResult& p) {
      return p.suspect && (p.a == node || p.b == node) && p.a != except && p.b != except;
    });
  };
  Isolation iso;
  for (const auto& [node, t] : total) {
    const int s = suspect.count(node) ? suspect.at(node) : 0;
    if (t < 2 || s < 2) continue;
    std::vector<std::string> lines;
    bool partners_clean = true;
    for (const PairResult& p : pairs) {
      if (!p.suspect || (p.a != node && p.b != node)) continue;
      const int partner = p.a == node ? p.b : p.a;
      partners_clean = partners_clean && others_pass(partner, node);
      lines.push_back(fmt::format("{}+{} {:.3f} GB/s", name(p.a), name(p.b), p.busbw_GBps));
    }
    const bool all_suspect = s == t;
    if (!all_suspect && !partners_clean) continue;
    std::string ev = all_suspect ? fmt::format("suspect in all {} of its pairs: ", t)
                                 : fmt::format("suspect in {} of {} pairs whose partners pass their other pairs: ", s, t);
    for (size_t i = 0; i < lines.size(); ++i) ev += (i ? "; " : "") + lines[i];
    iso.guilty_nodes.push_back(node);
    iso.evidence[node] = ev;
  }
  for (const PairResult& p : pairs) {
    if (!p.suspect) continue;
    const bool explained = std::count(iso.guilty_nodes.begin(), iso.guilty_nodes.end(), p.a) ||
                           std::count(iso.guilty_nodes.begin(), iso.guilty_nodes.end(), p.b);
    if (!explained) iso.guilty_links.emplace_back(p.a, p.b);
  }
  return iso;
}

// ---------------------------------------------------------------------------- escaping, reports

std::string xml_escape(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    switch (ch) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      default:
        if (c < 0x20 && ch != '\t' && ch != '\n' && ch != '\r') out += '?';
        else out += ch;
    }
  }
  return out;
}

std::string prom_escape(std::string_view s) {
  std::string out;
  for (char ch : s) {
    if (ch == '\\') out += "\\\\";
    else if (ch == '"') out += "\\\"";
    else if (ch == '\n') out += "\\n";
    else out += ch;
  }
  return out;
}

std::string AcceptEntity::verdict() const {
  return std::any_of(checks.begin(), checks.end(), [](const AcceptCheck& c) { return c.verdict == "fail"; }) ? "fail"
                                                                                                             : "pass";
}

bool AcceptReport::passed() const {
  const auto ok = [](const AcceptEntity& e) { return e.verdict() == "pass"; };
  return std::all_of(nodes.begin(), nodes.end(), ok) && std::all_of(cluster.begin(), cluster.end(), ok);
}

std::string render_accept_table(const AcceptReport& r) {
  std::vector<std::array<std::string, 6>> rows;
  rows.push_back({"node", "check", "measured", "expected", "verdict", "rule"});
  const auto add = [&](const AcceptEntity& e) {
    for (const AcceptCheck& c : e.checks) rows.push_back({e.name, c.check, c.measured, c.expected, c.verdict, c.rule});
  };
  for (const auto& e : r.nodes) add(e);
  for (const auto& e : r.cluster) add(e);
  std::array<size_t, 6> w{};
  for (const auto& row : rows)
    for (size_t i = 0; i < 6; ++i) w[i] = std::max(w[i], row[i].size());
  std::string out;
  for (size_t k = 0; k < rows.size(); ++k) {
    std::string line;
    for (size_t i = 0; i < 6; ++i) line += (i ? " | " : "") + fmt::format("{:<{}}", rows[k][i], i == 5 ? 0 : w[i]);
    out += line + "\n";
    if (k == 0) {
      std::string sep;
      for (size_t i = 0; i < 6; ++i) sep += (i ? "-+-" : "") + std::string(w[i], '-');
      out += sep + "\n";
    }
  }
  for (const auto& e : r.nodes) out += fmt::format("{}: {}\n", e.name, e.verdict() == "pass" ? "PASS" : "FAIL");
  return out;
}

namespace {

ojson entity_json(const AcceptEntity& e) {
  ojson checks = ojson::array();
  for (const AcceptCheck& c : e.checks) {
    ojson cj;
    cj["check"] = c.check;
    cj["measured"] = c.measured;
    cj["busbw_GBps"] = c.busbw_GBps ? ojson(*c.busbw_GBps) : ojson(nullptr);
    cj["expected"] = c.expected;
    cj["rule"] = c.rule;
    cj["verdict"] = c.verdict;
    cj["evidence"] = c.evidence;
    checks.push_back(cj);
  }
  ojson j;
  j["name"] = e.name;
  j["verdict"] = e.verdict();
  j["checks"] = checks;
  return j;
}

}  // namespace

ojson to_json(const AcceptReport& r) {
  ojson j;
  j["schema"] = kAcceptSchema;
  j["railkit_version"] = kVersion;
  j["created"] = utc_now_iso();
  j["verdict"] = r.passed() ? "pass" : "fail";
  ojson nodes = ojson::array();
  for (const auto& e : r.nodes) nodes.push_back(entity_json(e));
  j["nodes"] = nodes;
  ojson cluster = ojson::array();
  for (const auto& e : r.cluster) cluster.push_back(entity_json(e));
  j["cluster"] = cluster;
  j["pairs"] = r.pairs;
  j["isolation"] = r.isolation;
  j["rules"] = r.rules;
  j["stages"] = r.stages;
  j["commands"] = r.commands;
  return j;
}

std::string render_junit(const AcceptReport& r) {
  int tests = 0, failures = 0, skipped = 0;
  std::string body;
  const auto add = [&](const AcceptEntity& e) {
    for (const AcceptCheck& c : e.checks) {
      ++tests;
      body += fmt::format("    <testcase classname=\"{}\" name=\"{}\">\n", xml_escape(e.name), xml_escape(c.check));
      const std::string msg = fmt::format("{}: measured {}, expected {} (rule: {})", c.check, c.measured, c.expected, c.rule);
      if (c.verdict == "fail") {
        ++failures;
        body += fmt::format("      <failure message=\"{}\">{}</failure>\n", xml_escape(msg),
                            xml_escape(c.evidence.empty() ? msg : c.evidence));
      } else if (c.verdict == "skipped") {
        ++skipped;
        body += fmt::format("      <skipped message=\"{}\"/>\n", xml_escape(c.evidence));
      } else {
        body += fmt::format("      <system-out>{}</system-out>\n", xml_escape(msg + (c.evidence.empty() ? "" : "; " + c.evidence)));
      }
      body += "    </testcase>\n";
    }
  };
  for (const auto& e : r.nodes) add(e);
  for (const auto& e : r.cluster) add(e);
  return fmt::format(
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"railkit accept\" tests=\"{0}\" failures=\"{1}\" "
      "skipped=\"{2}\">\n  <testsuite name=\"railkit accept\" tests=\"{0}\" failures=\"{1}\" skipped=\"{2}\" "
      "errors=\"0\">\n{3}  </testsuite>\n</testsuites>\n",
      tests, failures, skipped, body);
}

std::string render_prometheus(const AcceptReport& r) {
  std::string pass = "# HELP railkit_accept_check_pass 1 when the acceptance check passed (or was skipped), 0 when it failed.\n"
                     "# TYPE railkit_accept_check_pass gauge\n";
  std::string bw = "# HELP railkit_accept_busbw_gbps Bus bandwidth measured by the acceptance check, GB/s (1e9 B/s).\n"
                   "# TYPE railkit_accept_busbw_gbps gauge\n";
  const auto add = [&](const AcceptEntity& e) {
    for (const AcceptCheck& c : e.checks) {
      const std::string labels = fmt::format("node=\"{}\",check=\"{}\"", prom_escape(e.name), prom_escape(c.check));
      pass += fmt::format("railkit_accept_check_pass{{{}}} {}\n", labels, c.verdict == "fail" ? 0 : 1);
      if (c.busbw_GBps) bw += fmt::format("railkit_accept_busbw_gbps{{{}}} {:.6g}\n", labels, *c.busbw_GBps);
    }
  };
  for (const auto& e : r.nodes) add(e);
  for (const auto& e : r.cluster) add(e);
  return pass + bw;
}

std::string render_good_hosts(const AcceptReport& r) {
  std::string out;
  for (const auto& e : r.nodes)
    if (e.verdict() == "pass") out += e.name + "\n";
  return out;
}

// ---------------------------------------------------------------------------- bench arguments

namespace {

struct DefaultArg {
  std::vector<std::string> names;
  std::string value;
};

/// Real nodes: bandwidth-bound sizes. Emulated nodes share one machine, usually oversubscribed,
/// where scheduling noise reaches milliseconds at 256 KiB: sizes whose operations take about
/// 0.1 ms, so that a rank slowed by milliseconds stands out.
const std::vector<DefaultArg>& default_args(bool emulated) {
  static const std::vector<DefaultArg> real{
      {{"-b", "--minbytes"}, "16M"}, {{"-e", "--maxbytes"}, "256M"},  {{"-f", "--stepfactor"}, "4"},
      {{"-n", "--iters"}, "20"},     {{"-w", "--warmup_iters"}, "5"}, {{"--placement"}, "out"},
  };
  static const std::vector<DefaultArg> emulated_nodes{
      {{"-b", "--minbytes"}, "4K"},  {{"-e", "--maxbytes"}, "16K"},   {{"-f", "--stepfactor"}, "4"},
      {{"-n", "--iters"}, "10"},     {{"-w", "--warmup_iters"}, "3"}, {{"--placement"}, "out"},
  };
  return emulated ? emulated_nodes : real;
}

/// Whether `arg` sets the option `name` ("-n", "-n5", "--iters", "--iters=5").
bool sets(const std::string& arg, const std::string& name) {
  if (arg == name) return true;
  if (name.starts_with("--")) return arg.starts_with(name + "=");
  return arg.size() > name.size() && arg.starts_with(name) && !arg.starts_with("--");
}

bool user_sets(const std::vector<std::string>& user, const std::vector<std::string>& names) {
  return std::any_of(user.begin(), user.end(), [&](const std::string& a) {
    return std::any_of(names.begin(), names.end(), [&](const std::string& n) { return sets(a, n); });
  });
}

}  // namespace

std::vector<std::string> merge_bench_args(const std::vector<std::string>& user, bool emulated) {
  static const std::vector<std::pair<std::vector<std::string>, const char*>> reserved{
      {{"--split"}, "each stage sets its own split"},
      {{"--ranks-per-node"}, "use railkit accept's --ranks-per-node"},
      {{"-J", "--output_file"}, "each stage writes its results document in --out"},
      {{"--label"}, "each stage labels its results"},
      {{"-N", "--run_cycles"}, "acceptance judges one cycle"},
  };
  for (const auto& [names, why] : reserved)
    if (user_sets(user, names))
      throw UsageError(fmt::format("--bench-args: {} is set by railkit accept ({})", names.back(), why));
  std::vector<std::string> out;
  for (const DefaultArg& d : default_args(emulated))
    if (!user_sets(user, d.names)) out.insert(out.end(), {d.names.front(), d.value});
  out.insert(out.end(), user.begin(), user.end());
  return out;
}

// ---------------------------------------------------------------------------- the run

namespace {

/// busbw at the largest size of each (group, coll): out-of-place when measured, else in-place.
struct Measured {
  std::map<std::string, std::map<std::string, double>> busbw;  ///< group -> coll -> GB/s
  std::map<std::string, std::uint64_t> bytes;                  ///< coll -> largest size
};

/// busbw from the loop time (avg), or from the median iteration (p50).
double busbw_of(const ResultRecord& r, const std::string& statistic) {
  if (statistic == "p50" && r.time_us.p50 > 0) return r.busbw_GBps * r.time_us.avg / r.time_us.p50;
  return r.busbw_GBps;
}

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

std::string gbps(double v) { return fmt::format("{:.3f} GB/s", v); }

std::string join(const std::vector<std::string>& v, const std::string& sep) {
  std::string out;
  for (size_t i = 0; i < v.size(); ++i) out += (i ? sep : "") + v[i];
  return out;
}

std::string node_list(const std::vector<int>& nodes) {
  std::vector<std::string> s;
  for (int n : nodes) s.push_back(std::to_string(n));
  return join(s, "+");
}

/// A launch was interrupted (SIGINT, SIGTERM, SIGHUP): the run ends with 128 + signal.
struct Interrupted {
  int signal = 0;
};

class Runner {
 public:
  Runner(const AcceptOptions& o, char* const* envp, std::ostream& progress)
      : o_(o), envp_(envp), progress_(progress), base_args_(merge_bench_args(o.bench_args, o.emulated_rpn > 0)) {
    for (const auto& n : o_.nodes) names_.push_back(n.name);
    report_.nodes.resize(o_.nodes.size());
    for (size_t i = 0; i < o_.nodes.size(); ++i) report_.nodes[i].name = o_.nodes[i].name;
    if (!user_sets(o_.bench_args, {"--coll"})) base_args_.insert(base_args_.begin(), {"--coll", join(o_.suite.colls, ",")});
    pair_coll_ = std::find(o_.suite.colls.begin(), o_.suite.colls.end(), "all_reduce") != o_.suite.colls.end()
                     ? "all_reduce"
                     : o_.suite.colls.front();
  }

  AcceptReport run(const std::string& fraction_why) {
    const auto t0 = std::chrono::steady_clock::now();
    report_.rules = {{"peer_fraction", o_.suite.peer_fraction},
                     {"peer_fraction_why", fraction_why},
                     {"statistic", o_.suite.statistic},
                     {"rdma_fraction", o_.suite.rdma_fraction},
                     {"profile", o_.profile ? ojson(o_.profile->name) : ojson(nullptr)}};
    stage("topo", [&] { return topo_stage(); });
    stage("rdma", [&] { return rdma_stage(); });
    stage("node", [&] { return node_stage(); });
    stage("rail", [&] { return rail_stage(); });
    stage("pair", [&] { return pair_stage(); });
    stage("all", [&] { return all_stage(); });
    stage("isolate", [&] { return isolate_stage(); });
    explain_rails();
    progress_ << fmt::format("railkit accept: finished in {}\n",
                             format_duration(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count()))
              << std::flush;
    return std::move(report_);
  }

 private:
  /// Runs one stage (unless the suite skips it) and records its status and duration.
  void stage(const std::string& name, const std::function<std::string()>& body) {
    ojson s;
    s["stage"] = name;
    if (!o_.suite.runs(name)) {
      s["status"] = "skipped";
      s["reason"] = "skipped by the suite";
      report_.stages.push_back(s);
      return;
    }
    const auto t0 = std::chrono::steady_clock::now();
    const int launches_before = launches_;
    const std::string skipped_reason = body();
    s["status"] = skipped_reason.empty() ? "ran" : "skipped";
    if (!skipped_reason.empty()) s["reason"] = skipped_reason;
    s["launches"] = launches_ - launches_before;
    s["seconds"] = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    report_.stages.push_back(s);
  }

  AcceptEntity& node(int i) { return report_.nodes[static_cast<size_t>(i)]; }

  AcceptEntity& cluster(const std::string& name) {
    for (auto& e : report_.cluster)
      if (e.name == name) return e;
    report_.cluster.push_back(AcceptEntity{name, {}});
    return report_.cluster.back();
  }

  void record_command(const std::string& stage, const std::vector<std::string>& argv, const LaunchResult& lr) {
    ojson c;
    c["stage"] = stage;
    c["argv"] = argv;
    c["result"] = lr.describe();
    c["elapsed_s"] = lr.elapsed_s;
    report_.commands.push_back(c);
  }

  /// One railkit-bench launch with the stage's arguments; the results document, or nullopt with
  /// the reason in `why`.
  std::optional<ResultsDocument> bench(const std::string& stage, const std::string& base,
                                       const std::vector<std::string>& stage_args, std::string& why) {
    launch::LaunchContext ctx;
    ctx.launcher = o_.launcher;
    ctx.bench = o_.bench;
    ctx.bench_args = base_args_;
    ctx.out_dir = o_.out_dir;
    ctx.timeout_s = o_.timeout_s;
    launch::BenchConfig c{base, {}, stage_args};
    if (o_.emulated_rpn > 0) c.args.insert(c.args.end(), {"--ranks-per-node", std::to_string(o_.emulated_rpn)});
    progress_ << fmt::format("railkit accept: {}: {} ...\n", stage, base) << std::flush;
    launch::TrialRun tr = launch::run_config(ctx, c, "bench/" + base, envp_, {});
    ++launches_;
    bench_seconds_ += tr.launch.elapsed_s;
    record_command(stage, tr.record.command, tr.launch);
    if (tr.launch.end == LaunchResult::End::Interrupted) throw Interrupted{tr.launch.signal};
    if (tr.record.status != TrialStatus::Ok) {
      why = tr.record.error;
      progress_ << fmt::format("railkit accept: {}: {} failed: {}\n", stage, base, why) << std::flush;
      return std::nullopt;
    }
    return load_results((o_.out_dir / tr.record.results).string());
  }

  /// A stage's launch failed: a cluster-level failure naming why (nodes are not blamed).
  void launch_failed(const std::string& stage, const std::string& why) {
    cluster("stage:" + stage).checks.push_back(AcceptCheck{stage + ".launch", "failed", std::nullopt, "runs", "launch",
                                                           "fail", why});
  }

  // -------------------------------------------------------------------------- (a) topo

  std::vector<std::string> wrap(const AcceptNode& n, const std::vector<std::string>& cmd) const {
    std::vector<std::string> argv;
    switch (o_.launcher.kind) {
      case LauncherKind::Mpirun:
        argv.push_back("mpirun");
        if (o_.launcher.as_root) argv.push_back("--allow-run-as-root");
        argv.insert(argv.end(), {"-np", "1"});
        if (o_.emulated_rpn == 0) argv.insert(argv.end(), {"--host", n.host});
        break;
      case LauncherKind::Srun:
        argv.insert(argv.end(), {"srun", "--ntasks=1", "--nodes=1"});
        if (o_.emulated_rpn == 0) argv.push_back("--nodelist=" + n.host);
        break;
      case LauncherKind::Local: break;
    }
    argv.insert(argv.end(), cmd.begin(), cmd.end());
    return argv;
  }

  std::string topo_stage() {
    fs::create_directories(o_.out_dir / "topo");
    std::vector<topo::NodeFacts> facts;
    std::vector<int> fact_node;
    for (size_t i = 0; i < o_.nodes.size(); ++i) {
      const AcceptNode& n = o_.nodes[i];
      const std::string file = slug(n.name);
      LaunchSpec spec;
      spec.argv = wrap(n, {o_.railkit, "topo", "--root", n.topo_root, "--format", "json", "--lint"});
      spec.stdout_path = o_.out_dir / "topo" / (file + ".json");
      spec.stderr_path = o_.out_dir / "topo" / (file + ".stderr.txt");
      spec.timeout_s = std::min(o_.timeout_s, 120.0);
      const LaunchResult lr = run_process(spec, envp_);
      record_command("topo", spec.argv, lr);
      AcceptCheck c{"topo.lint", "", std::nullopt, "no error finding", "lint", "pass", ""};
      json doc;
      bool have_doc = false;
      try {
        std::ifstream in(spec.stdout_path);
        doc = json::parse(in);
        have_doc = doc.is_object() && doc.contains("findings");
      } catch (const json::exception&) {
      }
      if (have_doc) {
        std::vector<std::string> errors;
        int warnings = 0;
        for (const auto& f : doc["findings"]) {
          const std::string sev = f.value("severity", "");
          if (sev == "error")
            errors.push_back(f.value("check", "") + " " + f.value("subject", "") + ": " + f.value("message", ""));
          else if (sev == "warning")
            ++warnings;
        }
        c.measured = fmt::format("{} error{}, {} warning{}", errors.size(), errors.size() == 1 ? "" : "s", warnings,
                                 warnings == 1 ? "" : "s");
        c.verdict = errors.empty() && (lr.ok() || lr.exit_code == exit_code(ErrorCode::CheckFailed)) ? "pass" : "fail";
        c.evidence = errors.empty() ? fmt::format("root {}", n.topo_root) : fmt::format("root {}: {}", n.topo_root, join(errors, "; "));
        try {
          topo::NodeFacts nf = topo::node_facts_from_json(doc.dump(), spec.stdout_path.string());
          nf.node = n.name;
          facts.push_back(std::move(nf));
          fact_node.push_back(static_cast<int>(i));
        } catch (const Error&) {
        }
      } else {
        c.measured = "no document";
        c.verdict = "fail";
        c.evidence = fmt::format("railkit topo --root {}: {}: {}", n.topo_root, lr.describe(),
                                 launch::telling_stderr_line(file_tail(spec.stderr_path, 20)));
      }
      node(static_cast<int>(i)).checks.push_back(c);
    }
    // Homogeneity: the fingerprint of each node against the majority (`railkit topo --compare`).
    if (facts.size() >= 2) {
      const topo::CompareReport rep = topo::compare_nodes(facts);
      for (size_t k = 0; k < facts.size(); ++k) {
        const std::string& nm = facts[k].node;
        AcceptCheck c{"topo.homogeneity", "same as the majority", std::nullopt,
                      fmt::format("fingerprint {}", rep.majority_hash.substr(0, 12)), "majority", "pass", ""};
        const bool odd = std::find(rep.odd_nodes.begin(), rep.odd_nodes.end(), nm) != rep.odd_nodes.end();
        if (odd && !rep.tie) {
          std::vector<std::string> what;
          for (const auto& d : rep.diffs)
            for (const auto& [who, val] : d.nodes)
              if (who == nm) what.push_back(fmt::format("{} = {} (majority {})", d.fact, val, d.majority));
          c.measured = "differs";
          c.verdict = "fail";
          c.evidence = what.empty() ? "fingerprint differs from the majority" : join(what, "; ");
        } else if (rep.tie) {
          c.measured = "no majority";
          c.evidence = "fingerprints tie: no majority to compare with";
        }
        node(fact_node[k]).checks.push_back(c);
      }
    }
    return "";
  }

  // -------------------------------------------------------------------------- (b) rdma

  /// The RDMA NICs of node i: from its topology document, else (topo stage skipped) its sysfs.
  std::vector<std::string> rdma_nics(size_t i) const {
    std::vector<std::string> nics;
    const fs::path doc_path = o_.out_dir / "topo" / (slug(o_.nodes[i].name) + ".json");
    try {
      std::ifstream in(doc_path);
      if (in) {
        const json doc = json::parse(in);
        for (const auto& nic : doc.value("nics", json::array())) nics.push_back(nic.value("name", "?"));
      }
    } catch (const json::exception&) {
    }
    if (!o_.suite.runs("topo")) {
      std::error_code ec;
      for (const auto& e : fs::directory_iterator(fs::path(o_.nodes[i].topo_root) / "sys/class/infiniband", ec))
        nics.push_back(e.path().filename().string());
    }
    return nics;
  }

  /// `railkit rdma-loopback` once per node with RDMA NICs (real nodes at once, emulated nodes
  /// one after the other: they share this machine's NICs); one check per NIC against its line rate.
  std::string rdma_stage() {
    fs::create_directories(o_.out_dir / "rdma");
    std::string ib_write_bw = o_.suite.ib_write_bw;
    if (ib_write_bw.empty()) ib_write_bw = env_value(envp_, "RAILKIT_IB_WRITE_BW");
    std::vector<size_t> which;
    std::vector<LaunchSpec> specs;
    for (size_t i = 0; i < o_.nodes.size(); ++i) {
      if (rdma_nics(i).empty()) {
        node(static_cast<int>(i)).checks.push_back(
            AcceptCheck{"rdma.loopback", "skipped", std::nullopt, "line rate", "none", "skipped", "no RDMA device"});
        continue;
      }
      const AcceptNode& n = o_.nodes[i];
      std::vector<std::string> cmd{o_.railkit, "rdma-loopback", "--root", n.topo_root, "--duration-s",
                                   std::to_string(o_.suite.rdma_duration_s)};
      if (!ib_write_bw.empty()) cmd.insert(cmd.end(), {"--ib-write-bw", ib_write_bw});
      LaunchSpec spec;
      spec.argv = wrap(n, cmd);
      spec.stdout_path = o_.out_dir / "rdma" / (slug(n.name) + ".json");
      spec.stderr_path = o_.out_dir / "rdma" / (slug(n.name) + ".stderr.txt");
      spec.timeout_s = std::min(o_.timeout_s, o_.suite.rdma_duration_s + 120.0);
      which.push_back(i);
      specs.push_back(std::move(spec));
    }
    if (specs.empty()) return "no RDMA device";
    progress_ << fmt::format("railkit accept: rdma: ib_write_bw loopback on {} node{} ({} s each{}) ...\n", specs.size(),
                             specs.size() == 1 ? "" : "s", o_.suite.rdma_duration_s,
                             o_.emulated_rpn > 0 ? ", one after the other: emulated nodes share this machine" : ", at once")
              << std::flush;
    std::vector<LaunchResult> results;
    if (o_.emulated_rpn > 0) {
      for (const LaunchSpec& spec : specs) {
        results.push_back(run_process(spec, envp_));
        if (results.back().end == LaunchResult::End::Interrupted) break;
      }
    } else {
      results = fabric::run_concurrently(specs, envp_);
    }
    launches_ += static_cast<int>(results.size());
    std::vector<std::string> unavailable;
    for (size_t k = 0; k < results.size(); ++k) {
      record_command("rdma", specs[k].argv, results[k]);
      if (results[k].end == LaunchResult::End::Interrupted) throw Interrupted{results[k].signal};
      const std::string reason = rdma_checks(which[k], specs[k], results[k]);
      if (!reason.empty()) unavailable.push_back(reason);
    }
    if (unavailable.size() == specs.size()) return "rdma-loopback unavailable: " + unavailable.front();
    return "";
  }

  /// The checks of one node from its `railkit.rdma-loopback/1` document; returns the reason when
  /// the loopback was unavailable there (exit 5: no perftest), else "".
  std::string rdma_checks(size_t i, const LaunchSpec& spec, const LaunchResult& lr) {
    AcceptEntity& e = node(static_cast<int>(i));
    json doc;
    try {
      std::ifstream in(spec.stdout_path);
      doc = json::parse(in);
    } catch (const json::exception&) {
      doc = json();
    }
    const std::string err = launch::telling_stderr_line(file_tail(spec.stderr_path, 20));
    if (lr.end == LaunchResult::End::Exited && lr.exit_code == exit_code(ErrorCode::Unavailable)) {
      const std::string reason = doc.is_object() && doc.contains("reason") ? doc["reason"].get<std::string>() : err;
      e.checks.push_back(AcceptCheck{"rdma.loopback", "skipped", std::nullopt, "line rate", "none", "skipped", reason});
      return reason.empty() ? "exit 5" : reason;
    }
    if (!lr.ok() || !doc.is_object() || !doc.contains("nics") || !doc["nics"].is_array()) {
      e.checks.push_back(AcceptCheck{"rdma.loopback", "no document", std::nullopt, "line rate", "line rate", "fail",
                                     fmt::format("railkit rdma-loopback --root {}: {}{}", o_.nodes[i].topo_root,
                                                 lr.describe(), err.empty() ? "" : ": " + err)});
      return "";
    }
    const double f = o_.suite.rdma_fraction;
    for (const json& x : doc["nics"]) {
      const std::string nic = x.value("name", "?");
      AcceptCheck c{"rdma.loopback." + nic, "", std::nullopt, "", "line rate", "pass", ""};
      const std::string status = x.value("status", "");
      const auto num = [&](const char* k) {
        return x.contains(k) && x[k].is_number() ? std::optional<double>(x[k].get<double>()) : std::nullopt;
      };
      const std::optional<double> rate = num("line_rate_Gbps"), got = num("measured_Gbps");
      const std::string where =
          fmt::format("{} port {}, NUMA {}, {}", nic, x.value("port", 1),
                      x.contains("numa") && x["numa"].is_number() ? std::to_string(x["numa"].get<int>()) : "-",
                      x.contains("gpu") && x["gpu"].is_number() ? fmt::format("GPU{} memory", x["gpu"].get<int>())
                                                                : std::string("host memory"));
      c.expected = rate ? fmt::format(">= {:.1f} Gb/s ({:g} x line rate {:g} Gb/s)", f * *rate, f, *rate) : "line rate unknown";
      if (status == "skipped") {
        c.measured = "skipped";
        c.verdict = "skipped";
        c.evidence = fmt::format("{}: {}", nic, x.value("error", ""));
      } else if (status != "ok" || !got) {
        c.measured = "failed";
        c.verdict = "fail";
        c.evidence = fmt::format("ib_write_bw loopback on {} failed: {}", where, x.value("error", ""));
      } else {
        c.measured = fmt::format("{:.2f} Gb/s", *got);
        if (!rate) {
          c.rule = "none (reported)";
          c.evidence = fmt::format("ib_write_bw loopback on {}: {:.2f} Gb/s; the port's line rate is unknown", where, *got);
        } else {
          c.verdict = *got >= f * *rate ? "pass" : "fail";
          c.evidence = fmt::format("ib_write_bw loopback on {}: {:.2f} of {:g} Gb/s line rate ({:.2f}){}", where, *got,
                                   *rate, *got / *rate, c.verdict == "fail" ? fmt::format(", below {:g} x line rate", f) : "");
        }
      }
      e.checks.push_back(c);
    }
    return "";
  }

  // -------------------------------------------------------------------------- (b) node

  int rpn() const { return static_cast<int>(o_.nodes.front().ranks.size()); }

  /// One check of a split stage before confirmation.
  struct GroupCheck {
    std::string group, coll;
    double busbw = 0;
    Judgement j;
  };

  /// Judges every group of a split launch against the suite or its peers (the other groups).
  std::vector<GroupCheck> judge_groups(const std::string& stage, const Measured& m, const std::vector<std::string>& groups) {
    std::vector<GroupCheck> out;
    for (const std::string& coll : o_.suite.colls) {
      if (!m.bytes.count(coll)) continue;
      for (const std::string& g : groups) {
        if (!m.busbw.count(g) || !m.busbw.at(g).count(coll)) continue;
        std::vector<double> peers;
        for (const std::string& gk : groups)
          if (gk != g && m.busbw.count(gk) && m.busbw.at(gk).count(coll)) peers.push_back(m.busbw.at(gk).at(coll));
        const double v = m.busbw.at(g).at(coll);
        out.push_back(GroupCheck{g, coll, v, judge(o_.suite, stage, coll, m.bytes.at(coll), v, peers)});
      }
    }
    return out;
  }

  /// A split stage (node, rail): one launch; when a group fails, a second launch confirms it (a
  /// group fails only when it fails both, so one noisy launch convicts nobody). Calls
  /// sink(index of the group, check).
  void split_stage(const std::string& stage, const std::vector<std::string>& groups, const std::string& what,
                   const std::function<void(size_t, AcceptCheck)>& sink) {
    std::string why;
    const auto doc = bench(stage, stage, {"--split", stage}, why);
    if (!doc) {
      launch_failed(stage, why);
      return;
    }
    const Measured m = measured_of(*doc, o_.suite.statistic);
    const std::vector<GroupCheck> first = judge_groups(stage, m, groups);
    std::vector<GroupCheck> second;
    if (std::any_of(first.begin(), first.end(), [](const GroupCheck& c) { return !c.j.pass; })) {
      progress_ << fmt::format("railkit accept: {}: a group is suspect; confirming with a second launch\n", stage)
                << std::flush;
      if (const auto again = bench(stage, stage + "-confirm", {"--split", stage}, why))
        second = judge_groups(stage, measured_of(*again, o_.suite.statistic), groups);
      else
        launch_failed(stage, "confirmation: " + why);
    }
    for (const GroupCheck& c : first) {
      const auto idx = static_cast<size_t>(std::find(groups.begin(), groups.end(), c.group) - groups.begin());
      AcceptCheck a{fmt::format("{}.{}", stage, c.coll), gbps(c.busbw), c.busbw, c.j.expected, c.j.rule,
                    c.j.pass ? "pass" : "fail",
                    fmt::format("{} {} at {} (--split {}, group {}, {} time)", c.coll, what, format_bytes(m.bytes.at(c.coll)),
                                stage, c.group, o_.suite.statistic)};
      if (!c.j.pass) {
        const auto again = std::find_if(second.begin(), second.end(), [&](const GroupCheck& s2) {
          return s2.group == c.group && s2.coll == c.coll;
        });
        if (again != second.end()) {
          a.evidence += fmt::format("; confirmation launch: {} ({})", gbps(again->busbw), again->j.expected);
          if (again->j.pass) {
            a.verdict = "pass";
            a.evidence += ": passed, the first launch was noise";
          }
        }
      }
      sink(idx, a);
    }
  }

  std::string node_stage() {
    if (rpn() < 2) return "one rank per node: nothing to measure inside a node";
    std::vector<std::string> groups;
    for (size_t i = 0; i < o_.nodes.size(); ++i) groups.push_back(fmt::format("node{}", i));
    split_stage("node", groups, "inside the node",
                [&](size_t i, AcceptCheck c) { node(static_cast<int>(i)).checks.push_back(std::move(c)); });
    return "";
  }

  // -------------------------------------------------------------------------- (c) rail

  std::string rail_stage() {
    if (o_.nodes.size() < 2) return "one node: a rail needs two";
    std::vector<std::string> groups;
    for (int i = 0; i < rpn(); ++i) groups.push_back(fmt::format("rail{}", i));
    split_stage("rail", groups, "across the nodes",
                [&](size_t i, AcceptCheck c) { cluster(groups[i]).checks.push_back(std::move(c)); });
    return "";
  }

  // -------------------------------------------------------------------------- (d) pairs

  std::string pair_stage() {
    const int n = static_cast<int>(o_.nodes.size());
    if (n < 2) return "one node: no pair";
    const auto rounds = circle_rounds(n);
    const double per_launch = launches_ > 0 ? bench_seconds_ / launches_ : 0;
    progress_ << fmt::format("railkit accept: pair stage: {} node{}, {} round{} of {} concurrent pair{} (circle method){}\n",
                             n, n == 1 ? "" : "s", rounds.size(), rounds.size() == 1 ? "" : "s", n / 2,
                             n / 2 == 1 ? "" : "s",
                             per_launch > 0 ? ", estimated " + format_duration(per_launch * static_cast<double>(rounds.size()))
                                            : "")
              << std::flush;
    std::vector<PairResult> pairs;
    std::vector<int> round_of;
    for (size_t r = 0; r < rounds.size(); ++r) {
      std::vector<std::string> groups;
      for (const auto& [a, b] : rounds[r]) groups.push_back(fmt::format("{}+{}", a, b));
      std::string why;
      const auto doc = bench("pair", fmt::format("pair-round{}", r), {"--split", "nodes:" + join(groups, ",")}, why);
      if (!doc) {
        launch_failed("pair", fmt::format("round {}: {}", r, why));
        continue;
      }
      const Measured m = measured_of(*doc, o_.suite.statistic);
      for (const auto& [a, b] : rounds[r]) {
        const std::string g = fmt::format("nodes{}+{}", a, b);
        if (!m.busbw.count(g) || !m.busbw.at(g).count(pair_coll_)) continue;
        pairs.push_back(PairResult{a, b, m.busbw.at(g).at(pair_coll_), false});
        round_of.push_back(static_cast<int>(r));
      }
      pair_bytes_ = m.bytes.count(pair_coll_) ? m.bytes.at(pair_coll_) : 0;
    }
    std::vector<double> all;
    for (const auto& p : pairs) all.push_back(p.busbw_GBps);
    std::vector<Judgement> js;
    for (auto& p : pairs) {
      js.push_back(judge(o_.suite, "pair", pair_coll_, pair_bytes_, p.busbw_GBps, all));
      p.suspect = !js.back().pass;
    }
    // Confirmation: the suspect pairs of each round again (the round's other pairs sit out); a pair
    // stays suspect only when it is below the same bar again.
    std::vector<std::optional<double>> again(pairs.size());
    for (size_t r = 0; r < rounds.size(); ++r) {
      std::vector<size_t> idx;
      for (size_t k = 0; k < pairs.size(); ++k)
        if (pairs[k].suspect && round_of[k] == static_cast<int>(r)) idx.push_back(k);
      if (idx.empty()) continue;
      std::vector<std::string> groups;
      for (size_t k : idx) groups.push_back(fmt::format("{}+{}", pairs[k].a, pairs[k].b));
      std::string why;
      const auto doc =
          bench("pair", fmt::format("pair-round{}-confirm", r), {"--split", "nodes:" + join(groups, ",")}, why);
      if (!doc) {
        launch_failed("pair", fmt::format("round {} confirmation: {}", r, why));
        continue;
      }
      const Measured m = measured_of(*doc, o_.suite.statistic);
      for (size_t k : idx) {
        const std::string g = fmt::format("nodes{}+{}", pairs[k].a, pairs[k].b);
        if (!m.busbw.count(g) || !m.busbw.at(g).count(pair_coll_)) continue;
        again[k] = m.busbw.at(g).at(pair_coll_);
        if (!js[k].expected_GBps || *again[k] >= *js[k].expected_GBps) pairs[k].suspect = false;
      }
    }
    pairs_ = pairs;
    for (size_t k = 0; k < pairs.size(); ++k) {
      ojson pj;
      pj["round"] = round_of[k];
      pj["nodes"] = {names_[static_cast<size_t>(pairs[k].a)], names_[static_cast<size_t>(pairs[k].b)]};
      pj["coll"] = pair_coll_;
      pj["bytes"] = pair_bytes_;
      pj["busbw_GBps"] = pairs[k].busbw_GBps;
      pj["confirm_busbw_GBps"] = again[k] ? ojson(*again[k]) : ojson(nullptr);
      pj["expected"] = js[k].expected;
      pj["rule"] = js[k].rule;
      pj["verdict"] = pairs[k].suspect ? "suspect" : "pass";
      report_.pairs.push_back(pj);
    }
    pair_rule_ = js.empty() ? "none (reported)" : js.front().rule;
    pair_expected_ = js.empty() ? "-" : js.front().expected;
    return "";
  }

  // -------------------------------------------------------------------------- (e) all

  std::string all_stage() {
    std::string why;
    const auto doc = bench("all", "all", {}, why);
    if (!doc) {
      launch_failed("all", why);
      return "";
    }
    AcceptEntity& e = cluster("all");
    std::set<std::pair<std::string, std::uint64_t>> judged;
    if (o_.profile) {
      for (const ProfileExpectation& x : o_.profile->expectations) {
        const ResultRecord* rec = nullptr;
        for (const ResultRecord& r : doc->results)
          if (r.op == x.coll && r.bytes == x.bytes && (!rec || rec->in_place)) rec = &r;
        const std::string name = fmt::format("all.{}@{}", x.coll, format_bytes(x.bytes));
        if (!rec) {
          if (std::find(o_.suite.colls.begin(), o_.suite.colls.end(), x.coll) != o_.suite.colls.end())
            e.checks.push_back(AcceptCheck{name, "not measured", std::nullopt, fmt::format(">= {:.3f} GB/s", x.busbw_GBps),
                                           "profile", "skipped", "this size was not measured: widen -b/-e in --bench-args"});
          continue;
        }
        const Judgement j = judge_expectation(x, rec->busbw_GBps);
        std::string ev = fmt::format("whole set, expectation of profile '{}'", o_.profile->name);
        if (o_.profile->cluster.ranks > 0 && o_.profile->cluster.ranks != doc->run.nranks)
          ev += fmt::format(" (made on {} ranks, this run has {})", o_.profile->cluster.ranks, doc->run.nranks);
        e.checks.push_back(AcceptCheck{name, gbps(rec->busbw_GBps), rec->busbw_GBps, j.expected, j.rule,
                                       j.pass ? "pass" : "fail", ev});
        judged.insert({x.coll, x.bytes});
        all_failed_ = all_failed_ || !j.pass;
      }
    }
    const Measured m = measured_of(*doc, o_.suite.statistic);
    for (const std::string& coll : o_.suite.colls) {
      if (!m.bytes.count(coll) || !m.busbw.count("all") || !m.busbw.at("all").count(coll)) continue;
      const std::uint64_t bytes = m.bytes.at(coll);
      if (judged.count({coll, bytes})) continue;
      const double v = m.busbw.at("all").at(coll);
      const Judgement j = judge(o_.suite, "all", coll, bytes, v, {});
      e.checks.push_back(AcceptCheck{fmt::format("all.{}@{}", coll, format_bytes(bytes)), gbps(v), v, j.expected, j.rule,
                                     j.pass ? "pass" : "fail", "whole set"});
      all_failed_ = all_failed_ || !j.pass;
      if (coll == pair_coll_) all_busbw_ = v;
    }
    return "";
  }

  // -------------------------------------------------------------------------- (f) isolation

  std::string isolate_stage() {
    const bool suspects = std::any_of(pairs_.begin(), pairs_.end(), [](const PairResult& p) { return p.suspect; });
    ojson iso;
    if (suspects) {
      const Isolation is = isolate_pairs(pairs_, names_);
      iso["method"] = "pairs";
      ojson guilty = ojson::array(), links = ojson::array();
      for (int g : is.guilty_nodes) guilty.push_back({{"node", names_[static_cast<size_t>(g)]}, {"evidence", is.evidence.at(g)}});
      for (const auto& [a, b] : is.guilty_links)
        links.push_back({names_[static_cast<size_t>(a)], names_[static_cast<size_t>(b)]});
      iso["guilty_nodes"] = guilty;
      iso["guilty_links"] = links;
      pair_checks(is);
      report_.isolation = iso;
      return "";
    }
    pair_checks(Isolation{});
    if (!all_failed_) {
      report_.isolation = {{"method", "none"}, {"reason", "no suspect pair and the whole set passed"}};
      return "nothing to isolate";
    }
    bisect();
    return "";
  }

  /// Each node's pair check: the median of its pairs; fails when isolation convicted it or
  /// named one of its links.
  void pair_checks(const Isolation& is) {
    for (size_t i = 0; i < o_.nodes.size(); ++i) {
      const int me = static_cast<int>(i);
      std::vector<double> mine;
      std::vector<std::string> bad;
      for (const auto& p : pairs_) {
        if (p.a != me && p.b != me) continue;
        mine.push_back(p.busbw_GBps);
        if (p.suspect)
          bad.push_back(fmt::format("{}+{} {:.3f} GB/s", names_[static_cast<size_t>(p.a)], names_[static_cast<size_t>(p.b)],
                                    p.busbw_GBps));
      }
      if (mine.empty()) continue;
      const double med = median(mine);
      AcceptCheck c{fmt::format("pair.{}", pair_coll_), gbps(med) + " (median of its pairs)", med, pair_expected_,
                    pair_rule_, "pass", bad.empty() ? "" : "suspect pairs: " + join(bad, "; ")};
      if (std::count(is.guilty_nodes.begin(), is.guilty_nodes.end(), me)) {
        c.verdict = "fail";
        c.rule += " + isolation";
        c.evidence = "guilty: " + is.evidence.at(me);
      } else {
        for (const auto& [a, b] : is.guilty_links) {
          if (a != me && b != me) continue;
          c.verdict = "fail";
          c.rule += " + isolation";
          c.evidence = fmt::format("guilty link {} <-> {}: suspect pair whose nodes pass their other pairs; {}",
                                   names_[static_cast<size_t>(a)], names_[static_cast<size_t>(b)], c.evidence);
        }
      }
      node(me).checks.push_back(c);
    }
  }

  /// The whole set failed without pair evidence: halves concurrently (--split nodes:A,B), into
  /// the slower half, until one node is left.
  void bisect() {
    std::vector<int> set(o_.nodes.size());
    for (size_t i = 0; i < set.size(); ++i) set[i] = static_cast<int>(i);
    ojson steps = ojson::array();
    std::vector<std::string> evidence;
    while (set.size() > 1) {
      const size_t h = set.size() / 2;
      const std::vector<int> a(set.begin(), set.begin() + static_cast<std::ptrdiff_t>(h));
      const std::vector<int> b(set.begin() + static_cast<std::ptrdiff_t>(h), set.begin() + static_cast<std::ptrdiff_t>(2 * h));
      const int left = set.size() % 2 ? set.back() : -1;  // the odd one out sits this step out
      std::string why;
      const auto doc = bench("isolate", fmt::format("bisect-{}", steps.size()),
                             {"--split", "nodes:" + node_list(a) + "," + node_list(b)}, why);
      if (!doc) {
        launch_failed("isolate", why);
        break;
      }
      const Measured m = measured_of(*doc, o_.suite.statistic);
      const auto bw = [&](const std::vector<int>& g) {
        const std::string name = "nodes" + node_list(g);
        return m.busbw.count(name) && m.busbw.at(name).count(pair_coll_) ? m.busbw.at(name).at(pair_coll_) : 0.0;
      };
      const double va = bw(a), vb = bw(b);
      steps.push_back({{"halves", {node_list(a), node_list(b)}}, {"busbw_GBps", {va, vb}}});
      const auto names = [&](const std::vector<int>& g) {
        std::vector<std::string> v;
        for (int k : g) v.push_back(names_[static_cast<size_t>(k)]);
        return join(v, "+");
      };
      evidence.push_back(fmt::format("{} {:.3f} vs {} {:.3f} GB/s", names(a), va, names(b), vb));
      if (va < o_.suite.peer_fraction * vb) set = a;
      else if (vb < o_.suite.peer_fraction * va) set = b;
      else if (left >= 0) set = {left};
      else break;
    }
    ojson iso;
    iso["method"] = "bisection";
    iso["steps"] = steps;
    if (set.size() == 1) {
      const int g = set.front();
      iso["guilty_nodes"] = ojson::array({{{"node", names_[static_cast<size_t>(g)]}, {"evidence", join(evidence, "; ")}}});
      node(g).checks.push_back(AcceptCheck{"isolation", "slow half down to this node", std::nullopt,
                                           fmt::format("neither half below {:g} x the other", o_.suite.peer_fraction),
                                           "isolation", "fail", "bisection of the whole set: " + join(evidence, "; ")});
    } else {
      iso["guilty_nodes"] = ojson::array();
      iso["reason"] = "the halves measured alike: no single slow node";
    }
    report_.isolation = iso;
  }

  /// A failed rail is explained when a node failed (every node has a rank on every rail).
  void explain_rails() {
    std::vector<std::string> failed;
    for (const auto& e : report_.nodes)
      if (e.verdict() == "fail") failed.push_back(e.name);
    if (failed.empty()) return;
    for (auto& e : report_.cluster) {
      if (!e.name.starts_with("rail")) continue;
      for (auto& c : e.checks) {
        if (c.verdict != "fail") continue;
        c.verdict = "explained";
        c.evidence += "; explained by the failed node" + std::string(failed.size() > 1 ? "s " : " ") + join(failed, ", ");
      }
    }
  }

  const AcceptOptions& o_;
  char* const* envp_;
  std::ostream& progress_;
  std::vector<std::string> base_args_;
  std::vector<std::string> names_;
  std::string pair_coll_;
  AcceptReport report_;
  int launches_ = 0;
  double bench_seconds_ = 0;
  std::vector<PairResult> pairs_;
  std::uint64_t pair_bytes_ = 0;
  std::string pair_rule_ = "none (reported)", pair_expected_ = "-";
  bool all_failed_ = false;
  double all_busbw_ = 0;
};

}  // namespace

int run_accept(const AcceptOptions& o, char* const* envp, std::ostream& out, std::ostream& progress) {
  if (o.nodes.empty()) throw UsageError("railkit accept: no node (give --hostfile, or --np with --ranks-per-node)");
  o.launcher.validate();
  const size_t rpn = o.nodes.front().ranks.size();
  for (const auto& n : o.nodes)
    if (n.ranks.size() != rpn) throw UsageError("railkit accept: every node needs as many ranks");
  for (const auto& [name, root] : o.suite.topo_roots)
    if (std::none_of(o.nodes.begin(), o.nodes.end(), [&](const AcceptNode& n) { return n.name == name; }))
      throw UsageError("--suite: topo_roots names node '" + name + "', which is not one of the nodes under test");
  std::error_code ec;
  fs::create_directories(o.out_dir / "bench", ec);
  if (ec) throw IoError("--out " + o.out_dir.string() + ": " + ec.message());

  AcceptOptions eff = o;
  std::string why = eff.suite.peer_fraction_set ? "the suite's peer_fraction" : "default";
  if (o.emulated_rpn > 0 && o.launcher.np > o.launcher.cpus && !o.suite.peer_fraction_set) {
    eff.suite.peer_fraction = o.suite.oversubscribed_peer_fraction;
    why = fmt::format("{} ranks on {} CPUs: scheduling noise spreads the groups several-fold, so the peers rule "
                      "uses oversubscribed_peer_fraction",
                      o.launcher.np, o.launcher.cpus);
    progress << fmt::format("railkit accept: note: {} ({:g} x the peers' median)\n", why, eff.suite.peer_fraction)
             << std::flush;
  }
  Runner runner(eff, envp, progress);
  AcceptReport rep;
  try {
    rep = runner.run(why);
  } catch (const Interrupted& i) {
    progress << fmt::format("railkit accept: interrupted by signal {}; no report written\n", i.signal) << std::flush;
    return 128 + i.signal;
  }

  out << render_accept_table(rep) << std::flush;
  write_file_atomic(o.out_dir / "accept.json", to_json(rep).dump(2) + "\n");
  write_file_atomic(o.out_dir / "accept.prom", render_prometheus(rep));
  write_file_atomic(o.out_dir / "good-hosts", render_good_hosts(rep));
  if (!o.junit.empty()) write_file_atomic(o.junit, render_junit(rep));
  return rep.passed() ? 0 : exit_code(ErrorCode::CheckFailed);
}

}  // namespace railkit::accept
