// `railkit tune`: parses the flags into TuneCli, runs tuner::run_tune (or resume_tune), writes
// the Open MPI rules file when asked and prints the per-bucket verdict of the validation. An
// interruption is the tuner's InterruptedError, reported by guarded_main.
#include <unistd.h>

#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "apps/railkit/launcher_flags.hpp"
#include "apps/railkit/subcommands.hpp"
#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "core/launch.hpp"
#include "core/strings.hpp"
#include "core/tunables.hpp"
#include "core/units.hpp"
#include "launch/preflight.hpp"
#include "profiles/ompi_rules.hpp"
#include "tuner/journal.hpp"
#include "tuner/strategy.hpp"
#include "tuner/tune.hpp"

extern char** environ;

namespace railkit::app {
namespace {

/// Flags of `railkit tune`, as given.
struct TuneCli {
  std::string space;
  std::string strategy = "coordinate";
  std::int64_t budget = 0;
  bool budget_given = false;
  std::uint64_t seed = 1;
  LauncherCli launch;
  std::string out;
  std::string resume;
  double timeout_s = 600;
  double kill_grace_s = 5;
  std::string weights;
  int pairs = 5;
  int validate_iters = 0;
  double max_regression = 0.02;
  bool no_validate = false;
  std::vector<std::string> baseline_env;
  std::string dcqcn_root;
  std::string topo_root;
  std::vector<std::string> netdevs;
  int priority = 3;
  std::vector<std::string> emit;
  std::string name;
  bool quiet = false;
  bool allow_inert = false;
  bool list_spaces = false;
  bool list_tunables = false;
  std::vector<std::string> bench_args;
};

/// Open MPI's algorithm counts from this machine's ompi_info; empty when it is not there.
tuner::OmpiAlgorithmCounts ompi_counts() {
  char tmpl[] = "/tmp/railkit-ompi-info.XXXXXX";
  const int fd = ::mkstemp(tmpl);
  if (fd < 0) return {};
  ::close(fd);
  LaunchSpec spec;
  spec.argv = {"ompi_info", "--parsable", "--param", "coll", "tuned", "--level", "9"};
  spec.stdout_path = tmpl;
  spec.stderr_path = "/dev/null";
  spec.timeout_s = 30;
  const LaunchResult r = run_process(spec, environ);
  std::string text;
  if (r.ok()) {
    try {
      text = read_file(tmpl);
    } catch (const Error&) {
    }
  }
  ::unlink(tmpl);
  return tuner::parse_ompi_info_counts(text);
}

int list_spaces() {
  for (auto n : tuner::kBuiltinSpaces) {
    const tuner::Space s = tuner::builtin_space(n, n == "ompi-coll" ? ompi_counts() : tuner::OmpiAlgorithmCounts{});
    std::cout << fmt::format("{} ({} configurations): {}\n", s.name, tuner::config_count(s), s.doc);
    for (const auto& [k, v] : s.fixed_env) std::cout << fmt::format("  fixed {}={}\n", k, v);
    for (const auto& k : s.knobs) {
      std::vector<std::string> vals;
      for (const auto& v : k.values) vals.push_back(v.empty() ? std::string("unset") : v);
      std::string extra;
      if (!k.collectives.empty()) extra += " [" + join(k.collectives, ",") + "]";
      if (k.when) extra += fmt::format(" when {} {} {}", k.when->knob, k.when->op, join(k.when->values, ","));
      std::cout << fmt::format("  {} {}: {}{}\n", k.numeric ? "numeric    " : "categorical", k.name, join(vals, " "), extra);
    }
  }
  return 0;
}

int list_tunables() {
  std::cout << fmt::format("{:<56} {:<6} {:<9} {:<24} {:<10} {}\n", "name", "scope", "type", "range", "default", "doc");
  for (const auto& t : tunables()) {
    std::string range;
    if (t.type == TunableType::Int || t.type == TunableType::Pow2 || t.type == TunableType::Decimal)
      range = fmt::format("{}..{}", t.min, t.max);
    else if (t.type == TunableType::Bool) range = "0|1";
    else range = join(t.values, "|");
    if (!t.unit.empty()) range += " " + std::string(t.unit);
    std::cout << fmt::format("{:<56} {:<6} {:<9} {:<24} {:<10} {}\n", t.name, scope_name(t.scope), type_name(t.type), range,
                             t.default_value, t.doc);
  }
  return 0;
}

void print_verdict(const tuner::TuneOutcome& res) {
  const ProfileDocument& p = *res.profile;
  const bool simulated = p.evidence.extra.contains("simulated");
  const std::string sim_tag = simulated ? "SIMULATED " : "";
  std::cout << fmt::format("\n# railkit tune: {} trials ({} failed{}); search best {}{:.3f} GB/s vs baseline {:.3f} GB/s\n",
                           res.trials_total, res.trials_failed,
                           res.trials_infeasible > 0 ? fmt::format(", {} of them infeasible, not run", res.trials_infeasible) : "",
                           sim_tag, res.best_objective_GBps, res.baseline_objective_GBps);
  if (simulated) {
    const auto& s = p.evidence.extra["simulated"];
    std::cout << fmt::format("# SIMULATED: every figure below comes from railkit-bench --backend sim (cluster {}, {}, "
                             "fidelity {}, seed {}): a model, not a measurement; never validated\n",
                             s.value("cluster", std::string("?")), s.value("cluster_hash", std::string("?")),
                             s.contains("fidelity") && s["fidelity"].is_string() ? s["fidelity"].get<std::string>()
                                                                                 : std::string("railkit-bench's default"),
                             s.contains("seed") ? s["seed"].dump() : std::string("?"));
  }
  std::cout << fmt::format("# validation: {} A/B pairs{}, {}\n", p.evidence.pairs,
                           simulated ? " on the simulator (held-out seeds)" : "",
                           p.evidence.validated ? "validated" : "NOT validated");
  const bool inert = p.evidence.extra.contains("inert");
  if (inert) std::cout << "# INERT: " << p.evidence.extra["inert"].value("reason", std::string()) << "\n";
  if (p.cluster.extra.value("fingerprint_source", std::string()) == "topo-root")
    std::cout << "# fingerprint: from --topo-root " << p.cluster.extra.value("topo_root", std::string())
              << ", not from the measured nodes\n";
  std::cout << fmt::format("{:<16} {:>10} {:>14} {:>14} {:>8} {:>18}  {}\n", "coll", "bucket", sim_tag.empty() ? "base busbw" : "sim base busbw",
                           sim_tag.empty() ? "tuned busbw" : "sim tuned busbw", "ratio", "95% interval", "decision");
  for (const auto& d : p.decisions)
    std::cout << fmt::format("{:<16} {:>10} {:>14.3f} {:>14.3f} {:>8.3f} {:>18}  {}\n", d.coll, format_bytes(d.min_bytes),
                             d.baseline_busbw_GBps, d.busbw_GBps, d.ratio, fmt::format("[{:.3f}, {:.3f}]", d.ratio_lo, d.ratio_hi),
                             d.significant ? d.config
                             : inert       ? std::string("baseline (inert: nothing measured could change)")
                                           : std::string("baseline (no significant gain)"));
  std::vector<std::string> env;
  for (const auto& [k, v] : p.env) env.push_back(k + "=" + v);
  std::cout << "# settings.env: " << (env.empty() ? "(none: the defaults stay)" : join(env, " ")) << "\n";
  for (const auto& [prio, attrs] : p.dcqcn) {
    std::vector<std::string> a;
    for (const auto& [k, v] : attrs) a.push_back(k + "=" + v);
    std::cout << "# settings.dcqcn (priority " << prio << "): " << join(a, " ") << "\n";
  }
  if (!p.switch_ecn.empty()) {
    std::vector<std::string> a;
    for (const auto& [k, v] : p.switch_ecn) a.push_back(k + "=" + v);
    std::cout << "# settings.switch_ecn (advice: configure it on the switches' RoCE queues; railkit never applies it): "
              << join(a, " ") << "\n";
  }
  if (p.evidence.extra.contains("single_env"))
    std::cout << "# single environment: " << p.evidence.extra["single_env"].value("reason", "") << "\n";
  std::cout << "# profile: " << res.profile_path.string() << "\n" << std::flush;
}

/// The launcher of the session that `--resume DIR` continues; none when its journal cannot be
/// read (resume_tune then says why, as the one error).
std::optional<launch::LauncherOptions> session_launcher(const std::string& dir) {
  const std::filesystem::path journal = std::filesystem::path(dir) / "journal.jsonl";
  try {
    if (!std::filesystem::exists(journal)) return std::nullopt;
    return tuner::parse_journal(tuner::read_journal(journal), std::filesystem::absolute(dir)).session.options.launcher;
  } catch (const Error&) {
    return std::nullopt;
  }
}

int run(const TuneCli& cli) {
  if (cli.list_spaces) return list_spaces();
  if (cli.list_tunables) return list_tunables();
  const bool tty = ::isatty(STDERR_FILENO) == 1;
  if (cli.budget < 0 || cli.budget > tuner::kMaxBudget)
    throw UsageError(fmt::format("--budget {}: must be between 0 and {} trials", cli.budget, tuner::kMaxBudget));
  tuner::TuneOutcome res;
  if (!cli.resume.empty()) {
    if (!cli.out.empty() || !cli.space.empty() || !cli.topo_root.empty() || !cli.bench_args.empty())
      throw UsageError("--resume DIR continues a session with its own settings: give no --out, --space, --topo-root or "
                       "bench arguments");
    tuner::ResumeOptions r;
    r.allow_inert = cli.allow_inert;
    if (cli.budget_given) r.budget = static_cast<int>(cli.budget);
    r.bench = cli.launch.bench;
    try {
      r.default_bench = sibling_program("", "railkit-bench", "--bench");
    } catch (const UsageError&) {  // none next to this railkit: only --bench can confirm the journal's
    }
    if (const auto l = session_launcher(cli.resume)) launch::preflight(*l, environ);  // before anything runs
    res = tuner::resume_tune(cli.resume, environ, std::cerr, tty, cli.quiet, r);
  } else {
    if (cli.out.empty()) throw UsageError("--out DIR is required (or --resume DIR)");
    if (cli.space.empty()) throw UsageError("--space is required: a built-in space (--list-spaces) or a space file");
    tuner::TuneOptions o;
    o.space = tuner::resolve_space(cli.space, cli.space == "ompi-coll" ? ompi_counts() : tuner::OmpiAlgorithmCounts{});
    o.strategy = cli.strategy;
    o.budget = static_cast<int>(cli.budget);
    o.seed = cli.seed;
    o.launcher = launcher_options(cli.launch, cli.bench_args);
    o.bench = bench_path(cli.launch);
    o.bench_args = cli.bench_args;
    if (auto n = tuner::take_iters(o.bench_args)) o.iters = *n;
    o.space = tuner::restrict_to(o.space, tuner::bench_collectives(o.bench_args));
    o.timeout_s = cli.timeout_s;
    o.kill_grace_s = cli.kill_grace_s;
    o.out_dir = cli.out;
    if (!cli.weights.empty()) o.weights_path = cli.weights;
    o.pairs = cli.pairs;
    o.validate_iters = cli.validate_iters;
    o.max_regression = cli.max_regression;
    o.validate = !cli.no_validate;
    for (const auto& kv : cli.baseline_env) {
      const auto eq = kv.find('=');
      if (eq == std::string::npos || eq == 0) throw UsageError("--baseline-env " + kv + ": expected NAME=VALUE");
      o.baseline_env[kv.substr(0, eq)] = kv.substr(eq + 1);
    }
    o.topo.railkit = sibling_program("", "railkit", "");  // what the nodes run: this railkit
    if (!cli.topo_root.empty()) o.topo.root = cli.topo_root;
    if (!cli.dcqcn_root.empty()) {
      tuner::DcqcnOnNodes d;
      d.railkit = o.topo.railkit;
      d.root = std::filesystem::absolute(cli.dcqcn_root).string();
      d.netdevs = cli.netdevs;
      d.priority = cli.priority;
      o.dcqcn = d;
    }
    if (!cli.emit.empty()) {
      if (cli.emit.size() != 2 || cli.emit[0] != "ompi-rules")
        throw UsageError("--emit: expected `--emit ompi-rules FILE`");
      o.emit_ompi_rules = cli.emit[1];
    }
    o.profile_name = cli.name;
    o.allow_inert = cli.allow_inert;
    launch::preflight(o.launcher, environ);  // the launcher can start the job: before anything runs
    res = tuner::run_tune(o, environ, std::cerr, tty, cli.quiet);
  }
  if (res.profile && res.emit_ompi_rules)
    write_file_atomic(*res.emit_ompi_rules, profiles::ompi_rules(res.profile->decisions, res.profile->cluster.ranks));
  print_verdict(res);
  return 0;
}

}  // namespace

std::function<int()> setup_tune(CLI::App& app) {
  auto cli = std::make_shared<TuneCli>();
  app.add_option("--space", cli->space,
                 "ompi-coll | nccl-proto | nccl-net | dcqcn | switch-ecn (-- --backend sim only), or a space file "
                 "(railkit.space/1)");
  app.add_option("--strategy", cli->strategy, tuner::strategy_names(" | "))
      ->check(CLI::IsMember(std::vector<std::string>(std::begin(tuner::kStrategies), std::end(tuner::kStrategies))))
      ->capture_default_str();
  app.add_option("--budget", cli->budget,
                 "most search trials (0 = every configuration; grid only; at most 1000000); with --resume, the "
                 "session's new budget (more trials, or fewer; journaled)")
      ->capture_default_str()
      ->each([cli](const std::string&) { cli->budget_given = true; });
  app.add_option("--seed", cli->seed, "seed of random and halving")->capture_default_str();
  add_launcher_flags(app, cli->launch);
  app.add_option("--out", cli->out, "session directory: journal.jsonl, trial results, profile.json");
  app.add_option("--resume", cli->resume,
                 "continue the session in this directory (after a crash, Ctrl-C or kill) with the bench its journal "
                 "names: the railkit-bench next to this railkit, or another one only when --bench names it again");
  app.add_option("--timeout-s", cli->timeout_s, "wall-clock limit per trial in seconds; a trial past it is recorded as timeout")
      ->check(non_negative())
      ->capture_default_str();
  app.add_option("--kill-grace-s", cli->kill_grace_s, "after a timeout, seconds between SIGTERM and SIGKILL")
      ->check(non_negative())
      ->capture_default_str();
  app.add_option("--weights", cli->weights, "message-size histogram (railkit.weights/1) weighting the objective");
  app.add_option("--pairs", cli->pairs, "A/B validation rounds (baseline, then candidates)")->capture_default_str();
  app.add_option("--validate-iters", cli->validate_iters, "-n of validation runs (default: 2 x the most the search used)");
  app.add_option("--max-regression", cli->max_regression, "largest bucket loss the single environment may have")
      ->capture_default_str();
  app.add_flag("--no-validate", cli->no_validate, "skip validation (the profile says validated: false)");
  app.add_option("--baseline-env", cli->baseline_env, "NAME=VALUE of the baseline tuned settings must beat (repeatable)")
      ->allow_extra_args(false);
  app.add_option("--dcqcn-root", cli->dcqcn_root, "root of the nodes' sysfs for DCQCN knobs (/ on real nodes)");
  app.add_option("--topo-root", cli->topo_root,
                 "captured or fixture tree (holding sys/) whose topology fingerprint the profile records "
                 "(default: `railkit topo` on each measured node)");
  app.add_option("--netdev", cli->netdevs, "RoCE netdev the DCQCN knobs apply to (repeatable; default: all)")
      ->allow_extra_args(false);
  app.add_option("--priority", cli->priority, "RoCE priority the DCQCN settings are recorded for")
      ->check(CLI::Range(0, 7))
      ->capture_default_str();
  app.add_option("--emit", cli->emit, "ompi-rules FILE: also write an Open MPI dynamic rules file")
      ->type_size(2)
      ->allow_extra_args(false);
  app.add_option("--name", cli->name, "profile name (default: the --out directory's name)");
  app.add_flag("--quiet", cli->quiet, "no progress lines");
  app.add_flag("--allow-inert", cli->allow_inert,
               "measure knobs that cannot reach the backend that runs (NCCL_* on mpi ...); the profile says inert and "
               "is never validated");
  app.add_flag("--list-spaces", cli->list_spaces, "print the built-in spaces and exit");
  app.add_flag("--list-tunables", cli->list_tunables, "print the table of tunables and exit");
  app.add_option("bench_args", cli->bench_args, "railkit-bench arguments (after --)");
  return [cli] { return run(*cli); };
}

}  // namespace railkit::app
