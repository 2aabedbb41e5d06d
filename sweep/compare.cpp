#include "sweep/compare.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <sstream>
#include <tuple>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/strings.hpp"
#include "core/units.hpp"

namespace railkit::sweep {
using nlohmann::json;

std::string CompareTable::title() const {
  return fmt::format("{} {} {}, {}", op, dtype, redop, in_place ? "in-place" : "out-of-place");
}

std::optional<double> ratio(std::optional<double> a, std::optional<double> b) {
  if (!a || !b || *a <= 0 || *b <= 0) return std::nullopt;
  return *a / *b;
}

std::optional<double> geomean(const std::vector<double>& values) {
  if (values.empty()) return std::nullopt;
  double log_sum = 0;
  for (double v : values) log_sum += std::log(v);
  return std::exp(log_sum / static_cast<double>(values.size()));
}

namespace {

/// Sets c.baseline (the named configuration, or the first with results) and its name.
void choose_baseline(Comparison& c, const std::string& baseline) {
  const size_t n = c.inputs.size();
  if (baseline.empty()) {
    for (size_t i = 0; i < n; ++i)
      if (c.has_results[i]) {
        c.baseline = i;
        break;
      }
    c.baseline_name = c.inputs[*c.baseline].name;
    return;
  }
  for (size_t i = 0; i < n; ++i)
    if (c.inputs[i].name == baseline) {
      c.baseline_name = baseline;
      if (c.has_results[i]) c.baseline = i;
      return;
    }
  std::vector<std::string> names;
  for (const auto& in : c.inputs) names.push_back(in.name);
  throw UsageError("--baseline " + baseline + ": no such configuration (have: " + join(names, ", ") + ")");
}

/// One table per (op, dtype, redop, placement) in order of first appearance, out-of-place before
/// in-place for the same collective as the bench prints them; a row per size with every
/// configuration's mean busbw and the best one.
std::vector<CompareTable> build_tables(const Comparison& c) {
  const size_t n = c.inputs.size();
  using Key = std::tuple<std::string, std::string, std::string, bool>;
  std::vector<Key> keys;
  std::map<std::pair<size_t, std::uint64_t>, std::vector<std::pair<double, int>>> sums;  // (table, bytes) -> per config
  for (size_t i = 0; i < n; ++i) {
    if (!c.has_results[i]) continue;
    for (const auto& r : c.inputs[i].doc->results) {
      const Key k{r.op, r.dtype, r.redop, r.in_place};
      auto it = std::find(keys.begin(), keys.end(), k);
      const size_t t = static_cast<size_t>(it - keys.begin());
      if (it == keys.end()) keys.push_back(k);
      auto& cell = sums[{t, r.bytes}];
      cell.resize(n, {0.0, 0});
      cell[i].first += r.busbw_GBps;
      cell[i].second += 1;
    }
  }
  const auto first_of_coll = [&](size_t t) {
    for (size_t u = 0; u < keys.size(); ++u)
      if (std::get<0>(keys[u]) == std::get<0>(keys[t]) && std::get<1>(keys[u]) == std::get<1>(keys[t]) &&
          std::get<2>(keys[u]) == std::get<2>(keys[t]))
        return u;
    return t;
  };
  std::vector<size_t> order(keys.size());
  for (size_t t = 0; t < keys.size(); ++t) order[t] = t;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return std::make_pair(first_of_coll(a), std::get<3>(keys[a])) < std::make_pair(first_of_coll(b), std::get<3>(keys[b]));
  });
  std::vector<CompareTable> tables;
  for (size_t t : order) {
    CompareTable tab;
    std::tie(tab.op, tab.dtype, tab.redop, tab.in_place) = keys[t];
    for (auto it = sums.lower_bound({t, 0}); it != sums.end() && it->first.first == t; ++it) {
      CompareRow row;
      row.bytes = it->first.second;
      row.busbw_GBps.resize(n);
      for (size_t i = 0; i < n; ++i)
        if (it->second[i].second > 0) row.busbw_GBps[i] = it->second[i].first / it->second[i].second;
      for (size_t i = 0; i < n; ++i)
        if (row.busbw_GBps[i] && *row.busbw_GBps[i] > 0 && (!row.winner || *row.busbw_GBps[i] > *row.busbw_GBps[*row.winner]))
          row.winner = i;
      tab.rows.push_back(std::move(row));
    }
    tables.push_back(std::move(tab));
  }
  return tables;
}

