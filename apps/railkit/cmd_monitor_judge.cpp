// `railkit monitor judge`: reads the profiler plugin's windows (monitor::read_windows), judges them
// (monitor::judge) and writes the verdict; bad-hosts and the drain/cordon scripts are accept's.
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "apps/railkit/launcher_flags.hpp"
#include "apps/railkit/subcommands.hpp"
#include "accept/accept.hpp"
#include "accept/reports.hpp"
#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "core/json_text.hpp"
#include "monitor/judge/judge.hpp"

namespace railkit::app {
namespace {

namespace fs = std::filesystem;

/// Flags of `railkit monitor judge`, as given.
struct JudgeCli {
  std::vector<std::string> dirs;
  std::string out;
  bool report_only = false;
  std::size_t windows = 30;
  double now_unix_s = -1;
  monitor::JudgeOptions opts;
};

/// The check name bad-hosts and the scripts carry: the NIC joins nic-lag ("nic-lag.mlx5_3").
std::string accept_check_name(const monitor::Finding& f) {
  return f.nic.empty() ? f.check : f.check + "." + f.nic;
}

/// Where a finding goes in accept's report: its host, else the communicator or the job.
std::string cluster_name(const monitor::Finding& f) {
  return f.comm.empty() ? "job " + f.job + " NICs" : "job " + f.job + " comm " + f.comm;
}

/// The verdict as accept's report: a node per host named, a cluster entity per communicator or job.
accept::AcceptReport to_accept_report(const monitor::MonitorVerdict& v) {
  accept::AcceptReport r;
  for (const monitor::Finding& f : v.findings) {
    accept::AcceptCheck c;
    c.check = accept_check_name(f);
    c.measured = f.measured;
    c.expected = f.expected;
    c.rule = f.rule;
    c.verdict = f.verdict;
    c.evidence = f.reason;
    if (f.host.empty()) {
      r.cluster_entity(cluster_name(f)).checks.push_back(std::move(c));
      continue;
    }
    auto it = std::find_if(r.nodes.begin(), r.nodes.end(), [&](const accept::AcceptEntity& e) { return e.name == f.host; });
    if (it == r.nodes.end()) it = r.nodes.insert(r.nodes.end(), accept::AcceptEntity{f.host, {}});
    it->checks.push_back(std::move(c));
  }
  r.notes = v.notes;
  r.finished_unix_s = v.now_unix_s;
  return r;
}

/// The lists as accept writes them, with what the judge must add: the scripts say that they come
/// from railkit monitor judge (verdict.json beside them); a simulated verdict's lists say so, and
/// its scripts act on nothing.
std::string mark_lists(const monitor::MonitorVerdict& v, std::string text, bool script) {
  const std::string sim = v.simulated() ? "# SIMULATED (source " + v.source +
                                              "): these hosts are simulated ones, not nodes a scheduler knows" +
                                              (script ? "; this script does nothing\n" : "\n")
                                        : "";
  if (!script) return sim + text;
  const std::size_t eol = text.find('\n');
  return text.substr(0, eol + 1) +
         "# From railkit monitor judge: the evidence is in verdict.json beside this file (failed checks: late-start,\n"
         "# waits-least, nic-lag.<nic>, hang).\n" +
         sim + (v.simulated() ? "exit 0\n" : "") + text.substr(eol + 1);
}

void write_script(const fs::path& path, const std::string& text) {
  write_file_atomic(path, text);
  std::error_code ec;
  fs::permissions(path, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec | fs::perms::others_read |
                            fs::perms::others_exec, ec);
  if (ec) throw IoError(path.string() + ": cannot make it executable: " + ec.message());
}

void write_outputs(const fs::path& dir, const monitor::MonitorVerdict& v, const accept::AcceptReport& r) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw IoError("--out " + dir.string() + ": " + ec.message());
  write_file_atomic(dir / "verdict.json", json_dump(monitor::to_json(v), 2) + "\n");
  write_file_atomic(dir / "verdict.prom", monitor::render_prometheus(v));
  write_file_atomic(dir / "bad-hosts", mark_lists(v, accept::render_bad_hosts(r), false));
  write_script(dir / "drain-slurm.sh", mark_lists(v, accept::render_drain_slurm(r), true));
  write_script(dir / "cordon-k8s.sh", mark_lists(v, accept::render_cordon_k8s(r), true));
}

int run(const JudgeCli& cli) {
  if (!cli.out.empty() && fs::exists(cli.out) && !fs::is_directory(cli.out))
    throw UsageError("--out " + cli.out + ": not a directory");
  std::vector<fs::path> dirs(cli.dirs.begin(), cli.dirs.end());
  monitor::ReadOptions ro;
  ro.keep_windows = cli.windows;
  const monitor::Corpus corpus = monitor::read_windows(dirs, ro);
  for (const std::string& p : corpus.problems) std::cerr << "railkit monitor judge: note: " << p << "\n";
  if (corpus.problems_dropped > 0)
    std::cerr << fmt::format("railkit monitor judge: note: {} more input problems not listed\n", corpus.problems_dropped);
  monitor::JudgeOptions o = cli.opts;
  if (cli.now_unix_s >= 0) o.now_unix_s = cli.now_unix_s;
  const monitor::MonitorVerdict v = monitor::judge(corpus, o);
  const accept::AcceptReport r = to_accept_report(v);
  std::cout << (v.simulated() ? "SIMULATED verdict (source " + v.source + "): not a measurement\n" : "")
            << accept::render_accept_table(r) << std::flush;
  if (!cli.out.empty()) write_outputs(cli.out, v, r);
  switch (v.overall()) {
    case Verdict::Fail: return exit_code(ErrorCode::CheckFailed);
    case Verdict::Pass: return 0;
    default:
      std::cerr << fmt::format("railkit monitor judge: {}{}\n", v.reason(),
                               cli.report_only ? " (--report-only: exit 0)"
                                               : fmt::format("; exit {} (--report-only accepts it)", accept::kExitNothingJudged));
      return cli.report_only ? 0 : accept::kExitNothingJudged;
  }
}

void add_threshold_flags(CLI::App& app, JudgeCli& c) {
  monitor::JudgeOptions& o = c.opts;
  app.add_option("--late-us", o.late_us, "late-start: a start later than the peers' median by more than this (us)")
      ->check(CLI::NonNegativeNumber)->capture_default_str();
  app.add_option("--late-fraction", o.late_fraction, "late-start: in at least this share of the aligned collectives")
      ->check(CLI::Range(0.0, 1.0))
      ->check(positive())->capture_default_str();
  app.add_option("--min-aligned", o.min_aligned, "aligned collectives a rank needs to be judged")
      ->check(positive())->capture_default_str();
  app.add_option("--nic-fraction", o.nic_fraction, "nic-lag: bytes per busy second below this x the job's NIC median")
      ->check(CLI::Range(0.0, 1.0))->capture_default_str();
  app.add_option("--min-nics", o.min_nics, "nic-lag: NICs with traffic needed to judge")
      ->check(CLI::Range(2, 1 << 20))->capture_default_str();
  app.add_option("--hang-factor", o.hang_factor, "hang: oldest in-flight older than this x the usual time ...")
      ->check(positive())->capture_default_str();
  app.add_option("--hang-min-s", o.hang_min_s, "... and at least this many seconds")
      ->check(CLI::NonNegativeNumber)->capture_default_str();
  app.add_option("--silent-windows", o.silent_windows, "hang: a rank with no window for this many windows is silent")
      ->check(positive())->capture_default_str();
}

}  // namespace

std::function<int()> setup_monitor_judge(CLI::App& app) {
  auto cli = std::make_shared<JudgeCli>();
  app.add_option("--dir", cli->dirs, "directory of the plugin's *.jsonl windows (repeatable)")->required();
  app.add_option("--out", cli->out, "write verdict.json, verdict.prom, bad-hosts, drain-slurm.sh, cordon-k8s.sh here (replaced)");
  add_threshold_flags(app, *cli);
  app.add_option("--windows", cli->windows, "last windows kept per rank and communicator")
      ->check(positive())->capture_default_str();
  app.add_option("--now-unix-s", cli->now_unix_s, "judge as if now were this Unix time (tests, post-mortems)")
      ->check(CLI::NonNegativeNumber);
  app.add_flag("--report-only", cli->report_only, "exit 0 instead of 11 when nothing could be judged");
  app.footer(
      "Exit codes: 0 judged and nothing flagged; 10 a rank, NIC or communicator flagged (a check failed); 11 nothing "
      "judged (every check skipped or reported; 0 with --report-only); 6 bad input (no window in --dir, bad flag); "
      "9 a file could not be read or written. monitor/README.md section 2.");
  return [cli] { return run(*cli); };
}

}  // namespace railkit::app
