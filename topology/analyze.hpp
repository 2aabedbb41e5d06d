#pragma once
// What the probe's facts mean: path classification, rails, lint findings, fingerprint.
#include <string>
#include <vector>

#include "topology/model.hpp"

namespace railkit::topo {

/// PCIe path type between two functions, with nvidia-smi's (NVML's) meaning:
/// PIX at most one PCIe switch, PXB several switches without the host bridge, PHB through the
/// host bridge (different root ports), NODE across host bridges of one NUMA node, SYS across
/// NUMA nodes (or NUMA unknown). A switch = an upstream port and its downstream port: below the
/// root port, the bridge chain is read in pairs.
PathType classify_pci(const PciFunction& a, const PciFunction& b);

/// The PCIe switches above a function, top first, each named by its upstream port's BDF (the
/// bridge chain below the root port read in upstream/downstream pairs, as NCCL reads sysfs).
std::vector<std::string> pci_switches(const PciFunction& f);

/// The bridge ports a peer-to-peer transfer between two functions crosses below the root
/// complex: the deepest shared bridge and every bridge under it on both sides. Empty when the
/// transfer goes through the root complex anyway (different root ports or host bridges).
std::vector<std::string> p2p_bridges(const PciFunction& a, const PciFunction& b);

/// Fills topo.paths: every GPU-GPU, GPU-NIC and NIC-NIC pair. GPU-GPU pairs are NV# or their
/// PCIe type when an NVLink source exists, Unknown otherwise (`pci` always holds the PCIe type).
void compute_paths(Topology& topo);

/// Gives each GPU its rail NIC. A NIC behind the GPU's own PCIe switch (PIX/PXB) is a rail NIC;
/// when more than half of the GPUs have one, the node is rail-optimized: every other NIC is
/// in-band and never a rail, and a GPU without such a NIC borrows the nearest rail NIC (its own
/// is missing; lint says so). Otherwise the nearest NIC wins. Among candidates: best path type,
/// then same NUMA node, then the NIC serving the fewest GPUs so far, then the lowest NIC index.
/// Marks NICs that serve no GPU as non-rail and fills the NCCL_IB_HCA suggestions.
void assign_rails(Topology& topo);

/// Lint settings.
struct LintOptions {
  int priority = 3;  ///< the RoCE traffic priority (PFC/ECN checks)
};

/// Every lint finding (input problems first), in a stable order. Check ids: topology/README.md.
std::vector<Finding> lint(const Topology& topo, const LintOptions& opts);

/// The performance fingerprint (facts + hash) of a probed node.
Fingerprint fingerprint(const Topology& topo);

/// Runs compute_paths, assign_rails, lint and fingerprint, storing the results in topo.
void analyze(Topology& topo, const LintOptions& opts);

/// True when any finding has severity error.
bool has_errors(const std::vector<Finding>& findings);

}  // namespace railkit::topo
