#pragma once
// Comparison of several configurations' results documents: busbw per collective and size, the
// ratio to a baseline, the geometric-mean ratio per configuration and the winner per size range.
// Pure data in, data out; renderers format it as a table, markdown or CSV.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/results.hpp"

namespace railkit::sweep {

/// One configuration to compare: its name, status ("ok", "failed", "timeout") and, when it has
/// one, its results document. `note` says why there is none or what went wrong.
struct CompareInput {
  std::string name;
  std::string status = "ok";
  std::string source;  ///< where the document came from, for the legend
  std::string note;
  std::optional<ResultsDocument> doc;
};

/// One size of one table: busbw (GB/s) per configuration (unset when it has no record there),
/// averaged over run cycles.
struct CompareRow {
  std::uint64_t bytes = 0;
  std::vector<std::optional<double>> busbw_GBps;
  std::optional<std::size_t> winner;  ///< highest busbw; unset when none is above 0
};

/// A table per collective, datatype, reduction and placement.
struct CompareTable {
  std::string op, dtype, redop;
  bool in_place = false;
  std::vector<CompareRow> rows;  ///< by size, ascending
  std::string title() const;     ///< "all_reduce float sum, out-of-place"
};

/// Consecutive sizes of a table with the same winner.
struct WinnerRange {
  std::size_t table = 0;
  std::uint64_t from_bytes = 0, to_bytes = 0;
  std::size_t config = 0;
  std::optional<double> ratio;  ///< geometric mean of winner / baseline over the range
};

struct Comparison {
  std::vector<CompareInput> inputs;  ///< in column order (documents dropped: see has_results)
  std::vector<bool> has_results;
  std::optional<std::size_t> baseline;  ///< unset when the baseline has no results
  std::string baseline_name;
  std::vector<CompareTable> tables;
  std::vector<std::optional<double>> geomean_ratio;  ///< per configuration
  std::vector<int> geomean_sizes;                    ///< rows that entered each geometric mean
  std::vector<WinnerRange> winners;
};

/// Builds the comparison. `baseline` names a configuration; empty = the first input with results.
/// Throws UsageError when `baseline` names no input, or when no input has results.
Comparison compare(std::vector<CompareInput> inputs, const std::string& baseline);

/// Ratio a / b, unset unless both are set and positive.
std::optional<double> ratio(std::optional<double> a, std::optional<double> b);
/// Geometric mean of positive values; unset when empty.
std::optional<double> geomean(const std::vector<double>& values);

/// Renderers. Formats: "table" (console), "markdown", "csv" (one line per size and configuration).
inline constexpr std::string_view kCompareFormats[] = {"table", "markdown", "csv"};
std::string render_comparison(const Comparison& c, std::string_view format);

/// The series to plot: per table, per configuration, (bytes, busbw_GBps) points.
nlohmann::json plot_series(const Comparison& c);

}  // namespace railkit::sweep
