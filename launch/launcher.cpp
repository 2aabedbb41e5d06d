#include "launch/launcher.hpp"

#include <unistd.h>

#include <algorithm>
#include <filesystem>

#include <fmt/format.h>

#include "core/env.hpp"
#include "core/error.hpp"
#include "core/strings.hpp"

namespace railkit::launch {

const std::vector<LauncherInfo>& launchers() {
  static const std::vector<LauncherInfo> table{
      {LauncherKind::Mpirun, "mpirun", "mpirun", "Open MPI (Debian: openmpi-bin)"},
      {LauncherKind::Srun, "srun", "srun", "Slurm (Debian: slurm-client)"},
      {LauncherKind::Local, "local", "", ""},
  };
  return table;
}

const LauncherInfo& info(LauncherKind k) {
  for (const LauncherInfo& i : launchers())
    if (i.kind == k) return i;
  return launchers().front();
}

LauncherKind parse_launcher(std::string_view name) {
  for (const LauncherInfo& i : launchers())
    if (i.name == name) return i.kind;
  throw UsageError("--launcher " + std::string(name) + ": expected mpirun, srun or local");
}

std::string_view launcher_name(LauncherKind k) noexcept { return info(k).name; }

void LauncherOptions::validate() const {
  if (np < 0) throw UsageError(fmt::format("--np {}: must be >= 1", np));
  if (ppn < 0) throw UsageError(fmt::format("--ppn {}: must be >= 1", ppn));
  if (kind == LauncherKind::Local) {
    if (np > 1) throw UsageError(fmt::format("--np {}: --launcher local runs one process; use mpirun or srun", np));
    if (ppn > 0) throw UsageError("--ppn needs --launcher mpirun or srun");
    if (!hostfile.empty()) throw UsageError("--hostfile needs --launcher mpirun or srun");
    if (!args.empty()) throw UsageError("--launcher-args needs --launcher mpirun or srun");
  }
  if (np > 0 && ppn > np) throw UsageError(fmt::format("--ppn {}: more than --np {}", ppn, np));
}

std::string find_on_path(char* const* envp, const std::string& program) {
  for (const std::string& dir : split(env_value(envp, "PATH"), ':')) {
    const std::filesystem::path p = std::filesystem::path(dir.empty() ? "." : dir) / program;
    if (::access(p.c_str(), X_OK) == 0) return p.string();
  }
  return "";
}

void check_available(const LauncherOptions& l, char* const* envp) {
  const LauncherInfo& i = info(l.kind);
  if (i.program.empty() || !find_on_path(envp, std::string(i.program)).empty()) return;
  throw UnavailableError(fmt::format("--launcher {}: {} is not on the PATH (install {})", i.name, i.program, i.package));
}

namespace {

/// mpirun and the flag it needs as root.
std::vector<std::string> mpirun_prefix(const LauncherOptions& l) {
  std::vector<std::string> a{"mpirun"};
  if (l.as_root) a.push_back("--allow-run-as-root");
  return a;
}

/// Whether `args` carry option `name` (`name`, `name=...`; srun also takes `_` for `-` in a name).
bool names_option(const std::vector<std::string>& args, std::string_view name) {
  std::string underscored(name);
  std::replace(underscored.begin() + 2, underscored.end(), '-', '_');
  return std::any_of(args.begin(), args.end(), [&](const std::string& a) {
    for (const std::string_view n : {name, std::string_view(underscored)})
      if (a == n || (a.size() > n.size() && a.starts_with(n) && a[n.size()] == '=')) return true;
    return false;
  });
}

/// srun's MPI plugin: --mpi=pmix unless the launcher arguments choose one (--mpi X, --mpi=X).
/// Passed explicitly because a cluster's MpiDefault varies (often none, which leaves Open MPI's
/// ranks as singletons).
std::vector<std::string> srun_mpi(const LauncherOptions& l) {
  if (names_option(l.args, "--mpi")) return {};
  return {std::string(kSrunDefaultMpi)};
}

}  // namespace

std::vector<std::string> world_argv(const LauncherOptions& l, const std::map<std::string, std::string>& env,
                                    const std::vector<std::string>& program) {
  std::vector<std::string> argv;
  switch (l.kind) {
    case LauncherKind::Mpirun:
      argv = mpirun_prefix(l);
      if (l.hostfile.empty() || l.np > l.cpus) argv.push_back("--oversubscribe");
      if (l.np > 0) argv.insert(argv.end(), {"-np", std::to_string(l.np)});
      if (l.ppn > 0) argv.insert(argv.end(), {"-N", std::to_string(l.ppn)});
      if (!l.hostfile.empty()) argv.insert(argv.end(), {"--hostfile", l.hostfile});
      argv.insert(argv.end(), l.args.begin(), l.args.end());
      for (const auto& [k, v] : env) argv.insert(argv.end(), {"-x", k + "=" + v});
      break;
    case LauncherKind::Srun: {
      argv.push_back("srun");
      if (l.np > 0) argv.push_back("--ntasks=" + std::to_string(l.np));
      if (l.ppn > 0) argv.push_back("--ntasks-per-node=" + std::to_string(l.ppn));
      if (!l.hostfile.empty()) argv.push_back("--nodefile=" + l.hostfile);
      for (auto& a : srun_mpi(l)) argv.push_back(std::move(a));
      if (l.bind_cores && !names_option(l.args, "--cpu-bind")) argv.emplace_back(kSrunMpiCpuBind);
      argv.insert(argv.end(), l.args.begin(), l.args.end());
      std::string exp = "--export=ALL";
      for (const auto& [k, v] : env) exp += "," + (v.find(',') == std::string::npos ? k + "=" + v : k);
      argv.push_back(exp);
      break;
    }
    case LauncherKind::Local: break;
  }
  argv.insert(argv.end(), program.begin(), program.end());
  return argv;
}

std::vector<std::string> per_node_argv(const LauncherOptions& l, const std::vector<std::string>& program) {
  std::vector<std::string> a;
  switch (l.kind) {
    case LauncherKind::Local: break;
    case LauncherKind::Mpirun:
      a = mpirun_prefix(l);
      if (!l.hostfile.empty()) a.insert(a.end(), {"--hostfile", l.hostfile});
      a.insert(a.end(), {"--map-by", "ppr:1:node"});
      a.insert(a.end(), l.args.begin(), l.args.end());
      break;
    case LauncherKind::Srun:
      a = {"srun", "--ntasks-per-node=1"};
      if (!l.hostfile.empty()) a.insert(a.end(), {"--nodefile", l.hostfile});
      for (auto& m : srun_mpi(l)) a.push_back(std::move(m));
      a.insert(a.end(), l.args.begin(), l.args.end());
      break;
  }
  a.insert(a.end(), program.begin(), program.end());
  return a;
}

std::vector<std::string> one_host_argv(const LauncherOptions& l, const std::string& host,
                                       const std::vector<std::string>& program) {
  std::vector<std::string> argv;
  switch (l.kind) {
    case LauncherKind::Mpirun:
      argv = mpirun_prefix(l);
      argv.insert(argv.end(), {"-np", "1"});
      if (!l.hostfile.empty()) argv.insert(argv.end(), {"--hostfile", l.hostfile});
      if (!host.empty()) argv.insert(argv.end(), {"--host", host});
      argv.insert(argv.end(), l.args.begin(), l.args.end());
      break;
    case LauncherKind::Srun:
      argv.insert(argv.end(), {"srun", "--ntasks=1", "--nodes=1"});
      if (!host.empty()) argv.push_back("--nodelist=" + host);
      for (auto& a : srun_mpi(l)) argv.push_back(std::move(a));
      argv.insert(argv.end(), l.args.begin(), l.args.end());
      break;
    case LauncherKind::Local: break;
  }
  argv.insert(argv.end(), program.begin(), program.end());
  return argv;
}

}  // namespace railkit::launch
