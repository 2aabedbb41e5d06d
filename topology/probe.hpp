#pragma once
// Discovery: reads a node's sysfs (under a root) into a Topology.
//
// Why an own sysfs walk and not hwloc: the probe needs facts hwloc does not expose (current vs
// max PCIe link speed/width of every bridge, the ACS capability in the binary `config` file,
// RDMA ports, GID tables, ECN/PFC files) so sysfs must be read anyway; the PCI tree itself is
// fully described by the canonical path of each function under sys/devices/pciDDDD:BB/...
// (the same source NCCL uses). hwloc's Linux backend with a fake fsroot also needs a
// consistent /proc/cpuinfo, cpu topology files and DMI data, and silently drops devices it
// cannot attach on partial or synthetic trees, which would make captured trees and fixtures
// read differently from the node. The walk handles what hwloc handles for this purpose:
// multiple PCI domains, host bridges per NUMA node, nested switches, multi-function devices,
// NUMA node -1 (VMs), nodes without sys/devices/system/node (single node), and links stored
// as relative or absolute symlinks (resolved inside the root). The fixtures dgx-h100,
// pcie-2socket, vm-flat and odd-layouts (tests/fixtures/sysfs) exercise each of these, and
// tests/topology/capture_roundtrip.py checks that a capture of this machine probes like it.
#include <filesystem>
#include <optional>

#include "topology/model.hpp"

namespace railkit::topo {

/// What to probe and which live sources may be used.
struct ProbeOptions {
  std::filesystem::path root{"/"};                       ///< directory holding sys/ (and proc/)
  std::optional<std::filesystem::path> nvidia_smi_topo;  ///< captured `nvidia-smi topo -m` text
  bool live_queries = false;  ///< query NVML and libibverbs (only meaningful when root is "/")
};

/// Probes the node. Throws UsageError when the root does not exist or the nvidia-smi capture
/// cannot be read or parsed; every problem inside the tree becomes an input finding instead.
Topology probe_node(const ProbeOptions& opts);

/// Model name for a GPU (vendor 0x10de) device id, and its SM version (0 when unknown).
std::pair<std::string, int> gpu_model(std::uint32_t device_id);

/// Model name for an RDMA NIC's PCI ids ("ConnectX-7" or "15b3:1021").
std::string nic_model(std::uint32_t vendor, std::uint32_t device_id);

}  // namespace railkit::topo
