#include "apps/railkit/launcher_flags.hpp"

#include <unistd.h>

#include <filesystem>

#include "core/error.hpp"
#include "core/launch.hpp"
#include "core/strings.hpp"
#include "launch/sim_bench.hpp"

namespace railkit::app {

namespace {

CLI::Validator number_at_least(double lowest, bool inclusive, const std::string& words) {
  return CLI::Validator(
      [=](std::string& text) -> std::string {
        double v = 0;
        std::size_t used = 0;
        try {
          v = std::stod(text, &used);
        } catch (const std::exception&) {
          used = 0;
        }
        if (used != text.size() || !(inclusive ? v >= lowest : v > lowest))
          return "'" + text + "' is not " + words;
        return "";
      },
      words);
}

}  // namespace

CLI::Validator positive() { return number_at_least(0, false, "a number > 0"); }
CLI::Validator non_negative() { return number_at_least(0, true, "a number >= 0"); }

void add_launcher_flags(CLI::App& app, LauncherCli& cli) {
  app.add_option("--launcher", cli.launcher, "mpirun | srun | local (with -- --backend sim: local, one process)")
      ->check(CLI::IsMember({"mpirun", "srun", "local"}))
      ->capture_default_str()
      ->each([&cli](const std::string&) { cli.launcher_given = true; });
  app.add_option("--np", cli.np, "ranks (mpirun -np, srun --ntasks); default: the launcher's")->check(positive());
  app.add_option("--ppn", cli.ppn, "ranks per node (mpirun -N, srun --ntasks-per-node)")->check(positive());
  app.add_option("--hostfile", cli.hostfile, "hosts file (mpirun --hostfile, srun --nodefile)");
  app.add_option("--launcher-args", cli.launcher_args, "extra launcher arguments, split at spaces (repeatable)")
      ->allow_extra_args(false);
  app.add_option("--bench", cli.bench, "railkit-bench to run (default: the one next to railkit)");
}

launch::LauncherOptions launcher_options(const LauncherCli& cli) {
  launch::LauncherOptions l;
  l.kind = launch::parse_launcher(cli.launcher);
  l.np = cli.np;
  l.ppn = cli.ppn;
  l.hostfile = cli.hostfile;
  for (const auto& a : cli.launcher_args)
    for (auto& w : split_ws(a)) l.args.push_back(w);
  l.as_root = ::geteuid() == 0;
  l.cpus = online_cpus();
  return l;
}

launch::LauncherOptions launcher_options(const LauncherCli& cli, const std::vector<std::string>& bench_args) {
  return launch::launcher_for_bench(launcher_options(cli), cli.launcher_given, bench_args);
}

std::string sibling_program(const std::string& flag_value, const char* name, const char* flag) {
  if (!flag_value.empty()) return flag_value;
  const auto dir = self_exe_dir();
  const std::string p = (dir.empty() ? std::filesystem::path(name) : dir / name).string();
  if (::access(p.c_str(), X_OK) != 0)
    throw UsageError(std::string(name) + " not found next to railkit (" + p + "); pass " + flag + " PATH");
  return p;
}

std::string bench_path(const LauncherCli& cli) { return sibling_program(cli.bench, "railkit-bench", "--bench"); }

}  // namespace railkit::app
