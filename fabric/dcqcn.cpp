#include "fabric/dcqcn.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <set>
#include <utility>

#include <fmt/format.h>

#include "core/atomic_file.hpp"
#include "core/clock.hpp"
#include "core/error.hpp"
#include "core/json_text.hpp"
#include "core/strings.hpp"
#include "core/tunables.hpp"
#include "topology/sysfs.hpp"

namespace railkit::fabric {
namespace fs = std::filesystem;

namespace {

constexpr std::string_view kStateSchema = "railkit.dcqcn-state/1";
constexpr std::string_view kShowSchema = "railkit.dcqcn/1";
constexpr std::string_view kSides[] = {"roce_rp", "roce_np"};
constexpr int kPriorities = 8;
constexpr std::size_t kMaxValueBytes = 4096;

// MLNX_OFED sysfs name (tunable name) -> upstream debugfs cc_params file.
constexpr std::pair<std::string_view, std::string_view> kDebugfsNames[] = {
    {"roce_rp.rpg_time_reset", "rp_time_reset"},
    {"roce_rp.rpg_byte_reset", "rp_byte_reset"},
    {"roce_rp.rpg_threshold", "rp_threshold"},
    {"roce_rp.rpg_ai_rate", "rp_ai_rate"},
    {"roce_rp.rpg_hai_rate", "rp_hai_rate"},
    {"roce_rp.rpg_max_rate", "rp_max_rate"},
    {"roce_rp.rpg_min_dec_fac", "rp_min_dec_fac"},
    {"roce_rp.rpg_min_rate", "rp_min_rate"},
    {"roce_rp.rpg_gd", "rp_gd"},
    {"roce_rp.rate_to_set_on_first_cnp", "rp_rate_to_set_on_first_cnp"},
    {"roce_rp.dce_tcp_g", "rp_dce_tcp_g"},
    {"roce_rp.dce_tcp_rtt", "rp_dce_tcp_rtt"},
    {"roce_rp.rate_reduce_monitor_period", "rp_rate_reduce_monitor_period"},
    {"roce_rp.initial_alpha_value", "rp_initial_alpha_value"},
    {"roce_rp.clamp_tgt_rate", "rp_clamp_tgt_rate"},
    {"roce_rp.clamp_tgt_rate_after_time_inc", "rp_clamp_tgt_rate_ati"},
    {"roce_np.min_time_between_cnps", "np_min_time_between_cnps"},
    {"roce_np.cnp_dscp", "np_cnp_dscp"},
    {"roce_np.cnp_802p_prio", "np_cnp_prio"},
};

bool is_dcqcn_tunable(const Tunable* t) { return t && t->scope == TunableScope::Dcqcn; }

/// "roce_rp" for roce_rp.<attr>, "roce_np" for roce_np.<attr>, else "".
std::string_view side_of(std::string_view name) {
  if (name.starts_with(kDcqcnRpPrefix)) return "roce_rp";
  if (name.starts_with(kDcqcnNpPrefix)) return "roce_np";
  return "";
}

bool is_enable_name(std::string_view name) {
  for (auto side : kSides)
    for (int p = 0; p < kPriorities; ++p)
      if (name == dcqcn_enable_name(side, p)) return true;
  return false;
}

/// Whether a read-back value means the same as the value written ("0100" reads as 100).
bool same_value(std::string_view a, std::string_view b) {
  const auto x = to_int(a);
  const auto y = to_int(b);
  if (x && y) return *x == *y;
  return a == b;
}

std::string errno_reason(int err) {
  std::string r = std::strerror(err);
  if ((err == EACCES || err == EPERM) && ::geteuid() != 0) r += " (writing DCQCN attributes needs root)";
  return r;
}

/// Whether `fd` is a regular file (sysfs and debugfs attributes are; a FIFO or device planted in
/// a --root tree is not, and would block or swallow the write).
bool regular(int fd) {
  struct stat st {};
  return ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
}

/// Opens `rel` (relative to `root`) without following a symlink anywhere below the root: every
/// directory is opened with O_NOFOLLOW relative to the previous one, then the file itself. The
/// paths written are resolved ones, so on a sane tree there is no link on the way; a link planted
/// after the check cannot redirect the write. Returns the fd, or -1 with `why` set.
int open_beneath(const fs::path& root, const fs::path& rel, int flags, std::string& why) {
  std::vector<fs::path> parts;
  for (const auto& c : rel.relative_path())
    if (!c.empty() && c != ".") parts.push_back(c);
  if (parts.empty()) {
    why = "an empty path";
    return -1;
  }
  int dir = ::open(root.empty() ? "." : root.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (dir < 0) {
    why = fmt::format("cannot open the root: {}", std::strerror(errno));
    return -1;
  }
  auto fail = [&](const fs::path& name, int err) {
    struct stat st {};
    if (::fstatat(dir, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode))
      why = fmt::format("{} is a symlink (not followed)", name.string());
    else
      why = errno_reason(err);
    ::close(dir);
    return -1;
  };
  for (std::size_t i = 0; i + 1 < parts.size(); ++i) {
    if (parts[i] == "..") {
      ::close(dir);
      why = "'..' in the path";
      return -1;
    }
    const int next = ::openat(dir, parts[i].c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (next < 0) return fail(parts[i], errno);
    ::close(dir);
    dir = next;
  }
  if (parts.back() == "..") {
    ::close(dir);
    why = "'..' in the path";
    return -1;
  }
  const int fd = ::openat(dir, parts.back().c_str(), flags | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return fail(parts.back(), errno);
  ::close(dir);
  return fd;
}

/// The trimmed content of a small file, or the reason it could not be read.
struct ReadResult {
  std::optional<std::string> value;
  std::string reason;
};

/// Reads the attribute file `rel` under `root` (no symlink followed, see open_beneath).
ReadResult read_value(const fs::path& root, const fs::path& rel) {
  std::string why;
  const int fd = open_beneath(root, rel, O_RDONLY, why);
  if (fd < 0) return {std::nullopt, why};
  if (!regular(fd)) {
    ::close(fd);
    return {std::nullopt, "not a regular file"};
  }
  std::string data;
  const int err = read_fd(fd, kMaxValueBytes, data);
  ::close(fd);
  if (err != 0) return {std::nullopt, std::strerror(err)};
  if (data.size() > kMaxValueBytes) return {std::nullopt, "longer than a DCQCN attribute"};
  return {std::string(trim(data)), ""};
}

/// Writes "value\n" in place with one write() (sysfs takes an attribute in one write and cannot be
/// renamed over), no symlink followed (see open_beneath); "" on success, else the reason.
std::string write_value(const fs::path& root, const fs::path& rel, const std::string& value) {
  std::string why;
  const int fd = open_beneath(root, rel, O_WRONLY | O_TRUNC, why);
  if (fd < 0) return why;
  if (!regular(fd)) {
    ::close(fd);
    return "not a regular file";
  }
  const std::string data = value + "\n";
  ssize_t n = 0;
  do {
    n = ::write(fd, data.data(), data.size());
  } while (n < 0 && errno == EINTR);
  int err = n < 0 ? errno : 0;
  if (::close(fd) != 0 && err == 0) err = errno;
  if (err != 0) return errno_reason(err);
  if (static_cast<std::size_t>(n) != data.size()) return "short write";
  return "";
}

/// Writes and reads back; "" on success, else the reason.
std::string write_verified(const fs::path& root, const fs::path& rel, const std::string& value) {
  if (auto why = write_value(root, rel, value); !why.empty()) return why;
  const auto back = read_value(root, rel);
  if (!back.value) return "cannot read it back: " + back.reason;
  if (!same_value(*back.value, value)) return fmt::format("wrote {} but it reads back {}", value, *back.value);
  return "";
}

/// The value to write: integers in canonical decimal ("+5" -> "5", "true" -> "1").
std::string canonical_value(const std::string& name, const std::string& value) {
  if (const Tunable* t = find_tunable(name))
    if (auto x = tunable_int(*t, value)) return std::to_string(*x);
  return value;
}

/// A path relative to the root that stays inside it lexically (no "..", not absolute).
bool contained(const fs::path& rel) {
  if (rel.empty() || rel.is_absolute()) return false;
  return std::none_of(rel.begin(), rel.end(), [](const fs::path& c) { return c == ".."; });
}

/// `text` for a one-line message: at most 40 characters.
std::string shown(std::string_view text) {
  constexpr std::size_t kShown = 40;
  return text.size() <= kShown ? std::string(text) : std::string(text.substr(0, kShown)) + "...";
}

/// Resolves `rel` under `root_abs` one component at a time (lstat), following symlinks as the
/// kernel would (an absolute target from the real /, a relative one from the link's directory).
/// Returns the resolved path relative to the root (a missing component ends the resolution, the
/// rest kept as given), or nullopt with `why` when a link leads out of the root or links loop.
std::optional<fs::path> resolve_beneath(const fs::path& root_abs, const fs::path& rel, std::string& why) {
  constexpr int kMaxLinks = 40;
  const bool live = root_abs == root_abs.root_path();  // "/": nothing can leave it
  std::vector<fs::path> todo;                          // components still to resolve, the next last
  for (const auto& c : rel) todo.insert(todo.begin(), c);
  fs::path done;     // resolved so far, relative to the root, no symlink in it
  std::string link;  // the last link followed, for the message
  int links = 0;
  bool missing = false;
  while (!todo.empty()) {
    const fs::path c = todo.back();
    todo.pop_back();
    if (c.empty() || c == "." || c == "/") continue;
    if (c == "..") {
      if (!done.empty()) {
        done = done.parent_path();
      } else if (!live) {
        why = link.empty() ? "'..' above the root" : fmt::format("symlink {} leaves the root", link);
        return std::nullopt;
      }
      continue;
    }
    const fs::path cand = done / c;
    struct stat st {};
    if (missing || ::lstat((root_abs / cand).c_str(), &st) != 0) {
      missing = true;
      done = cand;
      continue;
    }
    if (!S_ISLNK(st.st_mode)) {
      done = cand;
      continue;
    }
    std::error_code ec;
    const fs::path target = fs::read_symlink(root_abs / cand, ec);
    if (ec || ++links > kMaxLinks) {
      why = fmt::format("symlink {}: {}", cand.string(), ec ? ec.message() : "too many levels of symlinks");
      return std::nullopt;
    }
    link = fmt::format("{} -> {}", cand.string(), target.string());
    fs::path next = done;  // where the target's components start
    if (target.is_absolute()) {
      const fs::path r = target.lexically_normal().lexically_relative(root_abs);
      if (r.empty() || *r.begin() == "..") {
        why = fmt::format("symlink {} leaves the root", link);
        return std::nullopt;
      }
      next.clear();
      std::vector<fs::path> parts(r.begin(), r.end());
      for (auto it = parts.rbegin(); it != parts.rend(); ++it) todo.push_back(*it);
    } else {
      std::vector<fs::path> parts(target.begin(), target.end());
      for (auto it = parts.rbegin(); it != parts.rend(); ++it) todo.push_back(*it);
    }
    done = next;
  }
  return done;
}

// ---- state files

struct StateEntry {
  std::string name;
  fs::path path;  ///< relative to the root
  std::string old;
};

struct State {
  fs::path root;  ///< absolute
  std::string netdev;
  std::string layout;
  std::string created;
  std::vector<StateEntry> entries;
};

fs::path absolute_root(const SysRoot& root) {
  std::error_code ec;
  fs::path p = fs::weakly_canonical(fs::absolute(root.dir), ec);
  return ec ? fs::absolute(root.dir) : p;
}

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
  if (!contained(e.path)) return fmt::format("path '{}' leaves the root (absolute or '..')", shown(e.path.string()));
  std::string why;
  const auto resolved = resolve_beneath(root_abs, e.path, why);
  if (!resolved) return fmt::format("path '{}': {}", e.path.string(), why);
  const auto it = d.files.find(e.name);
  if (it == d.files.end())
    return fmt::format("{} has no {} file now (under {})", d.netdev, e.name, d.dir.string());
  if (*resolved != it->second)
    return fmt::format("path '{}' is not the {} file of {} ({})", e.path.string(), e.name, d.netdev,
                       it->second.string());
  return "";
}

/// Throws UsageError when state `s`, read from `file`, is not the state of netdev `d` under
/// `root_abs` (another netdev, layout or root: "<file> holds the originals of ...<hint>"), or when an
/// entry cannot be restored ("<file>: entries[i] (<name>): <why>; ... (and N more)"). One rule for
/// apply (an existing state file it adds to) and restore.
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

/// Whether `nd` can be a netdev name (and a state file name): no '/', not "." or "..".
bool netdev_name_ok(const std::string& nd) {
  return !nd.empty() && nd.find('/') == std::string::npos && nd != "." && nd != "..";
}

/// Throws the error of category `code` (its own type, so callers can catch it by type).
[[noreturn]] void throw_error(ErrorCode code, const std::string& m) {
  switch (code) {
    case ErrorCode::Usage: throw UsageError(m);
    case ErrorCode::Io: throw IoError(m);
    case ErrorCode::Unavailable: throw UnavailableError(m);
    default: throw Error(code, m);
  }
}

/// `e` again, its message prefixed, with the same type (so the exit code stays).
[[noreturn]] void rethrow_prefixed(const Error& e, const std::string& prefix) {
  throw_error(e.code(), prefix + e.what());
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

// ---- layout detection

std::optional<DcqcnDevice> detect(const topo::SysfsReader& rd, const std::string& netdev) {
  const fs::path nd = fs::path("sys/class/net") / netdev;
  DcqcnDevice d;
  d.netdev = netdev;
  if (auto dev = rd.resolve(nd / "device")) d.pci_bdf = dev->filename().string();

  // MLNX_OFED sysfs: ecn/roce_rp|roce_np, attributes directly there or under params/.
  bool mlnx = false;
  for (auto side : kSides) {
    const fs::path sdir = nd / "ecn" / side;
    if (!rd.exists(sdir)) continue;
    mlnx = true;
    for (const auto& t : tunables()) {
      if (t.scope != TunableScope::Dcqcn || side_of(t.name) != side) continue;
      const std::string attr(t.name.substr(side.size() + 1));
      for (const fs::path& f : {sdir / attr, sdir / "params" / attr}) {
        if (auto r = rd.resolve(f)) {
          d.files.emplace(std::string(t.name), *r);
          break;
        }
      }
    }
    for (int p = 0; p < kPriorities; ++p)
      if (auto r = rd.resolve(sdir / "enable" / std::to_string(p))) d.files.emplace(dcqcn_enable_name(side, p), *r);
  }
  if (mlnx) {
    d.layout = DcqcnLayout::Mlnx;
    d.dir = rd.resolve(nd / "ecn").value_or(nd / "ecn");
    return d;
  }

  // Upstream mlx5 debugfs: cc_params of the netdev's PCI function.
  if (d.pci_bdf.empty()) return std::nullopt;
  const auto cc = rd.resolve(fs::path("sys/kernel/debug/mlx5") / d.pci_bdf / "cc_params");
  if (!cc) return std::nullopt;
  d.layout = DcqcnLayout::Debugfs;
  d.dir = *cc;
  for (const auto& [name, file] : kDebugfsNames)
    if (auto r = rd.resolve(*cc / file)) d.files.emplace(std::string(name), *r);
  return d;
}

// ---- apply

/// One planned write.
struct Planned {
  std::size_t target;
  std::string name;
  fs::path file;  ///< relative to the root
  std::string value;
  std::string before;
};

/// Saves the values of `plan` for target `t` into its state file, keeping an existing one's entries.
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

}  // namespace

std::string_view layout_name(DcqcnLayout l) noexcept { return l == DcqcnLayout::Mlnx ? "mlnx-sysfs" : "debugfs"; }

std::string_view debugfs_name(std::string_view tunable) noexcept {
  for (const auto& [name, file] : kDebugfsNames)
    if (name == tunable) return file;
  return "";
}

std::string dcqcn_enable_name(std::string_view side, int prio) { return fmt::format("{}.enable.{}", side, prio); }

std::vector<DcqcnDevice> find_dcqcn_devices(const SysRoot& root, const std::vector<std::string>& netdevs) {
  topo::SysfsReader rd(root);
  std::vector<DcqcnDevice> out;
  if (netdevs.empty()) {
    for (const auto& nd : rd.list("sys/class/net"))
      if (auto d = detect(rd, nd)) out.push_back(std::move(*d));
    return out;
  }
  for (const auto& nd : netdevs) {
    if (!netdev_name_ok(nd))
      throw UsageError(fmt::format("--netdev '{}' is not a netdev name", nd));
    if (!rd.exists(fs::path("sys/class/net") / nd))
      throw UsageError(fmt::format("no netdev {} under {}", nd, (root / "sys/class/net").string()));
    auto d = detect(rd, nd);
    if (!d) {
      const auto dev = rd.resolve(fs::path("sys/class/net") / nd / "device");
      throw UnavailableError(fmt::format(
          "{} has no DCQCN attributes: neither sys/class/net/{}/ecn/roce_rp|roce_np (MLNX_OFED) nor "
          "sys/kernel/debug/mlx5/{}/cc_params (upstream mlx5; debugfs needs root and a mounted debugfs) under {}",
          nd, nd, dev ? dev->filename().string() : "<pci-bdf>", root.dir.string()));
    }
    out.push_back(std::move(*d));
  }
  return out;
}

std::map<std::string, std::string> read_dcqcn(const SysRoot& root, const DcqcnDevice& d) {
  std::map<std::string, std::string> out;
  for (const auto& [name, file] : d.files) {
    auto r = read_value(root.dir, file);
    if (!r.value) throw IoError(fmt::format("cannot read {} ({}): {}", (root / file).string(), name, r.reason));
    out.emplace(name, std::move(*r.value));
  }
  return out;
}

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

// ---- show

nlohmann::ordered_json dcqcn_show_json(const SysRoot& root, const std::vector<DcqcnDevice>& devs) {
  nlohmann::ordered_json j;
  j["schema"] = kShowSchema;
  j["root"] = root.dir.string();
  j["netdevs"] = nlohmann::ordered_json::array();
  for (const auto& d : devs) {
    const auto values = read_dcqcn(root, d);
    auto value_json = [&](const std::string& name) -> nlohmann::ordered_json {
      auto it = values.find(name);
      if (it == values.end()) return nullptr;
      if (auto x = to_int(it->second)) return *x;
      return it->second;
    };
    nlohmann::ordered_json n;
    n["netdev"] = d.netdev;
    n["layout"] = layout_name(d.layout);
    n["pci_bdf"] = d.pci_bdf.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(d.pci_bdf);
    n["dir"] = d.dir.string();
    n["attributes"] = nlohmann::ordered_json::object();
    for (const auto& t : tunables())
      if (t.scope == TunableScope::Dcqcn) n["attributes"][std::string(t.name)] = value_json(std::string(t.name));
    if (d.layout == DcqcnLayout::Mlnx) {
      n["enable"] = nlohmann::ordered_json::object();
      for (auto side : kSides) {
        auto& a = n["enable"][std::string(side)] = nlohmann::ordered_json::array();
        for (int p = 0; p < kPriorities; ++p) a.push_back(value_json(dcqcn_enable_name(side, p)));
      }
    } else {
      n["enable"] = nullptr;
    }
    j["netdevs"].push_back(std::move(n));
  }
  return j;
}

std::string dcqcn_show_table(const SysRoot& root, const std::vector<DcqcnDevice>& devs) {
  if (devs.empty()) return fmt::format("no netdev with DCQCN attributes under {}\n", root.dir.string());
  std::string out;
  for (const auto& d : devs) {
    const auto values = read_dcqcn(root, d);
    if (!out.empty()) out += "\n";
    out += fmt::format("{}  {}  {}  {}\n", d.netdev, layout_name(d.layout), d.pci_bdf.empty() ? "-" : d.pci_bdf,
                       d.dir.string());
    out += fmt::format("  {:<40} {:>10} {:>10}  {:<7} {}\n", "attribute", "value", "default", "unit", "range");
    for (const auto& t : tunables()) {
      if (t.scope != TunableScope::Dcqcn) continue;
      auto it = values.find(std::string(t.name));
      const std::string range = t.type == TunableType::Bool ? "0/1" : fmt::format("{}..{}", t.min, t.max);
      out += fmt::format("  {:<40} {:>10} {:>10}  {:<7} {}\n", t.name, it == values.end() ? "absent" : it->second,
                         t.default_value, t.unit.empty() ? "-" : t.unit, range);
    }
    for (auto side : kSides) {
      std::string flags;
      if (d.layout == DcqcnLayout::Debugfs) {
        flags = "none in the debugfs layout";
      } else {
        for (int p = 0; p < kPriorities; ++p) {
          auto it = values.find(dcqcn_enable_name(side, p));
          flags += (p ? " " : "") + (it == values.end() ? std::string("-") : it->second);
        }
      }
      out += fmt::format("  {:<40} {}\n", fmt::format("{}.enable (priority 0..7)", side), flags);
    }
  }
  return out;
}

}  // namespace railkit::fabric
