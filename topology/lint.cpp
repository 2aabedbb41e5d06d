#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <sstream>
#include <tuple>

#include "core/units.hpp"
#include "topology/analyze.hpp"
#include "topology/parse.hpp"

namespace railkit::topo {
namespace {


Finding make(std::string check, Severity sev, std::string subject, std::string message, std::string fix) {
  return Finding{std::move(check), sev, std::move(subject), std::move(message), std::move(fix)};
}

class Linter {
 public:
  Linter(const Topology& t, const LintOptions& o) : t_(t), o_(o) {}

  std::vector<Finding> run() {
    out_ = t_.input_problems;
    ports();
    roce();
    links();
    rails();
    acs();
    gdr();
    nvlink();
    verbs();
    return std::move(out_);
  }

 private:
  void ports() {
    for (const auto& n : t_.nics) {
      const Port* main = n.main_port();
      for (const auto& p : n.ports) {
        if (p.state.empty()) continue;  // unreadable: already an input finding
        const bool active = p.state == "ACTIVE";
        const bool up = p.phys_state.empty() || p.phys_state == "LinkUp";
        if (active && up) continue;
        const bool critical = n.rail && &p == main;
        out_.push_back(make("port.not_active", critical ? Severity::Error : Severity::Warning, n.name,
                            n.name + " port " + std::to_string(p.num) + " is " + p.state +
                                (p.phys_state.empty() ? "" : " / " + p.phys_state) +
                                (critical ? " (the rail port)" : n.rail ? " (rail NIC, not the port in use)" : " (not a rail NIC)"),
                            "check the cable, the switch port and `ibstat " + n.name + "`; the port must be ACTIVE/LinkUp"));
      }
    }
  }

  void roce() {
    const int prio = o_.priority;
    for (const auto& n : t_.nics) {
      if (!n.rail) continue;
      const Port* p = n.main_port();
      if (!p || !p->is_roce()) continue;
      const bool has_v2 = std::any_of(p->gids.begin(), p->gids.end(), [](const GidEntry& g) {
        std::string ty = g.type;
        std::transform(ty.begin(), ty.end(), ty.begin(), [](unsigned char c) { return std::tolower(c); });
        return ty == "roce v2";
      });
      if (!has_v2)
        out_.push_back(make("gid.no_rocev2", Severity::Error, n.name,
                            n.name + " port " + std::to_string(p->num) + " has no RoCE v2 GID (" +
                                std::to_string(p->gids.size()) + " GIDs populated)",
                            "assign an IPv4/IPv6 address to " + (p->netdev.empty() ? std::string("its netdev") : p->netdev) +
                                " and make sure RoCE v2 is enabled (rdma_cm default_roce_mode, firmware)"));
      const std::string nd = p->netdev.empty() ? n.name : p->netdev;
      if (p->mtu_bytes && *p->mtu_bytes < 4200)
        out_.push_back(make("netdev.mtu_low", Severity::Warning, nd,
                            nd + " (" + n.name + ") MTU is " + std::to_string(*p->mtu_bytes) +
                                " bytes; RoCE needs >= 4200 for a 4096-byte RDMA MTU",
                            "ip link set " + nd + " mtu 9000 (and on the switch ports)"));
      if (p->ecn.present) {
        std::vector<std::string> off;
        if (auto it = p->ecn.rp_enable.find(prio); it != p->ecn.rp_enable.end() && !it->second) off.push_back("roce_rp");
        if (auto it = p->ecn.np_enable.find(prio); it != p->ecn.np_enable.end() && !it->second) off.push_back("roce_np");
        if (!off.empty()) {
          std::string which;
          for (const auto& s : off) which += (which.empty() ? "" : " and ") + s;
          out_.push_back(make("ecn.off", Severity::Warning, nd,
                              nd + " has ECN/DCQCN off on priority " + std::to_string(prio) + " (" + which + ")",
                              "echo 1 > /sys/class/net/" + nd + "/ecn/" + off.front() + "/enable/" + std::to_string(prio)));
        }
      }
      if (p->qos.pfc && !(*p->qos.pfc)[static_cast<size_t>(prio)])
        out_.push_back(make("qos.pfc_off", Severity::Warning, nd,
                            nd + " has PFC off on the RoCE priority " + std::to_string(prio),
                            "mlnx_qos -i " + nd + " --pfc with priority " + std::to_string(prio) + " set to 1"));
      if (!p->qos.trust.empty() && p->qos.trust != "dscp")
        out_.push_back(make("qos.trust_not_dscp", Severity::Warning, nd,
                            nd + " trusts " + p->qos.trust + ", not dscp",
                            "mlnx_qos -i " + nd + " --trust dscp"));
    }
  }

