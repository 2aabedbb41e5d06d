#include "topology/probe.hpp"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <sstream>
#include <system_error>

#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "topology/live.hpp"
#include "topology/parse.hpp"
#include "topology/sysfs.hpp"

namespace railkit::topo {
namespace fs = std::filesystem;

namespace {

struct GpuId {
  std::uint32_t device;
  const char* model;
  int sm;
};
constexpr GpuId kGpus[] = {
    {0x1db1, "V100 SXM2 16GB", 70}, {0x1db5, "V100 SXM2 32GB", 70}, {0x20b0, "A100 SXM4 40GB", 80},
    {0x20b2, "A100 SXM4 80GB", 80}, {0x20b5, "A100 PCIe 80GB", 80}, {0x20f1, "A100 PCIe 40GB", 80},
    {0x2324, "H800 SXM5", 90},      {0x2330, "H100 SXM5 80GB", 90}, {0x2331, "H100 PCIe", 90},
    {0x2335, "H200 SXM 141GB", 90}, {0x2339, "H100 SXM5 94GB", 90}, {0x26b5, "L40", 89},
    {0x26b9, "L40S", 89},           {0x27b8, "L4", 89},             {0x2901, "B200", 100},
};

struct NicId {
  std::uint32_t vendor, device;
  const char* model;
};
constexpr NicId kNics[] = {
    {0x15b3, 0x1017, "ConnectX-5"},    {0x15b3, 0x1019, "ConnectX-5 Ex"}, {0x15b3, 0x101b, "ConnectX-6"},
    {0x15b3, 0x101d, "ConnectX-6 Dx"}, {0x15b3, 0x101f, "ConnectX-6 Lx"}, {0x15b3, 0x1021, "ConnectX-7"},
    {0x15b3, 0x1023, "ConnectX-8"},    {0x15b3, 0xa2d6, "BlueField-2"},   {0x15b3, 0xa2dc, "BlueField-3"},
    {0x15b3, 0x1018, "ConnectX-5 VF"}, {0x15b3, 0x101c, "ConnectX-6 VF"}, {0x15b3, 0x101e, "ConnectX VF"},
    {0x14e4, 0x1760, "Broadcom P1400GD"},
};

std::string hex4(std::uint32_t v) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "%04x", v & 0xffff);
  return buf;
}

bool is_host_bridge_name(const std::string& s) {
  // pciDDDD:BB
  if (s.size() != 10 || s.rfind("pci", 0) != 0 || s[7] != ':') return false;
  for (size_t i = 3; i < s.size(); ++i)
    if (i != 7 && !std::isxdigit(static_cast<unsigned char>(s[i]))) return false;
  return true;
}

bool is_bdf(const std::string& s) {
  // DDDD:BB:DD.F
  if (s.size() != 12 || s[4] != ':' || s[7] != ':' || s[10] != '.') return false;
  for (size_t i = 0; i < s.size(); ++i) {
    if (i == 4 || i == 7 || i == 10) continue;
    if (!std::isxdigit(static_cast<unsigned char>(s[i]))) return false;
  }
  return true;
}

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

class Prober {
 public:
  explicit Prober(const ProbeOptions& o) : opts_(o), rd_(SysRoot{o.root}) {}

  Topology run() {
    topo_.root = opts_.root.string();
    topo_.host = read_host();
    read_cpuinfo();
    read_numa();
    read_pci();
    read_gpus();
    read_nics();
    read_gdr();
    topo_.input_problems = rd_.problems();
    return std::move(topo_);
  }

 private:
  std::string read_host() {
    for (const char* f : {"proc/sys/kernel/hostname", "etc/hostname"}) {
      auto t = rd_.text(f);
      if (t && !t->empty()) return *t;
    }
    return "unknown";
  }

