// DCQCN state files (railkit.dcqcn-state/1): the originals apply saves and restore writes back.
#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "core/atomic_file.hpp"
#include "core/clock.hpp"
#include "core/json_text.hpp"
#include "fabric/dcqcn.hpp"
#include "fabric/dcqcn_detail.hpp"
#include "topology/root_io.hpp"

namespace railkit::fabric {
namespace fs = std::filesystem;
using namespace detail;

namespace {

constexpr std::string_view kStateSchema = "railkit.dcqcn-state/1";

nlohmann::ordered_json state_json(const State& s) {
  nlohmann::ordered_json j;
  j["schema"] = kStateSchema;
  j["created"] = s.created;
  j["root"] = s.root.string();
  j["netdev"] = s.netdev;
  j["layout"] = s.layout;
  j["entries"] = nlohmann::ordered_json::array();
  for (const auto& e : s.entries) j["entries"].push_back({{"name", e.name}, {"path", e.path.string()}, {"old", e.old}});
  return j;
}

/// Why `value` cannot be saved for, or restored to, entry `name`; "" when it can: a DCQCN tunable
/// with a value in the range apply validates (the tunables table), or a per-priority enable, 0 or 1.
std::string saved_value_problem(const std::string& name, const std::string& value) {
  const Tunable* t = find_tunable(name);
  if (!is_dcqcn_tunable(t) && !is_enable_name(name))
    return "not a DCQCN attribute (roce_rp.<attr> or roce_np.<attr> of the tunables table, or "
           "roce_rp|roce_np.enable.<0..7>)";
  if (value.empty() || value.find_first_of("\r\n") != std::string::npos || value.size() > kMaxValueBytes)
    return fmt::format("value '{}' is not a single line", shown(value));
  if (!t) return value == "0" || value == "1" ? "" : fmt::format("value '{}': an enable is 0 or 1", shown(value));
  if (auto why = tunable_value_problem(*t, value); !why.empty())
    return fmt::format("value '{}': {} (the range apply accepts)", shown(value), why);
  return "";
}

/// Why entry `e` of a state file cannot be restored to `d` under `root_abs`; "" when it can: its
/// name and value pass saved_value_problem, and its path, resolved inside the root without a link
/// leading out of it, is the file of that attribute on `d` (the one apply writes).
std::string entry_problem(const fs::path& root_abs, const DcqcnDevice& d, const StateEntry& e) {
  if (auto why = saved_value_problem(e.name, e.old); !why.empty()) return why;
  if (!topo::inside_root_lexically(e.path))
    return fmt::format("path '{}' leaves the root (absolute or '..')", shown(e.path.string()));
  const auto resolved = topo::resolve_under_root(root_abs, e.path);
  if (!resolved.path) return fmt::format("path '{}': {}", e.path.string(), resolved.reason);
  const auto it = d.files.find(e.name);
  if (it == d.files.end())
    return fmt::format("{} has no {} file now (under {})", d.netdev, e.name, d.dir.string());
  if (*resolved.path != it->second)
    return fmt::format("path '{}' is not the {} file of {} ({})", e.path.string(), e.name, d.netdev,
                       it->second.string());
  return "";
}

}  // namespace

namespace detail {

fs::path absolute_root(const SysRoot& root) {
  std::error_code ec;
  fs::path p = fs::weakly_canonical(fs::absolute(root.dir), ec);
  return ec ? fs::absolute(root.dir) : p;
}

void check_state(const fs::path& file, const State& s, const fs::path& root_abs, const DcqcnDevice& d,
                 std::string_view hint) {
  if (s.netdev != d.netdev || s.layout != layout_name(d.layout) || s.root != root_abs)
    throw UsageError(fmt::format("{} holds the originals of {} ({}, root {}), not of {} ({}, root {}){}", file.string(),
                                 s.netdev, s.layout, s.root.string(), d.netdev, layout_name(d.layout),
                                 root_abs.string(), hint));
  std::vector<std::string> problems;
  std::set<std::string> names;
  for (std::size_t i = 0; i < s.entries.size(); ++i) {
    const StateEntry& e = s.entries[i];
    std::string why = names.insert(e.name).second ? entry_problem(root_abs, d, e) : "given twice";
    if (!why.empty()) problems.push_back(fmt::format("entries[{}] ({}): {}", i, shown(e.name), why));
  }
  if (problems.empty()) return;
  constexpr std::size_t kShown = 3;
  std::string msg = file.string() + ": ";
  for (std::size_t i = 0; i < problems.size() && i < kShown; ++i) msg += (i ? "; " : "") + problems[i];
  if (problems.size() > kShown) msg += fmt::format(" (and {} more)", problems.size() - kShown);
  throw UsageError(msg);
}

State load_state(const fs::path& file) {
  const std::string where = file.string();
  nlohmann::json j;
  try {
    j = parse_json(read_file(file));
  } catch (const nlohmann::json::exception& e) {
    throw UsageError(fmt::format("{}: not a DCQCN state file: {}", where, json_error_text(e)));
  }
  auto str = [&](const nlohmann::json& o, const char* key) {
    if (!o.is_object() || !o.contains(key) || !o[key].is_string())
      throw UsageError(fmt::format("{}: not a DCQCN state file: '{}' missing or not a string", where, key));
    return o[key].get<std::string>();
  };
  if (str(j, "schema") != kStateSchema)
    throw UsageError(fmt::format("{}: schema '{}' is not {}", where, str(j, "schema"), kStateSchema));
  State s;
  s.root = str(j, "root");
  s.netdev = str(j, "netdev");
  s.layout = str(j, "layout");
  s.created = j.contains("created") && j["created"].is_string() ? j["created"].get<std::string>() : "";
  if (!s.root.is_absolute()) throw UsageError(fmt::format("{}: root '{}' is not absolute", where, s.root.string()));
  if (!j.contains("entries") || !j["entries"].is_array())
    throw UsageError(fmt::format("{}: not a DCQCN state file: 'entries' missing or not a list", where));
  for (const auto& e : j["entries"]) {
    s.entries.push_back({str(e, "name"), str(e, "path"), str(e, "old")});  // each checked by check_state
  }
  return s;
}

void save_state(const SysRoot& root, const DcqcnTarget& t, const std::vector<Planned>& plan, std::size_t ti) {
  State s;
  std::error_code ec;
  if (fs::exists(t.state_file, ec)) {
    s = load_state(t.state_file);
    check_state(t.state_file, s, absolute_root(root), t.device, "; restore it first or give another --state");
  } else {
    s.root = absolute_root(root);
    s.netdev = t.device.netdev;
    s.layout = std::string(layout_name(t.device.layout));
    s.created = utc_now_iso();
  }
  std::set<std::string> saved;
  for (const auto& e : s.entries) saved.insert(e.name);
  bool added = false;
  for (const auto& p : plan) {
    if (p.target != ti || saved.count(p.name)) continue;
    if (auto why = saved_value_problem(p.name, p.before); !why.empty())  // restore would refuse it
      throw UsageError(fmt::format("the current {} of {} cannot be saved for restore: {}", p.name,
                                   t.device.netdev, why));
    s.entries.push_back({p.name, p.file, p.before});
    saved.insert(p.name);
    added = true;
  }
  if (!added && fs::exists(t.state_file, ec)) return;
  if (!t.state_file.parent_path().empty()) {
    fs::create_directories(t.state_file.parent_path(), ec);
    if (ec)
      throw IoError(fmt::format("cannot create {} for the DCQCN state: {}", t.state_file.parent_path().string(),
                                ec.message()));
  }
  write_file_atomic(t.state_file, json_dump(state_json(s), 2) + "\n");
}

}  // namespace detail

fs::path default_state_file(const SysRoot& root, const std::string& netdev) {
  return root / "run/railkit/dcqcn" / (netdev + ".json");
}

std::vector<fs::path> dcqcn_state_files(const SysRoot& root) {
  std::vector<fs::path> out;
  std::error_code ec;
  for (fs::directory_iterator it(root / "run/railkit/dcqcn", ec), end; !ec && it != end; it.increment(ec))
    if (it->path().extension() == ".json" && it->is_regular_file(ec)) out.push_back(it->path());
  std::sort(out.begin(), out.end());
  return out;
}

void check_state_flags(const std::string& state, const std::vector<std::string>& netdevs) {
  std::set<std::string> seen;
  for (const auto& nd : netdevs) {
    if (!netdev_name_ok(nd)) throw UsageError(fmt::format("--netdev '{}' is not a netdev name", nd));
    if (!seen.insert(nd).second) throw UsageError(fmt::format("--netdev {} given twice", nd));
  }
  if (!state.empty() && netdevs.size() != 1)
    throw UsageError(fmt::format("--state {} needs exactly one --netdev, the netdev it keeps the originals of (got {})",
                                 state, netdevs.size()));
}

}  // namespace railkit::fabric
