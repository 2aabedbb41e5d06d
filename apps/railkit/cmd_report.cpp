// `railkit report`: parses the flags into ReportOptions and runs report::run_report.
#include <iostream>
#include <memory>

#include "apps/railkit/subcommands.hpp"
#include "core/strings.hpp"
#include "report/html_report.hpp"
#include "report/report.hpp"

extern char** environ;

namespace railkit::app {

std::function<int()> setup_report(CLI::App& app) {
  auto o = std::make_shared<report::ReportOptions>();
  app.add_option("inputs", o->inputs, "results documents (railkit-bench -J) or `railkit sweep --out` directories (with --html also a tune or "
                 "accept output directory)")
      ->required();
  app.add_option("--format", o->format, join(report::kCompareFormats, " | "))
      ->check(CLI::IsMember(std::vector<std::string>(std::begin(report::kCompareFormats), std::end(report::kCompareFormats))))
      ->capture_default_str();
  app.add_option("--baseline", o->baseline,
                 "configuration the ratios divide by: a name or [N] as the tables number them (default: the sweep's, "
                 "else the first)");
  app.add_option("--metric", o->metric, "what is shown: busbw | algbw | time | p50 | p99")
      ->check(CLI::IsMember({"busbw", "algbw", "time", "p50", "p99"}))
      ->capture_default_str();
  app.add_option("--plot", o->plot,
                 "also draw the metric and time_us (p50, p50-p99 band) against size into FILE.png, FILE.svg or FILE.pdf "
                 "(python3-matplotlib)");
  app.add_option("--plot-yscale", o->plot_yscale, "y axis of the plot's metric panels: log | linear")
      ->check(CLI::IsMember({"log", "linear"}))
      ->capture_default_str();
  app.add_option("--plot-series", o->plot_series_file,
                 "also write what --plot draws, the railkit.plot-series/1 JSON, into FILE (no matplotlib needed)");
  app.add_option("--python", o->python, "Python interpreter for the plot (default: /usr/bin/python3, else python3)");
  app.add_option("--plot-script", o->plot_script, "plot script (default: scripts/plot_results.py)");
  app.add_flag("--allow-sim-vs-measured", o->allow_sim_vs_measured,
               "show simulated (railkit-bench --backend sim) and measured results side by side, simulated values marked "
               "and no winner named across them (refused without it)");
  app.add_option("--html", o->html,
                 "write one self-contained HTML page (no network: tables sortable by a click, plots embedded as SVG, "
                 "verdicts with their rules) into OUT.html instead of printing; inputs may also be one `railkit tune "
                 "--out` directory or one `railkit accept --out` directory (failing nodes first)");
  return [o] {
    return o->html.empty() ? report::run_report(*o, environ, std::cout) : report::run_html_report(*o, environ, std::cout);
  };
}

}  // namespace railkit::app
