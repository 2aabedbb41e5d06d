#include "report/report.hpp"

#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <map>
#include <ostream>

#include <fmt/format.h>

#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "core/json_text.hpp"
#include "core/launch.hpp"
#include "core/results.hpp"
#include "core/strings.hpp"
#include "sweep/inputs.hpp"

namespace railkit::report {
using namespace sweep;  // the comparison and sweep documents it renders
namespace fs = std::filesystem;


PlotTool find_plot_tool(const ReportOptions& o) {
  PlotTool t;
  if (!o.python.empty())
    t.python = o.python;
  else
    t.python = fs::exists("/usr/bin/python3") ? "/usr/bin/python3" : "python3";  // Debian's, where python3-matplotlib lives
  if (!o.plot_script.empty()) {
    if (!fs::is_regular_file(o.plot_script)) throw UsageError("--plot-script " + o.plot_script + ": no such file");
    t.script = o.plot_script;
    return t;
  }
  std::vector<fs::path> candidates;
  if (const fs::path exe = self_exe_dir(); !exe.empty()) {
    candidates.push_back(exe / ".." / "share" / "railkit" / "plot_results.py");
    candidates.push_back(exe / "plot_results.py");
  }
#ifdef RAILKIT_SOURCE_DIR
  candidates.push_back(fs::path(RAILKIT_SOURCE_DIR) / "scripts" / "plot_results.py");
#endif
  for (const auto& c : candidates)
    if (fs::is_regular_file(c)) {
      t.script = c.lexically_normal().string();
      return t;
    }
  throw UnavailableError("--plot: scripts/plot_results.py not found next to railkit or in the source tree; pass --plot-script");
}

namespace {

/// Refuses a --plot file that is not .png, .svg or .pdf, and a --plot-yscale that is not log or linear.
void check_plot_target(const fs::path& file, const std::string& yscale) {
  const std::string ext = file.extension().string();
  if (ext != ".png" && ext != ".svg" && ext != ".pdf")
    throw UsageError("--plot " + file.string() + ": the file must end in .png, .svg or .pdf");
  if (yscale != "log" && yscale != "linear") throw UsageError("--plot-yscale " + yscale + ": expected log or linear");
}

}  // namespace

PlotContext plot_context(const SweepDocument& doc) {
  PlotContext ctx;
  const nlohmann::json& t = doc.topology;
  if (t.is_object() && t.contains("nic_rate_Gbps") && t["nic_rate_Gbps"].is_number() &&
      t.value("measured_node", false)) {
    ctx.line_rate_Gbps = t["nic_rate_Gbps"].get<double>();
    ctx.nics_per_node = t.value("nic_count", 0);
    ctx.line_rate_source = "NIC port rate probed on " + t.value("host", std::string("the measured node"));
  }
  return ctx;
}

PlotContext plot_context(const std::vector<std::string>& inputs) {
  std::optional<PlotContext> agreed;
  for (const auto& path : inputs) {
    std::error_code ec;
    if (!fs::is_directory(path, ec) || !fs::exists(fs::path(path) / "sweep.json")) return {};
    const PlotContext ctx = plot_context(load_sweep(path));
    if (!ctx.line_rate_Gbps) return {};
    if (agreed && *agreed->line_rate_Gbps != *ctx.line_rate_Gbps) return {};
    if (!agreed) agreed = ctx;
  }
  return agreed.value_or(PlotContext{});
}

void write_plot(const Comparison& c, const fs::path& file, const PlotTool& tool, char* const* envp,
                const PlotContext& ctx) {
  check_plot_target(file, tool.yscale);
  check_writable(file, "--plot");

  std::string tmpl = (fs::temp_directory_path() / "railkit-plot-XXXXXX").string();
  const int fd = ::mkstemp(tmpl.data());
  if (fd < 0) throw IoError("--plot: cannot create a temporary file in " + fs::temp_directory_path().string());
  ::close(fd);
  const fs::path series = tmpl;
  const fs::path err = tmpl + ".stderr";
  struct Cleanup {
    fs::path a, b;
    ~Cleanup() {
      std::error_code ec;
      fs::remove(a, ec);
      fs::remove(b, ec);
    }
  } cleanup{series, err};
  write_file_atomic(series, json_dump(plot_series(c, ctx)) + "\n");

  LaunchSpec spec;
  spec.argv = {tool.python, tool.script, "--series", series.string(), "--out", file.string(), "--yscale", tool.yscale};
  spec.stderr_path = err;
  spec.stdout_path = "/dev/null";
  spec.timeout_s = 300;
  const LaunchResult r = run_process(spec, envp);
  if (r.ok()) return;
  if (r.end == LaunchResult::End::FailedToStart)
    throw UnavailableError("--plot: cannot run " + tool.python + " (" + r.start_error + "); pass --python");
  if (r.end == LaunchResult::End::Exited && r.exit_code == exit_code(ErrorCode::Unavailable))
    throw UnavailableError("--plot needs matplotlib, which " + tool.python +
                           " cannot import: install the Debian package python3-matplotlib (apt-get install python3-matplotlib)");
  std::string tail = file_tail(err, 1, 500);
  throw IoError("--plot " + file.string() + ": " + tool.script + " failed (" + r.describe() + ")" +
                (tail.empty() ? "" : ": " + tail));
}

PlotTool prepare_plot(const ReportOptions& o) {
  check_plot_target(o.plot, o.plot_yscale);
  check_writable(o.plot, "--plot");
  PlotTool t = find_plot_tool(o);
  t.yscale = o.plot_yscale;
  return t;
}

Comparison compare_inputs(const ReportOptions& o) {
  CompareOptions co;
  co.metric = parse_metric(o.metric);
  co.allow_sim_vs_measured = o.allow_sim_vs_measured;
  std::string sweep_baseline;
  auto inputs = load_report_inputs(o.inputs, &sweep_baseline, &co.notes);
  co.baseline = o.baseline.empty() ? sweep_baseline : o.baseline;
  return compare(std::move(inputs), co);
}

int run_report(const ReportOptions& o, char* const* envp, std::ostream& out) {
  if (std::find(std::begin(kCompareFormats), std::end(kCompareFormats), o.format) == std::end(kCompareFormats))
    throw UsageError("--format " + o.format + ": expected " + compare_format_names());
  std::optional<PlotTool> tool;
  if (!o.plot.empty()) tool = prepare_plot(o);
  if (!o.plot_series_file.empty()) check_writable(o.plot_series_file, "--plot-series");
  const Comparison c = compare_inputs(o);
  out << render_comparison(c, o.format) << std::flush;
  if (tool || !o.plot_series_file.empty()) {
    const PlotContext ctx = plot_context(o.inputs);
    if (!o.plot_series_file.empty()) write_file_atomic(o.plot_series_file, json_dump(plot_series(c, ctx)) + "\n");
    if (tool) write_plot(c, o.plot, *tool, envp, ctx);
  }
  return 0;
}

}  // namespace railkit::report
