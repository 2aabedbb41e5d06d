#pragma once
// Drives libnccl-profiler-railkit.so as NCCL 2.28 does: loads it with dlopen, then for N simulated
// ranks (one thread each) init per communicator, the events of collectives, point-to-point,
// proxy, kernel and IB net-plugin activity in NCCL's order and with its descriptors, and finalize.
// Used by monitor_plugin_drive (its main) and by the overhead benchmark (its pieces).
#include <cstdint>
#include <string>

#include "monitor/plugin/nccl_profiler_abi.h"

namespace railkit::plugin_drive {

struct Options {
  std::string so;        ///< the plugin library
  std::string out;       ///< RAILKIT_MONITOR_DIR (empty: left as the environment has it)
  std::string abi = "v5";  ///< v5 or v4
  int ranks = 8;
  int iters = 24;
  double window_s = 0.1;   ///< RAILKIT_MONITOR_WINDOW_S (0: left as the environment has it)
  double tail_s = -1;      ///< time after the last iteration before finalize (-1: 3 windows)
  int delay_rank = -1;     ///< this rank starts every collective of comm A later ...
  double delay_us = 0;     ///< ... by this much
  int slow_nic = -1;       ///< this rank's NIC moves a third of the bytes per work request (a third of the rate)
  double xfer_us = 400;    ///< kernel time of a collective once every rank started
  double wr_us = 200;      ///< real time one IB work request is outstanding
  std::uint64_t bytes = 1 << 20;  ///< AllReduce size (float32)
  bool hang = true;        ///< comm B: one AllReduce per rank that never completes
};

/// What a drive saw: how many inits failed, and the WARN lines the plugin logged.
struct Outcome {
  int init_failed = 0;
  int warn_lines = 0;
  std::string first_warn;
};

/// An event descriptor as NCCL fills one: zeroed, then its type, parent handle and rank.
nccl_prof_abi::EventDescrV5 descr(std::uint64_t type, void* parent, int rank = 0);

/// Runs the drive; throws std::runtime_error when the library cannot be loaded.
Outcome drive(const Options& o);

/// The plugin's entry points for one ABI version, called as NCCL 2.28 calls them (v4: through the
/// translation NCCL 2.28's profiler_v4.cc does, API events not passed).
class Plugin {
 public:
  Plugin(const std::string& so, const std::string& abi);
  ~Plugin();
  Plugin(const Plugin&) = delete;
  Plugin& operator=(const Plugin&) = delete;

  nccl_prof_abi::Result init(void** ctx, std::uint64_t comm, int* mask, const char* name, int nnodes, int nranks,
                             int rank, nccl_prof_abi::Logger log) const;
  void start(void* ctx, void** handle, nccl_prof_abi::EventDescrV5& d) const;
  void stop(void* handle) const;
  void record(void* handle, nccl_prof_abi::EventState s, nccl_prof_abi::StateArgsV5* args) const;
  void finalize(void* ctx) const;

 private:
  void* lib_ = nullptr;
  const nccl_prof_abi::ProfilerV5* v5_ = nullptr;
  const nccl_prof_abi::ProfilerV4* v4_ = nullptr;
};

/// One collective of one rank whose GPU times are known (a simulator's rank, or a node without
/// network work): what NCCL 2.28 reports then: the API events, Group, the Coll task (enqueued), and
/// `channels` KernelCh events carrying the GPU timer's start and stop.
struct KernelColl {
  const char* func = "AllReduce";
  std::size_t count = 0;
  const char* datatype = "ncclFloat32";
  std::uint64_t seq = 0;
  int channels = 1;
  const char* algo = "RING";   ///< ncclAlgoToString's spelling
  const char* proto = "SIMPLE";
  std::uint64_t start_ns = 0;  ///< GPU timer at the kernel's start, ns
  std::uint64_t stop_ns = 0;   ///< ... and at its end
};

/// Reports `c` on `ctx` (rank `rank`) through `p` in NCCL 2.28's order.
void kernel_collective(const Plugin& p, void* ctx, int rank, const KernelColl& c);

}  // namespace railkit::plugin_drive
