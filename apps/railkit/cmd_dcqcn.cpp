// `railkit dcqcn show|apply|restore`: parses the flags into DcqcnCli and calls fabric/dcqcn.hpp.
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "apps/railkit/subcommands.hpp"
#include "core/error.hpp"
#include "core/json_text.hpp"
#include "fabric/dcqcn.hpp"

namespace railkit::app {
namespace {
namespace fs = std::filesystem;

/// Flags of `railkit dcqcn`, as given.
struct DcqcnCli {
  std::string root = "/";
  std::vector<std::string> netdevs;
  std::string format = "table";
  std::vector<std::string> sets;
  std::vector<int> enable_priorities;
  std::string state;
  std::string inject_write_failure;
  bool dry_run = false;
};

void add_common(CLI::App& sub, DcqcnCli& o) {
  sub.add_option("--root", o.root, "directory standing for / (a live node, a capture or a fixture)")->capture_default_str();
  sub.add_option("--netdev", o.netdevs, "netdev (repeatable); default: every netdev with DCQCN attributes");
}

int run_show(const DcqcnCli& o) {
  const SysRoot root{o.root};
  const auto devs = fabric::find_dcqcn_devices(root, o.netdevs);
  if (o.format == "json")
    std::cout << json_dump(fabric::dcqcn_show_json(root, devs), 2) << "\n";
  else
    std::cout << fabric::dcqcn_show_table(root, devs);
  return 0;
}

fabric::DcqcnSettings parse_settings(const DcqcnCli& o) {
  fabric::DcqcnSettings s;
  for (const auto& kv : o.sets) {
    const auto eq = kv.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == kv.size())
      throw UsageError(fmt::format("--set '{}': expected NAME=VALUE (roce_rp.rpg_time_reset=100)", kv));
    const std::string name = kv.substr(0, eq);
    if (s.values.count(name)) throw UsageError(fmt::format("--set {}: given twice", name));
    s.values.emplace(name, kv.substr(eq + 1));
  }
  s.enable_priorities = o.enable_priorities;
  if (s.values.empty() && s.enable_priorities.empty())
    throw UsageError("dcqcn apply: nothing to apply (give --set NAME=VALUE or --enable-priority P)");
  return s;
}

int run_apply(const DcqcnCli& o) {
  const SysRoot root{o.root};
  fabric::check_state_flags(o.state, o.netdevs);  // the same rule as restore
  const fabric::DcqcnSettings s = parse_settings(o);
  const auto devs = fabric::find_dcqcn_devices(root, o.netdevs);
  if (devs.empty())
    throw UnavailableError(fmt::format("no netdev with DCQCN attributes under {}; nothing to apply to", o.root));
  std::vector<fabric::DcqcnTarget> targets;
  for (const auto& d : devs)
    targets.push_back({d, o.state.empty() ? fabric::default_state_file(root, d.netdev) : fs::path(o.state)});
  if (o.dry_run) {
    fabric::check_dcqcn(devs, s);
    for (const auto& t : targets) {
      const auto now = fabric::read_dcqcn(root, t.device);
      for (const auto& [name, value] : s.values)
        std::cout << fmt::format("{}: would set {} {} -> {}\n", t.device.netdev, name, now.at(name), value);
      for (int p : s.enable_priorities)
        std::cout << fmt::format("{}: would enable DCQCN on priority {}\n", t.device.netdev, p);
    }
    return 0;
  }
  const auto changes = fabric::apply_dcqcn(root, targets, s, o.inject_write_failure);
  for (const auto& t : targets) {
    std::string line;
    for (const auto& c : changes)
      if (c.netdev == t.device.netdev)
        line += fmt::format("{}{} {} -> {}", line.empty() ? "" : ", ", c.name, c.before, c.after);
    std::cout << fmt::format("{} ({}): set {}; originals in {}\n", t.device.netdev, fabric::layout_name(t.device.layout),
                             line, t.state_file.string());
  }
  return 0;
}

int run_restore(const DcqcnCli& o) {
  const SysRoot root{o.root};
  const auto outcomes = fabric::restore_dcqcn_all(root, o.netdevs, o.state);  // tries every one
  if (outcomes.empty()) {
    std::cout << fmt::format("nothing to restore: no state file in {}\n", (root / "run/railkit/dcqcn").string());
    return 0;
  }
  for (const auto& r : outcomes) {
    if (r.error_code)
      std::cout << fmt::format("{}: NOT restored; originals kept in {}\n", r.netdev, r.state_file.string());
    else if (!r.restored)
      std::cout << fmt::format("nothing to restore: {} does not exist\n", r.state_file.string());
    else
      std::cout << fmt::format("{}: restored {} value(s) from {}\n", r.restored->netdev, r.restored->restored,
                               r.state_file.string());
  }
  fabric::check_restored(outcomes);  // one line naming every netdev that failed
  return 0;
}

}  // namespace

std::function<int()> setup_dcqcn(CLI::App& app) {
  auto o = std::make_shared<DcqcnCli>();
  app.require_subcommand(1);

  CLI::App* show = app.add_subcommand("show", "print the DCQCN attributes and per-priority enables of each netdev");
  add_common(*show, *o);
  show->add_option("--format", o->format, "table | json")->check(CLI::IsMember({"table", "json"}))->capture_default_str();

  CLI::App* apply = app.add_subcommand(
      "apply", "validate, save the originals, write and read back; on a failed write, write back what was set");
  add_common(*apply, *o);
  apply->add_option("--set", o->sets, "NAME=VALUE, a DCQCN tunable (roce_rp.rpg_time_reset=100); repeatable");
  apply->add_option("--enable-priority", o->enable_priorities,
                    "enable DCQCN (roce_rp and roce_np enable/<P>) on priority P; repeatable; MLNX_OFED sysfs only")
      ->check(CLI::Range(0, 7));
  apply->add_option("--state", o->state,
                    "state file of the originals of the one --netdev (default: "
                    "<root>/run/railkit/dcqcn/<netdev>.json); kept when it exists");
  apply->add_flag("--dry-run", o->dry_run, "validate and print what would change; write nothing");
  apply->add_option("--inject-write-failure", o->inject_write_failure,
                    "fire drill: the write of NAME fails, to see the rollback");

  CLI::App* restore = app.add_subcommand(
      "restore", "write back the values saved by apply, verify them and remove the state file");
  add_common(*restore, *o);
  restore->add_option("--state", o->state,
                      "state file of the one --netdev (default: <root>/run/railkit/dcqcn/<netdev>.json, or every "
                      "one there without --netdev)");
  restore->footer(
      "Every state file is checked before anything is written (its netdev, layout and root; each entry a DCQCN "
      "attribute with a value in its range and the path of that attribute's file inside the root) and every one is "
      "tried. Exit 0 all restored or nothing to restore; when any failed (its state file kept), the failures' code "
      "when they agree: 6 a refused state file or flags, 9 a write that failed, 5 a netdev without DCQCN "
      "attributes; 9 when they differ.");

  return [o, show, apply, restore]() -> int {
    if (show->parsed()) return run_show(*o);
    if (apply->parsed()) return run_apply(*o);
    if (restore->parsed()) return run_restore(*o);
    throw UsageError("dcqcn: give show, apply or restore");
  };
}

}  // namespace railkit::app
