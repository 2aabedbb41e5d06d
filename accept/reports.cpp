#include "accept/reports.hpp"

#include <algorithm>
#include <array>
#include <cctype>

#include <fmt/format.h>

#include "core/clock.hpp"
#include "core/error.hpp"
#include "core/json_text.hpp"
#include "core/prom.hpp"
#include "core/version.hpp"

namespace railkit::accept {
using ojson = nlohmann::ordered_json;

namespace {

bool judged(Verdict v) { return v == Verdict::Pass || v == Verdict::Explained; }

/// Topology checks judge configuration, not bandwidth.
bool is_topology(const AcceptCheck& c) { return c.check.starts_with("topo."); }

std::vector<const AcceptCheck*> checks_of(const AcceptEntity& e) {
  std::vector<const AcceptCheck*> out;
  for (const AcceptCheck& c : e.checks) out.push_back(&c);
  return out;
}

std::vector<const AcceptCheck*> all_checks(const AcceptReport& r) {
  std::vector<const AcceptCheck*> out;
  for (const auto* list : {&r.nodes, &r.cluster})
    for (const AcceptEntity& e : *list)
      for (const AcceptCheck& c : e.checks) out.push_back(&c);
  return out;
}

std::string plural(int n, std::string_view what) { return fmt::format("{} {}{}", n, what, n == 1 ? "" : "s"); }

std::string upper(std::string_view s) {
  std::string out(s);
  for (char& ch : out) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  return out;
}

}  // namespace

Verdict overall_verdict(const std::vector<const AcceptCheck*>& checks) {
  bool any_judged = false, measurement_judged = false, any_reported = false;
  for (const AcceptCheck* c : checks) {
    if (c->verdict == Verdict::Fail) return Verdict::Fail;
    if (judged(c->verdict)) {
      any_judged = true;
      measurement_judged = measurement_judged || !is_topology(*c);
    }
    any_reported = any_reported || c->verdict == Verdict::Reported;
  }
  if (any_reported) return measurement_judged ? Verdict::Pass : Verdict::Reported;
  return any_judged ? Verdict::Pass : Verdict::Skipped;
}

Verdict AcceptEntity::verdict() const { return overall_verdict(checks_of(*this)); }

Verdict AcceptReport::verdict() const { return overall_verdict(all_checks(*this)); }

bool AcceptReport::passed() const { return verdict() == Verdict::Pass; }

std::map<std::string, int> AcceptReport::counts() const {
  std::map<std::string, int> out;
  for (Verdict v : {Verdict::Pass, Verdict::Fail, Verdict::Skipped, Verdict::Explained, Verdict::Reported})
    out[std::string(name(v))] = 0;
  for (const AcceptCheck* c : all_checks(*this)) ++out[std::string(name(c->verdict))];
  return out;
}

std::string AcceptReport::verdict_reason() const {
  const auto n = counts();
  const int pass = n.at("pass"), fail = n.at("fail"), expl = n.at("explained"), rep = n.at("reported"),
            skip = n.at("skipped");
  std::string rest;
  if (rep > 0) rest += fmt::format("; {} reported without a rule", rep);
  if (skip > 0) rest += fmt::format("; {} skipped", skip);
  switch (verdict()) {
    case Verdict::Fail:
      return plural(fail, "check") + " failed" + rest;
    case Verdict::Pass:
      return fmt::format("{} judged, all passed{}{}", plural(pass + expl, "check"),
                         expl > 0 ? fmt::format(" ({} explained by a failed node)", expl) : "", rest);
    case Verdict::Reported: {
      const auto all = all_checks(*this);
      const bool topo = std::any_of(all.begin(), all.end(), [](const AcceptCheck* c) { return judged(c->verdict); });
      return fmt::format("nothing judged: {} measured but no rule judged {}{}: give --profile (expectations at this "
                         "scale) or thresholds in --suite; the peers rule needs 2 or more nodes (or ranks per node) "
                         "to compare",
                         rep == 1 ? "1 check was" : fmt::format("{} checks were", rep),
                         rep == 1 ? "it" : "them", topo ? " (only the topology checks were judged)" : "");
    }
    default:
      return skip > 0 ? "nothing judged: every check was skipped" : "nothing judged: no check ran";
  }
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

// ---------------------------------------------------------------------------- table

namespace {

/// "PASS", "FAIL", "REPORTED (measured; no rule judged it)", "SKIPPED (no check of its own ran)".
std::string verdict_line(Verdict v) {
  std::string out = upper(name(v));
  if (v == Verdict::Reported) out += " (measured; no rule judged it)";
  if (v == Verdict::Skipped) out += " (no check of its own ran)";
  return out;
}

}  // namespace

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
  for (const auto& e : r.nodes) out += fmt::format("{}: {}\n", e.name, verdict_line(e.verdict()));
  for (const std::string& n : r.notes) out += "note: " + n + "\n";
  out += fmt::format("verdict: {} ({})\n", upper(name(r.verdict())), r.verdict_reason());
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
  j["verdict"] = std::string(name(r.verdict()));
  j["verdict_reason"] = r.verdict_reason();
  ojson counts = ojson::object();
  for (const auto& [k, v] : r.counts()) counts[k] = v;
  j["counts"] = counts;
  j["notes"] = r.notes;
  ojson nodes = ojson::array();
  for (const auto& e : r.nodes) nodes.push_back(entity_json(e));
  j["nodes"] = nodes;
  ojson cluster = ojson::array();
  for (const auto& e : r.cluster) cluster.push_back(entity_json(e));
  j["cluster"] = cluster;
  j["pairs"] = r.pairs;
  j["isolation"] = r.isolation;
  j["rdma_pairs"] = r.rdma_pairs;
  j["rdma_isolation"] = r.rdma_isolation;
  j["rules"] = r.rules;
  j["stages"] = r.stages;
  j["commands"] = commands_json(r.commands);
  return j;
}

// ---------------------------------------------------------------------------- accept.json read back

namespace {

using json = nlohmann::json;

/// The member `key` of `obj`, checked to be an array (or an object): UsageError naming `where` otherwise.
const json& member_of(const json& obj, std::string_view key, bool array, const std::string& where) {
  const json& v = json_member(obj, key, where);
  if (array ? !v.is_array() : !v.is_object())
    throw UsageError(fmt::format("{}: {} must be {}, not {}", where, key, array ? "an array" : "an object", v.type_name()));
  return v;
}

AcceptCheck check_from_json(const json& j, const std::string& where) {
  json_object(j, where);
  AcceptCheck c;
  c.check = field<std::string>(j, "check", where);
  c.measured = field<std::string>(j, "measured", where);
  (void)json_member(j, "busbw_GBps", where);  // written always, null when not measured
  c.busbw_GBps = field_opt<double>(j, "busbw_GBps", where);
  c.expected = field<std::string>(j, "expected", where);
  c.rule = field<std::string>(j, "rule", where);
  const std::string verdict = field<std::string>(j, "verdict", where);
  const auto v = parse_verdict(verdict);
  if (!v)
    throw UsageError(fmt::format("{}: verdict '{}' is not {}", where, verdict, verdict_names()));
  c.verdict = *v;
  c.evidence = field<std::string>(j, "evidence", where);
  return c;
}

std::vector<AcceptEntity> entities_from_json(const json& doc, std::string_view key, std::string_view source) {
  std::vector<AcceptEntity> out;
  const json& list = member_of(doc, key, true, std::string(source));
  for (std::size_t i = 0; i < list.size(); ++i) {
    const std::string where = fmt::format("{}: {}[{}]", source, key, i);
    json_object(list[i], where);
    AcceptEntity e{field<std::string>(list[i], "name", where), {}};
    const json& checks = member_of(list[i], "checks", true, where);
    for (std::size_t k = 0; k < checks.size(); ++k)
      e.checks.push_back(check_from_json(checks[k], fmt::format("{}.checks[{}]", where, k)));
    out.push_back(std::move(e));
  }
  return out;
}

std::vector<CommandRecord> commands_from_json(const json& doc, std::string_view source) {
  std::vector<CommandRecord> out;
  const json& list = member_of(doc, "commands", true, std::string(source));
  for (std::size_t i = 0; i < list.size(); ++i) {
    const std::string where = fmt::format("{}: commands[{}]", source, i);
    json_object(list[i], where);
    out.push_back(CommandRecord{field<std::string>(list[i], "stage", where),
                                field<std::vector<std::string>>(list[i], "argv", where),
                                field<std::string>(list[i], "result", where), field<double>(list[i], "elapsed_s", where)});
  }
  return out;
}

AcceptDocument read_accept_document(const json& j, std::string_view source) {
  const std::string top(source);
  json_object(j, top);
  const std::string schema = field<std::string>(j, "schema", top);
  if (schema != kAcceptSchema)
    throw UsageError(fmt::format("{}: schema '{}' is not {}", top, schema, kAcceptSchema));
  AcceptDocument d;
  d.created = field<std::string>(j, "created", top);
  d.railkit_version = field<std::string>(j, "railkit_version", top);
  AcceptReport& r = d.report;
  r.nodes = entities_from_json(j, "nodes", source);
  r.cluster = entities_from_json(j, "cluster", source);
  r.notes = field<std::vector<std::string>>(j, "notes", top);
  r.pairs = member_of(j, "pairs", true, top);
  r.isolation = member_of(j, "isolation", false, top);
  r.rdma_pairs = member_of(j, "rdma_pairs", true, top);
  r.rdma_isolation = member_of(j, "rdma_isolation", false, top);
  r.rules = member_of(j, "rules", false, top);
  r.stages = member_of(j, "stages", true, top);
  r.commands = commands_from_json(j, source);
  return d;
}

}  // namespace

AcceptDocument accept_from_json(const nlohmann::json& j, std::string_view source) {
  return with_json_errors(source, [&] { return read_accept_document(j, source); });
}

// ---------------------------------------------------------------------------- JUnit, Prometheus, good-hosts

namespace {

/// One <testcase> of a check; counts failures and skips (a reported check is a skip: JUnit has
/// no "measured, not judged", and it is not a pass).
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
  } else if (c.verdict == Verdict::Reported) {
    ++skipped;
    body += fmt::format("      <skipped message=\"{}\"/>\n",
                        xml_escape("reported (measured; no rule judged it): " + msg +
                                   (c.evidence.empty() ? "" : "; " + c.evidence)));
  } else {
    body += fmt::format("      <system-out>{}</system-out>\n", xml_escape(msg + (c.evidence.empty() ? "" : "; " + c.evidence)));
  }
  return body + "    </testcase>\n";
}

