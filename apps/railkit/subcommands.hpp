#pragma once
// Setup functions of the `railkit` subcommands defined outside main.cpp. Each registers its
// flags on the subcommand's CLI::App into a plain options struct and returns the action to run.
#include <CLI/CLI.hpp>

#include <functional>
#include <string>
#include <vector>

namespace railkit::app {

/// `railkit accept`: acceptance of a set of nodes, naming the guilty node (apps/railkit/cmd_accept.cpp).
std::function<int()> setup_accept(CLI::App& app);

/// `railkit dcqcn show|apply|restore`: DCQCN attributes of the node's netdevs (apps/railkit/cmd_dcqcn.cpp).
std::function<int()> setup_dcqcn(CLI::App& app);

/// `railkit history add|show|check|rebuild`: results over time, regressions against the run-to-run band (apps/railkit/cmd_history.cpp).
std::function<int()> setup_history(CLI::App& app);

/// `railkit import`: nccl-tests, IMB-MPI1 and OSU logs as results documents (apps/railkit/cmd_import.cpp).
std::function<int()> setup_import(CLI::App& app);

/// `railkit job`: a batch script or MPIJob manifest for a bench or accept run (apps/railkit/cmd_job.cpp).
std::function<int()> setup_job(CLI::App& app);

/// `railkit monitor node|judge`: node counters and the verdicts on a running job (apps/railkit/cmd_monitor.cpp).
std::function<int()> setup_monitor(CLI::App& app);
/// `railkit monitor node` (apps/railkit/cmd_monitor_node.cpp).
std::function<int()> setup_monitor_node(CLI::App& app);
/// `railkit monitor judge` (apps/railkit/cmd_monitor_judge.cpp).
std::function<int()> setup_monitor_judge(CLI::App& app);

/// `railkit sweep`: runs a matrix of railkit-bench configurations (apps/railkit/cmd_sweep.cpp).
std::function<int()> setup_sweep(CLI::App& app);

/// `railkit report`: compares results documents or sweep directories (apps/railkit/cmd_report.cpp).
std::function<int()> setup_report(CLI::App& app);

/// `railkit nccl-log`: summarises NCCL debug logs as text or JSON (apps/railkit/cmd_nccl_log.cpp).
std::function<int()> setup_nccl_log(CLI::App& app);

/// `railkit profile show|check|env|exec|export`: consumes a profile document (apps/railkit/cmd_profile.cpp).
std::function<int()> setup_profile(CLI::App& app);

/// `railkit rdma-loopback`: ib_write_bw loopback per RDMA NIC against its line rate (apps/railkit/cmd_rdma_loopback.cpp).
std::function<int()> setup_rdma_loopback(CLI::App& app);

/// `railkit rdma-pair`: one node's side of ib_write_bw between two nodes (apps/railkit/cmd_rdma_loopback.cpp).
std::function<int()> setup_rdma_pair(CLI::App& app);

/// `railkit tune`: searches a space of settings and writes a validated profile (apps/railkit/cmd_tune.cpp).
std::function<int()> setup_tune(CLI::App& app);

/// Prints warnings to stderr as "railkit: warning: ...", repeats of one kind as one line with a count.
void warn_all(const std::vector<std::string>& lines);

}  // namespace railkit::app