  void read_cpuinfo() {
    auto t = rd_.text("proc/cpuinfo");
    if (!t) return;
    std::stringstream ss(*t);
    std::string line;
    while (std::getline(ss, line)) {
      const auto colon = line.find(':');
      if (colon == std::string::npos) {
        if (!topo_.cpu_arch.empty()) break;  // end of the first processor block
        continue;
      }
      const std::string key = trim(line.substr(0, colon));
      const std::string val = trim(line.substr(colon + 1));
      if (key == "vendor_id") {
        topo_.cpu_vendor = val;
        topo_.cpu_arch = "x86_64";
      } else if (key == "cpu family") {
        topo_.cpu_family = val;
      } else if (key == "model") {
        topo_.cpu_model = val;
      } else if (key == "CPU implementer" && topo_.cpu_arch.empty()) {
        topo_.cpu_arch = "aarch64";
      }
    }
  }

  void read_numa() {
    for (const auto& name : rd_.list("sys/devices/system/node")) {
      if (name.size() < 5 || name.rfind("node", 0) != 0) continue;
      auto id = parse_int(name.substr(4));
      if (!id) continue;
      NumaNode n;
      n.id = static_cast<int>(*id);
      const fs::path dir = fs::path("sys/devices/system/node") / name;
      auto cpulist = rd_.text(dir / "cpulist");
      if (cpulist && parse_cpulist(*cpulist)) {
        n.cpulist = *cpulist;
      } else {
        rd_.problem(dir / "cpulist", name, !cpulist, "");
      }
      auto cpumap = rd_.text(dir / "cpumap");
      if (cpumap) {
        n.cpumap = *cpumap;
      } else if (auto cpus = parse_cpulist(n.cpulist)) {
        n.cpumap = cpus_to_cpumap(*cpus);
      }
      topo_.numa_nodes.push_back(std::move(n));
    }
    if (topo_.numa_nodes.empty()) {
      // No node directory (non-NUMA kernel or a minimal VM): one node holding every online CPU.
      NumaNode n;
      auto online = rd_.text("sys/devices/system/cpu/online");
      if (online && parse_cpulist(*online)) {
        n.cpulist = *online;
        n.cpumap = cpus_to_cpumap(*parse_cpulist(*online));
      }
      topo_.numa_nodes.push_back(std::move(n));
    }
  }

  std::optional<std::uint32_t> hex_attr(const fs::path& dir, const char* attr, const std::string& subject,
                                        bool required) {
    auto t = rd_.text(dir / attr);
    if (!t) {
      if (required) rd_.problem(dir / attr, subject, true, "");
      return std::nullopt;
    }
    auto v = parse_hex(*t);
    if (!v) rd_.problem(dir / attr, subject, false, "expected a hex number, got '" + *t + "'");
    return v;
  }

  std::optional<double> speed_attr(const fs::path& dir, const char* attr, const std::string& subject) {
    auto t = rd_.text(dir / attr);
    if (!t) return std::nullopt;  // VMs and old kernels omit link files: unknown, not a problem
    if (lower(*t).find("unknown") != std::string::npos) return std::nullopt;
    auto v = parse_link_speed_GTps(*t);
    if (!v) rd_.problem(dir / attr, subject, false, "expected '<n> GT/s', got '" + *t + "'");
    return v;
  }

  std::optional<int> width_attr(const fs::path& dir, const char* attr, const std::string& subject) {
    auto t = rd_.text(dir / attr);
    if (!t) return std::nullopt;
    auto v = parse_int(*t);
    if (!v || *v < 0 || *v > 64) {
      rd_.problem(dir / attr, subject, false, "expected a lane count, got '" + *t + "'");
      return std::nullopt;
    }
    if (*v == 0) return std::nullopt;  // the kernel writes 0 when the link is unknown
    return static_cast<int>(*v);
  }

