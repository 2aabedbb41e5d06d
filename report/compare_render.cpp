// The comparison's renderers: the table, markdown and CSV that `railkit sweep` and
// `railkit report` print, and the series `--plot` draws (sweep/compare.hpp).
#include "report/compare_render.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/stats.hpp"
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

std::string render_table(const Comparison& c) {
  std::ostringstream o;
  const size_t n = c.inputs.size();
  const bool cmp = compared(c);
  const std::string btag = c.baseline ? config_tag(*c.baseline) : std::string("-");
  if (const std::string b = simulated_banner(c); !b.empty()) o << b << "\n";
  if (cmp || !c.baseline) {
    o << "configurations (baseline " << (c.baseline ? btag + " " : std::string()) << c.baseline_name
      << (c.baseline ? "" : ", which has no results: no ratios") << "):\n";
  } else {
    o << "configurations:\n";
  }
  size_t wname = 0;
  for (const auto& in : c.inputs) wname = std::max(wname, in.name.size());
  for (size_t i = 0; i < n; ++i) {
    o << fmt::format("  {:>4} {:<{}}  {}", config_tag(i), c.inputs[i].name, wname, status_text(c.inputs[i], c.has_results[i]));
    if (c.has_results[i] && simulated_at(c, i)) o << "; SIMULATED";
    if (const std::string x = inert_text(c, i); !x.empty()) o << "; " << x;
    if (!c.inputs[i].source.empty()) o << "  " << c.inputs[i].source;
    o << "\n";
  }
  for (const auto& note : c.notes) o << "note: " << note << "\n";
  if (cmp) o << ratio_legend(c) << "\n";
  if (c.grouped) o << "*: the slowest --split group of that configuration at that size\n";
  std::vector<size_t> cols;
  for (size_t i = 0; i < n; ++i)
    if (c.has_results[i]) cols.push_back(i);
  size_t wratio = 9;
  for (const auto& tab : c.tables)
    for (const auto& row : tab.rows)
      for (size_t i : cols) wratio = std::max(wratio, ratio_text(row.cells[i]).size());
  size_t wgroup = 5;
  for (const auto& tab : c.tables)
    for (const auto& row : tab.rows) wgroup = std::max(wgroup, row.group.size());
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
  if (!cmp) return trim_line_ends(o.str());
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
    for (const auto& w : c.winners) {
      if (w.table != t) continue;
      o << fmt::format("    {:<{}}  ", range_text(w), wrange);
      if (w.verdict == RowVerdict::Winner) {
        o << fmt::format("{:>4} {}", config_tag(*w.config), c.inputs[*w.config].name);
        if (w.ratio) o << fmt::format("  (x{:.3f} over the baseline, every interval clear of 1)", *w.ratio);
      } else if (w.verdict == RowVerdict::NoSignificantDifference) {
        o << "no significant difference (the baseline " << btag << " stands)";
      } else if (w.verdict == RowVerdict::BaselineBetter) {
        o << "the baseline " << btag << " (every other configuration is significantly worse)";
      } else if (w.verdict == RowVerdict::NoInterval) {
        o << "no interval: no winner can be named ("
          << (c.no_interval_reason.empty() ? "run --rounds 2 or more" : c.no_interval_reason) << ")";
      } else {
        o << "inert: the other configurations only change knobs that cannot reach the backend";
      }
      o << "\n";
    }
  }
  return trim_line_ends(o.str());
}

