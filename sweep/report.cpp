#include "sweep/report.hpp"

#include <stdlib.h>
#include <unistd.h>

#include <map>
#include <ostream>

#include <fmt/format.h>

#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "core/launch.hpp"
#include "core/results.hpp"

namespace railkit::sweep {
namespace fs = std::filesystem;

std::vector<CompareInput> sweep_inputs(const fs::path& dir, const SweepDocument& doc) {
  std::vector<CompareInput> out;
  auto add = [&](const ConfigRecord& r) {
    CompareInput in;
    in.name = r.name;
    in.status = std::string(name(r.status));
    in.note = r.error;
    if (!r.results.empty()) {
      in.source = (dir / r.results).string();
      if (r.status == TrialStatus::Ok) {
        try {
          in.doc = load_results(in.source);
        } catch (const Error& e) {
          in.status = "unreadable";
          in.note = e.what();
        }
      }
    }
    out.push_back(std::move(in));
  };
  for (const auto& p : doc.planned) {
    if (const ConfigRecord* r = doc.find(p.name))
      add(*r);
    else
      out.push_back(CompareInput{p.name, "not run", "", "", std::nullopt});
  }
  for (const auto& r : doc.configs) {
    const bool planned = std::any_of(doc.planned.begin(), doc.planned.end(), [&](const BenchConfig& c) { return c.name == r.name; });
    if (!planned) add(r);
  }
  return out;
}

std::vector<CompareInput> load_report_inputs(const std::vector<std::string>& inputs, std::string* sweep_baseline) {
  if (inputs.empty()) throw UsageError("report: give results documents or sweep directories");
  std::vector<CompareInput> all;
  std::vector<std::string> qualified;  // the name to use when the plain one collides
  int sweeps = 0;
  for (const auto& path : inputs) {
    std::error_code ec;
    if (fs::is_directory(path, ec)) {
      if (!fs::exists(fs::path(path) / "sweep.json"))
        throw UsageError(path + ": a directory without sweep.json (not a sweep output directory)");
      const SweepDocument doc = load_sweep(path);
      if (++sweeps == 1 && sweep_baseline) *sweep_baseline = doc.baseline;
      const std::string dir_name = fs::path(path).lexically_normal().filename().string();
      for (auto& in : sweep_inputs(path, doc)) {
        qualified.push_back((dir_name.empty() ? path : dir_name) + ":" + in.name);
        all.push_back(std::move(in));
      }
    } else {
      if (!fs::exists(path, ec)) throw UsageError(path + ": no such file or directory");
      CompareInput in;
      in.source = path;
      in.doc = load_results(path);
      in.name = in.doc->run.label.empty() ? fs::path(path).stem().string() : in.doc->run.label;
      if (!in.doc->summary.complete) in.note = "incomplete run";
      qualified.push_back(path);
      all.push_back(std::move(in));
    }
  }
  if (sweeps != 1 && sweep_baseline) sweep_baseline->clear();  // several sources: default to the first
  std::map<std::string, int> count;
  for (const auto& in : all) ++count[in.name];
  for (size_t i = 0; i < all.size(); ++i)
    if (count[all[i].name] > 1) all[i].name = qualified[i];
  return all;
}

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

void write_plot(const Comparison& c, const fs::path& file, const PlotTool& tool, char* const* envp) {
  const std::string ext = file.extension().string();
  if (ext != ".png" && ext != ".svg") throw UsageError("--plot " + file.string() + ": the file must end in .png or .svg");
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
  write_file_atomic(series, plot_series(c).dump() + "\n");

  LaunchSpec spec;
  spec.argv = {tool.python, tool.script, "--series", series.string(), "--out", file.string()};
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

int run_report(const ReportOptions& o, char* const* envp, std::ostream& out) {
  if (o.format != "table" && o.format != "markdown" && o.format != "csv")
    throw UsageError("--format " + o.format + ": expected table, markdown or csv");
  std::optional<PlotTool> tool;
  if (!o.plot.empty()) {
    const std::string ext = fs::path(o.plot).extension().string();
    if (ext != ".png" && ext != ".svg") throw UsageError("--plot " + o.plot + ": the file must end in .png or .svg");
    check_writable(o.plot, "--plot");
    tool = find_plot_tool(o);
  }
  std::string sweep_baseline;
  auto inputs = load_report_inputs(o.inputs, &sweep_baseline);
  const Comparison c = compare(std::move(inputs), o.baseline.empty() ? sweep_baseline : o.baseline);
  out << render_comparison(c, o.format) << std::flush;
  if (tool) write_plot(c, o.plot, *tool, envp);
  return 0;
}

}  // namespace railkit::sweep
