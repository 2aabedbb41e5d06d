#pragma once
// The launcher table: how railkit starts processes on the nodes under test (mpirun, srun, or
// none for one local process): every rank of a job, one process per node, or one process on one
// host, with the environment passed to every rank. Builds argv vectors only; core/launch.hpp
// runs them.
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace railkit::launch {

enum class LauncherKind { Mpirun, Srun, Local };

/// One row of the launcher table.
struct LauncherInfo {
  LauncherKind kind;
  std::string_view name;     ///< as --launcher spells it
  std::string_view program;  ///< the program it runs ("" for local)
  std::string_view package;  ///< where to get it (for the message when it is missing)
};

/// Every launcher, in the order --help lists them.
const std::vector<LauncherInfo>& launchers();
const LauncherInfo& info(LauncherKind k);

/// Parses "mpirun" | "srun" | "local". Throws UsageError.
LauncherKind parse_launcher(std::string_view name);
std::string_view launcher_name(LauncherKind k) noexcept;

/// The MPI plugin every srun command gets (`--mpi=pmix`) unless the launcher arguments carry
/// `--mpi X` or `--mpi=X`: a cluster's MpiDefault varies, so railkit never relies on it.
inline constexpr std::string_view kSrunDefaultMpi = "--mpi=pmix";

/// The CPU binding srun gets for the ranks of the mpi backend (`--backend mpi` in the bench
/// arguments) unless the launcher arguments carry `--cpu-bind`: one core each, as mpirun binds
/// two ranks. Unbound MPI ranks busy-poll; two of them on one core wait a scheduler tick each
/// (measured here: ~4000 us per 8-byte all_reduce in some runs, 0.6 us bound). Not given for
/// nccl (or auto): NCCL places its own threads near the GPU, and one core per rank would starve
/// its proxy thread.
inline constexpr std::string_view kSrunMpiCpuBind = "--cpu-bind=cores";

/// How processes are started.
struct LauncherOptions {
  LauncherKind kind = LauncherKind::Mpirun;
  int np = 0;   ///< ranks; 0 = the launcher's default
  int ppn = 0;  ///< ranks per node; 0 = the launcher's default
  std::string hostfile;
  std::vector<std::string> args;  ///< extra launcher arguments, before the program
  bool as_root = false;           ///< mpirun gets --allow-run-as-root
  int cpus = 1;                   ///< online CPUs here: mpirun gets --oversubscribe when np > cpus
  bool bind_cores = false;        ///< srun world launches get kSrunMpiCpuBind (launcher_for_bench: --backend mpi)
  /// Throws UsageError for options that make no sense for the launcher (np < 0, local with np > 1 ...).
  void validate() const;
};

/// Throws UnavailableError (exit 5) naming the launcher's program and where to get it when it
/// is not on the PATH of `envp`; checked before anything runs.
void check_available(const LauncherOptions& l, char* const* envp);

/// `program`'s first executable match in the PATH of `envp` (an empty entry is "."); "" when none.
std::string find_on_path(char* const* envp, const std::string& program);

/// Every rank of a job: `program` under the launcher with l.np ranks (l.ppn per node), `env`
/// passed to every rank (mpirun: -x NAME=VALUE; srun: --export=ALL,NAME=VALUE, or NAME alone
/// when the value holds a comma: the caller also sets the variables in the launcher's own
/// environment, which --export=ALL passes on). Every srun command here (world, per-node,
/// one-host) carries kSrunDefaultMpi unless l.args choose the plugin; srun world launches carry
/// kSrunMpiCpuBind when l.bind_cores and l.args do not choose a binding.
std::vector<std::string> world_argv(const LauncherOptions& l, const std::map<std::string, std::string>& env,
                                    const std::vector<std::string>& program);

/// One process on every node of the allocation or hostfile (mpirun --map-by ppr:1:node,
/// srun --ntasks-per-node=1).
std::vector<std::string> per_node_argv(const LauncherOptions& l, const std::vector<std::string>& program);

/// One process on `host` (empty: wherever the launcher puts it, e.g. emulated nodes on this
/// machine), with the options' hostfile (mpirun) and launcher arguments.
std::vector<std::string> one_host_argv(const LauncherOptions& l, const std::string& host,
                                       const std::vector<std::string>& program);

}  // namespace railkit::launch
