#pragma once
// What one reading of a node's counters holds (monitor/README.md, section 3): cumulative counters
// as their sources report them, PCIe link states, gauges, and notes about what could not be read.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace railkit::monitor {

/// Prometheus labels in the order they are written.
using Labels = std::vector<std::pair<std::string, std::string>>;

/// The counter families of a sample; the names are the exported metric names.
inline constexpr std::string_view kRdmaCounter = "railkit_node_rdma_counter_total";
inline constexpr std::string_view kPauseFrames = "railkit_node_pause_frames_total";
inline constexpr std::string_view kPauseDuration = "railkit_node_pause_duration_seconds_total";
inline constexpr std::string_view kNetdevEvents = "railkit_node_netdev_events_total";
inline constexpr std::string_view kCarrierChanges = "railkit_node_carrier_changes_total";
inline constexpr std::string_view kAerErrors = "railkit_node_pcie_aer_errors_total";
inline constexpr std::string_view kGpuXid = "railkit_node_gpu_xid_errors_total";
inline constexpr std::string_view kGpuEcc = "railkit_node_gpu_ecc_errors_total";
inline constexpr std::string_view kGpuNvlink = "railkit_node_gpu_nvlink_errors_total";

/// One cumulative counter as read. The exported value is raw / divisor (pause duration: the
/// driver counts microseconds, the metric is seconds).
struct CounterReading {
  std::string metric;
  Labels labels;
  std::uint64_t raw = 0;
  double divisor = 1;
};

/// A PCIe function's link as sysfs reports it (current_link_* and max_link_*).
struct PcieLink {
  std::string bdf;
  std::string role;  ///< "nic" or "gpu": a GPU's link speed drops when idle, so only its width is judged
  std::string speed, max_speed;  ///< sysfs text without " PCIe" ("16.0 GT/s")
  std::optional<double> speed_GTps, max_speed_GTps;
  std::optional<int> width, max_width;
};

/// A gauge read as it is (the GPU clock event reasons bitmask).
struct GaugeReading {
  std::string metric;
  Labels labels;
  double value = 0;
};

/// One reading of the node at one instant.
struct NodeSample {
  double mono_s = 0;  ///< steady clock, seconds (rates use its differences)
  double unix_s = 0;  ///< wall clock, seconds since the epoch
  std::vector<CounterReading> counters;
  std::vector<PcieLink> links;
  std::vector<GaugeReading> gauges;
  std::vector<std::string> notes;  ///< what could not be read, once per cause
};

/// The identity of a series: `metric{k="v",...}` (labels escaped as exported).
std::string series_key(std::string_view metric, const Labels& labels);

/// A counter's text as sysfs or ethtool print it: an unsigned decimal integer, white space around
/// allowed; nullopt for anything else.
std::optional<std::uint64_t> parse_counter(std::string_view text);

/// The value of `label` in `labels`; "" when absent.
const std::string& label_value(const Labels& labels, std::string_view label);

}  // namespace railkit::monitor
