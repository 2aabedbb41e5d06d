#pragma once
// The launcher check that `railkit sweep`, `tune` and `accept` run before the first
// configuration: the launcher on the PATH and, for srun, a Slurm controller that answers and a
// job that starts with the run's launcher options. Each failure is one line naming what is wrong.
#include <string>
#include <vector>

#include "launch/launcher.hpp"

namespace railkit::launch {

/// Limits of the checks, in seconds.
struct PreflightOptions {
  double ping_timeout_s = 30;  ///< `scontrol ping`
  double job_timeout_s = 60;   ///< the trial job (it may wait that long for resources)
};

/// The trial job of an srun run: `true` on every rank of the run's job (world_argv with the
/// run's ranks, ranks per node, node file and launcher arguments, no environment).
std::vector<std::string> srun_trial_argv(const LauncherOptions& l);

/// Checks, before anything runs, that `l` is valid (validate(): UsageError) and can start the
/// run's processes with the environment `envp`: the launcher's program on the PATH
/// (check_available); for srun also `scontrol ping` (skipped when scontrol is not on the PATH;
/// the trial job then answers for the controller) and srun_trial_argv under job_timeout_s. Throws UnavailableError (exit 5) with one line:
///   --launcher srun: srun is not on the PATH (install ...)
///   --launcher srun: no Slurm controller answers (SLURM_CONF=...): <what scontrol said>
///   --launcher srun: a job with the run's launcher options cannot start (<argv>): <what srun said>
/// and InterruptedError when a signal ends a check. mpirun and local: check_available only.
void preflight(const LauncherOptions& l, char* const* envp, const PreflightOptions& o = {});

}  // namespace railkit::launch
