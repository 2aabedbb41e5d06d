// `railkit report --html` (report/html_report.hpp): the page of a comparison, a tune session or an
// accept run, as one self-contained HTML file.
#include "report/html_report.hpp"

#include <stdlib.h>
#include <pwd.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <ostream>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include "core/atomic_file.hpp"
#include "core/clock.hpp"
#include "core/enums.hpp"
#include "core/error.hpp"
#include "core/json_text.hpp"
#include "core/strings.hpp"
#include "core/units.hpp"
#include "core/version.hpp"
#include "sweep/inputs.hpp"

namespace railkit::report {
using namespace sweep;  // the comparison and sweep documents it renders
namespace fs = std::filesystem;
using json = nlohmann::json;

// ---------------------------------------------------------------------------- escaping

std::string html_escape(std::string_view s) {
  std::string out;
  out.reserve(s.size() + s.size() / 8);
  static constexpr const char* kReplacement = "\xEF\xBF\xBD";  // U+FFFD
  for (std::size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      switch (c) {
        case '&': out += "&amp;"; break;
        case '<': out += "&lt;"; break;
        case '>': out += "&gt;"; break;
        case '"': out += "&quot;"; break;
        case '\'': out += "&#39;"; break;
        case '\t': case '\n': case '\r': out += static_cast<char>(c); break;
        default:
          if (c < 0x20 || c == 0x7f)
            out += kReplacement;
          else
            out += static_cast<char>(c);
      }
      ++i;
      continue;
    }
    // A UTF-8 sequence: its length from the lead byte, continuation bytes checked; overlong
    // forms, surrogates and code points above U+10FFFF are invalid.
    std::size_t len = 0;
    std::uint32_t cp = 0;
    if (c >= 0xC2 && c <= 0xDF) { len = 2; cp = c & 0x1F; }
    else if (c >= 0xE0 && c <= 0xEF) { len = 3; cp = c & 0x0F; }
    else if (c >= 0xF0 && c <= 0xF4) { len = 4; cp = c & 0x07; }
    bool ok = len > 0 && i + len <= s.size();
    for (std::size_t k = 1; ok && k < len; ++k) {
      const auto b = static_cast<unsigned char>(s[i + k]);
      ok = (b & 0xC0) == 0x80;
      cp = (cp << 6) | (b & 0x3F);
    }
    if (ok && len == 3) ok = cp >= 0x800 && !(cp >= 0xD800 && cp <= 0xDFFF);
    if (ok && len == 4) ok = cp >= 0x10000 && cp <= 0x10FFFF;
    if (ok && cp >= 0x80 && cp <= 0x9F) ok = false;  // C1 controls
    if (!ok) {
      out += kReplacement;
      ++i;
      continue;
    }
    out.append(s.substr(i, len));
    i += len;
  }
  return out;
}

std::string base64(std::string_view bytes) {
  static constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  std::size_t i = 0;
  for (; i + 3 <= bytes.size(); i += 3) {
    const std::uint32_t v = (std::uint32_t(static_cast<unsigned char>(bytes[i])) << 16) |
                            (std::uint32_t(static_cast<unsigned char>(bytes[i + 1])) << 8) |
                            std::uint32_t(static_cast<unsigned char>(bytes[i + 2]));
    out += kAlphabet[(v >> 18) & 63];
    out += kAlphabet[(v >> 12) & 63];
    out += kAlphabet[(v >> 6) & 63];
    out += kAlphabet[v & 63];
  }
  if (const std::size_t rest = bytes.size() - i; rest > 0) {
    std::uint32_t v = std::uint32_t(static_cast<unsigned char>(bytes[i])) << 16;
    if (rest == 2) v |= std::uint32_t(static_cast<unsigned char>(bytes[i + 1])) << 8;
    out += kAlphabet[(v >> 18) & 63];
    out += kAlphabet[(v >> 12) & 63];
    out += rest == 2 ? kAlphabet[(v >> 6) & 63] : '=';
    out += '=';
  }
  return out;
}

