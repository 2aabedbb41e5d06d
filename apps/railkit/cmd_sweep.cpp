// `railkit sweep`: parses the flags into SweepCli and runs sweep::run_sweep, then prints the comparison.
#include <unistd.h>

#include <iostream>
#include <filesystem>
#include <memory>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "apps/railkit/launcher_flags.hpp"
#include "apps/railkit/subcommands.hpp"
#include "core/error.hpp"
#include "core/launch.hpp"
#include "core/strings.hpp"
#include "launch/bench_run.hpp"
#include "launch/preflight.hpp"
#include "topology/analyze.hpp"
#include "topology/probe.hpp"
#include "sweep/compare.hpp"
#include "report/report.hpp"
#include "sweep/inputs.hpp"
#include "sweep/sweep.hpp"

extern char** environ;

namespace railkit::app {
namespace {

/// Flags of `railkit sweep`, as given.
struct SweepCli {
  std::vector<std::string> axes;
  std::string matrix;
  std::vector<std::string> presets;
  std::string topo_root = "/";
  LauncherCli launch;
  std::string out;
  bool resume = false;
  bool retry_failed = false;
  double timeout_s = 0;
  double kill_grace_s = 5;
  std::string baseline;
  std::string format = "table";
  std::string metric = "busbw";
  int rounds = 3;
  std::string seed;
  bool allow_inert = false;
  std::string plot;
  std::string python;
  std::string plot_script;
  std::string plot_yscale = "log";
  std::string prom;
  std::vector<std::string> bench_args;
};

/// Where the rails of --preset rails came from, for sweep.json's `topology`: this node (the
/// measured one when every rank runs here) or a --topo-root tree, which is not the measured node.
nlohmann::json rails_source(const topo::Topology& t, const std::string& topo_root, const launch::LauncherOptions& l) {
  const bool here = std::filesystem::weakly_canonical(topo_root) == std::filesystem::path("/");
  nlohmann::json j = {{"source", here ? "this-node" : "topo-root"},
                      {"root", std::filesystem::absolute(topo_root).lexically_normal().string()},
                      {"host", t.host},
                      {"measured_node", here && launch::single_host(l)}};
  // The line rate of the rail NICs (every NIC when none is a rail), when all report one rate:
  // `railkit report --plot` draws it as the reference line (when measured_node).
  std::set<double> rates;
  int counted = 0;
  bool all_known = true;
  const bool any_rail = std::any_of(t.nics.begin(), t.nics.end(), [](const topo::Nic& n) { return n.rail; });
  for (const auto& n : t.nics) {
    if (any_rail && !n.rail) continue;
    const topo::Port* p = n.main_port();
    if (p && p->rate_Gbps) rates.insert(*p->rate_Gbps);
    else all_known = false;
    ++counted;
  }
  if (all_known && rates.size() == 1) {
    j["nic_rate_Gbps"] = *rates.begin();
    j["nic_count"] = counted;
  }
  if (!here)
    j["note"] = fmt::format("--preset rails took its rails from --topo-root {} (host {} of that tree), not from the "
                            "measured node: the NICs it names may not be the measured nodes'",
                            topo_root, t.host.empty() ? "?" : t.host);
  else if (!j["measured_node"].get<bool>())
    j["note"] = fmt::format("--preset rails took its rails from this host ({}), which runs the launcher; the measured "
                            "nodes were not probed",
                            t.host.empty() ? "?" : t.host);
  return j;
}

int run(const SweepCli& cli) {
  sweep::SweepOptions o;
  o.launcher = launcher_options(cli.launch, cli.bench_args);
  const sweep::Metric metric = sweep::parse_metric(cli.metric);
  std::vector<sweep::Factor> factors;
  if (!cli.matrix.empty()) factors.push_back(sweep::load_matrix(cli.matrix));
  for (const auto& p : cli.presets) {
    std::optional<topo::Topology> topo;
    if (p == "rails") {
      topo::ProbeOptions po;
      po.root = cli.topo_root;
      topo = topo::probe_node(po);
      topo::analyze(*topo, topo::LintOptions{});
      o.topology = rails_source(*topo, cli.topo_root, o.launcher);
    }
    for (auto& f : sweep::preset_factors(p, topo ? &*topo : nullptr)) factors.push_back(std::move(f));
  }
  for (const auto& a : cli.axes) factors.push_back(sweep::parse_axis(a));
  o.configs = sweep::expand(factors);
  o.knob_sources = sweep::knob_sources(factors);

  o.bench = bench_path(cli.launch);
  o.bench_args = cli.bench_args;
  o.out_dir = cli.out;
  o.resume = cli.resume;
  o.retry_failed = cli.retry_failed;
  if (cli.retry_failed && !cli.resume) throw UsageError("--retry-failed needs --resume");
  o.timeout_s = cli.timeout_s;
  o.kill_grace_s = cli.kill_grace_s;
  o.baseline = cli.baseline;
  o.rounds = cli.rounds;
  if (!cli.seed.empty()) {
    const auto v = to_int(cli.seed);
    if (!v || *v < 0) throw UsageError("--seed " + cli.seed + ": expected a non-negative integer");
    o.seed = static_cast<std::uint64_t>(*v);
  }
  o.allow_inert = cli.allow_inert;
  o.prom = cli.prom;
  report::ReportOptions plot;  // --plot: checked before anything runs
  plot.plot = cli.plot;
  plot.python = cli.python;
  plot.plot_script = cli.plot_script;
  plot.plot_yscale = cli.plot_yscale;
  std::optional<report::PlotTool> tool;
  if (!cli.plot.empty()) tool = report::prepare_plot(plot);
  launch::preflight(o.launcher, environ);  // the launcher can start the job: before anything runs
  if (o.topology.is_object() && o.topology.contains("note"))
    std::cerr << "railkit sweep: note: " << o.topology["note"].get<std::string>() << "\n";

  const sweep::SweepOutcome res = sweep::run_sweep(o, environ, std::cerr, ::isatty(STDERR_FILENO) == 1);
  const std::string sweep_json = (std::filesystem::path(cli.out) / "sweep.json").string();

  auto inputs = sweep::sweep_inputs(cli.out, res.doc);
  const bool any_results = std::any_of(inputs.begin(), inputs.end(), [](const sweep::CompareInput& in) {
    return in.doc && !in.doc->results.empty();
  });
  if (any_results) {
    sweep::CompareOptions co;
    co.baseline = res.doc.baseline;
    co.metric = metric;
    co.notes = sweep::sweep_notes(res.doc);
    const sweep::Comparison c = sweep::compare(std::move(inputs), co);
    std::cout << report::render_comparison(c, cli.format) << std::flush;
    if (tool) report::write_plot(c, cli.plot, *tool, environ, report::plot_context(res.doc));
  } else {
    std::cout << "no configuration produced results: nothing to compare\n";
  }
  int bad = 0;
  for (const auto& r : res.doc.launches) bad += r.run.status != TrialStatus::Ok;
  if (bad > 0) {
    std::cerr << fmt::format("railkit sweep: {} of {} launches failed or timed out (see {})\n", bad,
                             res.doc.launches.size(), sweep_json);
    return exit_code(ErrorCode::CheckFailed);
  }
  return 0;
}

}  // namespace

std::function<int()> setup_sweep(CLI::App& app) {
  auto cli = std::make_shared<SweepCli>();
  app.add_option("--axis", cli->axes, "NAME=v1,v2,...: an environment variable and its values (repeatable: cartesian product)")
      ->allow_extra_args(false);
  app.add_option("--matrix", cli->matrix, "JSON file of named configurations (format: sweep/README.md)");
  app.add_option("--preset", cli->presets,
                 "pxn (NCCL_PXN_DISABLE, NCCL_P2P_PXN_LEVEL) | rails (NCCL_IB_HCA per rail x NCCL_CROSS_NIC) | "
                 "algo (NCCL_ALGO x NCCL_PROTO); repeatable")
      ->allow_extra_args(false)
      ->check(CLI::IsMember({"pxn", "rails", "algo"}));
  app.add_option("--topo-root", cli->topo_root, "node (or captured/fixture tree) that --preset rails probes")
      ->capture_default_str();
  add_launcher_flags(app, cli->launch);
  app.add_option("--out", cli->out, "output directory: sweep.json, each configuration's results and logs")->required();
  app.add_flag("--resume", cli->resume, "continue the sweep in --out: skip configurations already finished");
  app.add_flag("--retry-failed", cli->retry_failed, "with --resume: run failed and timed-out configurations again");
  app.add_option("--timeout-s", cli->timeout_s, "wall-clock limit per configuration in seconds (0 = none)")
      ->check(non_negative())
      ->capture_default_str();
  app.add_option("--kill-grace-s", cli->kill_grace_s, "after a timeout, seconds between SIGTERM and SIGKILL")
      ->check(non_negative())
      ->capture_default_str();
  app.add_option("--baseline", cli->baseline,
                 "configuration the comparison divides by: a name or [N] as the tables number them (default: the first)");
  app.add_option("--rounds", cli->rounds,
                 "run every configuration, the baseline included, once per round, in an order shuffled per round")
      ->check(positive())
      ->capture_default_str();
  app.add_option("--seed", cli->seed, "seed of the round order (default: a fresh one, recorded in sweep.json)");
  app.add_flag("--allow-inert", cli->allow_inert,
               "measure knobs that cannot reach the backend that runs (NCCL_* on mpi ...); marked inert, never a winner");
  app.add_option("--format", cli->format, "comparison format: " + join(report::kCompareFormats, " | "))
      ->check(CLI::IsMember(std::vector<std::string>(std::begin(report::kCompareFormats), std::end(report::kCompareFormats))))
      ->capture_default_str();
  app.add_option("--metric", cli->metric, "what the comparison shows: busbw | algbw | time | p50 | p99")
      ->check(CLI::IsMember({"busbw", "algbw", "time", "p50", "p99"}))
      ->capture_default_str();
  app.add_option("--plot", cli->plot,
                 "also draw the metric and time_us against size into FILE.png, FILE.svg or FILE.pdf "
                 "(python3-matplotlib), as railkit report --plot does");
  app.add_option("--plot-yscale", cli->plot_yscale, "y axis of the plot's metric panels: log | linear")
      ->check(CLI::IsMember({"log", "linear"}))
      ->capture_default_str();
  app.add_option("--python", cli->python, "Python interpreter for the plot (default: /usr/bin/python3, else python3)");
  app.add_option("--plot-script", cli->plot_script, "plot script (default: scripts/plot_results.py)");
  app.add_option("--prom", cli->prom,
                 "also write the sweep's busbw and time per configuration, round, op, size, placement and group as a "
                 "node_exporter textfile (written atomically when the sweep ends)");
  app.add_option("bench_args", cli->bench_args, "railkit-bench arguments (after --)");
  return [cli] { return run(*cli); };
}

}  // namespace railkit::app
