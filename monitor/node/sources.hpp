#pragma once
// The node's counter sources under a root (a live "/" or a fixture tree), found once by the
// topology probe and read at every sample: RDMA port counters, netdev carrier changes, ethtool
// statistics, PCIe AER counters and link state of the NICs' and GPUs' functions.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "monitor/node/sample.hpp"
#include "topology/sysfs.hpp"

namespace railkit::monitor {

/// What a node has to watch, found once at start.
struct NodeInventory {
  /// An RDMA port and its netdev ("" for an InfiniBand port).
  struct Port {
    std::string device;  ///< "mlx5_0"
    int port = 1;
    std::string netdev;
  };
  /// A PCIe function watched for AER errors and link training.
  struct Function {
    std::string bdf;
    std::string role;  ///< "nic" or "gpu"
  };
  std::vector<Port> ports;
  std::vector<Function> functions;
  /// The RoCE netdevs (of the ports), each once, and their drivers ("" when unknown).
  std::vector<std::pair<std::string, std::string>> netdevs;
  std::vector<std::string> notes;
};

/// Finds the RDMA ports, their netdevs and the NIC and GPU functions under `root` with the
/// topology probe. Throws UsageError naming --root when it is not a directory.
NodeInventory discover_node(const std::filesystem::path& root);

/// The TOTAL_ERR_* count of an aer_dev_{correctable,nonfatal,fatal} file; nullopt when absent.
std::optional<std::uint64_t> parse_aer_total(std::string_view text);

/// Reads the sysfs sources of `inv` (RDMA counters, carrier changes, AER, links) into `s`.
void read_sysfs_sources(const NodeInventory& inv, const topo::SysfsReader& rd, NodeSample& s);

/// Reads each netdev's ethtool statistics into `s`: by ioctl when `live`, else from
/// <root>/ethtool/<netdev>.txt; a netdev without statistics gets a note.
void read_ethtool_sources(const NodeInventory& inv, const std::filesystem::path& root, bool live, NodeSample& s);

}  // namespace railkit::monitor
