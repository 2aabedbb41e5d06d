#pragma once
// `railkit report`: the comparison of results documents (files, or sweep directories through
// their sweep.json), printed as a table, markdown or CSV, and optionally plotted with
// scripts/plot_results.py (Debian's python3-matplotlib).
#include <filesystem>
#include <iosfwd>
#include <string>
#include <vector>

#include "report/compare_render.hpp"
#include "sweep/compare.hpp"
#include "sweep/sweep.hpp"

namespace railkit::report {

using sweep::CompareInput;
using sweep::CompareOptions;
using sweep::SweepDocument;

/// Options of `railkit report`, filled by the CLI.
struct ReportOptions {
  std::vector<std::string> inputs;  ///< results documents or sweep directories
  std::string format = "table";     ///< table | markdown | csv
  std::string baseline;             ///< configuration name or "[N]"; empty = the sweep's baseline or the first
  std::string metric = "busbw";     ///< busbw | algbw | time | p50 | p99
  std::string plot;                 ///< FILE.png | FILE.svg | FILE.pdf; empty = no plot
  std::string plot_yscale = "log";  ///< --plot-yscale: log | linear, the metric panels' y axis
  std::string plot_series_file;     ///< --plot-series: also write the railkit.plot-series/1 JSON there
  std::string python;               ///< interpreter for the plot script; empty = /usr/bin/python3, else python3
  std::string plot_script;          ///< empty = found next to the binary or in the source tree
  bool allow_sim_vs_measured = false;  ///< show simulated and measured results side by side (else refused)
  std::string html;  ///< OUT.html: one self-contained page instead of the printed table (report/html_report.hpp)
};

/// Where the plot script and its interpreter are.
struct PlotTool {
  std::string python;
  std::string script;
  std::string yscale = "log";  ///< passed as --yscale
};
/// Resolves the interpreter and the script from the options. Throws UnavailableError when no
/// script is found.
PlotTool find_plot_tool(const ReportOptions& o);

/// Checks a --plot target before anything runs (its extension, .png, .svg or .pdf, that it can be
/// written, and --plot-yscale log | linear) and finds the tool. Throws UsageError, IoError or
/// UnavailableError.
PlotTool prepare_plot(const ReportOptions& o);

/// Draws the metric against size (log2 x axis, ticks at the measured sizes) and time_us (p50 with
/// the p50-p99 band), a column per placement and a line per configuration and --split group (the
/// slowest group marked), into `file` (.png, .svg or .pdf). Throws UsageError for another
/// extension, UnavailableError (exit 5, naming python3-matplotlib) when matplotlib is missing,
/// IoError when the script fails.
void write_plot(const Comparison& c, const std::filesystem::path& file, const PlotTool& tool, char* const* envp,
                const PlotContext& ctx = {});

/// The plot context of a sweep: the NIC line rate its sweep.json `topology` recorded
/// (`nic_rate_Gbps`, probed on the measured node); none otherwise.
PlotContext plot_context(const SweepDocument& doc);
/// The plot context of `railkit report`'s inputs: the line rate their sweeps agree on; none when
/// an input is a loose document or the sweeps differ.
PlotContext plot_context(const std::vector<std::string>& inputs);

/// The comparison of `railkit report`'s inputs as its options ask (metric, baseline: the options'
/// else the sweep's, simulated beside measured). Throws UsageError naming a bad input.
Comparison compare_inputs(const ReportOptions& o);

/// Runs the command: prints the comparison to `out`, writes the plot. Returns 0.
int run_report(const ReportOptions& o, char* const* envp, std::ostream& out);

}  // namespace railkit::report
