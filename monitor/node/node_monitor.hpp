#pragma once
// `railkit monitor node`: samples the node's counters under a root at an interval, derives rates
// and signals, and exports them as a Prometheus textfile and/or over HTTP (monitor/README.md §3).
#include <filesystem>
#include <iosfwd>
#include <memory>
#include <optional>
#include <string>

#include "monitor/node/rates.hpp"
#include "monitor/node/sample.hpp"
#include "monitor/node/sources.hpp"

namespace railkit::monitor {

/// The options of `railkit monitor node`, as given.
struct NodeMonitorOptions {
  std::filesystem::path root{"/"};
  double interval_s = 10;  ///< seconds between samples
  int count = 0;           ///< samples to take; 0 = until SIGINT or SIGTERM
  std::optional<std::filesystem::path> textfile;
  std::optional<std::string> listen;  ///< HOST:PORT
  /// NVML library; default libnvidia-ml.so.1 when the root is "/", none under another root.
  std::optional<std::string> nvml;
  SignalThresholds thresholds;
};

/// Throws UsageError naming the flag when an option is out of range.
void check_node_options(const NodeMonitorOptions& o);

/// The sources of one node, found once; each sample() reads them all.
class NodeSampler {
 public:
  /// Discovers the node under o.root and opens NVML. Throws UsageError for a bad --root.
  explicit NodeSampler(const NodeMonitorOptions& o);
  ~NodeSampler();
  NodeSampler(const NodeSampler&) = delete;
  NodeSampler& operator=(const NodeSampler&) = delete;

  /// Reads every source now (monotonic and wall time stamped at the start of the reading).
  NodeSample sample();
  const NodeInventory& inventory() const noexcept;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// Runs the loop: samples o.count times (or until SIGINT/SIGTERM, which end it cleanly after the
/// sample in progress), rewriting the textfile and the HTTP exposition after each sample and
/// printing the table to `out` and each new note once to `err`. Returns 0. Throws UsageError for
/// bad options, a bad --root, an unwritable --textfile or a --listen address that cannot be bound.
int run_node_monitor(const NodeMonitorOptions& o, std::ostream& out, std::ostream& err);

}  // namespace railkit::monitor