  void link_check(const PciFunction& f, const std::string& subject, bool is_gpu) {
    std::optional<double> cap_s = f.link.max_speed_GTps;
    std::optional<int> cap_w = f.link.max_width;
    if (!f.bridges.empty()) {
      if (const PciFunction* up = t_.function(f.bridges.back())) {
        if (up->link.max_speed_GTps && cap_s) cap_s = std::min(*cap_s, *up->link.max_speed_GTps);
        if (up->link.max_width && cap_w) cap_w = std::min(*cap_w, *up->link.max_width);
      }
    }
    const bool speed_low = f.link.cur_speed_GTps && cap_s && *f.link.cur_speed_GTps + 1e-6 < *cap_s;
    const bool width_low = f.link.cur_width && cap_w && *f.link.cur_width < *cap_w;
    if (!speed_low && !width_low) return;
    std::string msg = subject + (subject == f.bdf ? "" : " (" + f.bdf + ")") + " PCIe link runs at x" +
                      (f.link.cur_width ? std::to_string(*f.link.cur_width) : "?") + " " +
                      (f.link.cur_speed_GTps ? format_number(*f.link.cur_speed_GTps) : "?") + " GT/s, capable of x" +
                      (cap_w ? std::to_string(*cap_w) : "?") + " " + (cap_s ? format_number(*cap_s) : "?") + " GT/s";
    Severity sev = Severity::Error;
    if (is_gpu && !width_low) {
      sev = Severity::Info;
      msg += " (GPUs lower their link speed when idle: check again under load)";
    }
    out_.push_back(make("pcie.link_downgraded", sev, subject, msg,
                        "reseat the device or cable, check the slot and BIOS PCIe settings; compare with `lspci -vv` LnkSta/LnkCap"));
  }

  void links() {
    std::set<std::string> bridges;
    for (const auto& g : t_.gpus)
      if (const auto* f = t_.function(g.bdf)) {
        link_check(*f, g.name, true);
        bridges.insert(f->bridges.begin(), f->bridges.end());
      }
    for (const auto& n : t_.nics)
      if (const auto* f = t_.function(n.bdf)) {
        link_check(*f, n.name, false);
        if (n.rail) bridges.insert(f->bridges.begin(), f->bridges.end());
      }
    for (const auto& b : bridges)
      if (const auto* f = t_.function(b)) link_check(*f, b, false);
  }

  // On a rail-optimized node, a GPU with no NIC behind its own PCIe switch lost its rail NIC.
  void missing_rail_nics() {
    if (!t_.rail_optimized) return;
    size_t with_own = 0;
    std::map<std::string, const Rail*> rail_of;
    for (const auto& r : t_.rails) {
      rail_of[r.gpu] = &r;
      if (!r.borrowed) ++with_own;
    }
    for (const auto& g : t_.gpus) {
      const Rail* r = rail_of.count(g.name) ? rail_of[g.name] : nullptr;
      if (r && !r->borrowed) continue;
      std::string where = "its PCIe switch", place = "the GPU's PCIe switch";
      if (const PciFunction* f = t_.function(g.bdf)) {
        const auto sw = pci_switches(*f);
        if (!sw.empty()) {
          where += " " + sw.front();
          place = "PCIe switch " + sw.front();
        } else if (!f->bridges.empty()) {
          where = "its root port " + f->bridges.front() + " (no PCIe switch)";
          place = "root port " + f->bridges.front();
        }
      }
      std::string msg = g.name + " has no NIC behind " + where + " while " + std::to_string(with_own) + " of " +
                        std::to_string(t_.gpus.size()) + " GPUs have one: its rail NIC is missing";
      if (const Nic* near = nearest_nic(g)) {
        msg += "; nearest is " + near->name + " (" + t_.path(g.name, near->name)->path.str() + "), " +
               (near->in_band ? std::string("an in-band NIC on another switch, never a rail")
                              : near->gpus.empty() ? std::string("a NIC on another switch")
                                                   : "the rail NIC of " + join_names(near->gpus, g.name));
      }
      if (r) msg += "; " + g.name + " falls back to " + r->nic + " (" + r->path.str() + "), shared";
      out_.push_back(make("rail.nic_missing", Severity::Error, g.name, msg,
                          "look for the NIC that belongs under " + place +
                              ": `lspci -tv`, `dmesg | grep -i mlx5`, `ibdev2netdev`; reseat it or load its driver "
                              "(mlx5_core, mlx5_ib)"));
    }
  }