namespace {

std::string esc(std::string_view s) { return html_escape(s); }

// ---------------------------------------------------------------------------- page pieces

/// A table cell: its text (escaped when written), an optional sort key and a class.
struct Cell {
  Cell(std::string t, std::optional<double> s = std::nullopt, std::string c = {})
      : text(std::move(t)), sort(s), cls(std::move(c)) {}
  std::string text;
  std::optional<double> sort;
  std::string cls;
  bool raw = false;  ///< `text` is HTML already (built from escaped pieces)
};

Cell num_cell(std::optional<double> v, std::string_view cls = "") {
  const std::string c = cls.empty() ? "num" : "num " + std::string(cls);
  if (!v || !std::isfinite(*v)) return Cell{"-", std::nullopt, c};
  return Cell{fmt::format("{:.4g}", *v), *v, c};
}

std::string upper(std::string s) {
  for (char& ch : s) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  return s;
}

/// A sortable table (class "sortable": the inline script sorts it by the header clicked); a
/// paragraph saying "none" when there is no row.
std::string table_html(std::string_view id, std::string_view caption, const std::vector<std::string>& head,
                       const std::vector<std::vector<Cell>>& rows) {
  if (rows.empty())  // no empty table: a reader (and the browser test) sees every table hold rows
    return fmt::format("<p class=\"none\" id=\"{}\">{}none</p>\n", esc(id), caption.empty() ? "" : esc(caption) + ": ");
  std::string o = fmt::format("<table class=\"sortable\" id=\"{}\">", esc(id));
  if (!caption.empty()) o += "<caption>" + esc(caption) + "</caption>";
  o += "<thead><tr>";
  for (const auto& h : head) o += "<th title=\"click to sort\">" + esc(h) + "</th>";
  o += "</tr></thead><tbody>\n";
  for (const auto& row : rows) {
    o += "<tr>";
    for (const auto& c : row) {
      o += "<td";
      if (!c.cls.empty()) o += " class=\"" + esc(c.cls) + "\"";
      if (c.sort) o += fmt::format(" data-v=\"{}\"", *c.sort);
      o += ">" + (c.raw ? c.text : esc(c.text)) + "</td>";
    }
    o += "</tr>\n";
  }
  return o + "</tbody></table>\n";
}

/// A two-column table of what/value pairs (the header).
std::string kv_html(std::string_view id, const std::vector<std::pair<std::string, std::string>>& rows) {
  if (rows.empty()) return fmt::format("<p class=\"none\" id=\"{}\">none</p>\n", esc(id));
  std::string o = fmt::format("<table class=\"kv\" id=\"{}\"><tbody>\n", esc(id));
  for (const auto& [k, v] : rows) o += "<tr><th>" + esc(k) + "</th><td>" + esc(v) + "</td></tr>\n";
  return o + "</tbody></table>\n";
}

std::string verdict_class(std::string_view v) {
  if (v == "pass") return "v-pass";
  if (v == "fail") return "v-fail";
  if (v == "reported") return "v-reported";
  if (v == "explained") return "v-explained";
  return "v-skipped";
}

constexpr const char* kStyle = R"(
body{font-family:sans-serif;margin:1.5em;color:#222;background:#fff;font-size:14px}
h1{font-size:1.5em;margin:.2em 0}h3{font-size:1.05em;margin-top:1.2em}h2{font-size:1.2em;margin-top:1.6em;border-bottom:1px solid #ccc}
table{border-collapse:collapse;margin:.6em 0;max-width:100%}
td,th{border:1px solid #ccc;padding:3px 7px;text-align:left;vertical-align:top}
table.sortable th{background:#eef;cursor:pointer;white-space:nowrap}
table.sortable th[data-dir=asc]::after{content:" \25B2"}table.sortable th[data-dir=desc]::after{content:" \25BC"}
table.kv th{background:#f4f4f4;font-weight:normal;color:#555}
td.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
td.mono{max-width:32em}summary{cursor:pointer;font-family:sans-serif;white-space:nowrap;word-break:normal}
caption{text-align:left;font-weight:bold;padding:.3em 0}
.banner{padding:.6em 1em;margin:.8em 0;font-weight:bold;border-radius:4px}
.sim{background:#fde7c8;color:#7a4100;border:2px dashed #c77700}
.v-pass{background:#dff3df;color:#135e13}.v-fail{background:#fbdada;color:#8b0000;font-weight:bold}
.v-reported{background:#fff3c4;color:#6b5200}.v-skipped{background:#eee;color:#555}.v-explained{background:#dde8fb;color:#1c3f7a}
.warn{color:#8b0000}.mono{font-family:monospace;white-space:pre-wrap;word-break:break-all}
figure{margin:1em 0}figure img{max-width:100%;border:1px solid #ddd}
footer{margin-top:2em;color:#777;font-size:.9em}
)";

// Sorts a table by the column clicked: numbers by data-v, else text; a second click reverses.
constexpr const char* kSortScript = R"(
(function(){
document.querySelectorAll('table.sortable').forEach(function(t){
  var heads=t.tHead?t.tHead.rows[0].cells:[];
  Array.prototype.forEach.call(heads,function(th,i){
    th.addEventListener('click',function(){
      var asc=th.getAttribute('data-dir')!=='asc';
      Array.prototype.forEach.call(heads,function(h){h.removeAttribute('data-dir');});
      th.setAttribute('data-dir',asc?'asc':'desc');
      var tb=t.tBodies[0],rows=Array.prototype.slice.call(tb.rows);
      function key(r){var c=r.cells[i];if(!c)return '';var v=c.getAttribute('data-v');return v!==null?parseFloat(v):c.textContent.trim();}
      rows.sort(function(a,b){var x=key(a),y=key(b);
        var d=(typeof x==='number'&&typeof y==='number')?x-y:String(x).localeCompare(String(y),undefined,{numeric:true});
        return asc?d:-d;});
      rows.forEach(function(r){tb.appendChild(r);});
    });
  });
});
})();
)";

std::string page(std::string_view title, const std::string& body, const HtmlMeta& meta) {
  std::string o =
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      // Self-contained: nothing may be fetched; images are data: URIs, style and script inline.
      "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; img-src data:; "
      "style-src 'unsafe-inline'; script-src 'unsafe-inline'\">\n"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n";
  o += "<title>" + esc(title) + "</title>\n<style>" + kStyle + "</style>\n</head>\n<body>\n";
  o += body;
  o += "<footer>generated by railkit " + esc(kVersion) + " (railkit report --html) at " + esc(meta.generated_at) +
       "</footer>\n";
  o += std::string("<script>") + kSortScript + "</script>\n</body>\n</html>\n";
  return o;
}

/// The rows every header starts with: who made the report, where, when, from what.
std::vector<std::pair<std::string, std::string>> meta_rows(const HtmlMeta& m) {
  return {{"report generated", m.generated_at + " by " + (m.user.empty() ? std::string("?") : m.user) + "@" +
                                   (m.host.empty() ? std::string("?") : m.host)},
          {"railkit (report)", kVersion},
          {"inputs", join(m.inputs, " ")}};
}

std::string plots_html(const std::vector<HtmlPlot>& plots) {
  if (plots.empty()) return "";
  std::string o = "<h2 id=\"plots\">Plots</h2>\n";
  for (const auto& p : plots) {
    if (!p.unavailable.empty()) {
      o += "<p class=\"warn plot-missing\">" + esc(p.title) + ": plot not drawn: " + esc(p.unavailable) + "</p>\n";
      continue;
    }
    o += "<figure><img alt=\"" + esc(p.title) + "\" src=\"data:image/svg+xml;base64," + base64(p.svg) +
         "\"><figcaption>" + esc(p.title) + "</figcaption></figure>\n";
  }
  return o;
}

std::string notes_html(const std::vector<std::string>& notes) {
  if (notes.empty()) return "";
  std::string o = "<h2 id=\"notes\">Notes</h2>\n<ul class=\"notes\">\n";
  for (const auto& n : notes) o += "<li" + std::string(n.find("SIMULATED") != std::string::npos ? " class=\"sim\"" : "") +
                                   ">" + esc(n) + "</li>\n";
  return o + "</ul>\n";
}

std::string env_text(const std::map<std::string, std::string>& env) {
  std::vector<std::string> kv;
  for (const auto& [k, v] : env) kv.push_back(k + "=" + v);
  return join(kv, " ");
}

std::string json_text(const json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_null()) return "-";
  return json_dump(v);
}

std::string str_of(const json& obj, std::string_view key) {
  if (!obj.is_object()) return "";
  const auto it = obj.find(std::string(key));
  if (it == obj.end() || it->is_null()) return "";
  return json_text(*it);
}

std::optional<double> num_of(const json& obj, std::string_view key) {
  if (!obj.is_object()) return std::nullopt;
  const auto it = obj.find(std::string(key));
  if (it == obj.end() || !it->is_number()) return std::nullopt;
  return it->get<double>();
}

// ---------------------------------------------------------------------------- comparison

const ResultsDocument* first_doc(const CompareInput& in) {
  if (!in.rounds.empty()) return &in.rounds.front().doc;
  return in.doc ? &*in.doc : nullptr;
}

std::string verdict_name(const Comparison& c, const CompareRow& row) {
  switch (row.verdict) {
    case RowVerdict::Winner: return "winner " + config_tag(*row.winner) + " " + c.inputs[*row.winner].name;
    case RowVerdict::NoSignificantDifference: return "no significant difference";
    case RowVerdict::BaselineBetter: return "baseline better";
    case RowVerdict::NoInterval: return "no interval";
    case RowVerdict::Inert: return "inert";
    case RowVerdict::None: return "-";
  }
  return "-";
}

/// The rule that judged a row (or a range of rows) with this verdict.
std::string verdict_rule(const Comparison& c, RowVerdict v, const CompareRow* row) {
  const std::string side = higher_is_better(c.metric) ? "above" : "below";
  const std::string family =
      fmt::format("{} intervals hold together at 95%, each at {:.2f}%", c.intervals, 100 * c.confidence);
  switch (v) {
    case RowVerdict::Winner:
      if (row && row->winner && row->cells[*row->winner].interval) {
        const auto& iv = *row->cells[*row->winner].interval;
        return fmt::format("{} interval [{:.3g}, {:.3g}] lies {} 1", config_tag(*row->winner), iv.lo, iv.hi, side);
      }
      return fmt::format("its paired ratio intervals lie {} 1 ({})", side, family);
    case RowVerdict::NoSignificantDifference:
      return row ? "no interval lies wholly " + side + " 1" : "no interval lies wholly " + side + " 1 (" + family + ")";
    case RowVerdict::BaselineBetter:
      return row ? "every interval on the baseline's side" : "every interval lies on the baseline's side of 1 (" + family + ")";
    case RowVerdict::NoInterval:
      return row ? "no interval (" + (c.no_interval_reason.empty() ? std::string("one round") : c.no_interval_reason) + ")"
                 : "no interval: " +
                       (c.no_interval_reason.empty() ? std::string("one round, or documents not rounds of one sweep")
                                                     : c.no_interval_reason) +
                       "; no winner can be named";
    case RowVerdict::Inert: return "the others change only knobs that cannot reach the backend";
    case RowVerdict::None: return "no baseline, or fewer than two configurations with results";
  }
  return "-";
}

std::string verdict_cls(RowVerdict v) {
  switch (v) {
    case RowVerdict::Winner: return "v-pass";
    case RowVerdict::BaselineBetter: return "v-explained";
    case RowVerdict::NoSignificantDifference:
    case RowVerdict::NoInterval: return "v-reported";
    default: return "v-skipped";
  }
}

/// The configurations, the winners and a table per collective (no header, no plots): shared by
/// the comparison page and the tune page's validation section. `id` prefixes element ids.
std::string comparison_body(const Comparison& c, std::string_view id, std::string_view h = "h2") {
  std::string o;
  const std::size_t n = c.inputs.size();
  // Configurations: where, what, when, versions.
  std::vector<std::vector<Cell>> rows;
  for (std::size_t i = 0; i < n; ++i) {
    const CompareInput& in = c.inputs[i];
    const ResultsDocument* d = first_doc(in);
    const bool sim = i < c.simulated.size() && c.simulated[i];
    std::string status = in.status;
    if (in.rounds.size() > 1) status += fmt::format(", {} rounds", in.rounds.size());
    if (!in.note.empty()) status += ": " + in.note;
    std::vector<Cell> r{Cell{config_tag(i), double(i + 1)}, Cell{in.name}, Cell{status, {}, in.status == "ok" ? "" : "v-fail"}};
    if (d) {
      const RunInfo& run = d->run;
      r.push_back(Cell{sim ? "SIMULATED" : "measured", {}, sim ? "sim" : ""});
      r.push_back(Cell{run.label == in.name ? "(the configuration)" : run.label});  // a sweep labels by name
      r.push_back(Cell{run.backend + (run.backend_version.empty() ? "" : " (" + run.backend_version + ")")});
      r.push_back(Cell{run.railkit_version});
      r.push_back(num_cell(run.nranks));
      r.push_back(num_cell(run.nnodes));
      r.push_back(Cell{join(run.hosts, " ")});
      r.push_back(Cell{run.start_time});
      r.push_back(Cell{run.timing + ", " + (run.timing_method == "back_to_back" ? "back to back" : "barrier-separated")});
      const auto& env = in.env ? *in.env : run.env;
      Cell settings{fmt::format("<details><summary>{} variable{}</summary>{}</details>", env.size(),
                                env.size() == 1 ? "" : "s", esc(env_text(env))),
                    std::nullopt, "mono"};
      settings.raw = true;
      r.push_back(env.empty() ? Cell{"-"} : settings);
      Cell command{"<details><summary>command</summary>" + esc(run.command) + "</details>", std::nullopt, "mono"};
      command.raw = true;
      r.push_back(command);
    } else {
      for (int k = 0; k < 11; ++k) r.push_back(Cell{"-"});
    }
    rows.push_back(std::move(r));
  }
  o += fmt::format("<{0} id=\"{1}-configs\">Configurations</{0}>\n", h, esc(id));
  o += table_html(std::string(id) + "-configurations", "", {"#", "configuration", "status", "simulated", "label",
                  "backend", "railkit", "ranks", "nodes", "hosts", "started (UTC)", "timing", "settings", "command"}, rows);
  o += "<p>Metric: " + esc(metric_title(c.metric)) + "; baseline: " +
       (c.baseline ? esc(config_tag(*c.baseline) + " " + c.baseline_name) : esc(c.baseline_name) + " (no results: no ratios)") +
       ".</p>\n";

  // The verdicts, range by range, with their rule.
  rows.clear();
  for (const auto& w : c.winners) {
    const std::string range = (w.group.empty() ? "" : w.group + " ") +
                              (w.from_bytes == w.to_bytes ? format_bytes(w.from_bytes)
                                                          : format_bytes(w.from_bytes) + " .. " + format_bytes(w.to_bytes));
    std::string verdict;
    switch (w.verdict) {
      case RowVerdict::Winner: verdict = "winner " + config_tag(*w.config) + " " + c.inputs[*w.config].name; break;
      case RowVerdict::NoSignificantDifference: verdict = "no significant difference (the baseline stands)"; break;
      case RowVerdict::BaselineBetter: verdict = "the baseline (every other is significantly worse)"; break;
      case RowVerdict::NoInterval: verdict = "no interval: no winner can be named"; break;
      case RowVerdict::Inert: verdict = "inert"; break;
      case RowVerdict::None: verdict = "-"; break;
    }
    rows.push_back({Cell{c.tables[w.table].title()}, Cell{range, double(w.from_bytes)},
                    Cell{verdict, {}, verdict_cls(w.verdict)}, num_cell(w.ratio),
                    Cell{verdict_rule(c, w.verdict, nullptr)}});
  }
  o += fmt::format("<{0} id=\"{1}-verdicts-title\">Verdicts</{0}>\n", h, esc(id));
  if (rows.empty())
    o += "<p>No verdict: no size that both the baseline and another configuration ran.</p>\n";
  else
    o += table_html(std::string(id) + "-verdicts", "", {"collective", "sizes", "verdict", "ratio (geomean)", "rule"}, rows);

  // A table per collective.
  if (c.intervals > 0)
    o += "<p class=\"legend\">" +
         esc(fmt::format("[k]/[b]: ratio to the baseline, the geometric mean of the per-round ratios, with its Student-t "
                         "interval [lo, hi]; the {} intervals hold together at 95% (each at {:.2f}%); a winner's "
                         "interval lies {} 1.",
                         c.intervals, 100 * c.confidence, higher_is_better(c.metric) ? "above" : "below")) +
         "</p>\n";
  for (std::size_t t = 0; t < c.tables.size(); ++t) {
    const CompareTable& tab = c.tables[t];
    std::vector<std::string> head{"size"};
    if (c.grouped) head.push_back("group");
    for (std::size_t i = 0; i < n; ++i) {
      if (!c.has_results[i]) continue;
      // The tag only (the Configurations table names it): long names made the table overflow the page.
      std::string col = config_tag(i);
      if (i < c.simulated.size() && c.simulated[i]) col += " (SIMULATED)";
      if (c.baseline && *c.baseline == i) col += " (baseline)";
      head.push_back(col + " " + std::string(metric_title(c.metric)));
      if (c.baseline && *c.baseline != i) head.push_back(config_tag(i) + "/" + config_tag(*c.baseline));
    }
    head.push_back("verdict");
    head.push_back("rule");
    rows.clear();
    for (const auto& row : tab.rows) {
      std::vector<Cell> r{Cell{format_bytes(row.bytes), double(row.bytes), "num"}};
      if (c.grouped) r.push_back(Cell{row.group});
      for (std::size_t i = 0; i < n; ++i) {
        if (!c.has_results[i]) continue;
        const CompareCell& cell = row.cells[i];
        Cell v = num_cell(cell.value, (i < c.simulated.size() && c.simulated[i]) ? "sim" : "");
        if (cell.slowest_group && v.sort) v.text += "*";
        r.push_back(v);
        if (c.baseline && *c.baseline != i) {
          Cell rc = num_cell(cell.ratio);
          if (cell.interval && cell.ratio) rc.text = fmt::format("{:.3f} [{:.3g}, {:.3g}]", *cell.ratio, cell.interval->lo, cell.interval->hi);
          r.push_back(rc);
        }
      }
      r.push_back(Cell{verdict_name(c, row), {}, verdict_cls(row.verdict)});
      r.push_back(Cell{verdict_rule(c, row.verdict, &row)});
      rows.push_back(std::move(r));
    }
    o += table_html(fmt::format("{}-table-{}", id, t + 1), tab.title(), head, rows);
  }
  if (c.grouped) o += "<p>* the slowest --split group of a configuration at that size.</p>\n";
  return o;
}

std::string sim_banner(const Comparison& c) {
  if (!c.any_simulated()) return "";
  std::vector<std::string> names;
  for (std::size_t i = 0; i < c.inputs.size(); ++i)
    if (i < c.simulated.size() && c.simulated[i]) names.push_back(config_tag(i) + " " + c.inputs[i].name);
  return "<div class=\"banner sim\" id=\"simulated\">SIMULATED: " + esc(join(names, ", ")) +
         (c.all_simulated() ? " (every configuration)" : "") +
         " ran on railkit-bench --backend sim, a model, not a measurement of any hardware</div>\n";
}

}  // namespace

std::string render_html_comparison(const Comparison& c, const std::vector<HtmlPlot>& plots, const HtmlMeta& meta) {
  const bool sweep = std::any_of(c.inputs.begin(), c.inputs.end(), [](const CompareInput& in) { return !in.series.empty(); });
  const std::string what = sweep ? "sweep" : (c.inputs.size() == 1 ? "run" : "runs");
  std::string body = "<h1>railkit report: " + esc(what) + "</h1>\n";
  body += sim_banner(c);
  auto kv = meta_rows(meta);
  std::set<std::string> backends, hosts, versions, started;
  for (const auto& in : c.inputs)
    if (const ResultsDocument* d = first_doc(in)) {
      backends.insert(d->run.backend + (d->run.backend_version.empty() ? "" : " (" + d->run.backend_version + ")"));
      for (const auto& h : d->run.hosts) hosts.insert(h);
      versions.insert(d->run.railkit_version);
      if (!d->run.start_time.empty()) started.insert(d->run.start_time);
    }
  kv.emplace_back("backend", join(std::vector<std::string>(backends.begin(), backends.end()), ", "));
  kv.emplace_back("railkit (runs)", join(std::vector<std::string>(versions.begin(), versions.end()), ", "));
  kv.emplace_back("hosts", join(std::vector<std::string>(hosts.begin(), hosts.end()), " "));
  if (!started.empty()) kv.emplace_back("started (UTC)", *started.begin() + (started.size() > 1 ? " .. " + *started.rbegin() : ""));
  kv.emplace_back("configurations", std::to_string(c.inputs.size()));
  body += kv_html("header", kv);
  body += notes_html(c.notes);
  body += comparison_body(c, "cmp");
  body += plots_html(plots);
  return page("railkit report: " + what, body, meta);
}

// ---------------------------------------------------------------------------- tune

std::string render_html_tune(const std::vector<json>& journal, const json& profile,
                             const std::optional<Comparison>& validation, const std::vector<HtmlPlot>& plots,
                             const HtmlMeta& meta) {
  const json session = journal.empty() ? json::object() : journal.front();
  json done, topology;
  std::vector<const json*> trials;
  for (const auto& j : journal) {
    const std::string type = str_of(j, "type");
    if (type == "trial") trials.push_back(&j);
    if (type == "done") done = j;
    if (type == "topology") topology = j;
  }
  const std::string name = profile.is_object() ? str_of(profile, "name") : "";
  std::string body = "<h1>railkit report: tune session" + (name.empty() ? std::string() : " " + esc(name)) + "</h1>\n";
  const bool sim = session.is_object() && session.contains("sim") && !session["sim"].is_null();
  if (sim)
    body += "<div class=\"banner sim\" id=\"simulated\">SIMULATED: the trials ran on railkit-bench --backend sim; "
            "nothing here was measured, and the profile cannot be validated</div>\n";
  const json evidence = profile.is_object() ? profile.value("evidence", json::object()) : json::object();
  const bool validated = evidence.is_object() && evidence.value("validated", false);
  const std::string state = done.is_null() ? "not finished (no done line in the journal)"
                          : profile.is_null() ? "finished, no profile written"
                          : validated ? "profile written, validated (measured baseline vs tuned)"
                                      : "profile written, NOT validated";
  body += fmt::format("<div class=\"banner {}\" id=\"verdict\">{}</div>\n",
                      validated ? "v-pass" : (done.is_null() ? "v-skipped" : "v-reported"), esc(state));
  auto kv = meta_rows(meta);
  const json cluster = profile.is_object() ? profile.value("cluster", json::object()) : json::object();
  const json launcher = session.value("launcher", json::object());
  kv.emplace_back("session created", str_of(session, "created"));
  kv.emplace_back("finished", done.is_null() ? "-" : str_of(done, "finished"));
  kv.emplace_back("railkit (session)", str_of(session, "railkit_version"));
  kv.emplace_back("space", session.contains("space") ? str_of(session["space"], "name") : "");
  kv.emplace_back("strategy, budget, seed", str_of(session, "strategy") + ", " + str_of(session, "budget") + ", " +
                                                str_of(session, "seed"));
  kv.emplace_back("launcher", str_of(launcher, "kind") + " np " + str_of(launcher, "np") +
                                  (str_of(launcher, "hostfile").empty() ? "" : " hostfile " + str_of(launcher, "hostfile")));
  kv.emplace_back("bench", str_of(session, "bench") + " " + (session.contains("bench_args") ? [&] {
    std::vector<std::string> a;
    for (const auto& x : session["bench_args"]) a.push_back(json_text(x));
    return join(a, " ");
  }() : std::string()));
  kv.emplace_back("backend", str_of(cluster, "backend") +
                                 (str_of(cluster, "backend_version").empty() ? "" : " (" + str_of(cluster, "backend_version") + ")"));
  kv.emplace_back("hosts", cluster.contains("hosts") ? [&] {
    std::vector<std::string> h;
    for (const auto& x : cluster["hosts"]) h.push_back(json_text(x));
    return join(h, " ");
  }() : std::string("-"));
  kv.emplace_back("nodes, ranks", str_of(cluster, "nodes") + ", " + str_of(cluster, "ranks"));
  kv.emplace_back("fingerprint", str_of(cluster, "fingerprint"));
  body += kv_html("header", kv);

  // The settings the profile chose.
  if (profile.is_object()) {
    std::vector<std::vector<Cell>> rows;
    const json settings = profile.value("settings", json::object());
    for (const char* kind : {"env", "dcqcn"}) {
      const json values = settings.value(kind, json::object());  // items() of a temporary would dangle
      for (const auto& [k, v] : values.items()) rows.push_back({Cell{kind}, Cell{k}, Cell{json_text(v), {}, "mono"}});
    }
    body += "<h2 id=\"settings-title\">Settings of the profile</h2>\n";
    body += table_html("settings", "", {"kind", "name", "value"}, rows);

    // Decisions: each with the rule that made it.
    rows.clear();
    const std::string rule = fmt::format(
        "kept when the paired ratio interval of {} validation rounds (tuned vs baseline, interleaved) lies above 1; "
        "no bucket may lose more than {}",
        str_of(evidence, "pairs"), str_of(evidence, "max_regression"));
    for (const auto& d : profile.value("decisions", json::array())) {
      const bool sig = d.value("significant", false);
      const auto lo = num_of(d, "ratio_lo"), hi = num_of(d, "ratio_hi"), ratio = num_of(d, "ratio");
      Cell rc = num_cell(ratio);
      if (ratio && lo && hi) rc.text = fmt::format("{:.3f} [{:.3g}, {:.3g}]", *ratio, *lo, *hi);
      const auto minb = num_of(d, "min_bytes"), maxb = num_of(d, "max_bytes");
      rows.push_back({Cell{str_of(d, "coll")},
                      Cell{minb && maxb ? format_bytes(std::uint64_t(*minb)) + " .. " + format_bytes(std::uint64_t(*maxb)) : "-",
                           minb},
                      Cell{str_of(d, "config")}, num_cell(num_of(d, "busbw_GBps")), num_cell(num_of(d, "baseline_busbw_GBps")), rc,
                      Cell{sig ? "significant gain" : "not significant", {}, sig ? "v-pass" : "v-reported"}, Cell{rule}});
    }
    body += "<h2 id=\"decisions-title\">Decisions (verdicts)</h2>\n";
    body += table_html("decisions", "", {"collective", "sizes", "configuration", "busbw (GB/s)", "baseline busbw (GB/s)",
                                         "ratio [lo, hi]", "verdict", "rule"}, rows);
    rows.clear();
    for (const auto& e : profile.value("expectations", json::array())) {
      const auto b = num_of(e, "bytes");
      rows.push_back({Cell{str_of(e, "coll")}, Cell{b ? format_bytes(std::uint64_t(*b)) : "-", b},
                      num_cell(num_of(e, "busbw_GBps")), num_cell(num_of(e, "tolerance")), Cell{str_of(e, "config")}});
    }
    body += "<h2 id=\"expectations-title\">Expectations (for railkit accept)</h2>\n";
    body += table_html("expectations", "", {"collective", "size", "busbw (GB/s)", "tolerance", "configuration"}, rows);
  } else {
    body += "<p class=\"warn\">No profile.json in the session directory.</p>\n";
  }

  // The search.
  std::vector<std::vector<Cell>> rows;
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
  body += "<h2 id=\"trials-title\">Trials</h2>\n";
  body += table_html("trials", "", {"trial", "label", "fidelity", "iters", "status", "objective (GB/s)", "elapsed (s)",
                                    "settings", "error"}, rows);
  if (validation) {
    body += "<h2 id=\"validation\">Validation: baseline and candidates, interleaved by round</h2>\n";
    body += comparison_body(*validation, "val", "h3");
  }
  if (topology.is_object()) {
    rows.clear();
    for (const auto& nd : topology.value("nodes", json::array()))
      rows.push_back({Cell{str_of(nd, "host")}, Cell{str_of(nd, "fingerprint")}, Cell{str_of(nd, "facts"), {}, "mono"}});
    body += "<h2 id=\"topology-title\">Measured nodes</h2>\n";
    body += table_html("topology", "", {"host", "fingerprint", "facts"}, rows);
  }
  body += plots_html(plots);
  return page("railkit report: tune session" + (name.empty() ? std::string() : " " + name), body, meta);
}

// ---------------------------------------------------------------------------- accept

namespace {

/// Failing nodes first: fail, reported, skipped, explained, pass.
int verdict_rank(std::string_view v) {
  if (v == "fail") return 0;
  if (v == "reported") return 1;
  if (v == "skipped") return 2;
  if (v == "explained") return 3;
  if (v == "pass") return 4;
  return 1;  // unknown: not a pass
}

std::vector<const json*> entities_failing_first(const json& list) {
  std::vector<const json*> out;
  if (list.is_array())
    for (const auto& e : list) out.push_back(&e);
  std::stable_sort(out.begin(), out.end(), [](const json* a, const json* b) {
    return verdict_rank(str_of(*a, "verdict")) < verdict_rank(str_of(*b, "verdict"));
  });
  return out;
}

std::vector<std::vector<Cell>> check_rows(const std::vector<const json*>& entities) {
  std::vector<std::vector<Cell>> rows;
  for (const json* e : entities)
    for (const auto& c : e->value("checks", json::array())) {
      const std::string v = str_of(c, "verdict");
      rows.push_back({Cell{str_of(*e, "name")}, Cell{str_of(c, "check")},
                      Cell{str_of(c, "measured"), num_of(c, "busbw_GBps")}, Cell{str_of(c, "expected")},
                      Cell{str_of(c, "rule"), {}, "rule"},
                      Cell{v == "reported" ? "reported (no rule judged it: not a pass)" : v, double(verdict_rank(v)),
                           verdict_class(v)},
                      Cell{str_of(c, "evidence")}});
    }
  return rows;
}

}  // namespace

std::string accept_bars_svg(const json& accept) {
  struct Bar {
    std::string check, node, verdict;
    double v;
  };
  std::vector<Bar> bars;
  const json node_list = accept.value("nodes", json::array());  // the pointers below point into it
  for (const json* e : entities_failing_first(node_list))
    for (const auto& c : e->value("checks", json::array()))
      if (const auto v = num_of(c, "busbw_GBps"); v && std::isfinite(*v) && *v >= 0)
        bars.push_back({str_of(c, "check"), str_of(*e, "name"), str_of(c, "verdict"), *v});
  if (bars.empty()) return "";
  std::stable_sort(bars.begin(), bars.end(), [](const Bar& a, const Bar& b) { return a.check < b.check; });
  double max_v = 0;
  for (const auto& b : bars) max_v = std::max(max_v, b.v);
  if (max_v <= 0) max_v = 1;
  const int label_w = 300, plot_w = 520, row_h = 18, top = 30;
  int groups = 0;
  for (std::size_t i = 0; i < bars.size(); ++i) groups += (i == 0 || bars[i].check != bars[i - 1].check);
  const int height = top + int(bars.size()) * row_h + groups * 8 + 20;
  const int width = label_w + plot_w + 90;
  std::string s = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" viewBox=\"0 0 {0} {1}\" "
      "font-family=\"sans-serif\" font-size=\"12\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
      "<text x=\"8\" y=\"18\" font-size=\"14\" font-weight=\"bold\">measured busbw (GB/s) per check and node; red: "
      "failed, amber: reported (no rule)</text>\n",
      width, height);
  int y = top;
  for (std::size_t i = 0; i < bars.size(); ++i) {
    if (i > 0 && bars[i].check != bars[i - 1].check) y += 8;
    const Bar& b = bars[i];
    const std::string fill = b.verdict == "fail" ? "#c62828" : b.verdict == "reported" ? "#d4a000"
                           : b.verdict == "pass" ? "#2e7d32" : "#607d8b";
    const double w = std::max(1.0, plot_w * b.v / max_v);
    s += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>", label_w - 6, y + 13,
                     html_escape(b.check + "  " + b.node));
    s += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{:.1f}\" height=\"{}\" fill=\"{}\"/>", label_w, y + 2, w, row_h - 4, fill);
    s += fmt::format("<text x=\"{:.1f}\" y=\"{}\">{:.4g}</text>\n", label_w + w + 4, y + 13, b.v);
    y += row_h;
  }
  return s + "</svg>\n";
}

std::string render_html_accept(const json& accept, const std::optional<ResultsDocument>& run, const HtmlMeta& meta) {
  const std::string verdict = str_of(accept, "verdict");
  std::string body = "<h1>railkit report: accept run</h1>\n";
  if (run && run->simulated)
    body += "<div class=\"banner sim\" id=\"simulated\">SIMULATED: the benches ran on railkit-bench --backend sim</div>\n";
  body += fmt::format("<div class=\"banner {}\" id=\"verdict\">verdict: {} ({})</div>\n", verdict_class(verdict),
                      esc(verdict == "reported" ? "REPORTED, not a pass" : upper(verdict)),
                      esc(str_of(accept, "verdict_reason")));
  auto kv = meta_rows(meta);
  kv.emplace_back("accept run finished", str_of(accept, "created"));
  kv.emplace_back("railkit (run)", str_of(accept, "railkit_version"));
  if (run) {
    kv.emplace_back("backend", run->run.backend + (run->run.backend_version.empty() ? "" : " (" + run->run.backend_version + ")"));
    kv.emplace_back("hosts", join(run->run.hosts, " "));
    kv.emplace_back("ranks, nodes", fmt::format("{}, {}", run->run.nranks, run->run.nnodes));
    kv.emplace_back("bench started (UTC)", run->run.start_time);
  }
  std::vector<std::string> counts;
  const json count_obj = accept.value("counts", json::object());
  for (const auto& [k, v] : count_obj.items()) counts.push_back(k + " " + json_text(v));
  kv.emplace_back("checks", join(counts, ", "));
  body += kv_html("header", kv);

  const json node_list = accept.value("nodes", json::array()), cluster_list = accept.value("cluster", json::array());
  const auto nodes = entities_failing_first(node_list);  // pointers into node_list
  std::vector<std::vector<Cell>> rows;
  for (const json* e : nodes) {
    std::vector<std::string> failed, reported;
    for (const auto& c : e->value("checks", json::array())) {
      if (str_of(c, "verdict") == "fail") failed.push_back(str_of(c, "check") + " (rule " + str_of(c, "rule") + ")");
      if (str_of(c, "verdict") == "reported") reported.push_back(str_of(c, "check"));
    }
    const std::string v = str_of(*e, "verdict");
    rows.push_back({Cell{str_of(*e, "name")}, Cell{v, double(verdict_rank(v)), verdict_class(v)}, Cell{join(failed, ", ")},
                    Cell{join(reported, ", ")}});
  }
  body += "<h2 id=\"nodes-title\">Nodes (failing first)</h2>\n";
  body += table_html("nodes", "", {"node", "verdict", "failed checks (rule)", "reported (no rule: not a pass)"}, rows);
  const std::vector<std::string> check_head{"node", "check", "measured", "expected", "rule", "verdict", "evidence"};
  body += "<h2 id=\"checks-title\">Checks of the nodes, failing nodes first</h2>\n";
  body += table_html("checks", "", check_head, check_rows(nodes));
  const auto cluster = entities_failing_first(cluster_list);
  if (!cluster.empty()) {
    body += "<h2 id=\"cluster\">Checks of the cluster (rails, the whole set), failing first</h2>\n";
    body += table_html("cluster-checks", "", check_head, check_rows(cluster));
  }
  std::vector<std::pair<std::string, std::string>> rules;
  const json rule_obj = accept.value("rules", json::object());
  for (const auto& [k, v] : rule_obj.items()) rules.emplace_back(k, json_text(v));
  body += "<h2 id=\"rules-title\">Rules</h2>\n<p>Each check names the rule that judged it; a check no rule judged is "
          "reported, never a pass. The parameters of the rules:</p>\n";
  body += kv_html("rules", rules);
  std::vector<std::string> notes;
  for (const auto& n : accept.value("notes", json::array())) notes.push_back(json_text(n));
  body += notes_html(notes);
  rows.clear();
  for (const auto& st : accept.value("stages", json::array()))
    rows.push_back({Cell{str_of(st, "stage")}, Cell{str_of(st, "status")}, num_cell(num_of(st, "launches")),
                    num_cell(num_of(st, "seconds")), Cell{str_of(st, "reason")}});
  body += "<h2 id=\"stages-title\">Stages</h2>\n";
  body += table_html("stages", "", {"stage", "status", "launches", "seconds", "reason"}, rows);
  if (const std::string svg = accept_bars_svg(accept); !svg.empty())
    body += plots_html({HtmlPlot{"measured busbw per check and node", svg, ""}});
  return page("railkit report: accept run", body, meta);
}

// ---------------------------------------------------------------------------- the command

HtmlInputKind classify_html_inputs(const std::vector<std::string>& inputs) {
  if (inputs.empty()) throw UsageError("report --html: give results documents, sweep, tune or accept directories");
  int tune = 0, accept = 0;
  for (const auto& path : inputs) {
    std::error_code ec;
    if (fs::is_directory(path, ec)) {
      const fs::path d(path);
      if (fs::exists(d / "sweep.json", ec)) continue;
      if (fs::exists(d / "journal.jsonl", ec)) { ++tune; continue; }
      if (fs::exists(d / "accept.json", ec)) { ++accept; continue; }
      throw UsageError(path + ": not a sweep (sweep.json), tune session (journal.jsonl) or accept run (accept.json) directory");
    }
    if (!fs::exists(path, ec)) throw UsageError(path + ": no such file or directory");
  }
  if ((tune || accept) && inputs.size() > 1)
    throw UsageError("report --html: a tune session or accept run directory must be the only input");
  return tune ? HtmlInputKind::Tune : accept ? HtmlInputKind::Accept : HtmlInputKind::Results;
}

namespace {

HtmlMeta make_meta(const ReportOptions& o, char* const* envp) {
  HtmlMeta m;
  m.generated_at = utc_now_iso();
  for (char* const* e = envp; e && *e; ++e) {
    const std::string_view kv(*e);
    if (kv.starts_with("USER=") && m.user.empty()) m.user = std::string(kv.substr(5));
    if (kv.starts_with("LOGNAME=") && m.user.empty()) m.user = std::string(kv.substr(8));
  }
  if (m.user.empty())
    if (const struct passwd* pw = ::getpwuid(::geteuid()); pw && pw->pw_name) m.user = pw->pw_name;
  char host[256] = {};
  if (::gethostname(host, sizeof host - 1) == 0) m.host = host;
  m.inputs = o.inputs;
  return m;
}

/// Draws the comparison through the plot script into a temporary .svg and returns its text, or
/// the reason it could not be drawn.
HtmlPlot draw(const Comparison& c, const ReportOptions& o, char* const* envp, std::string title) {
  HtmlPlot p;
  p.title = std::move(title);
  std::string tmpl = (fs::temp_directory_path() / "railkit-html-XXXXXX").string();
  if (!::mkdtemp(tmpl.data())) {
    p.unavailable = "cannot create a temporary directory in " + fs::temp_directory_path().string();
    return p;
  }
  const fs::path dir = tmpl;
  try {
    const PlotTool tool = find_plot_tool(o);
    write_plot(c, dir / "plot.svg", tool, envp);
    p.svg = read_file(dir / "plot.svg");
    if (const auto at = p.svg.find("<svg"); at == std::string::npos) p.unavailable = "the plot script wrote no SVG";
  } catch (const Error& e) {
    p.unavailable = e.what();
  }
  std::error_code ec;
  fs::remove_all(dir, ec);
  return p;
}

std::vector<json> read_journal_lines(const fs::path& file) {
  const std::string text = read_file(file);
  std::vector<json> out;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t nl = text.find('\n', start);
    if (nl == std::string::npos) break;  // a last line cut short by a crash
    const std::string_view line(text.data() + start, nl - start);
    start = nl + 1;
    if (trim(line).empty()) continue;
    json j = parse_json_or_discarded(line);
    if (j.is_discarded() || !j.is_object())
      throw UsageError(file.string() + ": a line that is not a JSON object (not a railkit tuning journal)");
    out.push_back(std::move(j));
  }
  if (out.empty() || str_of(out.front(), "type") != "session")
    throw UsageError(file.string() + ": the first line is not a session line (not a railkit tuning journal)");
  return out;
}

/// The validation runs of a tune session as a comparison: baseline and candidates, paired by round.
std::optional<Comparison> tune_validation(const fs::path& dir, const std::vector<json>& journal, Metric metric,
                                          std::vector<std::string>& notes) {
  std::vector<CompareInput> inputs;
  const std::string series = fs::absolute(dir).lexically_normal().string();
  for (const auto& j : journal) {
    if (str_of(j, "type") != "validation" || str_of(j, "status") != "ok" || str_of(j, "results").empty()) continue;
    const std::string role = str_of(j, "role");
    auto it = std::find_if(inputs.begin(), inputs.end(), [&](const CompareInput& in) { return in.name == role; });
    if (it == inputs.end()) {
      CompareInput in;
      in.name = role;
      in.series = series;
      std::map<std::string, std::string> env;
      if (j.contains("env") && j["env"].is_object())
        for (const auto& [k, v] : j["env"].items()) env[k] = json_text(v);
      in.env = env;
      inputs.push_back(std::move(in));
      it = inputs.end() - 1;
    }
    const fs::path rel = str_of(j, "results");
    if (rel.is_absolute() || rel.lexically_normal().string().starts_with("..")) {
      notes.push_back("validation " + role + ": results path " + rel.string() + " leaves the session directory; skipped");
      continue;
    }
    try {
      it->rounds.push_back(RoundDoc{int(num_of(j, "round").value_or(1)), load_results((dir / rel).string())});
    } catch (const Error& e) {
      notes.push_back("validation " + role + ": " + e.what());
    }
  }
  std::erase_if(inputs, [](const CompareInput& in) { return in.rounds.empty(); });
  if (inputs.empty()) return std::nullopt;
  for (auto& in : inputs) in.doc = in.rounds.front().doc;
  CompareOptions co;
  co.metric = metric;
  co.baseline = std::any_of(inputs.begin(), inputs.end(), [](const CompareInput& in) { return in.name == "baseline"; })
                    ? "baseline" : "";
  co.allow_sim_vs_measured = true;
  try {
    return compare(std::move(inputs), co);
  } catch (const Error& e) {
    notes.push_back(std::string("validation not compared: ") + e.what());
    return std::nullopt;
  }
}

}  // namespace

int run_html_report(const ReportOptions& o, char* const* envp, std::ostream& out) {
  check_writable(o.html, "--html");
  const HtmlInputKind kind = classify_html_inputs(o.inputs);
  if (!o.plot.empty() && kind != HtmlInputKind::Results)
    throw UsageError("--plot with --html: only for results documents and sweep directories (the page of a tune "
                     "session or accept run embeds its plots)");
  std::optional<PlotTool> plot_file_tool;  // --plot beside --html: the file too, as without --html
  if (!o.plot.empty()) plot_file_tool = prepare_plot(o);
  const HtmlMeta meta = make_meta(o, envp);
  std::string html;
  if (kind == HtmlInputKind::Results) {
    CompareOptions co;
    co.metric = parse_metric(o.metric);
    co.allow_sim_vs_measured = o.allow_sim_vs_measured;
    std::string sweep_baseline;
    auto inputs = load_report_inputs(o.inputs, &sweep_baseline, &co.notes);
    co.baseline = o.baseline.empty() ? sweep_baseline : o.baseline;
    const Comparison c = compare(std::move(inputs), co);
    html = render_html_comparison(c, {draw(c, o, envp, std::string(metric_title(c.metric)) + " against size")}, meta);
    if (plot_file_tool) write_plot(c, o.plot, *plot_file_tool, envp);
  } else if (kind == HtmlInputKind::Tune) {
    const fs::path dir = o.inputs.front();
    const auto journal = read_journal_lines(dir / "journal.jsonl");
    json profile;
    if (fs::exists(dir / "profile.json")) {
      profile = parse_json_or_discarded(read_file(dir / "profile.json"));
      if (profile.is_discarded() || !profile.is_object())
        throw UsageError((dir / "profile.json").string() + ": not a JSON object");
    }
    std::vector<std::string> notes;
    const auto validation = tune_validation(dir, journal, parse_metric(o.metric), notes);
    std::vector<HtmlPlot> plots;
    if (validation) plots.push_back(draw(*validation, o, envp, "validation: baseline and candidates by size"));
    html = render_html_tune(journal, profile, validation, plots, meta);
    for (const auto& n : notes) out << "note: " << n << "\n";
  } else {
    const fs::path dir = o.inputs.front();
    const json accept = parse_json_or_discarded(read_file(dir / "accept.json"));
    if (accept.is_discarded() || !accept.is_object() || str_of(accept, "schema") != "railkit.accept/1")
      throw UsageError((dir / "accept.json").string() + ": not a railkit.accept/1 document");
    std::optional<ResultsDocument> run;
    std::vector<fs::path> docs;
    std::error_code ec;
    if (fs::is_directory(dir / "bench", ec))
      for (const auto& e : fs::directory_iterator(dir / "bench", ec))
        if (e.path().extension() == ".json") docs.push_back(e.path());
    std::sort(docs.begin(), docs.end(), [](const fs::path& a, const fs::path& b) {
      return (a.filename() == "all.json") != (b.filename() == "all.json") ? a.filename() == "all.json" : a < b;
    });
    for (const auto& d : docs) {
      try {
        run = load_results(d.string());
        break;
      } catch (const Error&) {
      }
    }
    html = render_html_accept(accept, run, meta);
  }
  write_file_atomic(o.html, html);
  out << "html report: " << o.html << "\n" << std::flush;
  return 0;
}

}  // namespace railkit::report