std::string render_markdown(const Comparison& c) {
  std::ostringstream o;
  const size_t n = c.inputs.size();
  const bool cmp = compared(c);
  const std::string btag = c.baseline ? config_tag(*c.baseline) : std::string("-");
  if (const std::string b = simulated_banner(c); !b.empty()) o << "**" << md_cell(b) << "**\n\n";
  o << "## Configurations\n\n";
  if (cmp || !c.baseline)
    o << "Baseline: " << btag << " `" << c.baseline_name << "`" << (c.baseline ? "" : " (no results: no ratios)") << "\n\n";
  o << "| # | configuration | status | source |\n|---|---|---|---|\n";
  for (size_t i = 0; i < n; ++i) {
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
  std::vector<size_t> cols;
  for (size_t i = 0; i < n; ++i)
    if (c.has_results[i]) cols.push_back(i);
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
      for (size_t i : cols) {
        o << " " << num(row.cells[i].value) << (row.cells[i].slowest_group ? "\\*" : "") << " |";
      }
      if (cmp) {
        for (size_t i : cols)
          if (i != *c.baseline) o << " " << ratio_text(row.cells[i]) << " |";
        o << " " << verdict_text(row) << " |";
      }
      o << "\n";
    }
  }
  if (!cmp) return o.str();
  o << "\n### Geometric mean of " << (c.all_simulated() ? "SIMULATED " : "") << metric_name(c.metric) << " / " << btag
    << "\n\n| # | configuration | ratio | sizes |\n|---|---|---:|---:|\n";
  for (size_t i : cols)
    o << "| " << config_tag(i) << " | `" << md_cell(c.inputs[i].name) << "` | " << num(c.geomean_ratio[i]) << " | "
      << c.geomean_sizes[i] << " |\n";
  o << "\n### Winner per size range\n\n";
  for (const auto& w : c.winners) {
    o << "- " << c.tables[w.table].title() << ", " << range_text(w) << ": ";
    if (w.verdict == RowVerdict::Winner) {
      o << config_tag(*w.config) << " `" << md_cell(c.inputs[*w.config].name) << "`";
      if (w.ratio) o << fmt::format(" (x{:.3f})", *w.ratio);
    } else if (w.verdict == RowVerdict::NoSignificantDifference) {
      o << "no significant difference";
    } else if (w.verdict == RowVerdict::BaselineBetter) {
      o << "the baseline (every other configuration is significantly worse)";
    } else if (w.verdict == RowVerdict::NoInterval) {
      o << "no interval";
    } else {
      o << "inert";
    }
    o << "\n";
  }
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

}  // namespace

std::string render_comparison(const Comparison& c, std::string_view format) {
  if (format == "table") return render_table(c);
  if (format == "markdown") return render_markdown(c);
  if (format == "csv") return render_csv(c);
  throw UsageError("--format " + std::string(format) + ": expected table, markdown or csv");
}

namespace {

/// Distinct values in order of first appearance.
template <class T>
void add_distinct(json& arr, const T& v) {
  if (std::find(arr.begin(), arr.end(), json(v)) == arr.end()) arr.push_back(v);
}

/// What the title of a plot says: per configuration with results, its runs' labels, backends,
/// ranks, nodes, hosts and dates (distinct values).
json plot_title_block(const Comparison& c) {
  json t = {{"configs", json::array()},   {"labels", json::array()}, {"backends", json::array()},
            {"backend_versions", json::array()}, {"nranks", json::array()}, {"nnodes", json::array()},
            {"hosts", json::array()},     {"dates", json::array()},  {"timing_methods", json::array()}};
  std::set<std::string> dates;
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    if (!c.has_results[i]) continue;
    t["configs"].push_back(c.inputs[i].name);
    for (const auto& rd : c.inputs[i].rounds) {
      const RunInfo& run = rd.doc.run;
      if (!run.label.empty()) add_distinct(t["labels"], run.label);
      if (!run.backend.empty()) add_distinct(t["backends"], run.backend);
      if (!run.backend_version.empty()) add_distinct(t["backend_versions"], run.backend_version);
      if (run.nranks > 0) add_distinct(t["nranks"], run.nranks);
      if (run.nnodes > 0) add_distinct(t["nnodes"], run.nnodes);
      for (const auto& h : run.hosts) add_distinct(t["hosts"], h);
      if (run.start_time.size() >= 10) dates.insert(run.start_time.substr(0, 10));
      add_distinct(t["timing_methods"], run.timing_method);
    }
  }
  for (const auto& d : dates) t["dates"].push_back(d);
  t["simulated"] = c.all_simulated() ? "all" : c.any_simulated() ? "some" : "none";
  return t;
}

