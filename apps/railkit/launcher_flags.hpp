#pragma once
// The flags every subcommand that launches railkit-bench shares (sweep, tune, accept):
// --launcher, --np, --ppn, --hostfile, --launcher-args, --bench.
#include <CLI/CLI.hpp>

#include <string>
#include <vector>

#include "launch/launcher.hpp"

namespace railkit::app {

/// A number > 0 (CLI11's PositiveNumber names a range of 300 digits when it refuses 0).
CLI::Validator positive();
/// A number >= 0.
CLI::Validator non_negative();

/// The launcher flags as given.
struct LauncherCli {
  std::string launcher = "mpirun";
  bool launcher_given = false;  ///< --launcher was on the command line (not the default)
  int np = 0;
  int ppn = 0;
  std::string hostfile;
  std::vector<std::string> launcher_args;
  std::string bench;
};

/// Registers the flags on `app`.
void add_launcher_flags(CLI::App& app, LauncherCli& cli);

/// The launcher options (as_root and cpus from this machine). Throws UsageError.
launch::LauncherOptions launcher_options(const LauncherCli& cli);
/// The same, fitted to the bench arguments: with --backend sim, the local launcher (one process
/// that simulates every rank); an explicit mpirun/srun or --np above 1 is a UsageError
/// (launch::launcher_for_bench).
launch::LauncherOptions launcher_options(const LauncherCli& cli, const std::vector<std::string>& bench_args);

/// `flag_value` when given, else the program `name` next to the running railkit. Throws
/// UsageError naming `flag` when that is not executable.
std::string sibling_program(const std::string& flag_value, const char* name, const char* flag);

/// --bench, or the railkit-bench next to this railkit. Throws UsageError when that is missing.
std::string bench_path(const LauncherCli& cli);

}  // namespace railkit::app
