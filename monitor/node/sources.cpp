#include "monitor/node/sources.hpp"

#include <fmt/format.h>

#include <set>
#include <system_error>

#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "core/strings.hpp"
#include "monitor/node/ethtool.hpp"
#include "topology/parse.hpp"
#include "topology/probe.hpp"

namespace railkit::monitor {
namespace fs = std::filesystem;
namespace {

// Files of hw_counters/ that are settings, not counters.
const std::set<std::string, std::less<>> kNotCounters = {"lifespan"};

struct AerFile {
  const char* file;
  const char* severity;
};
const AerFile kAerFiles[] = {
    {"aer_dev_correctable", "correctable"}, {"aer_dev_nonfatal", "nonfatal"}, {"aer_dev_fatal", "fatal"}};

constexpr std::size_t kMaxEthtoolTextBytes = 4 << 20;

void read_port_counters(const NodeInventory::Port& p, const topo::SysfsReader& rd, NodeSample& s) {
  const fs::path pd = fs::path("sys/class/infiniband") / p.device / "ports" / std::to_string(p.port);
  bool any = false;
  for (const char* dir : {"hw_counters", "counters"}) {
    for (const auto& name : rd.list(pd / dir)) {
      if (kNotCounters.count(name)) continue;
      const auto text = rd.text(pd / dir / name);
      const auto v = text ? parse_counter(*text) : std::nullopt;
      if (!v) continue;  // not a counter (a directory, a setting) or unreadable now
      any = true;
      s.counters.push_back({std::string(kRdmaCounter),
                            {{"device", p.device}, {"port", std::to_string(p.port)}, {"counter", name}}, *v, 1});
    }
  }
  if (!any)
    s.notes.push_back(fmt::format("{} port {}: no readable counters under {}/{{hw_counters,counters}}", p.device,
                                  p.port, pd.string()));
}

std::string speed_text(const std::optional<std::string>& t) {
  if (!t) return "";
  std::string s = *t;
  if (s.size() > 5 && s.ends_with(" PCIe")) s.resize(s.size() - 5);
  return s;
}

void read_function(const NodeInventory::Function& f, const topo::SysfsReader& rd, NodeSample& s) {
  const fs::path d = fs::path("sys/bus/pci/devices") / f.bdf;
  for (const auto& a : kAerFiles) {
    const auto text = rd.text(d / a.file);
    if (!text) continue;  // AER not reported by this kernel or function
    if (auto v = parse_aer_total(*text))
      s.counters.push_back({std::string(kAerErrors), {{"device", f.bdf}, {"class", a.severity}}, *v, 1});
    else
      s.notes.push_back(fmt::format("{}: no TOTAL_ERR_ line in {}", f.bdf, (d / a.file).string()));
  }
  PcieLink l;
  l.bdf = f.bdf;
  l.role = f.role;
  const auto cur = rd.text(d / "current_link_speed");
  const auto max = rd.text(d / "max_link_speed");
  l.speed = speed_text(cur);
  l.max_speed = speed_text(max);
  if (cur) l.speed_GTps = topo::parse_link_speed_GTps(*cur);
  if (max) l.max_speed_GTps = topo::parse_link_speed_GTps(*max);
  if (auto t = rd.text(d / "current_link_width")) l.width = static_cast<int>(topo::parse_int(*t).value_or(-1));
  if (auto t = rd.text(d / "max_link_width")) l.max_width = static_cast<int>(topo::parse_int(*t).value_or(-1));
  if (l.width && *l.width < 0) l.width.reset();
  if (l.max_width && *l.max_width < 0) l.max_width.reset();
  if (cur || max || l.width || l.max_width) s.links.push_back(std::move(l));
}

}  // namespace

NodeInventory discover_node(const fs::path& root) {
  std::error_code ec;
  if (!fs::is_directory(root, ec)) throw UsageError("--root " + root.string() + " is not a directory");
  topo::ProbeOptions po;
  po.root = root;
  const topo::Topology t = topo::probe_node(po);
  NodeInventory inv;
  std::set<std::string> seen;
  const topo::SysfsReader rd(SysRoot{root});
  for (const auto& nic : t.nics) {
    inv.functions.push_back({nic.bdf, "nic"});
    for (const auto& p : nic.ports) {
      inv.ports.push_back({nic.name, p.num, p.netdev});
      if (p.netdev.empty() || !seen.insert(p.netdev).second) continue;
      std::string driver;
      if (auto d = rd.resolve(fs::path("sys/class/net") / p.netdev / "device/driver")) driver = d->filename().string();
      inv.netdevs.emplace_back(p.netdev, driver);
    }
  }
  for (const auto& g : t.gpus) inv.functions.push_back({g.bdf, "gpu"});
  if (t.nics.empty()) inv.notes.push_back("no RDMA device under " + (root / "sys/class/infiniband").string());
  return inv;
}

std::optional<std::uint64_t> parse_aer_total(std::string_view text) {
  for (const auto& line : split(text, '\n')) {
    const auto words = split_ws(line);
    if (words.size() == 2 && words[0].starts_with("TOTAL_ERR_")) return parse_counter(words[1]);
  }
  return std::nullopt;
}

void read_sysfs_sources(const NodeInventory& inv, const topo::SysfsReader& rd, NodeSample& s) {
  for (const auto& p : inv.ports) read_port_counters(p, rd, s);
  for (const auto& [nd, driver] : inv.netdevs) {
    const fs::path f = fs::path("sys/class/net") / nd / "carrier_changes";
    const auto text = rd.text(f);
    if (auto v = text ? parse_counter(*text) : std::nullopt)
      s.counters.push_back({std::string(kCarrierChanges), {{"netdev", nd}}, *v, 1});
    else
      s.notes.push_back(fmt::format("{}: cannot read {}", nd, f.string()));
  }
  for (const auto& f : inv.functions) read_function(f, rd, s);
}

void read_ethtool_sources(const NodeInventory& inv, const fs::path& root, bool live, NodeSample& s) {
  for (const auto& [nd, driver] : inv.netdevs) {
    std::optional<EthtoolStats> stats;
    std::string why;
    if (live) {
      stats = read_ethtool_ioctl(nd, &why);
    } else {
      const fs::path f = root / "ethtool" / (nd + ".txt");
      if (auto text = read_machine_file(f, kMaxEthtoolTextBytes)) stats = parse_ethtool_text(*text);
      else why = "no " + f.string() + " (a fixture root holds `ethtool -S` text there)";
    }
    if (!stats) {
      s.notes.push_back(fmt::format("{}: no ethtool statistics ({}); pause counters absent", nd, why));
      continue;
    }
    if (!driver.empty() && !ethtool_driver_mapped(driver))
      s.notes.push_back(fmt::format("{}: driver {} has no ethtool name table; every mapped driver's names tried", nd,
                                    driver));
    map_ethtool_stats(driver, nd, *stats, s.counters);
  }
}

}  // namespace railkit::monitor