  void read_pci() {
    const fs::path bus = "sys/bus/pci/devices";
    const auto names = rd_.list(bus);
    if (names.empty()) {
      rd_.problem(bus, "node", true, "no PCI devices found");
      return;
    }
    for (const auto& name : names) {
      auto resolved = rd_.resolve(bus / name);
      if (!resolved) {
        rd_.problem(bus / name, name, true, "dangling link");
        continue;
      }
      PciFunction f;
      f.bdf = lower(name);
      f.sysfs_dir = resolved->string();
      // The chain: ... / pciDDDD:BB / BDF (root port) / BDF (switch) / ... / BDF (this function).
      std::vector<std::string> comps;
      for (const auto& c : *resolved) comps.push_back(c.string());
      size_t hb = comps.size();
      for (size_t i = 0; i < comps.size(); ++i)
        if (is_host_bridge_name(comps[i])) hb = i;
      if (hb < comps.size()) {
        f.host_bridge = comps[hb];
        for (size_t i = hb + 1; i + 1 < comps.size(); ++i)
          if (is_bdf(comps[i])) f.bridges.push_back(lower(comps[i]));
      } else {
        f.host_bridge = "unknown";
      }
      const fs::path dir = *resolved;
      f.vendor = hex_attr(dir, "vendor", f.bdf, true);
      f.device = hex_attr(dir, "device", f.bdf, true);
      f.class_code = hex_attr(dir, "class", f.bdf, true);
      f.subsystem_vendor = hex_attr(dir, "subsystem_vendor", f.bdf, false);
      f.subsystem_device = hex_attr(dir, "subsystem_device", f.bdf, false);
      if (auto t = rd_.text(dir / "numa_node")) {
        auto v = parse_int(*t);
        if (!v) rd_.problem(dir / "numa_node", f.bdf, false, "expected an integer, got '" + *t + "'");
        else if (*v >= 0) f.numa = static_cast<int>(*v);
      }
      if (auto t = rd_.text(dir / "local_cpulist")) f.local_cpulist = *t;
      f.link.cur_speed_GTps = speed_attr(dir, "current_link_speed", f.bdf);
      f.link.max_speed_GTps = speed_attr(dir, "max_link_speed", f.bdf);
      f.link.cur_width = width_attr(dir, "current_link_width", f.bdf);
      f.link.max_width = width_attr(dir, "max_link_width", f.bdf);
      if (f.is_bridge()) {
        if (auto cfg = rd_.bytes(dir / "config")) f.acs = parse_acs(*cfg);
      }
      topo_.pci.emplace(f.bdf, std::move(f));
    }
    // A single NUMA node makes "-1" unambiguous: every device is on it.
    if (topo_.numa_nodes.size() == 1) {
      for (auto& [bdf, f] : topo_.pci)
        if (!f.numa) f.numa = topo_.numa_nodes.front().id;
    }
  }

  void read_gpus() {
    for (const auto& [bdf, f] : topo_.pci) {  // std::map: BDF order = PCI bus order
      if (!f.vendor || *f.vendor != 0x10de || !f.class_code) continue;
      const std::uint32_t cls = *f.class_code >> 8;
      if (cls != 0x0300 && cls != 0x0302) continue;
      Gpu g;
      g.index = static_cast<int>(topo_.gpus.size());
      g.name = "GPU" + std::to_string(g.index);
      g.bdf = bdf;
      auto [model, sm] = gpu_model(f.device.value_or(0));
      g.model = model;
      g.sm = sm;
      g.numa = f.numa;
      g.cpulist = f.local_cpulist;
      if (g.cpulist.empty() && g.numa) {
        for (const auto& n : topo_.numa_nodes)
          if (n.id == *g.numa) g.cpulist = n.cpulist;
      }
      topo_.gpus.push_back(std::move(g));
    }
  }

