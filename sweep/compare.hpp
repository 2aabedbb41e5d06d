#pragma once
// Comparison of several configurations' results documents: per collective, size and --split
// group, a metric (busbw, algbw, time, p50, p99) per configuration (the median over a sweep's
// rounds), its ratio to a baseline paired by round with a Student-t interval (core/stats), and
// per size the winner: a configuration whose interval clears the baseline, else "no
// significant difference". Pure data in, data out; renderers format it as a table, markdown or CSV.
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/results.hpp"
#include "core/stats.hpp"

namespace railkit::sweep {

/// What the comparison shows. Bandwidths are better higher, times lower.
enum class Metric { Busbw, Algbw, Time, P50, P99 };
inline constexpr std::string_view kMetrics[] = {"busbw", "algbw", "time", "p50", "p99"};
/// Parses busbw | algbw | time | p50 | p99. Throws UsageError naming --metric.
Metric parse_metric(std::string_view name);
std::string_view metric_name(Metric m) noexcept;
/// "busbw (GB/s)", "time (us)", "p50 time (us)" ...
std::string_view metric_title(Metric m) noexcept;
/// The CSV column: busbw_GBps, algbw_GBps, time_us, p50_us, p99_us.
std::string_view metric_column(Metric m) noexcept;
bool higher_is_better(Metric m) noexcept;
/// The metric of one result record (time: the loop average; p50/p99: of one iteration); nullopt
/// when the record does not hold it (an imported log that printed no such figure: run.imported).
std::optional<double> metric_value(const ResultRecord& r, Metric m) noexcept;

/// One round's document of a configuration.
struct RoundDoc {
  int round = 1;  ///< from 1
  ResultsDocument doc;
};

/// One configuration to compare: its name, status ("ok", "failed", "timeout", "not run") and
/// its results: one document (a file) or one per round (a sweep). `note` says why there is
/// none or what went wrong.
struct CompareInput {
  std::string name;
  std::string status = "ok";
  std::string source;  ///< where the document came from, for the legend
  std::string note;
  std::optional<ResultsDocument> doc;  ///< a single document; with `rounds` set, ignored
  std::vector<RoundDoc> rounds;        ///< a sweep's documents, one per round that finished ok
  /// Inputs with the same non-empty series (their sweep) pair their rounds by number; others
  /// (loose documents, another sweep) are compared without an interval.
  std::string series;
  /// The settings compared (a sweep's configuration environment); unset: the first document's run.env.
  std::optional<std::map<std::string, std::string>> env;
  std::vector<std::string> inert;  ///< knobs the sweep recorded as unable to reach its backend
};

/// One configuration at one size (and group).
struct CompareCell {
  std::optional<double> value;                ///< median over rounds of the mean over cycles
  std::vector<std::pair<int, double>> rounds;  ///< (round, value), by round
  std::optional<double> ratio;                ///< to the baseline: paired when possible, else of the values
  std::optional<PairedRatio> interval;        ///< paired over at least 2 rounds in common with the baseline
  bool slowest_group = false;                 ///< the slowest --split group of this configuration at this size
};

/// What a size row says.
enum class RowVerdict {
  None,                     ///< no baseline, or fewer than two configurations with results
  Winner,                   ///< `winner`'s interval clears the baseline
  NoSignificantDifference,  ///< intervals exist, none clears the baseline
  BaselineBetter,           ///< intervals exist and every one lies wholly on the baseline's side
  NoInterval,               ///< nothing to build an interval from (one round, or documents not paired)
  Inert,                    ///< every other configuration only changes knobs that cannot reach its backend
};

/// One size (and --split group) of one table.
struct CompareRow {
  std::uint64_t bytes = 0;
  std::string group;  ///< --split group ("rail0"); "" without a split
  std::vector<CompareCell> cells;  ///< per configuration
  std::optional<std::size_t> winner;
  RowVerdict verdict = RowVerdict::None;
};

/// A table per collective, datatype, reduction and placement.
struct CompareTable {
  std::string op, dtype, redop;
  bool in_place = false;
  std::vector<CompareRow> rows;  ///< by size ascending, then group
  std::string title() const;     ///< "all_reduce float sum, out-of-place"
};

/// Consecutive sizes of a table (and group) with the same verdict and winner.
struct WinnerRange {
  std::size_t table = 0;
  std::string group;
  std::uint64_t from_bytes = 0, to_bytes = 0;
  RowVerdict verdict = RowVerdict::None;
  std::optional<std::size_t> config;  ///< the winner
  std::optional<double> ratio;        ///< geometric mean of the winner's ratio over the range
};

struct Comparison {
  std::vector<CompareInput> inputs;  ///< in column order
  std::vector<bool> has_results;
  std::optional<std::size_t> baseline;  ///< unset when the baseline has no results
  std::string baseline_name;
  Metric metric = Metric::Busbw;
  std::vector<CompareTable> tables;
  std::vector<std::optional<double>> geomean_ratio;  ///< per configuration
  std::vector<int> geomean_sizes;                    ///< rows that entered each geometric mean
  std::vector<WinnerRange> winners;
  std::vector<std::vector<std::string>> inert_knobs;  ///< per configuration: its knobs that cannot reach its backend
  std::vector<bool> inert;            ///< per configuration: it differs from the baseline by inert knobs only
  int max_rounds = 0;                 ///< most rounds of any configuration
  int intervals = 0;                  ///< comparisons with an interval (the Bonferroni family)
  double confidence = 0.95;           ///< of each interval: all `intervals` hold together at 95%
  /// Why rows say "no interval": one round, documents not rounds of one sweep, another timing
  /// method or simulated against measured ("; "-joined, in that order); empty when no row does.
  std::string no_interval_reason;
  bool grouped = false;               ///< some rows carry a --split group
  std::vector<std::string> notes;     ///< printed above the tables (rounds, inert knobs, topology)
  /// Per configuration: its documents were simulated (railkit-bench --backend sim). Every renderer
  /// labels simulated values so; simulated and measured ones together only with
  /// CompareOptions::allow_sim_vs_measured.
  std::vector<bool> simulated;
  /// Per configuration: how its documents timed iterations (run.timing_method: back_to_back or
  /// barrier_separated; "mixed" when its rounds differ; "" without results). Configurations of
  /// different methods are never paired, so no winner is named across methods, and a note names
  /// which used which.
  std::vector<std::string> timing_methods;
  std::size_t with_results() const;   ///< configurations with results
  bool any_simulated() const;         ///< some configuration with results is simulated
  bool all_simulated() const;         ///< every configuration with results is simulated (and there is one)
};

/// Options of compare().
struct CompareOptions {
  std::string baseline;  ///< a name or "[N]" as the tables print; empty = the first input with results
  Metric metric = Metric::Busbw;
  std::vector<std::string> notes;
  /// Show simulated and measured results side by side (each simulated column marked; no ratio
  /// between them has an interval, so no winner is named across them). Without it such a
  /// comparison is refused.
  bool allow_sim_vs_measured = false;
};

/// Builds the comparison. A row's winner is the configuration (not inert, timed by the baseline's
/// method) with the best ratio whose interval lies entirely on the better side of 1; the
/// intervals are simultaneous: each at bonferroni_confidence(0.95, number of intervals). Throws
/// UsageError when `baseline` names no input, when no input has results, or when simulated and
/// measured results meet without allow_sim_vs_measured.
Comparison compare(std::vector<CompareInput> inputs, const CompareOptions& options);
Comparison compare(std::vector<CompareInput> inputs, const std::string& baseline);

/// The index of the configuration `ref` names: a name, else "[N]" or "N" (from 1) as the tables
/// number them; nullopt when none.
std::optional<std::size_t> find_config(const std::vector<std::string>& names, const std::string& ref);
/// "[1] a, [2] b" for messages.
std::string numbered(const std::vector<std::string>& names);

/// Ratio a / b, unset unless both are set and positive.
std::optional<double> ratio(std::optional<double> a, std::optional<double> b);
/// Geometric mean of positive values; unset when empty.
std::optional<double> geomean(const std::vector<double>& values);

}  // namespace railkit::sweep
