// DCQCN apply and restore (the safety contract of fabric/dcqcn.hpp).
#include <algorithm>
#include <cerrno>
#include <cstring>
#include <set>

#include <fmt/format.h>

#include "fabric/dcqcn.hpp"
#include "fabric/dcqcn_detail.hpp"

namespace railkit::fabric {
namespace fs = std::filesystem;
using namespace detail;

std::vector<std::string> dcqcn_problems(const DcqcnDevice& d, const DcqcnSettings& s) {
  std::vector<std::string> out;
  for (const auto& [name, value] : s.values) {
    const Tunable* t = find_tunable(name);
    if (!is_dcqcn_tunable(t)) {
      out.push_back(fmt::format("{}: not a DCQCN attribute (roce_rp.<attr> or roce_np.<attr> of the tunables table)",
                                name));
      continue;
    }
    if (auto why = tunable_value_problem(*t, value); !why.empty()) {
      out.push_back(fmt::format("{}={}: {}", name, value, why));
      continue;
    }
    if (!d.files.count(name)) {
      const std::string where = d.layout == DcqcnLayout::Debugfs && debugfs_name(name).empty()
                                    ? "the upstream debugfs layout has no such file"
                                    : fmt::format("not present in {}", d.dir.string());
      out.push_back(fmt::format("{}={}: {} of {}", name, value, where, d.netdev));
    }
  }
  for (int p : s.enable_priorities) {
    if (p < 0 || p >= kPriorities) {
      out.push_back(fmt::format("enable priority {}: not in 0..7", p));
      continue;
    }
    if (d.layout == DcqcnLayout::Debugfs) {
      out.push_back(fmt::format("enable priority {}: {} uses the upstream debugfs layout, which has no "
                                "per-priority enable",
                                p, d.netdev));
      continue;
    }
    for (auto side : kSides)
      if (!d.files.count(dcqcn_enable_name(side, p)))
        out.push_back(fmt::format("enable priority {}: {}/{}/enable/{} of {} is not present", p, d.dir.string(), side,
                                  p, d.netdev));
  }
  return out;
}

void check_dcqcn(const std::vector<DcqcnDevice>& devs, const DcqcnSettings& s) {
  std::vector<std::string> problems;  // in order, each once (a bad value is bad for every netdev)
  for (const auto& d : devs)
    for (auto& p : dcqcn_problems(d, s))
      if (std::find(problems.begin(), problems.end(), p) == problems.end()) problems.push_back(std::move(p));
  if (problems.empty()) return;
  constexpr std::size_t kShown = 3;
  std::string msg = "nothing written: ";
  for (std::size_t i = 0; i < problems.size() && i < kShown; ++i) msg += (i ? "; " : "") + problems[i];
  if (problems.size() > kShown) msg += fmt::format(" (and {} more)", problems.size() - kShown);
  throw UsageError(msg);
}

std::vector<DcqcnChange> apply_dcqcn(const SysRoot& root, const std::vector<DcqcnTarget>& targets,
                                     const DcqcnSettings& s, const std::string& inject_write_failure) {
  // 1. Validate everything.
  std::vector<DcqcnDevice> devs;
  for (const auto& t : targets) devs.push_back(t.device);
  check_dcqcn(devs, s);
  if (!inject_write_failure.empty() && !is_dcqcn_tunable(find_tunable(inject_write_failure)) &&
      !is_enable_name(inject_write_failure))
    throw UsageError(fmt::format("nothing written: --inject-write-failure {}: not a DCQCN attribute", inject_write_failure));
  std::set<fs::path> states;
  for (const auto& t : targets)
    if (!states.insert(t.state_file).second)
      throw UsageError(fmt::format("nothing written: two netdevs share the state file {}", t.state_file.string()));

  // 2. Plan and read the current values.
  std::vector<Planned> plan;
  for (std::size_t ti = 0; ti < targets.size(); ++ti) {
    const DcqcnDevice& d = targets[ti].device;
    auto add = [&](const std::string& name, const std::string& value) {
      const fs::path file = d.files.at(name);
      auto r = read_value(root.dir, file);
      if (!r.value)
        throw IoError(fmt::format("nothing written: cannot read {} ({}): {}", (root / file).string(), name, r.reason));
      plan.push_back({ti, name, file, value, std::move(*r.value)});
    };
    for (const auto& [name, value] : s.values) add(name, canonical_value(name, value));
    for (int p : s.enable_priorities)
      for (auto side : kSides) add(dcqcn_enable_name(side, p), "1");
  }

  // 3. Save the originals.
  for (std::size_t ti = 0; ti < targets.size(); ++ti) {
    try {
      save_state(root, targets[ti], plan, ti);
    } catch (const Error& e) {
      if (e.code() == ErrorCode::Usage) throw UsageError(std::string("nothing written: ") + e.what());
      throw IoError(std::string("nothing written: ") + e.what());
    }
  }

  // 4. Write; on a failure, write back everything this call wrote.
  std::vector<DcqcnChange> done;
  for (std::size_t i = 0; i < plan.size(); ++i) {
    const Planned& p = plan[i];
    const fs::path abs = root / p.file;
    const std::string why = p.name == inject_write_failure
                                ? std::string(std::strerror(EIO)) + " (injected by --inject-write-failure)"
                                : write_verified(root.dir, p.file, p.value);
    if (why.empty()) {
      done.push_back({targets[p.target].device.netdev, p.name, p.file, p.before, p.value});
      continue;
    }
    std::vector<std::string> lost;
    for (std::size_t k = i + 1; k-- > 0;) {  // the failing entry too: a write may have half happened
      const Planned& q = plan[k];
      if (k == i) {  // the failing entry: write back only when it changed (a failed open changes nothing)
        const auto now = read_value(root.dir, q.file);
        if (now.value && same_value(*now.value, q.before)) continue;
      }
      if (auto w = write_verified(root.dir, q.file, q.before); !w.empty())
        lost.push_back(fmt::format("{} ({})", (root / q.file).string(), w));
    }
    std::string msg = fmt::format("cannot write {}={} to {}: {}; ", p.name, p.value, abs.string(), why);
    if (lost.empty())
      msg += fmt::format("wrote back the {} value(s) set before it", i);
    else
      msg += fmt::format("could NOT write back {} of {} value(s): {}", lost.size(), i + 1, lost.front());
    msg += fmt::format("; originals kept in {}", targets[p.target].state_file.string());
    throw IoError(msg);
  }
  return done;
}

std::vector<DcqcnChange> apply_dcqcn(const SysRoot& root, const std::string& netdev, const DcqcnSettings& s,
                                     const fs::path& state_file) {
  auto devs = find_dcqcn_devices(root, {netdev});
  DcqcnTarget t{std::move(devs.front()), state_file.empty() ? default_state_file(root, netdev) : state_file};
  return apply_dcqcn(root, std::vector<DcqcnTarget>{std::move(t)}, s);
}

std::optional<DcqcnRestore> restore_dcqcn(const SysRoot& root, const std::string& netdev, const fs::path& state_file) {
  std::error_code ec;
  if (!fs::exists(state_file, ec)) return std::nullopt;
  const State s = load_state(state_file);
  DcqcnDevice d;
  try {
    d = find_dcqcn_devices(root, {netdev}).at(0);
    check_state(state_file, s, absolute_root(root), d, "");
  } catch (const Error& e) {
    rethrow_prefixed(e, "nothing restored: ");
  }
  DcqcnRestore out{s.netdev, 0};
  std::vector<std::string> failed;
  for (const auto& e : s.entries) {
    const fs::path& file = d.files.at(e.name);  // the entry's path, resolved (check_state)
    const std::string value = canonical_value(e.name, e.old);
    if (auto why = write_verified(root.dir, file, value); !why.empty())
      failed.push_back(fmt::format("cannot restore {}={} to {}: {}", e.name, value, (root / file).string(), why));
    else
      ++out.restored;
  }
  if (!failed.empty()) {
    std::string msg = failed.front();
    if (failed.size() > 1) msg += fmt::format(" (and {} more)", failed.size() - 1);
    throw IoError(msg + fmt::format("; restored {} of {}; originals kept in {}", out.restored, s.entries.size(),
                                    state_file.string()));
  }
  if (!fs::remove(state_file, ec) || ec)
    throw IoError(fmt::format("restored {} value(s) of {} but cannot remove {}: {}", out.restored, s.netdev,
                              state_file.string(), ec ? ec.message() : "not removed"));
  return out;
}

std::vector<DcqcnRestoreOutcome> restore_dcqcn_all(const SysRoot& root, const std::vector<std::string>& netdevs,
                                                   const fs::path& state) {
  check_state_flags(state.string(), netdevs);
  std::vector<DcqcnRestoreOutcome> out;
  if (!state.empty())
    out.push_back({netdevs.front(), state, {}, {}, {}});
  else if (!netdevs.empty())
    for (const auto& nd : netdevs) out.push_back({nd, default_state_file(root, nd), {}, {}, {}});
  else
    for (const auto& f : dcqcn_state_files(root)) out.push_back({f.stem().string(), f, {}, {}, {}});
  for (auto& o : out) {  // every one is tried, whatever happened to the others
    try {
      o.restored = restore_dcqcn(root, o.netdev, o.state_file);
    } catch (const Error& e) {
      o.error_code = e.code();
      o.error = e.what();
    } catch (const std::exception& e) {
      o.error_code = ErrorCode::Internal;
      o.error = e.what();
    }
  }
  return out;
}

void check_restored(const std::vector<DcqcnRestoreOutcome>& outcomes) {
  std::vector<const DcqcnRestoreOutcome*> failed;
  for (const auto& o : outcomes)
    if (o.error_code) failed.push_back(&o);
  if (failed.empty()) return;
  ErrorCode code = *failed.front()->error_code;
  for (const auto* f : failed)
    if (*f->error_code != code) code = ErrorCode::Io;
  if (outcomes.size() == 1) throw_error(code, failed.front()->error);
  std::string msg =
      fmt::format("{} of {} netdevs not restored (their state files kept): ", failed.size(), outcomes.size());
  for (std::size_t i = 0; i < failed.size(); ++i)
    msg += fmt::format("{}{}: {}", i ? "; " : "", failed[i]->netdev, failed[i]->error);
  throw_error(code, msg);
}

}  // namespace railkit::fabric
