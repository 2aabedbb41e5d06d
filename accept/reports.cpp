#include "accept/reports.hpp"

#include <algorithm>
#include <array>

#include <fmt/format.h>

#include "core/clock.hpp"
#include "core/version.hpp"

namespace railkit::accept {
using ojson = nlohmann::ordered_json;

Verdict AcceptEntity::verdict() const {
  return std::any_of(checks.begin(), checks.end(), [](const AcceptCheck& c) { return c.verdict == Verdict::Fail; })
             ? Verdict::Fail
             : Verdict::Pass;
}

bool AcceptReport::passed() const {
  const auto ok = [](const AcceptEntity& e) { return e.verdict() == Verdict::Pass; };
  return std::all_of(nodes.begin(), nodes.end(), ok) && std::all_of(cluster.begin(), cluster.end(), ok);
}

AcceptEntity& AcceptReport::cluster_entity(const std::string& name) {
  for (auto& e : cluster)
    if (e.name == name) return e;
  cluster.push_back(AcceptEntity{name, {}});
  return cluster.back();
}

// ---------------------------------------------------------------------------- escaping

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

// ---------------------------------------------------------------------------- table

std::string render_accept_table(const AcceptReport& r) {
  std::vector<std::array<std::string, 6>> rows;
  rows.push_back({"node", "check", "measured", "expected", "verdict", "rule"});
  const auto add = [&](const AcceptEntity& e) {
    for (const AcceptCheck& c : e.checks)
      rows.push_back({e.name, c.check, c.measured, c.expected, std::string(name(c.verdict)), c.rule});
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
  for (const auto& e : r.nodes) out += fmt::format("{}: {}\n", e.name, e.verdict() == Verdict::Pass ? "PASS" : "FAIL");
  return out;
}

// ---------------------------------------------------------------------------- accept.json

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
    cj["verdict"] = std::string(name(c.verdict));
    cj["evidence"] = c.evidence;
    checks.push_back(cj);
  }
  ojson j;
  j["name"] = e.name;
  j["verdict"] = std::string(name(e.verdict()));
  j["checks"] = checks;
  return j;
}

ojson commands_json(const std::vector<CommandRecord>& commands) {
  ojson out = ojson::array();
  for (const CommandRecord& c : commands) {
    ojson cj;
    cj["stage"] = c.stage;
    cj["argv"] = c.argv;
    cj["result"] = c.result;
    cj["elapsed_s"] = c.elapsed_s;
    out.push_back(cj);
  }
  return out;
}

}  // namespace

ojson to_json(const AcceptReport& r) {
  ojson j;
  j["schema"] = kAcceptSchema;
  j["railkit_version"] = kVersion;
  j["created"] = utc_now_iso();
  j["verdict"] = std::string(name(r.passed() ? Verdict::Pass : Verdict::Fail));
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
  j["commands"] = commands_json(r.commands);
  return j;
}

// ---------------------------------------------------------------------------- JUnit, Prometheus, good-hosts

namespace {

/// One <testcase> of a check; counts failures and skips.
std::string junit_case(const AcceptEntity& e, const AcceptCheck& c, int& failures, int& skipped) {
  std::string body = fmt::format("    <testcase classname=\"{}\" name=\"{}\">\n", xml_escape(e.name), xml_escape(c.check));
  const std::string msg = fmt::format("{}: measured {}, expected {} (rule: {})", c.check, c.measured, c.expected, c.rule);
  if (c.verdict == Verdict::Fail) {
    ++failures;
    body += fmt::format("      <failure message=\"{}\">{}</failure>\n", xml_escape(msg),
                        xml_escape(c.evidence.empty() ? msg : c.evidence));
  } else if (c.verdict == Verdict::Skipped) {
    ++skipped;
    body += fmt::format("      <skipped message=\"{}\"/>\n", xml_escape(c.evidence));
  } else {
    body += fmt::format("      <system-out>{}</system-out>\n", xml_escape(msg + (c.evidence.empty() ? "" : "; " + c.evidence)));
  }
  return body + "    </testcase>\n";
}

}  // namespace

std::string render_junit(const AcceptReport& r) {
  int tests = 0, failures = 0, skipped = 0;
  std::string body;
  const auto add = [&](const AcceptEntity& e) {
    for (const AcceptCheck& c : e.checks) {
      ++tests;
      body += junit_case(e, c, failures, skipped);
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
      pass += fmt::format("railkit_accept_check_pass{{{}}} {}\n", labels, c.verdict == Verdict::Fail ? 0 : 1);
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
    if (e.verdict() == Verdict::Pass) out += e.name + "\n";
  return out;
}

}  // namespace railkit::accept
