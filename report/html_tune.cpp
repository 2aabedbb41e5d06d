// `railkit report --html` (report/html_report.hpp): the page of a tune session: its state, header,
// the profile's settings, decisions and expectations, the trials, the validation and the nodes.
#include <map>

#include <fmt/format.h>

#include "core/strings.hpp"
#include "core/units.hpp"
#include "report/html_parts.hpp"

namespace railkit::report {
using namespace html_parts;
using json = nlohmann::json;

namespace {

/// The lines of a journal by type: the session (first line), done, topology, the trials.
struct TuneLines {
  json session, done, topology;
  std::vector<const json*> trials;  ///< into the journal
};

TuneLines tune_lines(const std::vector<json>& journal) {
  TuneLines l;
  l.session = journal.empty() ? json::object() : journal.front();
  for (const auto& j : journal) {
    const std::string type = str_of(j, "type");
    if (type == "trial") l.trials.push_back(&j);
    if (type == "done") l.done = j;
    if (type == "topology") l.topology = j;
  }
  return l;
}

/// The values of a JSON array as json_text, space-separated.
std::string joined_texts(const json& list) {
  std::vector<std::string> a;
  for (const auto& x : list) a.push_back(json_text(x));
  return join(a, " ");
}

/// The banners: SIMULATED when the trials ran on the simulator, and the session's state.
std::string tune_banners(const TuneLines& l, const json& profile, bool validated) {
  std::string o;
  const bool sim = l.session.is_object() && l.session.contains("sim") && !l.session["sim"].is_null();
  if (sim)
    o += "<div class=\"banner sim\" id=\"simulated\">SIMULATED: the trials ran on railkit-bench --backend sim; "
         "nothing here was measured, and the profile cannot be validated</div>\n";
  const std::string state = l.done.is_null() ? "not finished (no done line in the journal)"
                          : profile.is_null() ? "finished, no profile written"
                          : validated ? "profile written, validated (measured baseline vs tuned)"
                                      : "profile written, NOT validated";
  o += fmt::format("<div class=\"banner {}\" id=\"verdict\">{}</div>\n",
                   validated ? "v-pass" : (l.done.is_null() ? "v-skipped" : "v-reported"), esc(state));
  return o;
}

/// The header: the session's options and the profile's cluster.
KvRows tune_header(const TuneLines& l, const json& profile, const HtmlMeta& meta) {
  const json& session = l.session;
  KvRows kv = meta_rows(meta);
  const json cluster = profile.is_object() ? profile.value("cluster", json::object()) : json::object();
  const json launcher = session.value("launcher", json::object());
  kv.emplace_back("session created", str_of(session, "created"));
  kv.emplace_back("finished", l.done.is_null() ? "-" : str_of(l.done, "finished"));
  kv.emplace_back("railkit (session)", str_of(session, "railkit_version"));
  kv.emplace_back("space", session.contains("space") ? str_of(session["space"], "name") : "");
  kv.emplace_back("strategy, budget, seed", str_of(session, "strategy") + ", " + str_of(session, "budget") + ", " +
                                                str_of(session, "seed"));
  kv.emplace_back("launcher", str_of(launcher, "kind") + " np " + str_of(launcher, "np") +
                                  (str_of(launcher, "hostfile").empty() ? "" : " hostfile " + str_of(launcher, "hostfile")));
  kv.emplace_back("bench", str_of(session, "bench") + " " +
                               (session.contains("bench_args") ? joined_texts(session["bench_args"]) : std::string()));
  kv.emplace_back("backend", str_of(cluster, "backend") +
                                 (str_of(cluster, "backend_version").empty() ? "" : " (" + str_of(cluster, "backend_version") + ")"));
  kv.emplace_back("hosts", cluster.contains("hosts") ? joined_texts(cluster["hosts"]) : std::string("-"));
  kv.emplace_back("nodes, ranks", str_of(cluster, "nodes") + ", " + str_of(cluster, "ranks"));
  kv.emplace_back("fingerprint", str_of(cluster, "fingerprint"));
  return kv;
}

/// The settings the profile chose.
std::string settings_html(const json& profile) {
  Rows rows;
  const json settings = profile.value("settings", json::object());
  for (const char* kind : {"env", "dcqcn"}) {
    const json values = settings.value(kind, json::object());  // items() of a temporary would dangle
    for (const auto& [k, v] : values.items()) rows.push_back({Cell{kind}, Cell{k}, Cell{json_text(v), {}, "mono"}});
  }
  return "<h2 id=\"settings-title\">Settings of the profile</h2>\n" +
         table_html("settings", "", {"kind", "name", "value"}, rows);
}

/// "4 KiB .. 16 KiB" of a JSON object's two byte counts, sorted by the first; "-" without both.
Cell bytes_range_cell(const json& d) {
  const auto minb = num_of(d, "min_bytes"), maxb = num_of(d, "max_bytes");
  return Cell{minb && maxb ? format_bytes(std::uint64_t(*minb)) + " .. " + format_bytes(std::uint64_t(*maxb)) : "-", minb};
}

/// The profile's decisions, each with the rule that made it.
std::string decisions_html(const json& profile, const json& evidence) {
  Rows rows;
  const std::string rule = fmt::format(
      "kept when the paired ratio interval of {} validation rounds (tuned vs baseline, interleaved) lies above 1; "
      "no bucket may lose more than {}",
      str_of(evidence, "pairs"), str_of(evidence, "max_regression"));
  for (const auto& d : profile.value("decisions", json::array())) {
    const bool sig = d.value("significant", false);
    rows.push_back({Cell{str_of(d, "coll")}, bytes_range_cell(d), Cell{str_of(d, "config")},
                    num_cell(num_of(d, "busbw_GBps")), num_cell(num_of(d, "baseline_busbw_GBps")),
                    ratio_cell(num_of(d, "ratio"), num_of(d, "ratio_lo"), num_of(d, "ratio_hi")),
                    Cell{sig ? "significant gain" : "not significant", {}, sig ? "v-pass" : "v-reported"}, Cell{rule}});
  }
  return "<h2 id=\"decisions-title\">Decisions (verdicts)</h2>\n" +
         table_html("decisions", "", {"collective", "sizes", "configuration", "busbw (GB/s)", "baseline busbw (GB/s)",
                                      "ratio [lo, hi]", "verdict", "rule"}, rows);
}

/// The expectations the profile hands to railkit accept.
std::string expectations_html(const json& profile) {
  Rows rows;
  for (const auto& e : profile.value("expectations", json::array())) {
    const auto b = num_of(e, "bytes");
    rows.push_back({Cell{str_of(e, "coll")}, Cell{b ? format_bytes(std::uint64_t(*b)) : "-", b},
                    num_cell(num_of(e, "busbw_GBps")), num_cell(num_of(e, "tolerance")), Cell{str_of(e, "config")}});
  }
  return "<h2 id=\"expectations-title\">Expectations (for railkit accept)</h2>\n" +
         table_html("expectations", "", {"collective", "size", "busbw (GB/s)", "tolerance", "configuration"}, rows);
}

/// The search: one row per trial.
std::string trials_html(const std::vector<const json*>& trials) {
  Rows rows;
  for (const json* t : trials) {
    const std::string status = str_of(*t, "status") + (t->value("infeasible", false) ? " (infeasible)" : "");
    std::map<std::string, std::string> env;
    if (t->contains("env") && (*t)["env"].is_object())
      for (const auto& [k, v] : (*t)["env"].items()) env[k] = json_text(v);
    rows.push_back({num_cell(num_of(*t, "trial")), Cell{str_of(*t, "label")}, num_cell(num_of(*t, "fidelity")),
                    num_cell(num_of(*t, "iters")), Cell{status, {}, str_of(*t, "status") == "ok" ? "v-pass" : "v-fail"},
                    num_cell(num_of(*t, "objective")), num_cell(num_of(*t, "elapsed_s")), Cell{env_text(env), {}, "mono"},
                    Cell{str_of(*t, "error")}});
  }
  return "<h2 id=\"trials-title\">Trials</h2>\n" +
         table_html("trials", "", {"trial", "label", "fidelity", "iters", "status", "objective (GB/s)", "elapsed (s)",
                                   "settings", "error"}, rows);
}

/// The nodes the session measured (its topology line).
std::string topology_html(const json& topology) {
  Rows rows;
  for (const auto& nd : topology.value("nodes", json::array()))
    rows.push_back({Cell{str_of(nd, "host")}, Cell{str_of(nd, "fingerprint")}, Cell{str_of(nd, "facts"), {}, "mono"}});
  return "<h2 id=\"topology-title\">Measured nodes</h2>\n" + table_html("topology", "", {"host", "fingerprint", "facts"}, rows);
}

}  // namespace

std::string render_html_tune(const std::vector<json>& journal, const json& profile,
                             const std::optional<Comparison>& validation, const std::vector<HtmlPlot>& plots,
                             const HtmlMeta& meta) {
  const TuneLines lines = tune_lines(journal);
  const std::string name = profile.is_object() ? str_of(profile, "name") : "";
  std::string body = "<h1>railkit report: tune session" + (name.empty() ? std::string() : " " + esc(name)) + "</h1>\n";
  const json evidence = profile.is_object() ? profile.value("evidence", json::object()) : json::object();
  const bool validated = evidence.is_object() && evidence.value("validated", false);
  body += tune_banners(lines, profile, validated);
  body += kv_html("header", tune_header(lines, profile, meta));
  if (profile.is_object())
    body += settings_html(profile) + decisions_html(profile, evidence) + expectations_html(profile);
  else
    body += "<p class=\"warn\">No profile.json in the session directory.</p>\n";
  body += trials_html(lines.trials);
  if (validation) {
    body += "<h2 id=\"validation\">Validation: baseline and candidates, interleaved by round</h2>\n";
    body += comparison_body(*validation, "val", "h3");
  }
  if (lines.topology.is_object()) body += topology_html(lines.topology);
  body += plots_html(plots);
  return page("railkit report: tune session" + (name.empty() ? std::string() : " " + name), body, meta);
}

}  // namespace railkit::report
