// NCCL topology XML, version 1 (the format of NCCL_TOPO_FILE / NCCL_TOPO_DUMP_FILE).
#include <cstdio>
#include <map>
#include <memory>
#include <sstream>

#include "topology/analyze.hpp"
#include "topology/render.hpp"

namespace railkit::topo {
namespace {

std::string esc(const std::string& s) {
  std::string o;
  for (char c : s) {
    switch (c) {
      case '&': o += "&amp;"; break;
      case '<': o += "&lt;"; break;
      case '>': o += "&gt;"; break;
      case '"': o += "&quot;"; break;
      default: o += c;
    }
  }
  return o;
}

std::string hexv(const std::optional<std::uint32_t>& v, int digits) {
  if (!v) return "";
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%0*x", digits, *v);
  return buf;
}

// NCCL's spelling of PCIe generations ("16.0 GT/s PCIe"; 2.5 keeps its decimal).
std::string speed_text(const std::optional<double>& s) {
  if (!s) return "";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f GT/s PCIe", *s);
  return buf;
}

struct Node {
  std::string bdf;
  std::map<std::string, std::unique_ptr<Node>> children;  // ordered by BDF
  std::vector<std::string> payload;                        // <gpu/> or <nic>...</nic> lines
};

void attrs_of(const PciFunction& f, std::ostringstream& os) {
  os << " busid=\"" << f.bdf << "\" class=\"" << hexv(f.class_code, 6) << "\" vendor=\"" << hexv(f.vendor, 4)
     << "\" device=\"" << hexv(f.device, 4) << "\" subsystem_vendor=\"" << hexv(f.subsystem_vendor, 4)
     << "\" subsystem_device=\"" << hexv(f.subsystem_device, 4) << "\" link_speed=\"" << speed_text(f.link.max_speed_GTps)
     << "\" link_width=\"" << (f.link.max_width ? std::to_string(*f.link.max_width) : "") << "\"";
}

void emit(const Topology& t, const Node& n, int depth, std::ostringstream& os) {
  const std::string ind(static_cast<size_t>(depth) * 2, ' ');
  const PciFunction* f = t.function(n.bdf);
  os << ind << "<pci";
  if (f) attrs_of(*f, os);
  else os << " busid=\"" << n.bdf << "\"";
  if (n.children.empty() && n.payload.empty()) {
    os << "/>\n";
    return;
  }
  os << ">\n";
  for (const auto& line : n.payload) os << ind << "  " << line << "\n";
  for (const auto& [bdf, c] : n.children) emit(t, *c, depth + 1, os);
  os << ind << "</pci>\n";
}

}  // namespace

std::string render_nccl_xml(const Topology& t) {
  // One tree of PCI nodes per NUMA node, holding the chains that lead to GPUs and NICs. As in
  // the XML NCCL builds from sysfs itself, a switch is one node (its upstream port); root and
  // downstream ports are not nodes, so NCCL computes the same PIX/PXB paths as the probe.
  std::map<int, std::map<std::string, std::unique_ptr<Node>>> roots;
  auto leaf = [&](const PciFunction& f) -> Node& {
    auto& level0 = roots[f.numa.value_or(t.numa_nodes.empty() ? 0 : t.numa_nodes.front().id)];
    std::vector<std::string> chain = pci_switches(f);
    chain.push_back(f.bdf);
    std::map<std::string, std::unique_ptr<Node>>* level = &level0;
    Node* node = nullptr;
    for (const auto& b : chain) {
      auto& slot = (*level)[b];
      if (!slot) {
        slot = std::make_unique<Node>();
        slot->bdf = b;
      }
      node = slot.get();
      level = &node->children;
    }
    return *node;
  };
  const std::string gdr = t.gdr_module ? "1" : "0";
  for (const auto& g : t.gpus) {
    const PciFunction* f = t.function(g.bdf);
    if (!f) continue;
    leaf(*f).payload.push_back("<gpu dev=\"" + std::to_string(g.index) + "\" sm=\"" + std::to_string(g.sm) + "\" rank=\"" +
                               std::to_string(g.index) + "\" gdr=\"" + gdr + "\"/>");
  }
  int net_dev = 0;  // NCCL numbers every port as its own net device
  for (const auto& n : t.nics) {
    const PciFunction* f = t.function(n.bdf);
    if (!f) continue;
    std::string guid = n.node_guid;
    std::string g;
    for (char c : guid)
      if (c != ':') g += c;
    std::string s = "<nic>";
    for (const auto& p : n.ports) {
      const long speed_Mbps = p.rate_Gbps ? static_cast<long>(*p.rate_Gbps * 1000.0) : 0;
      s += "<net name=\"" + esc(n.name) + "\" dev=\"" + std::to_string(net_dev++) + "\" speed=\"" + std::to_string(speed_Mbps) +
           "\" port=\"" + std::to_string(p.num) + "\" latency=\"0.000000\" guid=\"0x" + esc(g.empty() ? "0" : g) +
           "\" maxconn=\"131072\" gdr=\"" + gdr + "\"/>";
    }
    s += "</nic>";
    leaf(*f).payload.push_back(s);
  }
  std::ostringstream os;
  os << "<system version=\"1\">\n";
  for (const auto& numa : t.numa_nodes) {
    os << "  <cpu numaid=\"" << numa.id << "\" affinity=\"" << esc(numa.cpumap) << "\"";
    if (!t.cpu_arch.empty()) os << " arch=\"" << esc(t.cpu_arch) << "\"";
    if (!t.cpu_vendor.empty()) os << " vendor=\"" << esc(t.cpu_vendor) << "\"";
    if (!t.cpu_family.empty()) os << " familyid=\"" << esc(t.cpu_family) << "\"";
    if (!t.cpu_model.empty()) os << " modelid=\"" << esc(t.cpu_model) << "\"";
    auto it = roots.find(numa.id);
    if (it == roots.end()) {
      os << "/>\n";
      continue;
    }
    os << ">\n";
    for (const auto& [bdf, n] : it->second) emit(t, *n, 2, os);
    os << "  </cpu>\n";
  }
  os << "</system>\n";
  return os.str();
}

}  // namespace railkit::topo
