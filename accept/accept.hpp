#pragma once
// `railkit accept`: pre-flight acceptance of a set of nodes. Stages (each skippable in the suite
// file): topo lint and homogeneity per node, RDMA loopback per NIC, RDMA between the nodes of each
// pair (same rail), per-node busbw (--split node),
// per-rail busbw (--split rail), pairs by the circle method (--split nodes:...), the whole set, and
// isolation (pair evidence or bisection) naming the guilty node(s) or link(s). Documented in
// accept/README.md; reports: a table, accept.json (`railkit.accept/1`), JUnit XML,
// a Prometheus textfile and good-hosts.
//
// The parts: suite.hpp (nodes, suite file, bench arguments), rules.hpp (judging), schedule.hpp
// (circle rounds, pair isolation, bisection), runner.hpp (the injected bench runner),
// topo_rdma.hpp and stages.hpp (the stages), reports.hpp (the report and its printers).
#include <filesystem>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "accept/reports.hpp"
#include "accept/rules.hpp"
#include "accept/runner.hpp"
#include "accept/rdma_pair.hpp"
#include "accept/schedule.hpp"
#include "accept/stages.hpp"
#include "accept/suite.hpp"
#include "accept/topo_rdma.hpp"
#include "core/profile.hpp"
#include "launch/launcher.hpp"

namespace railkit::accept {

using launch::LauncherKind;
using launch::LauncherOptions;

/// Everything `railkit accept` needs.
struct AcceptOptions {
  LauncherOptions launcher;
  std::vector<AcceptNode> nodes;
  int emulated_rpn = 0;          ///< > 0: nodes are emulated, railkit-bench gets --ranks-per-node
  std::string bench;             ///< railkit-bench path
  std::string railkit;           ///< railkit path (for `topo` on each node)
  std::vector<std::string> bench_args;  ///< user's, after the defaults (which they override)
  std::filesystem::path out_dir;
  std::string junit;             ///< "" = none
  std::optional<ProfileDocument> profile;
  AcceptSuite suite;
  std::filesystem::path sysfs_root{"/"};  ///< where RDMA devices are looked for (sys/class/infiniband)
  double timeout_s = 600;        ///< per launch
  bool report_only = false;      ///< a run that judged nothing exits 0 instead of kExitNothingJudged
  bool force = false;            ///< a non-empty out_dir is used: accept's own outputs there are replaced
  /// The backend railkit-bench will run (launch::expected_backend: "mpi", "nccl", "sim"); "" when
  /// it cannot be known before the first launch. A profile whose knobs cannot reach it is refused.
  std::string expected_backend;
  std::string expected_backend_how;  ///< how it was known, for messages
  bool allow_inert = false;      ///< use such a profile anyway (its expectations applied, a note says why they mean little)
};

/// The knobs of a profile (settings.env names, and its DCQCN attributes) that cannot change a
/// measurement on `backend` with `nodes` real nodes (emulated nodes share one host: no fabric).
std::vector<std::string> profile_inert_knobs(const ProfileDocument& p, const std::string& backend, bool crosses_fabric);

/// Exit code of a run that judged nothing (its verdict reported or skipped: measured, but no rule
/// judged any measurement) without --report-only. 10 (CheckFailed) means a check ran and failed;
/// this is not that: nothing is known to be wrong, and nothing is known to be right.
inline constexpr int kExitNothingJudged = 11;

/// What railkit accept writes in --out: replaced under --force, nothing else there is touched.
inline constexpr const char* kAcceptOutputs[] = {"accept.json",    "accept.prom",   "good-hosts", "bad-hosts",
                                                  "drain-slurm.sh", "cordon-k8s.sh", "bench",      "topo",
                                                  "rdma",           "rdma-pair"};

/// The stages in order (topo, rdma, rdma-pair, node, rail, pair, all, isolate; those the suite skips are
/// recorded as skipped), each given what the earlier ones found, then explain_rails. railkit-bench
/// runs through `bench`; `railkit topo` and `railkit rdma-loopback` through o.launcher with
/// `envp`. `fraction_why` says where the suite's peer_fraction came from (accept.json's `rules`).
/// The report's notes say what its verdicts rest on: a profile measured at another scale (its
/// expectations reported, not applied), a stage that could not apply.
/// Needs options run_accept accepts (at least one node). Throws InterruptedError when a signal
/// interrupted a launch.
AcceptReport run_stages(const AcceptOptions& o, const std::string& fraction_why, BenchRunner& bench, char* const* envp,
                        std::ostream& progress);

/// Runs the suite with `bench`: validates the options (out_dir must be absent or empty unless
/// o.force; then accept's own outputs there, kAcceptOutputs, are removed first), picks the peer
/// fraction (emulated nodes oversubscribing the CPUs use the suite's oversubscribed_peer_fraction
/// unless it gave peer_fraction), run_stages, then the table to `out` and the reports to out_dir
/// (and junit). Returns 0 when the run passed (AcceptReport::verdict), 10 (CheckFailed) when a
/// check failed, kExitNothingJudged when nothing was judged (0 with o.report_only), saying why
/// on `progress`. Throws UsageError for bad options, IoError when the reports cannot be written,
/// InterruptedError (no report written) when a signal interrupted a launch.
int run_accept(const AcceptOptions& o, BenchRunner& bench, char* const* envp, std::ostream& out, std::ostream& progress);

/// run_accept with the real runner: railkit-bench under o.launcher (LaunchBenchRunner), results
/// and logs in out_dir/bench/.
int run_accept(const AcceptOptions& o, char* const* envp, std::ostream& out, std::ostream& progress);

}  // namespace railkit::accept
