// DCQCN attributes: layout detection, the attribute files (through topology/root_io.hpp) and `show`.
#include "fabric/dcqcn.hpp"

#include <unistd.h>

#include <utility>

#include <fmt/format.h>

#include "core/strings.hpp"
#include "core/tunables.hpp"
#include "fabric/dcqcn_detail.hpp"
#include "topology/root_io.hpp"
#include "topology/sysfs.hpp"

namespace railkit::fabric {
namespace fs = std::filesystem;
using namespace detail;

namespace {

constexpr std::string_view kShowSchema = "railkit.dcqcn/1";

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

/// "roce_rp" for roce_rp.<attr>, "roce_np" for roce_np.<attr>, else "".
std::string_view side_of(std::string_view name) {
  if (name.starts_with(kDcqcnRpPrefix)) return "roce_rp";
  if (name.starts_with(kDcqcnNpPrefix)) return "roce_np";
  return "";
}

/// The reason of a failed read or write, with a hint when the system refused a user who is not root.
std::string reason_of(const topo::RootIoFailure& f) {
  if (f.denied && ::geteuid() != 0) return f.reason + " (writing DCQCN attributes needs root)";
  return f.reason;
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

}  // namespace

namespace detail {

bool is_dcqcn_tunable(const Tunable* t) { return t && t->scope == TunableScope::Dcqcn; }

bool is_enable_name(std::string_view name) {
  for (auto side : kSides)
    for (int p = 0; p < kPriorities; ++p)
      if (name == dcqcn_enable_name(side, p)) return true;
  return false;
}

bool same_value(std::string_view a, std::string_view b) {
  const auto x = to_int(a);
  const auto y = to_int(b);
  if (x && y) return *x == *y;
  return a == b;
}

ReadResult read_value(const fs::path& root, const fs::path& rel) {
  auto r = topo::read_under_root(root, rel, kMaxValueBytes);
  if (!r.data) return {std::nullopt, reason_of(r.failure)};
  if (r.data->size() > kMaxValueBytes) return {std::nullopt, "longer than a DCQCN attribute"};
  return {std::string(trim(*r.data)), ""};
}

std::string write_verified(const fs::path& root, const fs::path& rel, const std::string& value) {
  if (auto failed = topo::write_under_root(root, rel, value + "\n")) return reason_of(*failed);
  const auto back = read_value(root, rel);
  if (!back.value) return "cannot read it back: " + back.reason;
  if (!same_value(*back.value, value)) return fmt::format("wrote {} but it reads back {}", value, *back.value);
  return "";
}

std::string canonical_value(const std::string& name, const std::string& value) {
  if (const Tunable* t = find_tunable(name))
    if (auto x = tunable_int(*t, value)) return std::to_string(*x);
  return value;
}

std::string shown(std::string_view text) {
  constexpr std::size_t kShown = 40;
  return text.size() <= kShown ? std::string(text) : std::string(text.substr(0, kShown)) + "...";
}

bool netdev_name_ok(const std::string& nd) {
  return !nd.empty() && nd.find('/') == std::string::npos && nd != "." && nd != "..";
}

[[noreturn]] void throw_error(ErrorCode code, const std::string& m) {
  switch (code) {
    case ErrorCode::Usage: throw UsageError(m);
    case ErrorCode::Io: throw IoError(m);
    case ErrorCode::Unavailable: throw UnavailableError(m);
    default: throw Error(code, m);
  }
}

[[noreturn]] void rethrow_prefixed(const Error& e, const std::string& prefix) {
  throw_error(e.code(), prefix + e.what());
}

}  // namespace detail

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
