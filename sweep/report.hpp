#pragma once
// `railkit report`: the comparison of results documents (files, or sweep directories through
// their sweep.json), printed as a table, markdown or CSV, and optionally plotted with
// scripts/plot_results.py (Debian's python3-matplotlib).
#include <filesystem>
#include <iosfwd>
#include <string>
#include <vector>

#include "sweep/compare.hpp"
#include "sweep/sweep.hpp"

namespace railkit::sweep {

/// Options of `railkit report`, filled by the CLI.
struct ReportOptions {
  std::vector<std::string> inputs;  ///< results documents or sweep directories
  std::string format = "table";     ///< table | markdown | csv
  std::string baseline;             ///< configuration name; empty = the sweep's baseline or the first
  std::string plot;                 ///< FILE.png | FILE.svg; empty = no plot
  std::string python;               ///< interpreter for the plot script; empty = /usr/bin/python3, else python3
  std::string plot_script;          ///< empty = found next to the binary or in the source tree
};

/// The configurations of a sweep directory, in planned order: finished ones with their status
/// (documents only for "ok"), planned ones not run yet as status "not run".
std::vector<CompareInput> sweep_inputs(const std::filesystem::path& dir, const SweepDocument& doc);

/// Loads every input (a results document, or a directory holding sweep.json). Names: a
/// sweep's configuration names, else the document's run.label, else the file name; names that
/// collide are qualified with their source. Throws UsageError naming a bad input.
std::vector<CompareInput> load_report_inputs(const std::vector<std::string>& inputs, std::string* sweep_baseline);

/// Where the plot script and its interpreter are.
struct PlotTool {
  std::string python;
  std::string script;
};
/// Resolves the interpreter and the script from the options. Throws UnavailableError when no
/// script is found.
PlotTool find_plot_tool(const ReportOptions& o);

/// Draws busbw against size (log2 x axis), a panel per table and a line per configuration, into
/// `file` (.png or .svg). Throws UsageError for another extension, UnavailableError (exit 5,
/// naming python3-matplotlib) when matplotlib is missing, IoError when the script fails.
void write_plot(const Comparison& c, const std::filesystem::path& file, const PlotTool& tool, char* const* envp);

/// Runs the command: prints the comparison to `out`, writes the plot. Returns 0.
int run_report(const ReportOptions& o, char* const* envp, std::ostream& out);

}  // namespace railkit::sweep
