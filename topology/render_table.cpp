#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <sstream>

#include "core/units.hpp"
#include "topology/analyze.hpp"
#include "topology/parse.hpp"
#include "topology/render.hpp"

namespace railkit::topo {
namespace {


// A matrix cell. With NVLink unknown, GPU-GPU cells show the PCIe path, as nvidia-smi does for
// GPUs without NVLink (the legend says NVLink is unknown).
std::string cell(const Topology& t, const std::string& a, const std::string& b) {
  if (a == b) return "X";
  const PathEntry* p = t.path(a, b);
  if (!p) return "?";
  if (p->path.type == PathType::Unknown) return p->pci.empty() || p->pci == "unknown" ? "?" : p->pci;
  return p->path.str();
}

void matrix(const Topology& t, std::ostream& os) {
  std::vector<std::string> devs;
  for (const auto& g : t.gpus) devs.push_back(g.name);
  for (const auto& n : t.nics) devs.push_back("NIC" + std::to_string(n.index));
  std::vector<std::string> names;  // names used in paths
  for (const auto& g : t.gpus) names.push_back(g.name);
  for (const auto& n : t.nics) names.push_back(n.name);
  if (devs.empty()) {
    os << "No GPU and no RDMA NIC found under " << t.root << "\n";
    return;
  }
  os << fmt::format("{:<8}", "");
  for (const auto& d : devs) os << fmt::format("{:<7}", d);
  os << fmt::format("{:<20}{}\n", "CPU Affinity", "NUMA Affinity");
  for (size_t i = 0; i < devs.size(); ++i) {
    os << fmt::format("{:<8}", devs[i]);
    for (size_t j = 0; j < devs.size(); ++j) os << fmt::format("{:<7}", cell(t, names[i], names[j]));
    std::string cpus, numa = "N/A";
    if (i < t.gpus.size()) {
      cpus = t.gpus[i].cpulist;
      if (t.gpus[i].numa) numa = std::to_string(*t.gpus[i].numa);
    } else {
      const Nic& n = t.nics[i - t.gpus.size()];
      if (const auto* f = t.function(n.bdf)) cpus = f->local_cpulist;
      if (n.numa) numa = std::to_string(*n.numa);
    }
    os << fmt::format("{:<20}{}\n", cpus.empty() ? "N/A" : cpus, numa);
  }
  os << "\nLegend:\n\n"
        "  X    = Self\n"
        "  SYS  = Connection traversing PCIe as well as the SMP interconnect between NUMA nodes\n"
        "  NODE = Connection traversing PCIe as well as the interconnect between PCIe Host Bridges within a NUMA node\n"
        "  PHB  = Connection traversing PCIe as well as a PCIe Host Bridge (typically the CPU)\n"
        "  PXB  = Connection traversing multiple PCIe bridges (without traversing the PCIe Host Bridge)\n"
        "  PIX  = Connection traversing at most a single PCIe bridge\n"
        "  NV#  = Connection traversing a bonded set of # NVLinks\n";
  if (t.gpus.size() >= 2 && t.nvlink_source.empty())
    os << "  GPU-GPU cells show the PCIe path: NVLink is unknown (no NVML on this root, no --nvidia-smi-topo),\n"
          "  so a pair shown SYS/NODE/PHB/PXB/PIX may still be NV#\n";
  if (!t.nics.empty()) {
    os << "\nNIC Legend:\n\n";
    for (const auto& n : t.nics) os << "  NIC" << n.index << ": " << n.name << "\n";
  }
}

void rails(const Topology& t, std::ostream& os) {
  os << "\nRails:\n";
  if (t.rails.empty()) {
    os << "  none (no GPU with a reachable RDMA NIC)\n";
  } else {
    for (const auto& r : t.rails) {
      const Nic* n = t.nic(r.nic);
      const Gpu* g = t.gpu(r.gpu);
      const Port* p = n ? n->main_port() : nullptr;
      // ACS on the switch ports between the GPU and its NIC: off, on (listing the ports), or unknown.
      std::string acs = "-";
      const PciFunction* fg = g ? t.function(g->bdf) : nullptr;
      const PciFunction* fn = n ? t.function(n->bdf) : nullptr;
      if (fg && fn) {
        const auto bridges = p2p_bridges(*fg, *fn);
        std::string on;
        bool unknown = false;
        for (const auto& b : bridges) {
          const PciFunction* fb = t.function(b);
          if (!fb || !fb->acs.config_complete) unknown = true;
          else if (fb->acs.present && fb->acs.control != 0) on += (on.empty() ? "" : ",") + b;
        }
        if (!bridges.empty()) acs = !on.empty() ? "ACS on " + on : unknown ? "ACS ?" : "ACS off";
      }
      os << fmt::format("  {:<6} -> {:<10} {:<5} {:<10} {:<14} {}{}{}\n", r.gpu, r.nic + ":" + std::to_string(r.port),
                        r.path.str(), p && p->rate_Gbps ? format_number(*p->rate_Gbps) + " Gb/s" : "? Gb/s", p ? p->netdev : "", acs,
                        r.shared ? "  (shared)" : "", r.borrowed ? "  (borrowed: its own rail NIC is missing)" : "");
    }
  }
  std::string others;
  for (const auto& n : t.nics)
    if (!n.rail) others += (others.empty() ? "" : ", ") + n.name;
  if (!others.empty()) os << "  Not rails (serve no GPU: storage / in-band): " << others << "\n";
  if (!t.gpus.empty() && !t.nics.empty())
    os << (t.rail_optimized
               ? "  A rail NIC sits behind its GPU's PCIe switch (PIX/PXB); NICs behind no GPU's switch are in-band, never rails\n"
               : "  No NIC behind most GPUs' PCIe switches: each GPU takes its nearest NIC\n");
  if (!t.nccl_ib_hca.empty()) {
    os << "  NCCL_IB_HCA=\"" << t.nccl_ib_hca << "\"\n  Per local rank:";
    for (size_t i = 0; i < t.per_rank_hca.size(); ++i) os << " " << i << "=" << t.per_rank_hca[i];
    os << "\n";
  }
  os << "  GPUDirect RDMA module: " << (t.gdr_module ? "loaded (" + t.gdr_source + ")" : std::string("not loaded")) << "\n";
  os << "  NVLink source: " << (t.nvlink_source.empty() ? std::string("none (unknown)") : t.nvlink_source) << "\n";
}

std::string onoff(const std::map<int, bool>& m, int prio) {
  auto it = m.find(prio);
  return it == m.end() ? "?" : (it->second ? "on" : "off");
}

// Who uses a port: the GPUs whose rail it is (the NIC's port in use only), "in-band", or "-".
std::string port_use(const Nic& n, const Port& p) {
  if (n.main_port() != &p) return "-";
  if (!n.gpus.empty()) {
    std::string g;
    for (const auto& s : n.gpus) g += (g.empty() ? "" : ",") + s;
    return "rail " + g;
  }
  return n.in_band ? "in-band" : "-";
}

void roce_ports(const Topology& t, int prio, std::ostream& os) {
  bool any = false;
  for (const auto& n : t.nics)
    for (const auto& p : n.ports) any = any || !p.link_layer.empty();
  if (!any) return;
  size_t nw = 8;
  for (const auto& n : t.nics)
    for (const auto& p : n.ports) nw = std::max(nw, p.netdev.size() + 2);
  const std::string ecn_h = fmt::format("ECN p{}", prio), pfc_h = fmt::format("PFC p{} trust", prio);
  os << "\nRDMA ports:\n";
  os << fmt::format("  {:<9}{:<5}{:<12}{:<{}}{:<9}{:<9}{:<7}{:<8}{:<8}{:<10}{:<15}{}\n", "NIC", "port", "layer", "netdev", nw,
                    "state", "phys", "Gb/s", "MTU(B)", "v2 GID", ecn_h, pfc_h, "use");
  for (const auto& n : t.nics)
    for (const auto& p : n.ports) {
      const std::string ecn = p.ecn.present ? onoff(p.ecn.rp_enable, prio) + "/" + onoff(p.ecn.np_enable, prio) : "n/a";
      std::string pfc = p.qos.pfc ? ((*p.qos.pfc)[static_cast<size_t>(prio)] ? "on" : "off") : "n/a";
      pfc += " " + (p.qos.trust.empty() ? std::string("n/a") : p.qos.trust);
      os << fmt::format("  {:<9}{:<5}{:<12}{:<{}}{:<9}{:<9}{:<7}{:<8}{:<8}{:<10}{:<15}{}\n", n.name, p.num,
                        p.link_layer.empty() ? "?" : p.link_layer, p.netdev.empty() ? "-" : p.netdev, nw,
                        p.state.empty() ? "?" : p.state, p.phys_state.empty() ? "?" : p.phys_state,
                        p.rate_Gbps ? format_number(*p.rate_Gbps) : "?", p.mtu_bytes ? std::to_string(*p.mtu_bytes) : "-",
                        p.is_roce() ? (p.recommended_gid ? std::to_string(*p.recommended_gid) : "none") : "-",
                        p.is_roce() ? ecn : "-", p.is_roce() ? pfc : "-", port_use(n, p));
    }
  os << "  layer: link layer (Ethernet = RoCE); state, phys: port state and physical state (usable: ACTIVE, LinkUp)\n"
        "  Gb/s: port rate in Gb/s (ports/N/rate); MTU(B): netdev MTU in bytes (RoCE needs >= 4200 for a 4096-byte RDMA MTU)\n"
        "  v2 GID: the RoCE v2 GID index to use (IPv4-mapped first; NCCL_IB_GID_INDEX), none = no RoCE v2 GID\n";
  os << fmt::format("  {}: DCQCN reaction/notification point enabled on priority {} (ecn/roce_rp, ecn/roce_np)\n", ecn_h, prio);
  os << fmt::format("  {}: PFC on priority {}, then the QoS trust mode (MLNX_OFED qos/pfc, qos/trust)\n", pfc_h, prio);
  os << "  use: the GPUs this port is the rail of; in-band = behind no GPU's PCIe switch, never a rail\n"
        "  - = not applicable (not RoCE, no netdev); n/a = not visible on this node (no such file); ? = unreadable\n";
}

}  // namespace

std::string render_table(const Topology& t, const TableOptions& opts) {
  std::ostringstream os;
  if (!opts.findings_only) {
    os << "Node " << t.host << " (root " << t.root << "), fingerprint " << t.fingerprint.hash << "\n\n";
    matrix(t, os);
    rails(t, os);
    roce_ports(t, opts.priority, os);
    os << "\n";
  }
  int e = 0, w = 0, i = 0;
  for (const auto& f : t.findings)
    (f.severity == Severity::Error ? e : f.severity == Severity::Warning ? w : i)++;
  os << "Findings on " << t.host << ": " << e << " error(s), " << w << " warning(s), " << i << " info\n";
  for (const auto& f : t.findings) {
    os << fmt::format("  {:<8}{:<26}{:<14}{}\n", severity_name(f.severity), f.check, f.subject, f.message);
    if (!f.fix.empty()) os << fmt::format("  {:<48}fix: {}\n", "", f.fix);
  }
  return os.str();
}

namespace {

// "mlx5_0:PXB,mlx5_1:NODE" -> {mlx5_0: PXB, mlx5_1: NODE}; empty when the value is not such a list.
std::map<std::string, std::string> keyed_list(const std::string& v) {
  std::map<std::string, std::string> out;
  size_t start = 0;
  while (start <= v.size()) {
    const size_t end = std::min(v.find(',', start), v.size());
    const std::string item = v.substr(start, end - start);
    const size_t colon = item.rfind(':');
    if (colon == std::string::npos || colon == 0) return {};
    out[item.substr(0, colon)] = item.substr(colon + 1);
    start = end + 1;
  }
  return out;
}

// The entries of a keyed list that differ from the reference: "mlx5_0 PXB -> absent".
std::string list_changes(const std::map<std::string, std::string>& ref, const std::map<std::string, std::string>& v) {
  std::vector<std::string> keys;
  for (const auto& [k, x] : ref) keys.push_back(k);
  for (const auto& [k, x] : v)
    if (!ref.count(k)) keys.push_back(k);
  std::sort(keys.begin(), keys.end(), [](const std::string& a, const std::string& b) { return natural_less(a, b); });
  std::string out;
  for (const auto& k : keys) {
    const auto a = ref.find(k), b = v.find(k);
    const std::string was = a == ref.end() ? "absent" : a->second, now = b == v.end() ? "absent" : b->second;
    if (was != now) out += (out.empty() ? "" : "; ") + k + " " + was + " -> " + now;
  }
  return out;
}

void diff_lines(const FactDiff& d, std::ostream& os) {
  if (d.kind == DiffKind::Device) {
    os << "  " << d.fact << ": " << (d.majority == "present" ? "absent on " : "extra on ") << d.nodes.size() << " node(s)\n";
    for (const auto& [node, v] : d.nodes) os << "    " << node << ": " << v << "\n";
    return;
  }
  const auto ref = d.tie ? std::map<std::string, std::string>{} : keyed_list(d.majority);
  if (ref.size() > 1) {  // a long list (GPU<i>.nic_paths): only the entries that differ
    os << "  " << d.fact << ": " << ref.size() << " entries; those that differ from the majority\n";
    for (const auto& [node, v] : d.nodes) {
      const auto mine = keyed_list(v);
      os << "    " << node << ": " << (v == "<absent>" ? v : mine.empty() ? v : list_changes(ref, mine)) << "\n";
    }
    return;
  }
  os << "  " << d.fact << ": " << (d.tie ? "no majority" : "majority '" + d.majority + "'") << "\n";
  for (const auto& [node, v] : d.nodes) os << "    " << node << ": " << v << "\n";
}

}  // namespace

std::string render_compare_table(const CompareReport& rep) {
  std::ostringstream os;
  if (rep.all_equal()) {
    os << "All " << rep.nodes << " nodes have the same topology fingerprint " << rep.majority_hash << "\n";
    return os.str();
  }
  if (rep.tie) {
    os << "No majority fingerprint among " << rep.nodes << " nodes: each fact is compared with its most common value\n";
  } else {
    os << "Majority fingerprint " << rep.majority_hash << " (" << rep.majority_count << " of " << rep.nodes << " nodes)\n";
  }
  if (!rep.odd_nodes.empty()) {
    os << "Nodes that differ:";
    for (const auto& n : rep.odd_nodes) os << " " << n;
    os << "\n";
  }
  os << "\nDifferences, most telling first (absent or extra devices, counts, device facts, rails, paths):\n";
  for (const auto& d : rep.diffs)
    if (!d.presence_only) diff_lines(d, os);  // an absent device's own facts: its device line says it
  return os.str();
}

}  // namespace railkit::topo
