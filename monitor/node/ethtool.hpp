#pragma once
// Ethernet driver statistics (`ethtool -S`): read by the SIOCETHTOOL ioctl on a live node, or from
// the text `ethtool -S` prints (a fixture root's <root>/ethtool/<netdev>.txt), then mapped per
// driver into the pause and discard counters of a sample.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "monitor/node/sample.hpp"

namespace railkit::monitor {

/// Driver statistics in the driver's order: name, value.
using EthtoolStats = std::vector<std::pair<std::string, std::uint64_t>>;

/// Parses the text `ethtool -S <netdev>` prints ("NIC statistics:" then "     name: value" lines).
/// Lines that are not `name: unsigned integer` are skipped and counted in *skipped when given.
EthtoolStats parse_ethtool_text(std::string_view text, int* skipped = nullptr);

/// Reads the statistics of `netdev` through the SIOCETHTOOL ioctl (ETHTOOL_GSSET_INFO,
/// ETHTOOL_GSTRINGS, ETHTOOL_GSTATS). nullopt with *why set when the netdev does not exist or its
/// driver has no statistics.
std::optional<EthtoolStats> read_ethtool_ioctl(const std::string& netdev, std::string* why);

/// What a mapped statistic is.
enum class EthtoolKind { PauseFrames, PauseDurationUs, Other };

/// One row of the per-driver name table: `pattern` holds "{P}" where the priority (0-7) stands.
struct EthtoolName {
  std::string_view driver;     ///< kernel driver name (mlx5_core, bnxt_en, ice)
  std::string_view pattern;    ///< "rx_prio{P}_pause"
  EthtoolKind kind;
  std::string_view direction;  ///< "rx" or "tx"; "" for Other
};

/// The table of mapped names, for the README and the tests.
const std::vector<EthtoolName>& ethtool_names();

/// Whether `driver` has rows in the table.
bool ethtool_driver_mapped(std::string_view driver);

/// Maps the statistics of `netdev` through the rows of `driver` (every driver's rows when `driver`
/// is empty or unmapped) into counters: railkit_node_pause_frames_total{netdev,priority,direction},
/// railkit_node_pause_duration_seconds_total{...} (microseconds / 1e6) and
/// railkit_node_netdev_events_total{netdev,counter} (discards and pause-storm events).
void map_ethtool_stats(std::string_view driver, const std::string& netdev, const EthtoolStats& stats,
                       std::vector<CounterReading>& out);

}  // namespace railkit::monitor
