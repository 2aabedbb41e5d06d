// The comparison's renderers: the table, markdown and CSV that `railkit sweep` and
// `railkit report` print (sweep/compare.hpp). The series `--plot` draws: plot_series.cpp.
#include "report/compare_render.hpp"

#include <algorithm>
#include <ostream>
#include <sstream>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/strings.hpp"
#include "core/units.hpp"

namespace railkit::report {
using namespace sweep;  // the comparison and sweep documents it renders

using json = nlohmann::json;

namespace {


std::string num(std::optional<double> v, int decimals = 3) {
  return v ? fmt::format("{:.{}f}", *v, decimals) : std::string("-");
}

/// A cell's value right-aligned in 9 columns, then '*' when it is the slowest group at that size.
std::string value_cell(const CompareCell& cell) {
  return fmt::format(" {:>9}{}", num(cell.value), cell.slowest_group ? "*" : " ");
}

/// The text without the spaces that end its lines.
std::string trim_line_ends(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t nl = text.find('\n', start);
    const bool has_nl = nl != std::string::npos;
    if (!has_nl) nl = text.size();
    std::size_t end = nl;
    while (end > start && text[end - 1] == ' ') --end;
    out.append(text, start, end - start);
    if (has_nl) out += '\n';
    start = nl + 1;
  }
  return out;
}

/// A ratio with its interval when it has one: "1.203 [1.051, 1.377]".
std::string ratio_text(const CompareCell& cell) {
  if (!cell.ratio) return "-";
  if (!cell.interval) return num(cell.ratio);
  return fmt::format("{:.3f} [{:.3g}, {:.3g}]", *cell.ratio, cell.interval->lo, cell.interval->hi);
}

}  // namespace

std::string verdict_text(const CompareRow& row) {
  switch (row.verdict) {
    case RowVerdict::Winner: return config_tag(*row.winner);
    case RowVerdict::NoSignificantDifference: return "no significant difference";
    case RowVerdict::BaselineBetter: return "baseline better";
    case RowVerdict::NoInterval: return "no interval";
    case RowVerdict::Inert: return "inert";
    case RowVerdict::None: return "-";
  }
  return "-";
}

namespace {

std::string range_text(const WinnerRange& w) {
  std::string s = w.from_bytes == w.to_bytes ? format_bytes(w.from_bytes)
                                             : format_bytes(w.from_bytes) + " .. " + format_bytes(w.to_bytes);
  return w.group.empty() ? s : w.group + " " + s;
}

std::string status_text(const CompareInput& in, bool has_results) {
  std::string s = in.status;
  if (in.rounds.size() > 1) s += fmt::format(", {} rounds", in.rounds.size());
  if (!in.note.empty()) s += ": " + in.note;
  if (in.status == "ok" && !has_results && in.note.empty()) s += " (no results)";
  return s;
}

std::string inert_text(const Comparison& c, size_t i) {
  if (c.inert_knobs[i].empty() || !c.has_results[i]) return "";
  return fmt::format("inert: {} cannot reach the {} backend", join(c.inert_knobs[i], ", "),
                     c.inputs[i].rounds.front().doc.run.backend);
}

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string q = "\"";
  for (char ch : s) q += ch == '"' ? std::string("\"\"") : std::string(1, ch);
  return q + "\"";
}

std::string md_cell(const std::string& s) {
  std::string o;
  for (char ch : s) {
    if (ch == '|') o += "\\|";
    else if (ch == '\n') o += ' ';
    else o += ch;
  }
  return o;
}

bool compared(const Comparison& c) { return c.baseline.has_value() && c.with_results() >= 2; }

/// Whether configuration i's values are simulated.
bool simulated_at(const Comparison& c, size_t i) { return i < c.simulated.size() && c.simulated[i]; }

/// The tags of the simulated configurations with results: "[2], [3]".
std::string simulated_tags(const Comparison& c) {
  std::vector<std::string> t;
  for (size_t i = 0; i < c.inputs.size(); ++i)
    if (c.has_results[i] && simulated_at(c, i)) t.push_back(config_tag(i));
  return join(t, ", ");
}