/// `rail0`, `rail12`: a rail entity.
bool is_rail(const std::string& entity) {
  return entity.size() > 4 && entity.starts_with("rail") &&
         std::all_of(entity.begin() + 4, entity.end(), [](char ch) { return std::isdigit(static_cast<unsigned char>(ch)); });
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
  std::string pass =
      "# HELP railkit_accept_check_pass 1 when the acceptance check passed, 0 when it failed; checks that were "
      "skipped, reported (measured, no rule) or explained are not exported here (see railkit_accept_check_verdict).\n"
      "# TYPE railkit_accept_check_pass gauge\n";
  std::string verdict =
      "# HELP railkit_accept_check_verdict 1 for the verdict of the acceptance check (label verdict: pass, fail, "
      "skipped, explained or reported); one series per check.\n"
      "# TYPE railkit_accept_check_verdict gauge\n";
  std::string bw = "# HELP railkit_accept_busbw_gbps Bus bandwidth measured by the acceptance check, GB/s (1e9 B/s).\n"
                   "# TYPE railkit_accept_busbw_gbps gauge\n";
  const auto add = [&](const AcceptEntity& e, bool node) {
    for (const AcceptCheck& c : e.checks) {
      std::string labels = fmt::format("check=\"{}\"", prom_label_value(c.check));
      if (node) labels = fmt::format("node=\"{}\",{}", prom_label_value(e.name), labels);
      else if (is_rail(e.name)) labels = fmt::format("rail=\"{}\",{}", prom_label_value(e.name), labels);
      if (c.verdict == Verdict::Pass || c.verdict == Verdict::Fail)
        pass += fmt::format("railkit_accept_check_pass{{{}}} {}\n", labels, c.verdict == Verdict::Pass ? 1 : 0);
      verdict += fmt::format("railkit_accept_check_verdict{{{},verdict=\"{}\"}} 1\n", labels, name(c.verdict));
      if (c.busbw_GBps) bw += fmt::format("railkit_accept_busbw_gbps{{{}}} {:.6g}\n", labels, *c.busbw_GBps);
    }
  };
  for (const auto& e : r.nodes) add(e, true);
  for (const auto& e : r.cluster) add(e, false);
  const std::string when = fmt::format(
      "# HELP railkit_accept_last_run_timestamp_seconds When the acceptance run of this file finished (Unix time).\n"
      "# TYPE railkit_accept_last_run_timestamp_seconds gauge\n"
      "railkit_accept_last_run_timestamp_seconds {:.3f}\n",
      r.finished_unix_s);
  return pass + verdict + bw + when;
}

