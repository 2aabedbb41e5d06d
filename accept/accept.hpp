#pragma once
// `railkit accept`: pre-flight acceptance of a set of nodes. Stages (each skippable in the suite
// file): topo lint and homogeneity per node, RDMA loopback per NIC, per-node busbw (--split node),
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
};

/// The stages in order (topo, rdma, node, rail, pair, all, isolate; those the suite skips are
/// recorded as skipped), each given what the earlier ones found, then explain_rails. railkit-bench
/// runs through `bench`; `railkit topo` and `railkit rdma-loopback` through o.launcher with
/// `envp`. `fraction_why` says where the suite's peer_fraction came from (accept.json's `rules`).
/// Needs options run_accept accepts (at least one node). Throws InterruptedError when a signal
/// interrupted a launch.
AcceptReport run_stages(const AcceptOptions& o, const std::string& fraction_why, BenchRunner& bench, char* const* envp,
                        std::ostream& progress);

/// Runs the suite with `bench`: validates the options, picks the peer fraction (emulated nodes
/// oversubscribing the CPUs use the suite's oversubscribed_peer_fraction unless it gave
/// peer_fraction), run_stages, then the table to `out` and the reports to out_dir (and junit).
/// Returns 0 when everything passed, 10 (CheckFailed) otherwise. Throws UsageError for bad
/// options, IoError when the reports cannot be written, InterruptedError (no report written)
/// when a signal interrupted a launch.
int run_accept(const AcceptOptions& o, BenchRunner& bench, char* const* envp, std::ostream& out, std::ostream& progress);

/// run_accept with the real runner: railkit-bench under o.launcher (LaunchBenchRunner), results
/// and logs in out_dir/bench/.
int run_accept(const AcceptOptions& o, char* const* envp, std::ostream& out, std::ostream& progress);

}  // namespace railkit::accept
