#include "sweep/compare.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <set>
#include <sstream>
#include <tuple>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/strings.hpp"
#include "core/tunables.hpp"
#include "core/units.hpp"
#include "launch/sim_bench.hpp"

namespace railkit::sweep {
using nlohmann::json;

Metric parse_metric(std::string_view name) {
  for (std::size_t i = 0; i < std::size(kMetrics); ++i)
    if (kMetrics[i] == name) return static_cast<Metric>(i);
  throw UsageError("--metric " + std::string(name) + ": expected busbw, algbw, time, p50 or p99");
}

std::string_view metric_name(Metric m) noexcept { return kMetrics[static_cast<std::size_t>(m)]; }

std::string_view metric_title(Metric m) noexcept {
  switch (m) {
    case Metric::Busbw: return "busbw (GB/s)";
    case Metric::Algbw: return "algbw (GB/s)";
    case Metric::Time: return "time (us)";
    case Metric::P50: return "p50 time of one iteration (us)";
    case Metric::P99: return "p99 time of one iteration (us)";
  }
  return "";
}

std::string_view metric_column(Metric m) noexcept {
  switch (m) {
    case Metric::Busbw: return "busbw_GBps";
    case Metric::Algbw: return "algbw_GBps";
    case Metric::Time: return "time_us";
    case Metric::P50: return "p50_us";
    case Metric::P99: return "p99_us";
  }
  return "";
}

bool higher_is_better(Metric m) noexcept { return m == Metric::Busbw || m == Metric::Algbw; }

std::optional<double> metric_value(const ResultRecord& r, Metric m) noexcept {
  // An imported record leaves out what its log did not print (OSU prints no busbw without --nranks).
  const auto held = [&](const char* key, double v) { return r.has(key) ? std::optional<double>(v) : std::nullopt; };
  switch (m) {
    case Metric::Busbw: return held("busbw_GBps", r.busbw_GBps);
    case Metric::Algbw: return held("algbw_GBps", r.algbw_GBps);
    case Metric::Time: return held("time_us.avg", r.time_us.avg);
    case Metric::P50: return held("time_us.p50", r.time_us.p50);
    case Metric::P99: return held("time_us.p99", r.time_us.p99);
  }
  return std::nullopt;
}

std::string CompareTable::title() const {
  return fmt::format("{} {} {}, {}", op, dtype, redop, in_place ? "in-place" : "out-of-place");
}

std::size_t Comparison::with_results() const {
  return static_cast<std::size_t>(std::count(has_results.begin(), has_results.end(), true));
}

bool Comparison::any_simulated() const {
  for (std::size_t i = 0; i < simulated.size() && i < has_results.size(); ++i)
    if (has_results[i] && simulated[i]) return true;
  return false;
}

bool Comparison::all_simulated() const {
  bool any = false;
  for (std::size_t i = 0; i < simulated.size() && i < has_results.size(); ++i) {
    if (!has_results[i]) continue;
    if (!simulated[i]) return false;
    any = true;
  }
  return any;
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

std::optional<std::size_t> find_config(const std::vector<std::string>& names, const std::string& ref) {
  for (std::size_t i = 0; i < names.size(); ++i)
    if (names[i] == ref) return i;
  std::string_view digits = ref;
  if (digits.size() >= 2 && digits.front() == '[' && digits.back() == ']') digits = digits.substr(1, digits.size() - 2);
  if (digits.empty() || !std::all_of(digits.begin(), digits.end(), [](char ch) { return std::isdigit(static_cast<unsigned char>(ch)); }))
    return std::nullopt;
  const auto n = to_int(std::string(digits));
  if (!n || *n < 1 || static_cast<std::uint64_t>(*n) > names.size()) return std::nullopt;
  return static_cast<std::size_t>(*n - 1);
}

std::string numbered(const std::vector<std::string>& names) {
  std::string s;
  for (std::size_t i = 0; i < names.size(); ++i) s += fmt::format("{}[{}] {}", i ? ", " : "", i + 1, names[i]);
  return s;
}

namespace {

/// Refuses simulated and measured results in one comparison unless allowed: one line naming one
/// of each.
void check_sim_vs_measured(const Comparison& c, bool allowed) {
  if (allowed || !c.any_simulated() || c.all_simulated()) return;
  std::size_t sim = 0, real = 0;
  for (std::size_t i = c.inputs.size(); i-- > 0;)
    if (c.has_results[i]) (c.simulated[i] ? sim : real) = i;
  const auto shown = [&](std::size_t i) {
    return fmt::format("[{}] {}: run.backend {}", i + 1, c.inputs[i].name, c.inputs[i].rounds.front().doc.run.backend);
  };
  throw UsageError(fmt::format("cannot compare simulated results ({}) with measured ones ({}): a ratio between a model "
                               "and a measurement is no result; compare them apart, or pass --allow-sim-vs-measured to "
                               "show them side by side (simulated values marked, no winner named across them)",
                               shown(sim), shown(real)));
}

/// run.timing_method of a configuration's documents: the one they share, "mixed" when they differ,
/// "" without documents.
std::string timing_method_of(const CompareInput& in) {
  std::string m;
  for (const RoundDoc& rd : in.rounds) {
    if (m.empty()) m = rd.doc.run.timing_method;
    else if (m != rd.doc.run.timing_method) return "mixed";
  }
  return m;
}

/// The note of a comparison across timing methods, naming which configurations used which; ""
/// when every configuration with results used one method.
std::string timing_methods_note(const Comparison& c) {
  std::map<std::string, std::vector<std::string>> by_method;
  for (std::size_t i = 0; i < c.inputs.size(); ++i)
    if (c.has_results[i]) by_method[c.timing_methods[i]].push_back(fmt::format("[{}] {}", i + 1, c.inputs[i].name));
  if (by_method.size() < 2) return {};
  static const std::map<std::string, std::string> kShown = {
      {"back_to_back", "back-to-back (as nccl-tests)"},
      {"barrier_separated", "barrier-separated (railkit-bench --sync, IMB-MPI1, OSU)"},
      {"mixed", "mixed (rounds of both methods)"}};
  std::vector<std::string> parts;
  for (const auto& [m, names] : by_method) {
    const auto it = kShown.find(m);
    parts.push_back(fmt::format("{} {}", join(names, ", "), it != kShown.end() ? it->second : m));
  }
  return fmt::format("TIMING METHODS DIFFER: {}; times of the two methods differ by up to tens of percent whatever "
                     "the settings, so ratios across methods are shown without an interval and no winner is named "
                     "across methods (run.timing_method)",
                     join(parts, "; "));
}

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
  std::vector<std::string> names;
  for (const auto& in : c.inputs) names.push_back(in.name);
  if (const auto i = find_config(names, baseline)) {
    c.baseline_name = names[*i];
    if (c.has_results[*i]) c.baseline = *i;
    return;
  }
  throw UsageError("--baseline " + baseline + ": no such configuration (have: " + numbered(names) + ")");
}

using TableKey = std::tuple<std::string, std::string, std::string, bool>;
using RowKey = std::pair<std::uint64_t, std::string>;  // bytes, group

/// One table per (op, dtype, redop, placement) in order of first appearance, out-of-place before
/// in-place for the same collective as the bench prints them; a row per size and group with
/// every configuration's per-round values (the mean over cycles) and their median.
std::vector<CompareTable> build_tables(const Comparison& c) {
  const size_t n = c.inputs.size();
  std::vector<TableKey> keys;
  // (table, row) -> per configuration -> round -> (sum, count)
  std::map<std::pair<size_t, RowKey>, std::vector<std::map<int, std::pair<double, int>>>> sums;
  for (size_t i = 0; i < n; ++i) {
    if (!c.has_results[i]) continue;
    for (const auto& rd : c.inputs[i].rounds)
      for (const auto& r : rd.doc.results) {
        const TableKey k{r.op, r.dtype, r.redop, r.in_place};
        auto it = std::find(keys.begin(), keys.end(), k);
        const size_t t = static_cast<size_t>(it - keys.begin());
        if (it == keys.end()) keys.push_back(k);
        auto& cell = sums[{t, {r.bytes, r.group.value_or("")}}];
        cell.resize(n);
        const auto v = metric_value(r, c.metric);
        if (!v) continue;  // the row shows the value as absent ('-'), never as 0
        auto& acc = cell[i][rd.round];
        acc.first += *v;
        acc.second += 1;
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
    for (const auto& [key, per] : sums) {
      if (key.first != t) continue;
      CompareRow row;
      row.bytes = key.second.first;
      row.group = key.second.second;
      row.cells.resize(n);
      for (size_t i = 0; i < n; ++i) {
        if (i >= per.size() || per[i].empty()) continue;
        std::vector<double> vals;
        for (const auto& [round, acc] : per[i]) {
          row.cells[i].rounds.emplace_back(round, acc.first / acc.second);
          vals.push_back(acc.first / acc.second);
        }
        row.cells[i].value = median(vals);
      }
      tab.rows.push_back(std::move(row));
    }
    std::stable_sort(tab.rows.begin(), tab.rows.end(), [](const CompareRow& a, const CompareRow& b) {
      if (a.bytes != b.bytes) return a.bytes < b.bytes;
      return natural_less(a.group, b.group);
    });
    tables.push_back(std::move(tab));
  }
  return tables;
}

/// The values of rounds both cells measured (positive), in round order.
std::pair<std::vector<double>, std::vector<double>> paired(const CompareCell& base, const CompareCell& other) {
  std::pair<std::vector<double>, std::vector<double>> out;
  for (const auto& [round, b] : base.rounds)
    for (const auto& [r2, v] : other.rounds)
      if (r2 == round && b > 0 && v > 0) {
        out.first.push_back(b);
        out.second.push_back(v);
      }
  return out;
}

/// The settings a configuration is compared by: its sweep environment, else its first document's run.env.
std::map<std::string, std::string> settings_of(const CompareInput& in) {
  if (in.env) return *in.env;
  if (!in.rounds.empty()) return in.rounds.front().doc.run.env;
  return {};
}

/// Per configuration, the knobs that cannot reach its backend (recorded by its sweep, or by which
/// its settings differ from the baseline's), and whether it differs from the baseline by such
/// knobs only.
void find_inert(Comparison& c) {
  const size_t n = c.inputs.size();
  c.inert_knobs.assign(n, {});
  c.inert.assign(n, false);
  const auto base_env = c.baseline ? settings_of(c.inputs[*c.baseline]) : std::map<std::string, std::string>{};
  for (size_t i = 0; i < n; ++i) {
    const CompareInput& in = c.inputs[i];
    std::vector<std::string> knobs = in.inert;
    if (!c.has_results[i]) {
      c.inert_knobs[i] = knobs;
      continue;
    }
    const std::string backend = in.rounds.front().doc.run.backend;
    std::vector<std::string> diff;
    // An imported log (railkit import) ran another tool with settings it rarely prints: no knob
    // difference is judged against it, either way.
    const bool base_imported = c.baseline && c.has_results[*c.baseline] && is_imported(c.inputs[*c.baseline].rounds.front().doc);
    if (c.baseline && i != *c.baseline && !is_imported(in.rounds.front().doc) && !base_imported) {
      const auto env = settings_of(in);
      for (const auto& [k, v] : env)
        if (auto it = base_env.find(k); it == base_env.end() || it->second != v) diff.push_back(k);
      for (const auto& [k, v] : base_env)
        if (!env.count(k)) diff.push_back(k);
    }
    const auto from_diff = inert_knobs(diff, RunTarget{backend, false, {}});
    for (const auto& k : from_diff)
      if (std::find(knobs.begin(), knobs.end(), k) == knobs.end()) knobs.push_back(k);
    c.inert[i] = !diff.empty() && from_diff.size() == std::set<std::string>(diff.begin(), diff.end()).size();
    c.inert_knobs[i] = std::move(knobs);
  }
}

/// Ratios and intervals of every cell against the baseline's (paired by round within a series),
/// the Bonferroni family, the verdict of each row and the slowest group of each size.
void judge(Comparison& c) {
  const size_t n = c.inputs.size();
  if (!c.baseline || c.with_results() < 2) return;
  const size_t b = *c.baseline;
  const auto pairs_with_baseline = [&](size_t i) {
    return i != b && c.has_results[i] && !c.inputs[i].series.empty() && c.inputs[i].series == c.inputs[b].series &&
           c.simulated[i] == c.simulated[b] &&  // a model and a measurement are never paired
           c.timing_methods[i] == c.timing_methods[b] && c.timing_methods[i] != "mixed";  // nor two timing methods
  };
  c.intervals = 0;
  for (const auto& tab : c.tables)
    for (const auto& row : tab.rows)
      for (size_t i = 0; i < n; ++i)
        if (pairs_with_baseline(i) && paired(row.cells[b], row.cells[i]).first.size() >= 2) ++c.intervals;
  c.confidence = bonferroni_confidence(0.95, c.intervals);
  const bool higher = higher_is_better(c.metric);
  bool why[4] = {false, false, false, false};  // one round, not one sweep, timing methods, simulated
  for (auto& tab : c.tables)
    for (auto& row : tab.rows) {
      const CompareCell& base = row.cells[b];
      bool any_other = false, any_candidate = false, any_interval = false, all_worse = true;
      for (size_t i = 0; i < n; ++i) {
        if (i == b || !row.cells[i].value) continue;
        CompareCell& cell = row.cells[i];
        any_other = true;
        if (pairs_with_baseline(i)) {
          const auto [bv, v] = paired(base, cell);
          if (!bv.empty()) {
            const PairedRatio pr = paired_ratio(bv, v, c.confidence);
            cell.ratio = pr.ratio;
            if (pr.n >= 2) cell.interval = pr;
          }
        }
        if (!cell.ratio) cell.ratio = ratio(cell.value, base.value);
        if (c.inert[i]) continue;
        any_candidate = true;
        if (!cell.interval) {
          why[c.timing_methods[i] != c.timing_methods[b] || c.timing_methods[i] == "mixed" ? 2
              : c.simulated[i] != c.simulated[b]                                             ? 3
              : c.inputs[i].series.empty() || c.inputs[i].series != c.inputs[b].series       ? 1
                                                                                               : 0] = true;
          continue;
        }
        any_interval = true;
        const bool clears = higher ? cell.interval->lo > 1.0 : cell.interval->hi < 1.0;
        const bool worse = higher ? cell.interval->hi < 1.0 : cell.interval->lo > 1.0;
        all_worse = all_worse && worse;
        if (!clears) continue;
        if (!row.winner || (higher ? cell.interval->ratio > *row.cells[*row.winner].ratio
                                   : cell.interval->ratio < *row.cells[*row.winner].ratio))
          row.winner = i;
      }
      if (row.winner) row.verdict = RowVerdict::Winner;
      else if (any_interval && all_worse) row.verdict = RowVerdict::BaselineBetter;
      else if (any_interval) row.verdict = RowVerdict::NoSignificantDifference;
      else if (any_candidate) row.verdict = RowVerdict::NoInterval;
      else if (any_other) row.verdict = RowVerdict::Inert;
    }
  static constexpr const char* kWhy[4] = {
      "one round: run --rounds 2 or more",
      "documents that are not rounds of one sweep are not paired",
      "configurations timed by different methods (run.timing_method) are not paired",
      "a simulated and a measured configuration are not paired"};
  std::vector<std::string> reasons;
  for (int k = 0; k < 4; ++k)
    if (why[k]) reasons.emplace_back(kWhy[k]);
  c.no_interval_reason = join(reasons, "; ");
}

/// Marks, per table, size and configuration, the slowest of two or more --split groups.
void mark_slowest_groups(Comparison& c) {
  const bool higher = higher_is_better(c.metric);
  for (auto& tab : c.tables)
    for (size_t r = 0; r < tab.rows.size();) {
      size_t e = r;
      while (e < tab.rows.size() && tab.rows[e].bytes == tab.rows[r].bytes) ++e;
      if (e - r >= 2)
        for (size_t i = 0; i < c.inputs.size(); ++i) {
          std::optional<size_t> worst;
          int groups = 0;
          for (size_t k = r; k < e; ++k) {
            const auto& v = tab.rows[k].cells[i].value;
            if (!v || tab.rows[k].group.empty()) continue;
            ++groups;
            const auto& w = worst ? tab.rows[*worst].cells[i].value : std::optional<double>{};
            if (!worst || (higher ? *v < *w : *v > *w)) worst = k;
          }
          if (worst && groups >= 2) tab.rows[*worst].cells[i].slowest_group = true;
        }
      r = e;
    }
}

/// One note per configuration whose records do not all hold the metric (imported logs leave out
/// what their tool did not print): those cells show '-', never 0.
void note_missing_metric(Comparison& c) {
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    size_t all = 0, without = 0;
    for (const auto& rd : c.inputs[i].rounds)
      for (const auto& r : rd.doc.results) all += 1, without += !metric_value(r, c.metric);
    if (without == 0) continue;
    c.notes.push_back(fmt::format("[{}] {}: {} of {} records hold no {} (imported from a log that did not print it and "
                                  "railkit could not derive it; see run.imported): shown as '-'",
                                  i + 1, c.inputs[i].name, without, all, metric_title(c.metric)));
  }
}

/// Runs of consecutive sizes of a table and group with the same verdict (and winner), with the
/// winner's ratio over the baseline there.
std::vector<WinnerRange> winner_ranges(const Comparison& c) {
  std::vector<WinnerRange> out;
  for (size_t t = 0; t < c.tables.size(); ++t) {
    const auto& rows = c.tables[t].rows;
    std::vector<std::string> groups;
    for (const auto& row : rows)
      if (std::find(groups.begin(), groups.end(), row.group) == groups.end()) groups.push_back(row.group);
    std::sort(groups.begin(), groups.end(), natural_less);
    for (const auto& g : groups) {
      std::vector<const CompareRow*> mine;
      for (const auto& row : rows)
        if (row.group == g && row.verdict != RowVerdict::None) mine.push_back(&row);
      for (size_t r = 0; r < mine.size();) {
        WinnerRange w{t, g, mine[r]->bytes, mine[r]->bytes, mine[r]->verdict, mine[r]->winner, std::nullopt};
        std::vector<double> rs;
        size_t e = r;
        for (; e < mine.size() && mine[e]->verdict == w.verdict && mine[e]->winner == w.config; ++e) {
          w.to_bytes = mine[e]->bytes;
          if (w.config && mine[e]->cells[*w.config].ratio) rs.push_back(*mine[e]->cells[*w.config].ratio);
        }
        w.ratio = geomean(rs);
        out.push_back(w);
        r = e;
      }
    }
  }
  return out;
}

}  // namespace

Comparison compare(std::vector<CompareInput> inputs, const CompareOptions& options) {
  Comparison c;
  c.inputs = std::move(inputs);
  c.metric = options.metric;
  c.notes = options.notes;
  const size_t n = c.inputs.size();
  for (auto& in : c.inputs) {
    if (in.rounds.empty() && in.doc) in.rounds.push_back(RoundDoc{1, *in.doc});
    std::erase_if(in.rounds, [](const RoundDoc& rd) { return rd.doc.results.empty(); });
    c.has_results.push_back(!in.rounds.empty());
    c.simulated.push_back(std::any_of(in.rounds.begin(), in.rounds.end(),
                                      [](const RoundDoc& rd) { return launch::is_simulated(rd.doc); }) ||
                          (in.doc && launch::is_simulated(*in.doc)));
    c.max_rounds = std::max(c.max_rounds, static_cast<int>(in.rounds.size()));
    c.timing_methods.push_back(timing_method_of(in));
  }
  if (std::none_of(c.has_results.begin(), c.has_results.end(), [](bool b) { return b; }))
    throw UsageError("nothing to compare: no configuration has results");
  check_sim_vs_measured(c, options.allow_sim_vs_measured);
  if (std::string note = timing_methods_note(c); !note.empty()) c.notes.push_back(std::move(note));
  choose_baseline(c, options.baseline);
  note_missing_metric(c);
  c.tables = build_tables(c);
  c.grouped = std::any_of(c.tables.begin(), c.tables.end(), [](const CompareTable& t) {
    return std::any_of(t.rows.begin(), t.rows.end(), [](const CompareRow& r) { return !r.group.empty(); });
  });
  find_inert(c);
  judge(c);
  mark_slowest_groups(c);
  c.geomean_ratio.assign(n, std::nullopt);
  c.geomean_sizes.assign(n, 0);
  if (c.baseline && c.with_results() >= 2) {
    for (size_t i = 0; i < n; ++i) {
      std::vector<double> rs;
      for (const auto& tab : c.tables)
        for (const auto& row : tab.rows)
          if (i == *c.baseline ? row.cells[i].value.has_value() : row.cells[i].ratio.has_value())
            rs.push_back(i == *c.baseline ? 1.0 : *row.cells[i].ratio);
      c.geomean_ratio[i] = geomean(rs);
      c.geomean_sizes[i] = static_cast<int>(rs.size());
    }
    c.winners = winner_ranges(c);
  }
  return c;
}

Comparison compare(std::vector<CompareInput> inputs, const std::string& baseline) {
  CompareOptions o;
  o.baseline = baseline;
  return compare(std::move(inputs), o);
}

}  // namespace railkit::sweep
