#pragma once
// The comparison for people: the console table, markdown and CSV, and the series a plot draws.
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "sweep/compare.hpp"

namespace railkit::report {

using sweep::Comparison;

/// Renderers. Formats: "table" (console), "markdown", "csv" (one line per size, group and configuration).
inline constexpr std::string_view kCompareFormats[] = {"table", "markdown", "csv"};
std::string render_comparison(const Comparison& c, std::string_view format);
/// What the tables say of a row: the winner's tag, "no significant difference", "baseline better",
/// "no interval", "inert" or "-".
std::string verdict_text(const sweep::CompareRow& row);
/// kCompareFormats for messages: "table, markdown or csv".
std::string compare_format_names();

/// The tag configuration `i` (0-based) is shown under in every rendering: "[i+1]".
std::string config_tag(std::size_t i);

/// What a plot knows beyond the comparison: the NIC line rate when the run knows it (a sweep's
/// probed topology); simulated documents bring their own (run.sim.cluster.link_rate_Gbps).
struct PlotContext {
  std::optional<double> line_rate_Gbps;  ///< per NIC, Gb/s; unset = unknown (never guessed)
  int nics_per_node = 0;                 ///< the NICs at that rate on a node; 0 = unknown (no line)
  std::string line_rate_source;          ///< where it came from, for the legend
};

/// The series to plot (`railkit.plot-series/1`): per table, per configuration and group, the
/// (bytes, value) points, with the spread over rounds and the slowest group marked; per series
/// also time_us p50 and p99 (median over rounds of the mean over cycles) for the latency panel;
/// the measured sizes; the title block (labels, backends, ranks, nodes, hosts, dates,
/// simulated); the NIC reference line when known and the run spans nodes: NICs per node x line rate
/// (the per-node bound of ring busbw across nodes; a one-node run crosses no NIC, so none).
nlohmann::json plot_series(const Comparison& c, const PlotContext& ctx = {});

}  // namespace railkit::report