/// Runs of consecutive sizes of a table with the same best configuration, with its ratio over
/// the baseline there.
std::vector<WinnerRange> winner_ranges(const Comparison& c) {
  std::vector<WinnerRange> out;
  for (size_t t = 0; t < c.tables.size(); ++t) {
    const auto& rows = c.tables[t].rows;
    for (size_t r = 0; r < rows.size();) {
      if (!rows[r].winner) {
        ++r;
        continue;
      }
      WinnerRange w{t, rows[r].bytes, rows[r].bytes, *rows[r].winner, std::nullopt};
      std::vector<double> rs;
      size_t e = r;
      for (; e < rows.size() && rows[e].winner == rows[r].winner; ++e) {
        w.to_bytes = rows[e].bytes;
        if (c.baseline)
          if (auto q = ratio(rows[e].busbw_GBps[w.config], rows[e].busbw_GBps[*c.baseline])) rs.push_back(*q);
      }
      w.ratio = geomean(rs);
      out.push_back(w);
      r = e;
    }
  }
  return out;
}

}  // namespace

Comparison compare(std::vector<CompareInput> inputs, const std::string& baseline) {
  Comparison c;
  c.inputs = std::move(inputs);
  const size_t n = c.inputs.size();
  for (const auto& in : c.inputs) c.has_results.push_back(in.doc.has_value() && !in.doc->results.empty());
  if (std::none_of(c.has_results.begin(), c.has_results.end(), [](bool b) { return b; }))
    throw UsageError("nothing to compare: no configuration has results");
  choose_baseline(c, baseline);
  c.tables = build_tables(c);
  c.geomean_ratio.assign(n, std::nullopt);
  c.geomean_sizes.assign(n, 0);
  if (c.baseline) {
    for (size_t i = 0; i < n; ++i) {
      std::vector<double> rs;
      for (const auto& tab : c.tables)
        for (const auto& row : tab.rows)
          if (auto q = ratio(row.busbw_GBps[i], row.busbw_GBps[*c.baseline])) rs.push_back(*q);
      c.geomean_ratio[i] = geomean(rs);
      c.geomean_sizes[i] = static_cast<int>(rs.size());
    }
  }
  c.winners = winner_ranges(c);
  return c;
}

