// `railkit report --html` (report/html_report.hpp): the page of a comparison (results documents,
// sweep directories) and its sections, which the tune page's validation reuses.
#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "core/strings.hpp"
#include "core/units.hpp"
#include "report/html_parts.hpp"

namespace railkit::report {
using namespace sweep;  // the comparison it renders
using namespace html_parts;

namespace {

const ResultsDocument* first_doc(const CompareInput& in) {
  if (!in.rounds.empty()) return &in.rounds.front().doc;
  return in.doc ? &*in.doc : nullptr;
}

std::string verdict_name(const Comparison& c, const CompareRow& row) {
  if (row.verdict == RowVerdict::Winner) return "winner " + config_tag(*row.winner) + " " + c.inputs[*row.winner].name;
  return verdict_text(row);
}

/// What the verdicts table says of a range of sizes.
std::string range_verdict_name(const Comparison& c, const WinnerRange& w) {
  switch (w.verdict) {
    case RowVerdict::Winner: return "winner " + config_tag(*w.config) + " " + c.inputs[*w.config].name;
    case RowVerdict::NoSignificantDifference: return "no significant difference (the baseline stands)";
    case RowVerdict::BaselineBetter: return "the baseline (every other is significantly worse)";
    case RowVerdict::NoInterval: return "no interval: no winner can be named";
    case RowVerdict::Inert: return "inert";
    case RowVerdict::None: return "-";
  }
  return "";
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

bool is_simulated(const Comparison& c, std::size_t i) { return i < c.simulated.size() && c.simulated[i]; }

/// The cells of a run's document in the configurations table (11 of them).
void add_run_cells(std::vector<Cell>& r, const CompareInput& in, const RunInfo& run, bool sim) {
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
}

/// Configurations: where, what, when, versions; then the metric and the baseline.
std::string configurations_html(const Comparison& c, std::string_view id, std::string_view h) {
  Rows rows;
  for (std::size_t i = 0; i < c.inputs.size(); ++i) {
    const CompareInput& in = c.inputs[i];
    std::string status = in.status;
    if (in.rounds.size() > 1) status += fmt::format(", {} rounds", in.rounds.size());
    if (!in.note.empty()) status += ": " + in.note;
    std::vector<Cell> r{Cell{config_tag(i), double(i + 1)}, Cell{in.name}, Cell{status, {}, in.status == "ok" ? "" : "v-fail"}};
    if (const ResultsDocument* d = first_doc(in))
      add_run_cells(r, in, d->run, is_simulated(c, i));
    else
      for (int k = 0; k < 11; ++k) r.push_back(Cell{"-"});
    rows.push_back(std::move(r));
  }
  std::string o = fmt::format("<{0} id=\"{1}-configs\">Configurations</{0}>\n", h, esc(id));
  o += table_html(std::string(id) + "-configurations", "", {"#", "configuration", "status", "simulated", "label",
                  "backend", "railkit", "ranks", "nodes", "hosts", "started (UTC)", "timing", "settings", "command"}, rows);
  o += "<p>Metric: " + esc(metric_title(c.metric)) + "; baseline: " +
       (c.baseline ? esc(config_tag(*c.baseline) + " " + c.baseline_name) : esc(c.baseline_name) + " (no results: no ratios)") +
       ".</p>\n";
  return o;
}

/// The verdicts, range by range, with their rule.
std::string verdicts_html(const Comparison& c, std::string_view id, std::string_view h) {
  Rows rows;
  for (const auto& w : c.winners) {
    const std::string range = (w.group.empty() ? "" : w.group + " ") +
                              (w.from_bytes == w.to_bytes ? format_bytes(w.from_bytes)
                                                          : format_bytes(w.from_bytes) + " .. " + format_bytes(w.to_bytes));
    rows.push_back({Cell{c.tables[w.table].title()}, Cell{range, double(w.from_bytes)},
                    Cell{range_verdict_name(c, w), {}, verdict_cls(w.verdict)}, num_cell(w.ratio),
                    Cell{verdict_rule(c, w.verdict, nullptr)}});
  }
  std::string o = fmt::format("<{0} id=\"{1}-verdicts-title\">Verdicts</{0}>\n", h, esc(id));
  if (rows.empty()) return o + "<p>No verdict: no size that both the baseline and another configuration ran.</p>\n";
  return o + table_html(std::string(id) + "-verdicts", "", {"collective", "sizes", "verdict", "ratio (geomean)", "rule"}, rows);
}

/// The head of a collective's table: size, group, per configuration its value and ratio, verdict, rule.
std::vector<std::string> collective_head(const Comparison& c) {
  std::vector<std::string> head{"size"};
  if (c.grouped) head.push_back("group");
  for (std::size_t i = 0; i < c.inputs.size(); ++i) {
    if (!c.has_results[i]) continue;
    // The tag only (the Configurations table names it): long names made the table overflow the page.
    std::string col = config_tag(i);
    if (is_simulated(c, i)) col += " (SIMULATED)";
    if (c.baseline && *c.baseline == i) col += " (baseline)";
    head.push_back(col + " " + std::string(metric_title(c.metric)));
    if (c.baseline && *c.baseline != i) head.push_back(config_tag(i) + "/" + config_tag(*c.baseline));
  }
  head.push_back("verdict");
  head.push_back("rule");
  return head;
}

std::vector<Cell> collective_row(const Comparison& c, const CompareRow& row) {
  std::vector<Cell> r{Cell{format_bytes(row.bytes), double(row.bytes), "num"}};
  if (c.grouped) r.push_back(Cell{row.group});
  for (std::size_t i = 0; i < c.inputs.size(); ++i) {
    if (!c.has_results[i]) continue;
    const CompareCell& cell = row.cells[i];
    Cell v = num_cell(cell.value, is_simulated(c, i) ? "sim" : "");
    if (cell.slowest_group && v.sort) v.text += "*";
    r.push_back(v);
    if (c.baseline && *c.baseline != i)
      r.push_back(cell.interval ? ratio_cell(cell.ratio, cell.interval->lo, cell.interval->hi) : num_cell(cell.ratio));
  }
  r.push_back(Cell{verdict_name(c, row), {}, verdict_cls(row.verdict)});
  r.push_back(Cell{verdict_rule(c, row.verdict, &row)});
  return r;
}

/// A table per collective, with the legend of its ratios.
std::string collective_tables_html(const Comparison& c, std::string_view id) {
  std::string o;
  if (c.intervals > 0)
    o += "<p class=\"legend\">" +
         esc(fmt::format("[k]/[b]: ratio to the baseline, the geometric mean of the per-round ratios, with its Student-t "
                         "interval [lo, hi]; the {} intervals hold together at 95% (each at {:.2f}%); a winner's "
                         "interval lies {} 1.",
                         c.intervals, 100 * c.confidence, higher_is_better(c.metric) ? "above" : "below")) +
         "</p>\n";
  const std::vector<std::string> head = collective_head(c);
  for (std::size_t t = 0; t < c.tables.size(); ++t) {
    Rows rows;
    for (const auto& row : c.tables[t].rows) rows.push_back(collective_row(c, row));
    o += table_html(fmt::format("{}-table-{}", id, t + 1), c.tables[t].title(), head, rows);
  }
  if (c.grouped) o += "<p>* the slowest --split group of a configuration at that size.</p>\n";
  return o;
}

std::string sim_banner(const Comparison& c) {
  if (!c.any_simulated()) return "";
  std::vector<std::string> names;
  for (std::size_t i = 0; i < c.inputs.size(); ++i)
    if (is_simulated(c, i)) names.push_back(config_tag(i) + " " + c.inputs[i].name);
  return "<div class=\"banner sim\" id=\"simulated\">SIMULATED: " + esc(join(names, ", ")) +
         (c.all_simulated() ? " (every configuration)" : "") +
         " ran on railkit-bench --backend sim, a model, not a measurement of any hardware</div>\n";
}

/// The header of the comparison page: who made it, then the runs' backends, versions, hosts, start.
KvRows comparison_header(const Comparison& c, const HtmlMeta& meta) {
  KvRows kv = meta_rows(meta);
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
  return kv;
}

}  // namespace

std::string html_parts::comparison_body(const Comparison& c, std::string_view id, std::string_view h) {
  return configurations_html(c, id, h) + verdicts_html(c, id, h) + collective_tables_html(c, id);
}

std::string render_html_comparison(const Comparison& c, const std::vector<HtmlPlot>& plots, const HtmlMeta& meta) {
  const bool sweep = std::any_of(c.inputs.begin(), c.inputs.end(), [](const CompareInput& in) { return !in.series.empty(); });
  const std::string what = sweep ? "sweep" : (c.inputs.size() == 1 ? "run" : "runs");
  std::string body = "<h1>railkit report: " + esc(what) + "</h1>\n";
  body += sim_banner(c);
  body += kv_html("header", comparison_header(c, meta));
  body += notes_html(c.notes);
  body += comparison_body(c, "cmp");
  body += plots_html(plots);
  return page("railkit report: " + what, body, meta);
}

}  // namespace railkit::report
