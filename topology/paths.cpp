#include <algorithm>
#include <optional>
#include <set>
#include <tuple>

#include "topology/analyze.hpp"

namespace railkit::topo {

namespace {

// A function's position seen as nvidia-smi/NVML see it: the root port it hangs from, then one
// entry per PCIe switch (a switch is an upstream port plus one of its downstream ports, so the
// bridge chain below the root port comes in pairs; the switch is named by its upstream port).
struct SwitchPath {
  std::string root_port;
  std::vector<std::string> switches;
};

SwitchPath switch_path(const PciFunction& f) {
  SwitchPath s;
  if (f.bridges.empty()) return s;
  s.root_port = f.bridges[0];
  for (size_t i = 1; i < f.bridges.size(); i += 2) s.switches.push_back(f.bridges[i]);
  return s;
}

}  // namespace

std::vector<std::string> pci_switches(const PciFunction& f) { return switch_path(f).switches; }

PathType classify_pci(const PciFunction& a, const PciFunction& b) {
  if (a.bdf == b.bdf) return PathType::PIX;
  if (a.host_bridge != b.host_bridge || a.host_bridge == "unknown") {
    if (a.numa && b.numa && *a.numa == *b.numa) return PathType::NODE;
    return PathType::SYS;
  }
  const SwitchPath sa = switch_path(a), sb = switch_path(b);
  // Different root ports (or a device on the root bus itself): the path crosses the host bridge.
  if (sa.root_port.empty() || sb.root_port.empty() || sa.root_port != sb.root_port) return PathType::PHB;
  size_t common = 0;
  while (common < sa.switches.size() && common < sb.switches.size() && sa.switches[common] == sb.switches[common])
    ++common;
  // Switches on the way: those below the deepest shared one on each side, plus the shared one.
  const size_t crossed = (sa.switches.size() - common) + (sb.switches.size() - common) + (common > 0 ? 1 : 0);
  return crossed <= 1 ? PathType::PIX : PathType::PXB;
}

namespace {

Path pci_path(const Topology& t, const std::string& bdf_a, const std::string& bdf_b) {
  const PciFunction* a = t.function(bdf_a);
  const PciFunction* b = t.function(bdf_b);
  if (!a || !b) return {};
  return Path{classify_pci(*a, *b), 0};
}

}  // namespace

void compute_paths(Topology& topo) {
  topo.paths.clear();
  for (size_t i = 0; i < topo.gpus.size(); ++i)
    for (size_t j = i + 1; j < topo.gpus.size(); ++j) {
      const auto& a = topo.gpus[i];
      const auto& b = topo.gpus[j];
      PathEntry e{a.name, b.name, {}, {}};
      const Path pci = pci_path(topo, a.bdf, b.bdf);
      e.pci = pci.str();
      if (!topo.nvlink_source.empty()) {
        auto it = topo.nvlinks.find({a.name, b.name});
        const int n = it == topo.nvlinks.end() ? 0 : it->second;
        e.path = n > 0 ? Path{PathType::NV, n} : pci;
      }
      topo.paths.push_back(std::move(e));
    }
  for (const auto& g : topo.gpus)
    for (const auto& n : topo.nics) {
      const Path p = pci_path(topo, g.bdf, n.bdf);
      topo.paths.push_back(PathEntry{g.name, n.name, p, p.str()});
    }
  for (size_t i = 0; i < topo.nics.size(); ++i)
    for (size_t j = i + 1; j < topo.nics.size(); ++j) {
      const Path p = pci_path(topo, topo.nics[i].bdf, topo.nics[j].bdf);
      topo.paths.push_back(PathEntry{topo.nics[i].name, topo.nics[j].name, p, p.str()});
    }
}

namespace {

// A NIC behind the GPU's own PCIe switch: the two share a root port (nvidia-smi's PIX or PXB).
bool behind_own_switch(const Path& p) { return p.type == PathType::PIX || p.type == PathType::PXB; }

}  // namespace

void assign_rails(Topology& topo) {
  topo.rails.clear();
  topo.per_rank_hca.clear();
  topo.nccl_ib_hca.clear();
  const size_t ngpu = topo.gpus.size(), nnic = topo.nics.size();
  std::vector<int> uses(nnic, 0);
  for (auto& n : topo.nics) {
    n.rail = false;
    n.in_band = false;
    n.gpus.clear();
  }
  // The GPU-NIC path, when the NIC can carry traffic at all (has a port) and the path is known.
  auto usable = [&](const Gpu& g, size_t k) -> const PathEntry* {
    if (topo.nics[k].ports.empty()) return nullptr;
    const PathEntry* p = topo.path(g.name, topo.nics[k].name);
    return p && p->path.type != PathType::Unknown ? p : nullptr;
  };
  std::vector<bool> attached(nnic, false), has_local(ngpu, false);
  size_t local_gpus = 0;
  for (size_t i = 0; i < ngpu; ++i) {
    for (size_t k = 0; k < nnic; ++k)
      if (const PathEntry* p = usable(topo.gpus[i], k); p && behind_own_switch(p->path)) {
        attached[k] = true;
        has_local[i] = true;
      }
    if (has_local[i]) ++local_gpus;
  }
  topo.rail_optimized = ngpu > 0 && local_gpus * 2 > ngpu;
  if (topo.rail_optimized)
    for (size_t k = 0; k < nnic; ++k) topo.nics[k].in_band = !attached[k];

  // Pass 0: GPUs with a NIC behind their own switch pick among those. Pass 1: the others pick the
  // nearest NIC; on a rail-optimized node only another GPU's rail NIC (borrowed), never in-band.
  std::vector<std::optional<Rail>> slot(ngpu);
  for (int pass = 0; pass < 2; ++pass)
    for (size_t i = 0; i < ngpu; ++i) {
      if (has_local[i] != (pass == 0)) continue;
      const Gpu& g = topo.gpus[i];
      int best = -1;
      std::tuple<int, int, int, int> best_key{};
      for (size_t k = 0; k < nnic; ++k) {
        const PathEntry* p = usable(g, k);
        if (!p) continue;
        if (has_local[i] ? !behind_own_switch(p->path) : topo.nics[k].in_band) continue;
        const Nic& n = topo.nics[k];
        const int other_numa = (g.numa && n.numa && *g.numa == *n.numa) ? 0 : 1;
        const std::tuple<int, int, int, int> key{p->path.rank(), other_numa, uses[k], n.index};
        if (best < 0 || key < best_key) {
          best = static_cast<int>(k);
          best_key = key;
        }
      }
      if (best < 0) continue;
      Nic& n = topo.nics[static_cast<size_t>(best)];
      ++uses[static_cast<size_t>(best)];
      n.rail = true;
      Rail r;
      r.gpu = g.name;
      r.gpu_index = g.index;
      r.nic = n.name;
      r.port = n.main_port() ? n.main_port()->num : 1;
      r.path = topo.path(g.name, n.name)->path;
      r.borrowed = topo.rail_optimized && !has_local[i];
      slot[i] = r;
    }
  for (auto& s : slot)
    if (s) {
      for (auto& n : topo.nics)
        if (n.name == s->nic) n.gpus.push_back(s->gpu);
      topo.rails.push_back(*s);
    }
  std::set<std::string> seen;
  for (auto& r : topo.rails) {
    r.shared = uses[static_cast<size_t>(topo.nic(r.nic)->index)] > 1;
    const std::string hca = r.nic + ":" + std::to_string(r.port);
    topo.per_rank_hca.push_back(hca);
    if (seen.insert(hca).second) topo.nccl_ib_hca += (topo.nccl_ib_hca.empty() ? "=" : ",") + hca;
  }
}

std::vector<std::string> p2p_bridges(const PciFunction& a, const PciFunction& b) {
  std::vector<std::string> out;
  if (a.host_bridge != b.host_bridge) return out;
  size_t common = 0;
  while (common < a.bridges.size() && common < b.bridges.size() && a.bridges[common] == b.bridges[common]) ++common;
  if (common == 0) return out;
  out.push_back(a.bridges[common - 1]);
  for (size_t i = common; i < a.bridges.size(); ++i) out.push_back(a.bridges[i]);
  for (size_t i = common; i < b.bridges.size(); ++i) out.push_back(b.bridges[i]);
  return out;
}

bool has_errors(const std::vector<Finding>& findings) {
  return std::any_of(findings.begin(), findings.end(), [](const Finding& f) { return f.severity == Severity::Error; });
}

void analyze(Topology& topo, const LintOptions& opts) {
  compute_paths(topo);
  assign_rails(topo);
  topo.findings = lint(topo, opts);
  topo.fingerprint = fingerprint(topo);
}

}  // namespace railkit::topo
