#include "sweep/report.hpp"

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

namespace railkit::sweep {
namespace fs = std::filesystem;

namespace {

/// True when `p` (canonical) is `root` (canonical) or below it.
bool within(const fs::path& root, const fs::path& p) {
  auto r = root.begin(), q = p.begin();
  for (; r != root.end(); ++r, ++q)
    if (q == p.end() || *r != *q) return false;
  return true;
}

/// Refuses a launch whose results path leaves the sweep directory: absolute, `..` above it, or
/// through a symlink that points out of it. A sweep writes them relative to its directory.
void check_results_paths(const fs::path& dir, const SweepDocument& doc) {
  std::error_code ec;
  const fs::path root = fs::weakly_canonical(fs::absolute(dir), ec);
  if (ec) throw IoError(fmt::format("{}: cannot resolve the directory: {}", dir.string(), ec.message()));
  for (std::size_t i = 0; i < doc.launches.size(); ++i) {
    const auto& l = doc.launches[i];
    if (l.run.results.empty()) continue;
    const fs::path rel{l.run.results};
    bool inside = !rel.is_absolute() && !rel.has_root_name() && !rel.has_root_directory();
    if (inside) {
      const fs::path resolved = fs::weakly_canonical(root / rel, ec);
      inside = !ec && within(root, resolved) && resolved != root;
    }
    if (!inside)
      throw UsageError(fmt::format("{}: launches[{}] ({} round {}): results path '{}' is outside the sweep directory "
                                   "(a sweep writes its results documents inside it)",
                                   (dir / "sweep.json").string(), i, l.run.name, l.round, l.run.results));
  }
}

}  // namespace

std::vector<CompareInput> sweep_inputs(const fs::path& dir, const SweepDocument& doc) {
  check_results_paths(dir, doc);
  std::vector<CompareInput> out;
  const std::string series = fs::absolute(dir).lexically_normal().string();
  auto add = [&](const std::string& config, const std::map<std::string, std::string>& env) {
    CompareInput in;
    in.name = config;
    in.series = series;
    in.env = env;
    const auto launches = doc.of(config);
    if (launches.empty()) {
      in.status = "not run";
      out.push_back(std::move(in));
      return;
    }
    std::vector<std::string> problems;
    TrialStatus last = TrialStatus::Ok;
    for (const LaunchRecord* l : launches) {
      for (const auto& k : l->inert)
        if (std::find(in.inert.begin(), in.inert.end(), k) == in.inert.end()) in.inert.push_back(k);
      if (!l->run.results.empty() && in.source.empty()) in.source = (dir / l->run.results).string();
      if (l->run.status != TrialStatus::Ok) {
        last = l->run.status;
        problems.push_back(fmt::format("round {} {}{}", l->round, name(l->run.status),
                                       l->run.error.empty() ? "" : ": " + l->run.error));
        continue;
      }
      try {
        in.rounds.push_back(RoundDoc{l->round, load_results((dir / l->run.results).string())});
      } catch (const Error& e) {
        problems.push_back(fmt::format("round {} unreadable: {}", l->round, e.what()));
      }
    }
    if (!in.rounds.empty()) {
      in.status = "ok";
      in.doc = in.rounds.front().doc;
      if (launches.size() > 1 || doc.rounds > 1) in.source.clear();  // one document per round: the sweep is the source
    } else {
      in.status = problems.size() == launches.size() && last != TrialStatus::Ok ? std::string(name(last)) : "unreadable";
    }
    int not_run = 0;
    for (int r = 1; r <= doc.rounds; ++r)
      if (!doc.find(config, r)) ++not_run;
    if (not_run > 0) problems.push_back(fmt::format("{} of {} rounds not run", not_run, doc.rounds));
    if (in.rounds.size() == 1 && launches.size() == 1 && doc.rounds == 1) {  // one launch: its error as it was
      in.note = launches.front()->run.error;
    } else {
      in.note = join(problems, "; ");
    }
    out.push_back(std::move(in));
  };
  for (const auto& p : doc.planned) add(p.name, p.env);
  std::vector<std::string> extra;  // launches of configurations no longer planned
  for (const auto& l : doc.launches) {
    const bool planned = std::any_of(doc.planned.begin(), doc.planned.end(), [&](const BenchConfig& c) { return c.name == l.run.name; });
    if (!planned && std::find(extra.begin(), extra.end(), l.run.name) == extra.end()) {
      extra.push_back(l.run.name);
      add(l.run.name, l.run.env);
    }
  }
  return out;
}

std::vector<std::string> sweep_notes(const SweepDocument& doc) {
  std::vector<std::string> notes;
  if (doc.rounds > 1)
    notes.push_back(fmt::format("{} rounds: every configuration, the baseline included, once per round, in an order "
                                "shuffled per round (seed {})",
                                doc.rounds, doc.seed));
  if (!doc.inert.empty()) {
    std::vector<std::string> knobs;
    for (const auto& k : doc.inert) knobs.push_back(k.name + (k.source.empty() ? "" : " (" + k.source + ")"));
    notes.push_back(fmt::format("INERT: {} cannot reach the {} backend that ran{}: the differences they show are noise, "
                                "and no configuration that only changes them is a winner",
                                join(knobs, ", "), doc.inert_backend, doc.allow_inert ? " (--allow-inert)" : ""));
  }
  if (doc.sim.is_object()) {  // sweep_from_json checked it is an object with a cluster
    std::vector<std::string> seeds;
    if (doc.sim.contains("round_seeds") && doc.sim["round_seeds"].is_array())
      for (const auto& x : doc.sim["round_seeds"]) seeds.push_back(x.dump());
    const nlohmann::json fid = doc.sim.value("fidelity", nlohmann::json(nullptr));
    notes.push_back(fmt::format("SIMULATED sweep: railkit-bench --backend sim simulated cluster {} ({}), fidelity {}; "
                                "round seeds {}: the rounds are replicas with other seeds, their spread the model's "
                                "seed-to-seed variation, not a measurement's noise",
                                doc.sim.value("cluster", std::string("?")), doc.sim.value("cluster_hash", std::string("?")),
                                fid.is_string() ? fid.get<std::string>() : std::string("railkit-bench's default"),
                                seeds.empty() ? std::string("?") : join(seeds, ", ")));
  }
  // sweep_from_json checked the types of both
  if (doc.topology.is_object() && !field_or(doc.topology, "measured_node", true, "sweep.json: topology"))
    notes.push_back(field_or(doc.topology, "note", "the rails were not probed on the measured node", "sweep.json: topology"));
  return notes;
}

std::vector<CompareInput> load_report_inputs(const std::vector<std::string>& inputs, std::string* sweep_baseline,
                                             std::vector<std::string>* notes) {
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
      if (notes)
        for (auto& x : sweep_notes(doc)) notes->push_back(inputs.size() > 1 ? (dir_name.empty() ? path : dir_name) + ": " + x : x);
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

int run_report(const ReportOptions& o, char* const* envp, std::ostream& out) {
  if (o.format != "table" && o.format != "markdown" && o.format != "csv")
    throw UsageError("--format " + o.format + ": expected table, markdown or csv");
  std::optional<PlotTool> tool;
  if (!o.plot.empty()) tool = prepare_plot(o);
  if (!o.plot_series_file.empty()) check_writable(o.plot_series_file, "--plot-series");
  CompareOptions co;
  co.metric = parse_metric(o.metric);
  co.allow_sim_vs_measured = o.allow_sim_vs_measured;
  std::string sweep_baseline;
  auto inputs = load_report_inputs(o.inputs, &sweep_baseline, &co.notes);
  co.baseline = o.baseline.empty() ? sweep_baseline : o.baseline;
  const Comparison c = compare(std::move(inputs), co);
  out << render_comparison(c, o.format) << std::flush;
  if (tool || !o.plot_series_file.empty()) {
    const PlotContext ctx = plot_context(o.inputs);
    if (!o.plot_series_file.empty()) write_file_atomic(o.plot_series_file, json_dump(plot_series(c, ctx)) + "\n");
    if (tool) write_plot(c, o.plot, *tool, envp, ctx);
  }
  return 0;
}

}  // namespace railkit::sweep