  void read_port(Nic& nic, const fs::path& ibdir, const std::string& pname) {
    Port p;
    p.num = static_cast<int>(parse_int(pname).value_or(1));
    const fs::path pd = ibdir / "ports" / pname;
    if (auto t = rd_.text(pd / "link_layer")) p.link_layer = *t;
    else rd_.problem(pd / "link_layer", nic.name, true, "");
    if (auto t = rd_.text(pd / "state")) p.state = parse_port_state(*t);
    else rd_.problem(pd / "state", nic.name, true, "");
    if (auto t = rd_.text(pd / "phys_state")) p.phys_state = parse_port_state(*t);
    if (auto t = rd_.text(pd / "rate")) {
      p.rate_text = *t;
      p.rate_Gbps = parse_rate_Gbps(*t);
      if (!p.rate_Gbps) rd_.problem(pd / "rate", nic.name, false, "expected '<n> Gb/sec', got '" + *t + "'");
    } else {
      rd_.problem(pd / "rate", nic.name, true, "");
    }
    for (const auto& gname : rd_.list(pd / "gids")) {
      auto idx = parse_int(gname);
      if (!idx) continue;
      auto gid = rd_.text(pd / "gids" / gname);
      if (!gid || gid_is_zero(*gid)) continue;
      GidEntry e;
      e.index = static_cast<int>(*idx);
      e.gid = *gid;
      e.ipv4 = gid_is_ipv4_mapped(*gid);
      if (auto t = rd_.text(pd / "gid_attrs/types" / gname)) e.type = *t;
      if (auto t = rd_.text(pd / "gid_attrs/ndevs" / gname)) e.netdev = *t;
      p.gids.push_back(std::move(e));
    }
    for (const auto& g : p.gids)
      if (lower(g.type) == "roce v2" && g.ipv4) {
        p.recommended_gid = g.index;
        break;
      }
    if (!p.recommended_gid)
      for (const auto& g : p.gids)
        if (lower(g.type) == "roce v2") {
          p.recommended_gid = g.index;
          break;
        }
    // The port's netdev: from the GID table, else dev_port (0-based) of the function's netdevs.
    for (const auto& g : p.gids)
      if (!g.netdev.empty()) {
        p.netdev = g.netdev;
        break;
      }
    if (p.netdev.empty()) {
      for (const auto& nd : nic.netdevs) {
        auto dp = rd_.text(fs::path("sys/class/net") / nd / "dev_port");
        const long long port0 = dp ? parse_int(*dp).value_or(0) : 0;
        if (port0 + 1 == p.num) {
          p.netdev = nd;
          break;
        }
      }
    }
    if (!p.netdev.empty()) read_netdev(p);
    nic.ports.push_back(std::move(p));
  }

  void read_netdev(Port& p) {
    const fs::path nd = fs::path("sys/class/net") / p.netdev;
    if (auto t = rd_.text(nd / "mtu")) {
      auto v = parse_int(*t);
      if (v && *v > 0) p.mtu_bytes = static_cast<int>(*v);
      else rd_.problem(nd / "mtu", p.netdev, false, "expected an integer, got '" + *t + "'");
    } else if (p.is_roce()) {
      rd_.problem(nd / "mtu", p.netdev, true, "");
    }
    // ECN / DCQCN (MLNX_OFED): ecn/roce_rp and ecn/roce_np, each with enable/<prio> and attributes
    // either directly in the directory or under params/.
    for (const char* side : {"roce_rp", "roce_np"}) {
      const fs::path dir = nd / "ecn" / side;
      if (!rd_.exists(dir)) continue;
      p.ecn.present = true;
      auto& en = std::string(side) == "roce_rp" ? p.ecn.rp_enable : p.ecn.np_enable;
      auto& params = std::string(side) == "roce_rp" ? p.ecn.rp_params : p.ecn.np_params;
      for (const auto& prio : rd_.list(dir / "enable")) {
        auto pi = parse_int(prio);
        if (!pi || *pi < 0 || *pi > 7) continue;
        auto t = rd_.text(dir / "enable" / prio);
        if (!t) continue;
        auto v = parse_int(*t);
        if (!v || (*v != 0 && *v != 1)) {
          rd_.problem(dir / "enable" / prio, p.netdev, false, "expected 0 or 1, got '" + *t + "'");
          continue;
        }
        en[static_cast<int>(*pi)] = *v == 1;
      }
      for (const fs::path& pdir : {dir, dir / "params"}) {
        for (const auto& attr : rd_.list(pdir)) {
          if (attr == "enable" || attr == "params") continue;
          if (auto t = rd_.text(pdir / attr)) params[attr] = *t;
        }
      }
    }
    // PFC and trust (MLNX_OFED qos files); absent upstream, then unknown.
    const fs::path qos = nd / "qos";
    if (auto t = rd_.text(qos / "pfc")) {
      p.qos.pfc = parse_pfc(*t);
      if (!p.qos.pfc) rd_.problem(qos / "pfc", p.netdev, false, "expected 8 per-priority flags");
    }
    if (auto t = rd_.text(qos / "trust")) {
      p.qos.trust = parse_trust(*t);
      if (p.qos.trust.empty()) rd_.problem(qos / "trust", p.netdev, false, "expected dscp or pcp, got '" + *t + "'");
    }
  }