/// The NIC reference line: NICs per node x line rate, from the context, else from the simulated
/// cluster (rail-optimized: one NIC per GPU) when every configuration is simulated on clusters of
/// one link rate and GPU count. Null when unknown or when a run stayed on one node: ring busbw
/// across nodes is bounded by what a node's NICs carry together, and a one-node run uses no NIC.
json plot_line_rate(const Comparison& c, const PlotContext& ctx) {
  std::optional<double> rate = ctx.line_rate_Gbps;
  int nics = ctx.nics_per_node;
  std::string source = ctx.line_rate_source;
  bool one_node = false;
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    if (!c.has_results[i]) continue;
    for (const auto& rd : c.inputs[i].rounds)
      if (rd.doc.run.nnodes <= 1) one_node = true;
  }
  if (one_node) return nullptr;
  if (!rate && c.all_simulated()) {
    std::set<std::pair<double, int>> shapes;
    std::set<std::string> clusters;
    bool all_known = true;
    for (size_t i = 0; i < c.inputs.size(); ++i) {
      if (!c.has_results[i]) continue;
      for (const auto& rd : c.inputs[i].rounds) {
        const json& sim = rd.doc.run.sim;
        const json* cl = sim.is_object() && sim.contains("cluster") && sim["cluster"].is_object() ? &sim["cluster"] : nullptr;
        if (!cl || !cl->contains("link_rate_Gbps") || !(*cl)["link_rate_Gbps"].is_number() ||
            !cl->contains("gpus_per_node") || !(*cl)["gpus_per_node"].is_number_integer()) {
          all_known = false;
          continue;
        }
        shapes.insert({(*cl)["link_rate_Gbps"].get<double>(), (*cl)["gpus_per_node"].get<int>()});
        if (cl->contains("name") && (*cl)["name"].is_string()) clusters.insert((*cl)["name"].get<std::string>());
      }
    }
    if (all_known && shapes.size() == 1) {
      rate = shapes.begin()->first;
      nics = shapes.begin()->second;  // rail-optimized: GPUs per node = NICs = rails
      source = "run.sim.cluster" +
               (clusters.empty() ? std::string() : " of " + join(std::vector<std::string>(clusters.begin(), clusters.end()), ", "));
    }
  }
  if (!rate || *rate <= 0 || nics <= 0) return nullptr;
  const double node_GBps = *rate * nics / 8;
  return json{{"Gbps", *rate},
              {"nics_per_node", nics},
              {"GBps", node_GBps},
              {"source", source},
              {"label", fmt::format("{} NICs x {:g} Gb/s per node = {:g} GB/s (bound of ring busbw across nodes)", nics,
                                    *rate, node_GBps)}};
}

}  // namespace