  // The NIC nearest to a GPU whatever its role: path type, then NUMA node, then index.
  const Nic* nearest_nic(const Gpu& g) const {
    const Nic* best = nullptr;
    std::tuple<int, int, int> best_key{};
    for (const auto& n : t_.nics) {
      const PathEntry* p = t_.path(g.name, n.name);
      if (!p || p->path.type == PathType::Unknown) continue;
      const std::tuple<int, int, int> key{p->path.rank(), (g.numa && n.numa && *g.numa == *n.numa) ? 0 : 1, n.index};
      if (!best || key < best_key) {
        best = &n;
        best_key = key;
      }
    }
    return best;
  }

  static std::string join_names(const std::vector<std::string>& names, const std::string& except) {
    std::string out;
    for (const auto& n : names)
      if (n != except) out += (out.empty() ? "" : ", ") + n;
    return out.empty() ? except : out;
  }

  void rails() {
    const size_t ngpu = t_.gpus.size();
    missing_rail_nics();
    for (const auto& r : t_.rails) {
      if (r.borrowed) continue;  // rail.nic_missing says why it is far
      const Gpu* g = t_.gpu(r.gpu);
      const Nic* n = t_.nic(r.nic);
      const bool other_numa = g && n && g->numa && n->numa && *g->numa != *n->numa;
      if (r.path.type == PathType::NODE || r.path.type == PathType::SYS || other_numa) {
        out_.push_back(make("rail.nic_far", Severity::Warning, r.gpu,
                            r.gpu + "'s nearest RDMA NIC " + r.nic + " is " + r.path.str() +
                                (other_numa ? " on another NUMA node" : "") +
                                ": traffic crosses the CPU interconnect and GPUDirect RDMA is off by default",
                            "put a NIC under the same PCIe switch as " + r.gpu + ", or rely on PXN (NCCL_PXN_DISABLE=0)"));
      } else if (r.path.type == PathType::PHB) {
        out_.push_back(make("rail.nic_phb", Severity::Info, r.gpu,
                            r.gpu + "'s nearest RDMA NIC " + r.nic +
                                " is PHB: NCCL uses GPUDirect RDMA only up to PXB by default",
                            "NCCL_NET_GDR_LEVEL=PHB if the host bridge handles peer-to-peer well"));
      }
    }
    // Rail NICs of different rates: the odd ones out against the most common rate.
    std::map<double, int> rates;
    for (const auto& n : t_.nics)
      if (n.rail && n.main_port() && n.main_port()->rate_Gbps) ++rates[*n.main_port()->rate_Gbps];
    if (rates.size() > 1) {
      double common = 0;
      int count = -1;
      for (const auto& [r, c] : rates)
        if (c > count) {
          common = r;
          count = c;
        }
      for (const auto& n : t_.nics) {
        if (!n.rail || !n.main_port() || !n.main_port()->rate_Gbps) continue;
        const double r = *n.main_port()->rate_Gbps;
        if (std::fabs(r - common) < 1e-9) continue;
        out_.push_back(make("rail.rate_mismatch", Severity::Warning, n.name,
                            n.name + " runs at " + format_number(r) + " Gb/s while most rail NICs run at " + format_number(common) +
                                " Gb/s: the slowest rail sets the pace of every collective",
                            "check the cable/transceiver and the switch port speed of " + n.name));
      }
    }
    std::set<std::string> rail_nics;
    for (const auto& r : t_.rails) rail_nics.insert(r.nic);
    if (ngpu > 0 && t_.nics.empty()) {
      out_.push_back(make("rail.no_rdma_nic", Severity::Warning, t_.host,
                          "no RDMA device in sys/class/infiniband: multi-node traffic will use TCP sockets",
                          "load the RDMA driver (mlx5_ib) or install the NICs"));
    } else if (ngpu > 0 && rail_nics.size() < ngpu) {
      out_.push_back(make("rail.fewer_nics_than_gpus", Severity::Warning, t_.host,
                          std::to_string(rail_nics.size()) + " rail NIC(s) for " + std::to_string(ngpu) +
                              " GPUs: GPUs share NICs, inter-node bandwidth per GPU is reduced",
                          "expected one RDMA NIC per GPU on rail-optimized nodes"));
    }
  }