/// The line above everything when simulated values are shown; "" when none is.
std::string simulated_banner(const Comparison& c) {
  if (c.all_simulated())
    return "SIMULATED: every value below comes from railkit-bench --backend sim, a model of a cluster, not a measurement";
  if (c.any_simulated())
    return fmt::format("SIMULATED AND MEASURED side by side (--allow-sim-vs-measured): {} simulated (railkit-bench "
                       "--backend sim), the others measured; a ratio between them compares a model with a measurement, "
                       "and no winner is named across them",
                       simulated_tags(c));
  return "";
}

/// The metric's title as a table shows it: "SIMULATED busbw (GB/s)" when every value is simulated,
/// "busbw (GB/s; SIMULATED: [2])" when some are.
std::string shown_metric(const Comparison& c) {
  if (c.all_simulated()) return "SIMULATED " + std::string(metric_title(c.metric));
  if (c.any_simulated()) {
    std::string t(metric_title(c.metric));
    if (!t.empty() && t.back() == ')') return t.substr(0, t.size() - 1) + "; SIMULATED: " + simulated_tags(c) + ")";
    return t + " (SIMULATED: " + simulated_tags(c) + ")";
  }
  return std::string(metric_title(c.metric));
}

/// How to read the ratios, once above the tables.
std::string ratio_legend(const Comparison& c) {
  const std::string btag = config_tag(*c.baseline);
  const std::string better = higher_is_better(c.metric) ? "above" : "below";
  if (c.intervals == 0)
    return fmt::format("[k]/{}: ratio to the baseline; no interval (each configuration has one round, or its documents "
                       "are not rounds of one sweep): no winner can be named",
                       btag);
  return fmt::format("[k]/{}: ratio to the baseline, the geometric mean of the per-round ratios, with its Student-t "
                     "interval [lo, hi]; the {} intervals hold together at 95% (each at {:.2f}%); a winner's interval "
                     "lies {} 1",
                     btag, c.intervals, 100 * c.confidence, better);
}

/// The tag of the baseline; "-" when it has no results.
std::string baseline_tag(const Comparison& c) { return c.baseline ? config_tag(*c.baseline) : std::string("-"); }

/// The configurations with results, in column order.
std::vector<size_t> result_columns(const Comparison& c) {
  std::vector<size_t> cols;
  for (size_t i = 0; i < c.inputs.size(); ++i)
    if (c.has_results[i]) cols.push_back(i);
  return cols;
}

/// The longest configuration name.
size_t name_width(const Comparison& c) {
  size_t wname = 0;
  for (const auto& in : c.inputs) wname = std::max(wname, in.name.size());
  return wname;
}

/// The table's head: the banner, the configurations, the notes and how to read the tables.
void table_configurations(std::ostream& o, const Comparison& c) {
  const bool cmp = compared(c);
  if (const std::string b = simulated_banner(c); !b.empty()) o << b << "\n";
  if (cmp || !c.baseline) {
    o << "configurations (baseline " << (c.baseline ? baseline_tag(c) + " " : std::string()) << c.baseline_name
      << (c.baseline ? "" : ", which has no results: no ratios") << "):\n";
  } else {
    o << "configurations:\n";
  }
  const size_t wname = name_width(c);
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    o << fmt::format("  {:>4} {:<{}}  {}", config_tag(i), c.inputs[i].name, wname, status_text(c.inputs[i], c.has_results[i]));
    if (c.has_results[i] && simulated_at(c, i)) o << "; SIMULATED";
    if (const std::string x = inert_text(c, i); !x.empty()) o << "; " << x;
    if (!c.inputs[i].source.empty()) o << "  " << c.inputs[i].source;
    o << "\n";
  }
  for (const auto& note : c.notes) o << "note: " << note << "\n";
  if (cmp) o << ratio_legend(c) << "\n";
  if (c.grouped) o << "*: the slowest --split group of that configuration at that size\n";
}

