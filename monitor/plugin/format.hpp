#pragma once
// Text the writer produces: one JSON line per communicator and window (railkit.monitor.window/1)
// and the node_exporter textfile of the process. snprintf only (the plugin links no fmt or JSON
// library); runs on the writer thread, never on NCCL's.
#include <cstdint>
#include <string>
#include <vector>

#include "monitor/plugin/recorder.hpp"

namespace railkit::monitor_plugin {

/// The process's identity and settings (environment, read once at the first init).
struct Config {
  std::string dir;
  double window_s = 10;
  std::string job = "unknown";
  int samples = 64;
  std::string source = "nccl";
  std::string host;
  int pid = 0;
  std::string gpu;
  int local_rank = -1;  ///< -1: not known
  std::vector<std::string> nic_names;  ///< NCCL_IB_HCA, in order, when it lists them
  std::string fault;                   ///< RAILKIT_MONITOR_FAULT (tests): jsonl_write, tiny_pools
};

/// The name of net device `device`: NCCL_IB_HCA's entry, else "dev<N>".
std::string nic_name(const Config& cfg, int device);

/// Per communicator, what the textfile's counters have summed since init (writer-owned).
struct Totals {
  struct Coll {
    Op op;
    std::uint8_t algo, proto;
    std::uint64_t count = 0, bytes = 0;
    double time_s = 0;
    double busbw_GBps = -1, time_p50_s = -1;  ///< the last window's, of its largest size (-1: none)
    std::uint64_t gauge_bytes = 0;
  };
  std::vector<Coll> colls;
  std::uint64_t nic_bytes[kMaxNics] = {};
  double nic_busy_s[kMaxNics] = {};
  std::uint64_t dropped = 0;
  std::int64_t last_completion_unix_ns = 0;
  double inflight_oldest_age_s = 0;

  /// Adds a closed window (the gauges take its values).
  void add(const Window& w, int nranks);
};

/// One closed window as the writer hands it to the formatter.
struct WindowView {
  const CommInfo& info;
  const Window& w;
  const InflightSummary& inflight;
  std::uint64_t index;
  std::int64_t end_unix_ns;
  double inflight_age_s;
  std::uint64_t callbacks;
  std::int64_t last_completion_unix_ns;
};

/// Appends one JSON line (with its newline) for `v`.
void append_window_json(std::string& out, const Config& cfg, const WindowView& v);

/// One communicator's series in the textfile.
struct PromComm {
  const CommInfo* info;
  const Totals* totals;
};

/// The whole textfile: every communicator's series, the enabled gauge and the window timestamp.
std::string prom_text(const Config& cfg, const std::vector<PromComm>& comms, bool enabled, double window_unix_s);

/// busbw in GB/s (1e9 B/s) of `bytes` in `time_us` for nccl-tests' factor of `op` (-1: unknown).
double busbw_GBps(Op op, std::uint64_t bytes, double time_us, int nranks) noexcept;

}  // namespace railkit::monitor_plugin
