#pragma once
// The node model the probe fills in: PCI functions, GPUs, RDMA NICs with their ports,
// paths between devices, rails and findings. Plain data; no I/O here.
#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace railkit::topo {

/// nvidia-smi path types, best to worst. Unknown = not known (e.g. NVLink with no source).
enum class PathType { NV, PIX, PXB, PHB, NODE, SYS, Unknown };

/// "PIX", "PXB", ...; NV is rendered with its link count by Path::str().
const char* path_type_name(PathType t) noexcept;

/// A path between two devices: its type, and the bonded NVLink count when type == NV.
struct Path {
  PathType type = PathType::Unknown;
  int nvlinks = 0;
  /// "NV18", "PXB", "unknown".
  std::string str() const;
  /// Ordering key: smaller is nearer.
  int rank() const noexcept { return static_cast<int>(type); }
};

/// PCIe link state read from sysfs. Speeds in GT/s, widths in lanes; unset = unknown.
struct PciLink {
  std::optional<double> cur_speed_GTps, max_speed_GTps;
  std::optional<int> cur_width, max_width;
};

/// ACS (Access Control Services) extended capability of a PCI function, parsed from `config`.
struct AcsState {
  bool config_complete = false;  ///< the extended config space (>= 4 KiB) was readable
  bool present = false;          ///< the ACS capability (id 0x000D) was found
  std::uint16_t capability = 0;  ///< ACS Capability register
  std::uint16_t control = 0;     ///< ACS Control register (0 = ACS off)
};

/// One PCI function found under <root>/sys/bus/pci/devices.
struct PciFunction {
  std::string bdf;                   ///< "0000:18:00.0"
  std::string host_bridge;           ///< "pci0000:15" (the root complex it hangs from)
  std::vector<std::string> bridges;  ///< BDFs of the upstream bridges, root port first
  std::string sysfs_dir;             ///< directory relative to the root, for messages
  std::optional<std::uint32_t> vendor, device, class_code, subsystem_vendor, subsystem_device;
  std::optional<int> numa;           ///< NUMA node; unset when sysfs says -1 or is unreadable
  std::string local_cpulist;         ///< "0-55,112-167" (empty when unknown)
  PciLink link;
  AcsState acs;
  bool is_bridge() const noexcept { return class_code && ((*class_code >> 8) == 0x0604); }
};

/// A NUMA node and its CPUs.
struct NumaNode {
  int id = 0;
  std::string cpulist;  ///< "0-55,112-167"
  std::string cpumap;   ///< NCCL's affinity format "ffffffff,ffffffff"
};

/// A GPU, named GPU<index> in PCI bus order.
struct Gpu {
  std::string name;  ///< "GPU0"
  int index = 0;
  std::string bdf;
  std::string model;  ///< "H100 SXM5" or "10de:xxxx"
  int sm = 0;         ///< compute capability * 10 when the model is known, else 0
  std::optional<int> numa;
  std::string cpulist;
};

/// One entry of a port's GID table.
struct GidEntry {
  int index = 0;
  std::string gid;     ///< "0000:0000:0000:0000:0000:ffff:c0a8:0101"
  std::string type;    ///< "RoCE v2", "RoCE v1", "IB/RoCE v1", or "" when unreadable
  std::string netdev;  ///< from gid_attrs/ndevs, may be empty
  bool ipv4 = false;   ///< IPv4-mapped GID (::ffff:a.b.c.d)
};

/// DCQCN/ECN state of a netdev (MLNX_OFED sysfs ecn/roce_rp and ecn/roce_np).
struct EcnState {
  bool present = false;
  std::map<int, bool> rp_enable, np_enable;                     ///< priority -> enabled
  std::map<std::string, std::string> rp_params, np_params;      ///< attribute -> raw value
};

/// PFC/trust state from MLNX_OFED's sys/class/net/<if>/qos files (absent upstream).
struct QosState {
  std::optional<std::array<bool, 8>> pfc;  ///< per priority
  std::string trust;                       ///< "dscp" / "pcp" / "" unknown
};

/// What libibverbs reported for a port (live nodes only).
struct VerbsPort {
  bool queried = false;
  std::string state;
  int active_mtu_bytes = 0;
  std::optional<double> rate_Gbps;
  std::string link_layer;
  std::map<int, std::string> gid_types;  ///< GID index -> "RoCE v2" / "RoCE v1" / "IB"
};