json plot_series(const Comparison& c, const PlotContext& ctx) {
  json panels = json::array();
  const bool higher = higher_is_better(c.metric);
  std::set<std::uint64_t> all_sizes;
  for (const auto& tab : c.tables) {
    std::vector<std::string> groups;
    std::set<std::uint64_t> sizes;
    for (const auto& row : tab.rows) {
      if (std::find(groups.begin(), groups.end(), row.group) == groups.end()) groups.push_back(row.group);
      sizes.insert(row.bytes);
    }
    std::sort(groups.begin(), groups.end(), natural_less);
    json series = json::array();
    for (size_t i = 0; i < c.inputs.size(); ++i) {
      if (!c.has_results[i]) continue;
      // The slowest group of this configuration: the one slowest at the most sizes (then the lowest mean).
      std::map<std::string, int> slow_count;
      for (const auto& row : tab.rows)
        if (row.cells[i].slowest_group) ++slow_count[row.group];
      std::string slowest;
      for (const auto& [g, k] : slow_count)
        if (slowest.empty() || k > slow_count[slowest]) slowest = g;
      // time_us p50 and p99 per (group, bytes): per round the mean over cycles, then the median of the rounds.
      std::map<std::pair<std::string, std::uint64_t>, std::map<int, std::array<double, 3>>> lat;
      for (const auto& rd : c.inputs[i].rounds)
        for (const auto& r : rd.doc.results) {
          if (r.op != tab.op || r.dtype != tab.dtype || r.redop != tab.redop || r.in_place != tab.in_place) continue;
          auto& acc = lat[{r.group.value_or(""), r.bytes}][rd.round];
          acc[0] += r.time_us.p50;
          acc[1] += r.time_us.p99;
          acc[2] += 1;
        }
      const auto latency = [&](const std::string& g, std::uint64_t b, int which) -> json {
        const auto it = lat.find({g, b});
        if (it == lat.end()) return nullptr;
        std::vector<double> v;
        for (const auto& [round, acc] : it->second)
          if (acc[which] > 0) v.push_back(acc[which] / acc[2]);
        if (v.empty()) return nullptr;
        return median(v);
      };
      for (const auto& g : groups) {
        json bytes = json::array(), vals = json::array(), lo = json::array(), hi = json::array();
        json p50 = json::array(), p99 = json::array();
        bool spread = false;
        for (const auto& row : tab.rows) {
          if (row.group != g || !row.cells[i].value) continue;
          bytes.push_back(row.bytes);
          vals.push_back(*row.cells[i].value);
          double mn = *row.cells[i].value, mx = mn;
          for (const auto& [round, v] : row.cells[i].rounds) {
            mn = std::min(mn, v);
            mx = std::max(mx, v);
          }
          spread = spread || row.cells[i].rounds.size() > 1;
          lo.push_back(mn);
          hi.push_back(mx);
          p50.push_back(latency(g, row.bytes, 0));
          p99.push_back(latency(g, row.bytes, 1));
        }
        if (bytes.empty()) continue;
        json s = {{"name", config_tag(i) + " " + c.inputs[i].name + (g.empty() ? "" : " " + g)},
                  {"tag", config_tag(i)},
                  {"config", c.inputs[i].name},
                  {"group", g},
                  {"baseline", c.baseline && *c.baseline == i},
                  {"slowest", !g.empty() && g == slowest},
                  {"inert", c.inert[i]},
                  {"simulated", simulated_at(c, i)},
                  {"bytes", bytes},
                  {"values", vals},
                  {"time_us", {{"p50", p50}, {"p99", p99}}}};
        if (spread) {
          s["lo"] = lo;
          s["hi"] = hi;
        }
        series.push_back(std::move(s));
      }
    }
    all_sizes.insert(sizes.begin(), sizes.end());
    panels.push_back({{"title", tab.title()},
                      {"op", tab.op},
                      {"dtype", tab.dtype},
                      {"redop", tab.redop},
                      {"placement", tab.in_place ? "in-place" : "out-of-place"},
                      {"sizes", json(std::vector<std::uint64_t>(sizes.begin(), sizes.end()))},
                      {"series", series}});
  }
  return json{{"schema", "railkit.plot-series/1"},
              {"baseline", c.baseline_name},
              {"metric", metric_name(c.metric)},
              {"ylabel", metric_title(c.metric)},
              {"higher_is_better", higher},
              {"simulated", c.all_simulated() ? "all" : c.any_simulated() ? "some" : "none"},
              {"sizes", json(std::vector<std::uint64_t>(all_sizes.begin(), all_sizes.end()))},
              {"title", plot_title_block(c)},
              {"line_rate", plot_line_rate(c, ctx)},
              {"panels", panels}};
}

std::string config_tag(std::size_t i) { return fmt::format("[{}]", i + 1); }

}  // namespace railkit::report