/// The table's values: per collective table, a line per size (and group).
void table_values(std::ostream& o, const Comparison& c, const std::vector<size_t>& cols) {
  const bool cmp = compared(c);
  const std::string btag = baseline_tag(c);
  size_t wratio = 9, wgroup = 5;
  for (const auto& tab : c.tables)
    for (const auto& row : tab.rows) {
      for (size_t i : cols) wratio = std::max(wratio, ratio_text(row.cells[i]).size());
      wgroup = std::max(wgroup, row.group.size());
    }
  for (const auto& tab : c.tables) {
    o << "\n# " << tab.title() << ": " << shown_metric(c);
    if (c.max_rounds > 1) o << ", median of the rounds";
    if (cmp) o << ", ratio to " << btag;
    o << "\n" << fmt::format("{:>10}", "size");
    if (c.grouped) o << fmt::format("  {:<{}}", "group", wgroup);
    for (size_t i : cols) o << fmt::format(" {:>9} ", config_tag(i));
    if (cmp) {
      for (size_t i : cols)
        if (i != *c.baseline) o << fmt::format(" {:>{}}", config_tag(i) + "/" + btag, wratio);
      o << "  verdict";
    }
    o << "\n";
    for (const auto& row : tab.rows) {
      o << fmt::format("{:>10}", format_bytes(row.bytes));
      if (c.grouped) o << fmt::format("  {:<{}}", row.group, wgroup);
      for (size_t i : cols) o << value_cell(row.cells[i]);
      if (cmp) {
        for (size_t i : cols)
          if (i != *c.baseline) o << fmt::format(" {:>{}}", ratio_text(row.cells[i]), wratio);
        o << "  " << verdict_text(row);
      }
      o << "\n";
    }
  }
}

/// What the table says of a range of sizes (after its range).
std::string table_winner_text(const Comparison& c, const WinnerRange& w) {
  const std::string btag = baseline_tag(c);
  switch (w.verdict) {
    case RowVerdict::Winner:
      return fmt::format("{:>4} {}", config_tag(*w.config), c.inputs[*w.config].name) +
             (w.ratio ? fmt::format("  (x{:.3f} over the baseline, every interval clear of 1)", *w.ratio) : "");
    case RowVerdict::NoSignificantDifference: return "no significant difference (the baseline " + btag + " stands)";
    case RowVerdict::BaselineBetter: return "the baseline " + btag + " (every other configuration is significantly worse)";
    case RowVerdict::NoInterval:
      return "no interval: no winner can be named (" +
             (c.no_interval_reason.empty() ? std::string("run --rounds 2 or more") : c.no_interval_reason) + ")";
    default: return "inert: the other configurations only change knobs that cannot reach the backend";
  }
}

/// The table's foot: the geometric means and the winner per size range.
void table_winners(std::ostream& o, const Comparison& c, const std::vector<size_t>& cols) {
  const std::string btag = baseline_tag(c);
  const size_t wname = name_width(c);
  o << "\ngeometric mean of " << (c.all_simulated() ? "SIMULATED " : "") << metric_name(c.metric) << " / " << btag
    << " over the sizes both ran:\n";
  for (size_t i : cols)
    o << fmt::format("  {:>4} {:<{}}  {:>7}  ({} sizes){}{}\n", config_tag(i), c.inputs[i].name, wname, num(c.geomean_ratio[i]),
                     c.geomean_sizes[i], i == *c.baseline ? ", baseline" : "", c.inert[i] ? ", inert" : "");
  o << "\nwinner per size range" << (c.all_simulated() ? " (on the simulator)" : "") << ":\n";
  for (size_t t = 0; t < c.tables.size(); ++t) {
    o << "  " << c.tables[t].title() << ":\n";
    size_t wrange = 0;
    for (const auto& w : c.winners)
      if (w.table == t) wrange = std::max(wrange, range_text(w).size());
    if (wrange == 0) o << "    none (no size both the baseline and another configuration ran)\n";
    for (const auto& w : c.winners)
      if (w.table == t) o << fmt::format("    {:<{}}  ", range_text(w), wrange) << table_winner_text(c, w) << "\n";
  }
}