  void acs() {
    std::set<std::string> done;
    int unknown = 0;
    for (const auto& r : t_.rails) {
      const Gpu* g = t_.gpu(r.gpu);
      const Nic* n = t_.nic(r.nic);
      if (!g || !n) continue;
      const PciFunction* fg = t_.function(g->bdf);
      const PciFunction* fn = t_.function(n->bdf);
      if (!fg || !fn) continue;
      for (const auto& b : p2p_bridges(*fg, *fn)) {
        if (!done.insert(b).second) continue;
        const PciFunction* fb = t_.function(b);
        if (!fb) continue;
        if (!fb->acs.config_complete) {
          ++unknown;
          continue;
        }
        if (!fb->acs.present || fb->acs.control == 0) continue;
        std::string bits;
        for (const auto& s : acs_control_bits(fb->acs.control)) bits += (bits.empty() ? "" : " ") + s;
        out_.push_back(make("pcie.acs_enabled", Severity::Error, b,
                            "PCIe bridge " + b + " between " + r.gpu + " and " + r.nic + " has ACS enabled (" + bits +
                                "): peer-to-peer traffic is redirected through the root complex, GPUDirect RDMA suffers or fails",
                            "disable ACS on the switch ports (BIOS, or `setpci -s " + b + " ECAP_ACS+0x6.w=0000` at boot)"));
      }
    }
    if (unknown > 0)
      out_.push_back(make("pcie.acs_unknown", Severity::Info, t_.host,
                          std::to_string(unknown) +
                              " bridge(s) between GPUs and their NICs have no readable extended config space: ACS state unknown",
                          "run the probe (or scripts/capture-node.sh) as root to read the full `config` files"));
  }

  void gdr() {
    if (!t_.gpus.empty() && !t_.nics.empty() && !t_.gdr_module)
      out_.push_back(make("gdr.module_missing", Severity::Warning, t_.host,
                          "GPUs and RDMA NICs are present but no GPUDirect RDMA module is loaded "
                          "(sys/module/nvidia_peermem, sys/kernel/mm/memory_peers/nv_mem)",
                          "modprobe nvidia_peermem (or use DMA-BUF: open kernel modules, CUDA >= 11.7, NCCL >= 2.13)"));
  }

  void nvlink() {
    if (t_.gpus.size() >= 2 && t_.nvlink_source.empty())
      out_.push_back(make("nvlink.unknown", Severity::Info, t_.host,
                          "NVLink between GPUs is unknown: no NVML on this root and no --nvidia-smi-topo capture",
                          "pass --nvidia-smi-topo with the output of `nvidia-smi topo -m` from this node"));
  }

  void verbs() {
    for (const auto& n : t_.nics)
      for (const auto& p : n.ports) {
        if (!p.verbs.queried) continue;
        if (p.is_roce() && p.verbs.active_mtu_bytes < 4096)
          out_.push_back(make("verbs.mtu_low", Severity::Warning, n.name,
                              n.name + " port " + std::to_string(p.num) + " active MTU is " +
                                  std::to_string(p.verbs.active_mtu_bytes) + " bytes (verbs); RoCE should use 4096",
                              "raise the netdev MTU to >= 4200 on the host and the switch"));
        std::vector<std::string> diffs;
        if (!p.state.empty() && p.verbs.state != p.state) diffs.push_back("state " + p.state + " vs " + p.verbs.state);
        if (p.rate_Gbps && p.verbs.rate_Gbps && std::fabs(*p.rate_Gbps - *p.verbs.rate_Gbps) > 0.5)
          diffs.push_back("rate " + format_number(*p.rate_Gbps) + " vs " + format_number(*p.verbs.rate_Gbps) + " Gb/s");
        if (!p.link_layer.empty() && p.verbs.link_layer != p.link_layer)
          diffs.push_back("link layer " + p.link_layer + " vs " + p.verbs.link_layer);
        for (const auto& g : p.gids) {
          auto it = p.verbs.gid_types.find(g.index);
          if (it != p.verbs.gid_types.end() && !g.type.empty() && it->second != g.type && g.type != "IB/RoCE v1")
            diffs.push_back("GID " + std::to_string(g.index) + " type " + g.type + " vs " + it->second);
        }
        if (!diffs.empty()) {
          std::string d;
          for (const auto& s : diffs) d += (d.empty() ? "" : "; ") + s;
          out_.push_back(make("verbs.sysfs_mismatch", Severity::Warning, n.name,
                              n.name + " port " + std::to_string(p.num) + ": sysfs and verbs disagree (sysfs vs verbs: " + d + ")",
                              "re-run the probe; a flapping link or a driver problem shows this way"));
        }
      }
  }

  const Topology& t_;
  const LintOptions& o_;
  std::vector<Finding> out_;
};

}  // namespace

std::vector<Finding> lint(const Topology& topo, const LintOptions& opts) { return Linter(topo, opts).run(); }

}  // namespace railkit::topo