namespace {

std::string tag(size_t i) { return fmt::format("[{}]", i + 1); }

std::string num(std::optional<double> v, int decimals = 3) {
  return v ? fmt::format("{:.{}f}", *v, decimals) : std::string("-");
}

std::string range_text(const WinnerRange& w) {
  return w.from_bytes == w.to_bytes ? format_bytes(w.from_bytes)
                                    : format_bytes(w.from_bytes) + " .. " + format_bytes(w.to_bytes);
}

std::string status_text(const CompareInput& in, bool has_results) {
  std::string s = in.status;
  if (!in.note.empty()) s += ": " + in.note;
  if (in.status == "ok" && !has_results && in.note.empty()) s += " (no results)";
  return s;
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

std::string render_table(const Comparison& c) {
  std::ostringstream o;
  const size_t n = c.inputs.size();
  const std::string btag = c.baseline ? tag(*c.baseline) : std::string("-");
  o << "configurations (baseline " << (c.baseline ? btag + " " : std::string()) << c.baseline_name
    << (c.baseline ? "" : ", which has no results: no ratios") << "):\n";
  size_t wname = 0;
  for (const auto& in : c.inputs) wname = std::max(wname, in.name.size());
  for (size_t i = 0; i < n; ++i) {
    o << fmt::format("  {:>4} {:<{}}  {}", tag(i), c.inputs[i].name, wname, status_text(c.inputs[i], c.has_results[i]));
    if (!c.inputs[i].source.empty()) o << "  " << c.inputs[i].source;
    o << "\n";
  }
  std::vector<size_t> cols;
  for (size_t i = 0; i < n; ++i)
    if (c.has_results[i]) cols.push_back(i);
  for (const auto& tab : c.tables) {
    o << "\n# " << tab.title() << ": busbw (GB/s)";
    if (c.baseline) o << ", ratio to " << btag;
    o << "\n" << fmt::format("{:>10}", "size");
    for (size_t i : cols) o << fmt::format(" {:>9}", tag(i));
    if (c.baseline)
      for (size_t i : cols)
        if (i != *c.baseline) o << fmt::format(" {:>9}", tag(i) + "/" + btag);
    o << fmt::format(" {:>5}\n", "best");
    for (const auto& row : tab.rows) {
      o << fmt::format("{:>10}", format_bytes(row.bytes));
      for (size_t i : cols) o << fmt::format(" {:>9}", num(row.busbw_GBps[i]));
      if (c.baseline)
        for (size_t i : cols)
          if (i != *c.baseline) o << fmt::format(" {:>9}", num(ratio(row.busbw_GBps[i], row.busbw_GBps[*c.baseline])));
      o << fmt::format(" {:>5}\n", row.winner ? tag(*row.winner) : "-");
    }
  }
  if (c.baseline) {
    o << "\ngeometric mean of busbw / " << btag << " over the sizes both ran:\n";
    for (size_t i : cols)
      o << fmt::format("  {:>4} {:<{}}  {:>7}  ({} sizes){}\n", tag(i), c.inputs[i].name, wname, num(c.geomean_ratio[i]),
                       c.geomean_sizes[i], i == *c.baseline ? ", baseline" : "");
  }
  o << "\nwinner per size range:\n";
  for (size_t t = 0; t < c.tables.size(); ++t) {
    o << "  " << c.tables[t].title() << ":\n";
    size_t wrange = 0;
    for (const auto& w : c.winners)
      if (w.table == t) wrange = std::max(wrange, range_text(w).size());
    if (wrange == 0) o << "    none (no busbw above 0)\n";
    for (const auto& w : c.winners) {
      if (w.table != t) continue;
      o << fmt::format("    {:<{}}  {:>4} {}", range_text(w), wrange, tag(w.config), c.inputs[w.config].name);
      if (w.ratio && c.baseline && w.config != *c.baseline) o << fmt::format("  (x{:.3f} over the baseline)", *w.ratio);
      o << "\n";
    }
  }
  return o.str();
}

std::string render_markdown(const Comparison& c) {
  std::ostringstream o;
  const size_t n = c.inputs.size();
  const std::string btag = c.baseline ? tag(*c.baseline) : std::string("-");
  o << "## Configurations\n\nBaseline: " << btag << " `" << c.baseline_name << "`"
    << (c.baseline ? "" : " (no results: no ratios)") << "\n\n";
  o << "| # | configuration | status | source |\n|---|---|---|---|\n";
  for (size_t i = 0; i < n; ++i)
    o << "| " << tag(i) << " | `" << md_cell(c.inputs[i].name) << "` | " << md_cell(status_text(c.inputs[i], c.has_results[i]))
      << " | " << md_cell(c.inputs[i].source) << " |\n";
  std::vector<size_t> cols;
  for (size_t i = 0; i < n; ++i)
    if (c.has_results[i]) cols.push_back(i);
  for (const auto& tab : c.tables) {
    o << "\n### " << tab.title() << "\n\nbusbw in GB/s";
    if (c.baseline) o << "; ratio to " << btag;
    o << "\n\n| size |";
    std::string align = "|---:|";
    for (size_t i : cols) {
      o << " " << tag(i) << " |";
      align += "---:|";
    }
    if (c.baseline)
      for (size_t i : cols)
        if (i != *c.baseline) {
          o << " " << tag(i) << "/" << btag << " |";
          align += "---:|";
        }
    o << " best |\n" << align << "---|\n";
    for (const auto& row : tab.rows) {
      o << "| " << format_bytes(row.bytes) << " |";
      for (size_t i : cols) o << " " << num(row.busbw_GBps[i]) << " |";
      if (c.baseline)
        for (size_t i : cols)
          if (i != *c.baseline) o << " " << num(ratio(row.busbw_GBps[i], row.busbw_GBps[*c.baseline])) << " |";
      o << " " << (row.winner ? tag(*row.winner) : "-") << " |\n";
    }
  }
  if (c.baseline) {
    o << "\n### Geometric mean of busbw / " << btag << "\n\n| # | configuration | ratio | sizes |\n|---|---|---:|---:|\n";
    for (size_t i : cols)
      o << "| " << tag(i) << " | `" << md_cell(c.inputs[i].name) << "` | " << num(c.geomean_ratio[i]) << " | "
        << c.geomean_sizes[i] << " |\n";
  }
  o << "\n### Winner per size range\n\n";
  for (const auto& w : c.winners) {
    o << "- " << c.tables[w.table].title() << ", " << range_text(w) << ": " << tag(w.config) << " `"
      << md_cell(c.inputs[w.config].name) << "`";
    if (w.ratio && c.baseline && w.config != *c.baseline) o << fmt::format(" (x{:.3f})", *w.ratio);
    o << "\n";
  }
  return o.str();
}

std::string render_csv(const Comparison& c) {
  std::ostringstream o;
  o << "op,dtype,redop,placement,bytes,config,status,baseline,busbw_GBps,ratio_to_baseline,winner\n";
  for (const auto& tab : c.tables)
    for (const auto& row : tab.rows)
      for (size_t i = 0; i < c.inputs.size(); ++i) {
        if (!c.has_results[i]) continue;
        const auto q = c.baseline ? ratio(row.busbw_GBps[i], row.busbw_GBps[*c.baseline]) : std::nullopt;
        o << tab.op << ',' << tab.dtype << ',' << tab.redop << ',' << (tab.in_place ? "in" : "out") << ',' << row.bytes
          << ',' << csv_field(c.inputs[i].name) << ',' << c.inputs[i].status << ','
          << (c.baseline && i == *c.baseline ? 1 : 0) << ',' << (row.busbw_GBps[i] ? fmt::format("{:.6g}", *row.busbw_GBps[i]) : "")
          << ',' << (q ? fmt::format("{:.6g}", *q) : "") << ',' << (row.winner && *row.winner == i ? 1 : 0) << '\n';
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

json plot_series(const Comparison& c) {
  json panels = json::array();
  for (const auto& tab : c.tables) {
    json series = json::array();
    for (size_t i = 0; i < c.inputs.size(); ++i) {
      if (!c.has_results[i]) continue;
      json bytes = json::array(), bw = json::array();
      for (const auto& row : tab.rows)
        if (row.busbw_GBps[i]) {
          bytes.push_back(row.bytes);
          bw.push_back(*row.busbw_GBps[i]);
        }
      if (bytes.empty()) continue;
      series.push_back({{"name", tag(i) + " " + c.inputs[i].name},
                        {"baseline", c.baseline && *c.baseline == i},
                        {"bytes", bytes},
                        {"busbw_GBps", bw}});
    }
    panels.push_back({{"title", tab.title()}, {"series", series}});
  }
  return json{{"schema", "railkit.plot-series/1"}, {"baseline", c.baseline_name}, {"panels", panels}};
}

}  // namespace railkit::sweep
