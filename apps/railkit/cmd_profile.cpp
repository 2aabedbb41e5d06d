// `railkit profile show|check|env|exec|export`: parses the flags into ProfileCli, loads the profile
// (core/profile.hpp validates it: allowlist, schema version, types, ranges) and calls
// profiles/consume.hpp and profiles/check.hpp.
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "apps/railkit/subcommands.hpp"
#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "core/profile.hpp"
#include "core/strings.hpp"
#include "profiles/check.hpp"
#include "profiles/consume.hpp"

namespace railkit::app {
namespace {

/// Flags of `railkit profile`, as given.
struct ProfileCli {
  std::string profile;
  std::string shell = "bash";
  std::string format;
  std::string out;
  std::string name;
  std::string root = "/";
  std::string nccl_version;
  bool force = false;
  std::vector<std::string> command;
};

void warn(const std::string& line) { std::cerr << "railkit: warning: " << printable(line, 400) << "\n"; }

/// Loads and validates the profile; prints each loader warning.
ProfileDocument load(const ProfileCli& o) {
  ProfileDocument p = load_profile(o.profile);
  warn_all(p.warnings);
  return p;
}

/// Prints the warnings, then writes the text to --out (atomically) or stdout.
int emit(const ProfileCli& o, const profiles::Rendered& r) {
  warn_all(r.warnings);
  if (o.out.empty() || o.out == "-") {
    std::cout << r.text << std::flush;
  } else {
    std::error_code ec;
    if (std::filesystem::equivalent(write_target(o.out), o.profile, ec))
      throw UsageError(fmt::format("--out {}: that is the profile being read ({}); write to another file", o.out,
                                   o.profile));
    write_file_atomic(o.out, r.text);
    std::cerr << fmt::format("railkit: wrote {}\n", o.out);
  }
  return 0;
}

std::vector<profiles::CheckItem> compare(const ProfileCli& o, const ProfileDocument& p) {
  std::error_code ec;  // a typo in --root is bad input, as topo says; exec must not run unchecked
  if (!std::filesystem::is_directory(o.root, ec))
    throw UsageError("--root " + o.root + ": not a directory (the node's / or a capture or fixture tree)");
  const std::optional<std::string> nccl = o.nccl_version.empty() ? std::nullopt : std::optional(o.nccl_version);
  return profiles::check_profile(p, profiles::probe_node_facts(o.root, nccl));
}

int run_show(const ProfileCli& o) {
  const profiles::Rendered r = profiles::show_profile(load(o));
  warn_all(r.warnings);
  std::cout << r.text << std::flush;
  return 0;
}

int run_check(const ProfileCli& o) {
  const ProfileDocument p = load(o);
  const auto items = compare(o, p);
  for (const auto& line : profiles::check_lines(items)) std::cout << line << "\n";
  const auto differs = std::count_if(items.begin(), items.end(),
                                     [](const auto& i) { return i.status == profiles::CheckItem::Status::Differs; });
  if (differs > 0) {
    std::cout << fmt::format("{} difference(s) between the profile's cluster and this node\n", differs) << std::flush;
    return exit_code(ErrorCode::CheckFailed);
  }
  std::cout << "the profile's cluster matches this node (in what both record)\n" << std::flush;
  return 0;
}

int run_env(const ProfileCli& o) {
  const ProfileDocument p = load(o);
  return emit(o, profiles::env_lines(p, profiles::parse_shell(o.shell)));
}

int run_export(const ProfileCli& o) {
  const ProfileDocument p = load(o);
  const profiles::Rendered r = profiles::export_profile(p, profiles::parse_export_format(o.format), {o.name});
  if (!r.empty.empty()) {  // nothing for the tool: say so, write nothing (an --out file is left as it was)
    warn_all(r.warnings);
    std::cerr << fmt::format("railkit: {}: --format {}: nothing to export: {}; nothing written\n",
                             profiles::display(o.profile), o.format, r.empty);
    return exit_code(ErrorCode::CheckFailed);
  }
  return emit(o, r);
}

int run_exec(const ProfileCli& o) {
  if (o.command.empty()) throw UsageError("profile exec: give the command after -- (railkit profile exec P -- CMD ARGS...)");
  const ProfileDocument p = load(o);
  const auto items = compare(o, p);
  if (profiles::has_mismatch(items)) {
    std::size_t n = 0;
    for (std::size_t i = 0; i < items.size(); ++i) {
      if (items[i].status != profiles::CheckItem::Status::Differs) continue;
      ++n;
      const auto lines = profiles::check_lines({items[i]});  // the item, then each differing fact
      for (std::size_t k = 0; k < lines.size(); ++k) {
        if (o.force)
          warn(k == 0 ? lines[k] + " (running anyway: --force)" : lines[k]);
        else
          std::cerr << "railkit: " << lines[k] << "\n";
      }
    }
    if (!o.force)
      throw Error(ErrorCode::CheckFailed,
                  fmt::format("{}: {} difference(s) between the profile's cluster and this node; not running {} "
                              "(give --force to run anyway)",
                              o.profile, n, profiles::display(o.command.front())));
  }
  for (const auto& [k, v] : p.env)  // the profile's values override the inherited ones
    if (::setenv(k.c_str(), v.c_str(), 1) != 0)
      throw Error(ErrorCode::Internal, fmt::format("setenv {}: {}", k, std::strerror(errno)));
  std::vector<char*> argv;
  for (const auto& a : o.command) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  std::cout.flush();
  std::cerr.flush();
  ::execvp(argv[0], argv.data());  // returns only on failure; never through a shell
  const int err = errno;
  std::cerr << fmt::format("railkit: error: {}: {}\n", profiles::display(o.command.front()),
                           err == ENOENT ? "command not found" : std::strerror(err));
  return err == ENOENT ? 127 : 126;
}

void add_profile(CLI::App& sub, ProfileCli& o) {
  sub.add_option("profile", o.profile, "the profile document (profile.json)")->required();
}

void add_node(CLI::App& sub, ProfileCli& o) {
  sub.add_option("--root", o.root, "directory standing for / of the node to compare with (a capture or fixture)")
      ->capture_default_str();
  sub.add_option("--nccl-version", o.nccl_version,
                 "this node's NCCL (X.Y); default: from the name of libnccl.so.X.Y.Z in the library directories");
}

void add_out(CLI::App& sub, ProfileCli& o) {
  sub.add_option("--out", o.out, "write to FILE (atomically) instead of stdout");
}

}  // namespace

std::function<int()> setup_profile(CLI::App& app) {
  auto o = std::make_shared<ProfileCli>();
  app.require_subcommand(1);

  CLI::App* show = app.add_subcommand("show", "summary: cluster, settings, decisions, expectations, evidence table");
  add_profile(*show, *o);

  CLI::App* check = app.add_subcommand(
      "check", "what differs between the profile's cluster and this node (fingerprint, naming each differing fact "
               "the profile records; NCCL, GPU and NIC models); exit 10 on a difference");
  add_profile(*check, *o);
  add_node(*check, *o);

  CLI::App* env = app.add_subcommand("env", "settings.env as shell lines (export NAME='value')");
  add_profile(*env, *o);
  env->add_option("--shell", o->shell, "bash | zsh | fish | dotenv")
      ->check(CLI::IsMember(profiles::shell_names()))
      ->capture_default_str();
  add_out(*env, *o);

  CLI::App* exec = app.add_subcommand(
      "exec", "check, then run CMD (after --) with settings.env set, directly (no shell); refuses on a difference");
  add_profile(*exec, *o);
  add_node(*exec, *o);
  exec->add_flag("--force", o->force, "run even when the profile's cluster differs from this node (differences become warnings)");
  exec->add_option("command", o->command, "the command and its arguments (after --)");

  CLI::App* exp = app.add_subcommand(
      "export", "the profile for Kubernetes, Slurm, nccl.conf, NCCL's example tuner or Open MPI; exit 10 when it would "
                "be empty");
  add_profile(*exp, *o);
  exp->add_option("--format", o->format, "k8s-configmap | k8s-env | slurm | nccl-conf | nccl-tuner-csv | ompi-rules")
      ->check(CLI::IsMember(profiles::export_format_names()))
      ->required();
  exp->add_option("--name", o->name, "k8s-configmap: the ConfigMap's name (default: railkit-<profile name>)");
  add_out(*exp, *o);

  return [o, show, check, env, exec, exp]() -> int {
    if (show->parsed()) return run_show(*o);
    if (check->parsed()) return run_check(*o);
    if (env->parsed()) return run_env(*o);
    if (exec->parsed()) return run_exec(*o);
    if (exp->parsed()) return run_export(*o);
    throw UsageError("profile: give show, check, env, exec or export");
  };
}

void warn_all(const std::vector<std::string>& lines) {
  for (const std::string& line : summarize_warnings(lines)) std::cerr << "railkit: warning: " << line << "\n";
}

}  // namespace railkit::app