  void read_nics() {
    const fs::path cls = "sys/class/infiniband";
    for (const auto& name : rd_.list(cls)) {
      auto dev = rd_.resolve(cls / name / "device");
      if (!dev) continue;  // soft RoCE / virtual devices have no PCI function
      Nic nic;
      nic.name = name;
      nic.bdf = lower(dev->filename().string());
      auto fit = topo_.pci.find(nic.bdf);
      if (fit == topo_.pci.end()) {
        rd_.problem(cls / name / "device", name, true, "its PCI function " + nic.bdf + " is not in sys/bus/pci/devices");
        continue;
      }
      const PciFunction& f = fit->second;
      nic.model = nic_model(f.vendor.value_or(0), f.device.value_or(0));
      nic.numa = f.numa;
      if (auto t = rd_.text(cls / name / "node_guid")) nic.node_guid = *t;
      nic.netdevs = rd_.list(*dev / "net");
      const auto ports = rd_.list(cls / name / "ports");
      if (ports.empty()) rd_.problem(cls / name / "ports", name, true, "no ports");
      for (const auto& pn : ports)
        if (parse_int(pn)) read_port(nic, cls / name, pn);
      topo_.nics.push_back(std::move(nic));
    }
    std::sort(topo_.nics.begin(), topo_.nics.end(),
              [](const Nic& a, const Nic& b) { return natural_less(a.name, b.name); });
    for (size_t i = 0; i < topo_.nics.size(); ++i) topo_.nics[i].index = static_cast<int>(i);
  }

  void read_gdr() {
    for (const char* p : {"sys/module/nvidia_peermem", "sys/kernel/mm/memory_peers/nv_mem/version",
                          "sys/module/nv_peer_mem"}) {
      if (rd_.exists(p)) {
        topo_.gdr_module = true;
        topo_.gdr_source = p;
        return;
      }
    }
  }

  const ProbeOptions& opts_;
  SysfsReader rd_;
  Topology topo_;
};

}  // namespace

std::pair<std::string, int> gpu_model(std::uint32_t device_id) {
  for (const auto& g : kGpus)
    if (g.device == device_id) return {g.model, g.sm};
  return {"10de:" + hex4(device_id), 0};
}

std::string nic_model(std::uint32_t vendor, std::uint32_t device_id) {
  for (const auto& n : kNics)
    if (n.vendor == vendor && n.device == device_id) return n.model;
  return hex4(vendor) + ":" + hex4(device_id);
}

Topology probe_node(const ProbeOptions& opts) {
  std::error_code ec;
  if (!fs::is_directory(opts.root, ec))
    throw UsageError("--root " + opts.root.string() + " is not a directory");
  std::optional<std::string> nvsmi_text;
  if (opts.nvidia_smi_topo) {
    try {
      nvsmi_text = read_file(*opts.nvidia_smi_topo, std::uint64_t{1} << 20);  // a matrix of a few KiB
    } catch (const IoError& e) {
      throw UsageError("--nvidia-smi-topo " + opts.nvidia_smi_topo->string() + ": cannot read the file (" + e.what() + ")");
    } catch (const UsageError& e) {
      throw UsageError(std::string("--nvidia-smi-topo ") + e.what());
    }
  }
  Topology topo = Prober(opts).run();
  if (nvsmi_text) {
    apply_nvsmi_topo(topo, *nvsmi_text, opts.nvidia_smi_topo->string());
  } else if (opts.live_queries) {
    apply_nvml(topo);
  }
  if (opts.live_queries) topo.verbs_queried = query_verbs(topo);
  return topo;
}

}  // namespace railkit::topo