std::string render_good_hosts(const AcceptReport& r) {
  std::string out;
  for (const auto& e : r.nodes)
    if (e.verdict() == Verdict::Pass) out += e.name + "\n";
  return out;
}

// ---------------------------------------------------------------------------- lists to act on

std::string shell_word(std::string_view s) {
  const auto plain = [](char ch) {
    return std::isalnum(static_cast<unsigned char>(ch)) || std::string_view("_.:/=@%+,-").find(ch) != std::string_view::npos;
  };
  if (!s.empty() && std::all_of(s.begin(), s.end(), plain)) return std::string(s);
  std::string out = "'";
  for (char ch : s) out += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
  return out + "'";
}

namespace {

/// `s` with control characters (and, for list fields, tabs and commas) replaced by '_': one
/// line, one field.
std::string one_field(std::string_view s, bool list_field) {
  std::string out(s);
  for (char& ch : out) {
    const auto c = static_cast<unsigned char>(ch);
    if (c < 0x20 || c == 0x7f || (list_field && ch == ',')) ch = '_';
  }
  return out;
}

/// The failed nodes, each with its failed checks (report order).
std::vector<std::pair<std::string, std::vector<std::string>>> failed_nodes(const AcceptReport& r) {
  std::vector<std::pair<std::string, std::vector<std::string>>> out;
  for (const auto& e : r.nodes) {
    std::vector<std::string> checks;
    for (const AcceptCheck& c : e.checks)
      if (c.verdict == Verdict::Fail && std::find(checks.begin(), checks.end(), c.check) == checks.end())
        checks.push_back(c.check);
    if (!checks.empty()) out.emplace_back(e.name, std::move(checks));
  }
  return out;
}

std::string check_list(const std::vector<std::string>& checks) {
  std::string out;
  for (const std::string& c : checks) out += (out.empty() ? "" : ",") + one_field(c, true);
  return out;
}

/// The head of drain-slurm.sh and cordon-k8s.sh; `what` says what the script does.
std::string script_head(const AcceptReport& r, std::string_view what, std::size_t failed) {
  std::string out = fmt::format(
      "#!/usr/bin/env bash\n"
      "# Written by railkit accept {} ({}): {} the nodes that failed acceptance ({} node{}; see bad-hosts and\n"
      "# accept.json beside this file). railkit never runs it: review it, then run it yourself.\n"
      "set -euo pipefail\n",
      kVersion, utc_now_iso(), what, failed, failed == 1 ? "" : "s");
  if (r.emulated)
    out += fmt::format(
        "# The nodes were emulated: ranks of one machine, not nodes a scheduler knows. Their names are not\n"
        "# written here, and this script does nothing{}.\n",
        failed > 0 ? fmt::format(" ({} emulated node{} failed: see bad-hosts)", failed, failed == 1 ? "" : "s") : "");
  else if (failed == 0)
    out += "# No node failed: nothing to do.\n";
  return out;
}

/// The per-node lines of a script: `lines(node word, reason)` for each failed node whose name can
/// be a host name; a name starting with '-' would read as an option, and is left as a comment.
template <class Lines>
std::string script_body(const AcceptReport& r, Lines&& lines) {
  if (r.emulated) return "";
  std::string out;
  for (const auto& [node, checks] : failed_nodes(r)) {
    out += fmt::format("# {}: {}\n", one_field(node, false), one_field(check_list(checks), false));
    if (node.starts_with("-")) {
      out += "# (not acted on: a node name starting with '-' would read as an option)\n";
      continue;
    }
    out += lines(shell_word(node), "railkit: " + check_list(checks));
  }
  return out;
}

}  // namespace

std::string render_bad_hosts(const AcceptReport& r) {
  const auto failed = failed_nodes(r);
  std::string out;
  if (r.emulated && !failed.empty())
    out += "# emulated nodes (ranks of one machine named <hostname>:<i>): not hosts a scheduler knows\n";
  for (const auto& [node, checks] : failed)
    out += fmt::format("{}\t{}{}\n", one_field(node, true), check_list(checks), r.emulated ? "\temulated" : "");
  return out;
}

std::string render_drain_slurm(const AcceptReport& r) {
  const auto failed = failed_nodes(r);
  return script_head(r, "drains in Slurm", failed.size()) +
         script_body(r, [](const std::string& node, const std::string& reason) {
           return fmt::format("scontrol update NodeName={} State=DRAIN Reason={}\n", node, shell_word(reason));
         });
}

std::string render_cordon_k8s(const AcceptReport& r) {
  const auto failed = failed_nodes(r);
  return script_head(r, "cordons and taints in Kubernetes", failed.size()) +
         script_body(r, [](const std::string& node, const std::string&) {
           return fmt::format("kubectl cordon {0}\nkubectl taint nodes {0} railkit.io/accept=failed:NoSchedule --overwrite\n",
                              node);
         });
}

}  // namespace railkit::accept