std::string render_table(const Comparison& c) {
  std::ostringstream o;
  table_configurations(o, c);
  const std::vector<size_t> cols = result_columns(c);
  table_values(o, c, cols);
  if (compared(c)) table_winners(o, c, cols);
  return trim_line_ends(o.str());
}

/// The markdown's head: the banner, the configurations, the notes and how to read the tables.
void markdown_configurations(std::ostream& o, const Comparison& c) {
  const bool cmp = compared(c);
  if (const std::string b = simulated_banner(c); !b.empty()) o << "**" << md_cell(b) << "**\n\n";
  o << "## Configurations\n\n";
  if (cmp || !c.baseline)
    o << "Baseline: " << baseline_tag(c) << " `" << c.baseline_name << "`" << (c.baseline ? "" : " (no results: no ratios)")
      << "\n\n";
  o << "| # | configuration | status | source |\n|---|---|---|---|\n";
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    std::string st = status_text(c.inputs[i], c.has_results[i]);
    if (c.has_results[i] && simulated_at(c, i)) st += "; SIMULATED";
    if (const std::string x = inert_text(c, i); !x.empty()) st += "; " + x;
    o << "| " << config_tag(i) << " | `" << md_cell(c.inputs[i].name) << "` | " << md_cell(st) << " | "
      << md_cell(c.inputs[i].source) << " |\n";
  }
  if (!c.notes.empty() || cmp || c.grouped) o << "\n";
  for (const auto& note : c.notes) o << "- " << md_cell(note) << "\n";
  if (cmp) o << "- " << md_cell(ratio_legend(c)) << "\n";
  if (c.grouped) o << "- \\*: the slowest --split group of that configuration at that size\n";
}

/// The markdown's values: a table per collective table.
void markdown_values(std::ostream& o, const Comparison& c, const std::vector<size_t>& cols) {
  const bool cmp = compared(c);
  const std::string btag = baseline_tag(c);
  for (const auto& tab : c.tables) {
    o << "\n### " << tab.title() << (c.all_simulated() ? " (SIMULATED)" : "") << "\n\n" << shown_metric(c);
    if (c.max_rounds > 1) o << ", median of the rounds";
    if (cmp) o << "; ratio to " << btag;
    o << "\n\n| size |";
    std::string align = "|---:|";
    if (c.grouped) {
      o << " group |";
      align += "---|";
    }
    for (size_t i : cols) {
      o << " " << config_tag(i) << " |";
      align += "---:|";
    }
    if (cmp) {
      for (size_t i : cols)
        if (i != *c.baseline) {
          o << " " << config_tag(i) << "/" << btag << " |";
          align += "---:|";
        }
      o << " verdict |";
      align += "---|";
    }
    o << "\n" << align << "\n";
    for (const auto& row : tab.rows) {
      o << "| " << format_bytes(row.bytes) << " |";
      if (c.grouped) o << " " << md_cell(row.group) << " |";
      for (size_t i : cols) o << " " << num(row.cells[i].value) << (row.cells[i].slowest_group ? "\\*" : "") << " |";
      if (cmp) {
        for (size_t i : cols)
          if (i != *c.baseline) o << " " << ratio_text(row.cells[i]) << " |";
        o << " " << verdict_text(row) << " |";
      }
      o << "\n";
    }
  }
}

/// What the markdown says of a range of sizes (after its table and range).
std::string markdown_winner_text(const Comparison& c, const WinnerRange& w) {
  switch (w.verdict) {
    case RowVerdict::Winner:
      return config_tag(*w.config) + " `" + md_cell(c.inputs[*w.config].name) + "`" +
             (w.ratio ? fmt::format(" (x{:.3f})", *w.ratio) : "");
    case RowVerdict::NoSignificantDifference: return "no significant difference";
    case RowVerdict::BaselineBetter: return "the baseline (every other configuration is significantly worse)";
    case RowVerdict::NoInterval: return "no interval";
    default: return "inert";
  }
}