/// One port of an RDMA device.
struct Port {
  int num = 1;
  std::string link_layer;  ///< "Ethernet" / "InfiniBand" / ""
  std::string state;       ///< "ACTIVE", "DOWN", ... ("" unknown)
  std::string phys_state;  ///< "LinkUp", "Disabled", ...
  std::optional<double> rate_Gbps;
  std::string rate_text;   ///< raw, "400 Gb/sec (4X NDR)"
  std::string netdev;
  std::optional<int> mtu_bytes;  ///< netdev MTU
  std::vector<GidEntry> gids;
  std::optional<int> recommended_gid;  ///< RoCE v2 with IPv4, else first RoCE v2
  EcnState ecn;
  QosState qos;
  VerbsPort verbs;
  bool is_roce() const noexcept { return link_layer == "Ethernet"; }
};

/// An RDMA device (sys/class/infiniband/<name>) and the PCI function it sits on.
struct Nic {
  std::string name;  ///< "mlx5_0"
  int index = 0;     ///< NIC<index> in the matrix (natural order of names)
  std::string bdf;
  std::string model;
  std::optional<int> numa;
  std::string node_guid;
  std::vector<std::string> netdevs;
  std::vector<Port> ports;
  bool rail = false;                 ///< serves at least one GPU
  /// On a rail-optimized node (Topology::rail_optimized): behind no GPU's PCIe switch, so storage
  /// or in-band; such a NIC never becomes a rail.
  bool in_band = false;
  std::vector<std::string> gpus;     ///< GPUs whose rail NIC this is
  /// The port used for traffic: the first ACTIVE port, else the first port; nullptr when none.
  const Port* main_port() const;
};

/// A path between two named devices (GPU-GPU, GPU-NIC, NIC-NIC).
struct PathEntry {
  std::string from, to;
  Path path;
  std::string pci;  ///< the PCIe path type (set also when `path` is NVLink or unknown)
};

/// A GPU and its rail NIC.
struct Rail {
  std::string gpu;
  int gpu_index = 0;
  std::string nic;
  int port = 1;
  Path path;
  bool shared = false;  ///< the NIC also serves another GPU
  /// The GPU has no NIC behind its own PCIe switch on a rail-optimized node (its rail NIC is
  /// missing): this is the nearest other GPU's rail NIC, the one NCCL would fall back to.
  bool borrowed = false;
};

enum class Severity { Error, Warning, Info };
const char* severity_name(Severity s) noexcept;

/// A lint finding or an input problem. `check` is a stable id documented in topology/README.md.
struct Finding {
  std::string check;
  Severity severity = Severity::Info;
  std::string subject;
  std::string message;
  std::string fix;
};

/// Performance-relevant facts and their hash (see topology/README.md "Fingerprint").
struct Fingerprint {
  std::string hash;                            ///< 16 hex digits (FNV-1a 64 over the facts)
  std::map<std::string, std::string> facts;    ///< fact name -> canonical value
};

/// Everything the probe learned about one node.
struct Topology {
  std::string host;
  std::string root;
  std::string cpu_arch;    ///< "x86_64", "aarch64" or "" (from proc/cpuinfo under the root)
  std::string cpu_vendor;  ///< "GenuineIntel", "AuthenticAMD" or ""
  std::string cpu_family, cpu_model;  ///< decimal, x86 only
  std::vector<NumaNode> numa_nodes;
  std::map<std::string, PciFunction> pci;  ///< by BDF
  std::vector<Gpu> gpus;
  std::vector<Nic> nics;
  std::vector<PathEntry> paths;
  std::vector<Rail> rails;
  /// More than half of the GPUs have an RDMA NIC behind their own PCIe switch (PIX/PXB): rails are
  /// those NICs only, any other NIC is in-band (see topology/README.md "Paths and rails").
  bool rail_optimized = false;
  std::string nccl_ib_hca;                ///< suggested NCCL_IB_HCA for all rails ("=mlx5_0:1,...")
  std::vector<std::string> per_rank_hca;  ///< suggested NIC for local rank i (GPU i): "mlx5_0:1"
  bool gdr_module = false;
  std::string gdr_source;      ///< which file showed the module ("" none)
  std::string nvlink_source;   ///< "nvml", "nvidia-smi", or "" (unknown)
  /// NVLink count per GPU pair (names ordered as GPU<i> < GPU<j>, i < j); 0 = known to have none.
  /// Empty when nvlink_source is "": then GPU-GPU paths are Unknown.
  std::map<std::pair<std::string, std::string>, int> nvlinks;
  bool verbs_queried = false;  ///< libibverbs was used (live nodes)
  std::vector<Finding> input_problems;  ///< unreadable/garbled inputs
  std::vector<Finding> findings;        ///< lint findings (input problems included)
  Fingerprint fingerprint;

  const Gpu* gpu(const std::string& name) const;
  const Nic* nic(const std::string& name) const;
  const PciFunction* function(const std::string& bdf) const;
  /// The path between two named devices in either direction; nullptr when not computed.
  const PathEntry* path(const std::string& a, const std::string& b) const;
};

}  // namespace railkit::topo
