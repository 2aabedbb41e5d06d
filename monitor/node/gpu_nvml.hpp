#pragma once
// GPU counters through NVML, loaded with dlopen at run time (railkit links no GPU library): ECC
// errors, NVLink error counters, clock event (throttle) reasons, and XID events counted since start.
#include <memory>
#include <string>

#include "monitor/node/sample.hpp"

namespace railkit::monitor {

/// NVML opened once for the life of the monitor.
class NvmlSource {
 public:
  /// Loads `library` (a path or a soname), initialises NVML, finds the GPUs (gpu label = NVML
  /// index, the order nvidia-smi shows) and registers for XID events. When NVML is absent or fails,
  /// available() is false and why() says why; that is not an error.
  explicit NvmlSource(const std::string& library);
  ~NvmlSource();
  NvmlSource(const NvmlSource&) = delete;
  NvmlSource& operator=(const NvmlSource&) = delete;

  bool available() const noexcept;
  const std::string& why() const noexcept;

  /// Appends to `s`: railkit_node_gpu_ecc_errors_total{gpu,type} (volatile: since the driver
  /// loaded), railkit_node_gpu_nvlink_errors_total{gpu,link,counter} (active links),
  /// railkit_node_gpu_xid_errors_total{gpu,xid} (events drained now, without waiting, added to the
  /// counts so far) and the gauge railkit_node_gpu_throttle_reasons{gpu}; a query a GPU does not
  /// support gets a note.
  void read(NodeSample& s);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace railkit::monitor