/// The markdown's foot: the geometric means and the winner per size range.
void markdown_winners(std::ostream& o, const Comparison& c, const std::vector<size_t>& cols) {
  o << "\n### Geometric mean of " << (c.all_simulated() ? "SIMULATED " : "") << metric_name(c.metric) << " / "
    << baseline_tag(c) << "\n\n| # | configuration | ratio | sizes |\n|---|---|---:|---:|\n";
  for (size_t i : cols)
    o << "| " << config_tag(i) << " | `" << md_cell(c.inputs[i].name) << "` | " << num(c.geomean_ratio[i]) << " | "
      << c.geomean_sizes[i] << " |\n";
  o << "\n### Winner per size range\n\n";
  for (const auto& w : c.winners)
    o << "- " << c.tables[w.table].title() << ", " << range_text(w) << ": " << markdown_winner_text(c, w) << "\n";
}

std::string render_markdown(const Comparison& c) {
  std::ostringstream o;
  markdown_configurations(o, c);
  const std::vector<size_t> cols = result_columns(c);
  markdown_values(o, c, cols);
  if (compared(c)) markdown_winners(o, c, cols);
  return o.str();
}

std::string render_csv(const Comparison& c) {
  std::ostringstream o;
  const bool cmp = compared(c);
  o << "op,dtype,redop,placement,bytes,group,config,status,baseline," << metric_column(c.metric)
    << ",ratio_to_baseline,ratio_lo,ratio_hi,rounds,winner,verdict,slowest_group,inert,simulated\n";
  for (const auto& tab : c.tables)
    for (const auto& row : tab.rows)
      for (size_t i = 0; i < c.inputs.size(); ++i) {
        if (!c.has_results[i]) continue;
        const CompareCell& cell = row.cells[i];
        const bool is_base = c.baseline && i == *c.baseline;
        std::string q;  // the ratio to the baseline
        if (cmp && is_base && cell.value) q = "1";
        else if (cmp && !is_base && cell.ratio) q = fmt::format("{:.6g}", *cell.ratio);
        o << tab.op << ',' << tab.dtype << ',' << tab.redop << ',' << (tab.in_place ? "in" : "out") << ',' << row.bytes
          << ',' << csv_field(row.group) << ',' << csv_field(c.inputs[i].name) << ',' << c.inputs[i].status << ','
          << (is_base ? 1 : 0) << ',' << (cell.value ? fmt::format("{:.6g}", *cell.value) : "") << ',' << q << ','
          << (cmp && cell.interval ? fmt::format("{:.6g}", cell.interval->lo) : "") << ','
          << (cmp && cell.interval ? fmt::format("{:.6g}", cell.interval->hi) : "") << ',' << cell.rounds.size() << ','
          << (row.winner && *row.winner == i ? 1 : 0) << ',' << (cmp ? csv_field(verdict_text(row)) : "") << ','
          << (cell.slowest_group ? 1 : 0) << ',' << (c.inert[i] ? 1 : 0) << ',' << (simulated_at(c, i) ? 1 : 0) << '\n';
      }
  return o.str();
}

/// The renderers by --format name (kCompareFormats).
struct Renderer {
  std::string_view format;
  std::string (*render)(const Comparison&);
};
constexpr Renderer kRenderers[] = {{"table", render_table}, {"markdown", render_markdown}, {"csv", render_csv}};

static_assert(names_in_order(kRenderers, kCompareFormats, &Renderer::format),
              "kCompareFormats names kRenderers' formats, in order");

}  // namespace

std::string compare_format_names() { return join_list(kCompareFormats); }

std::string render_comparison(const Comparison& c, std::string_view format) {
  for (const auto& r : kRenderers)  // labels, names and notes come from documents: no escape reaches a terminal
    if (r.format == format) return terminal_text(r.render(c));
  throw UsageError("--format " + std::string(format) + ": expected " + compare_format_names());
}

std::string config_tag(std::size_t i) { return fmt::format("[{}]", i + 1); }

}  // namespace railkit::report
