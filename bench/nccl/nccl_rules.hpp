#pragma once
// The nccl backend's rules that need neither CUDA nor NCCL to state: which GPUs a process drives,
// how many of a node's ranks share a GPU, and what NCCL makes of the blocking config. Header-only
// so the unit tests check them on machines without a GPU (tests/bench/nccl_rules_test.cpp).
#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <optional>
#include <string>

#include <fmt/format.h>

#include "bench/poll.hpp"
#include "core/error.hpp"

namespace railkit::bench::nccl {

struct NcclSetup {
  int local_rank = 0;            ///< node-local rank, picks the GPU
  std::optional<int> device;     ///< --device override (the first of this process's GPUs)
  int gpus = 1;                  ///< -g: GPUs (ranks) this process drives
  bool blocking = true;          ///< blocking communicators (nccl-tests' default); false: --nonblocking
  /// Non-blocking communicators: bound on the init and finalize polls (0 = none). Blocking
  /// calls cannot be polled: the watchdog covers them.
  double poll_timeout_s = 0;
  AbortSignal* signal = nullptr; ///< raised by the watchdog; every poll honours it
};

/// The first GPU of this process (CUDA's index among the visible ones) when `visible` GPUs are
/// visible; throws UsageError naming the flags when the range does not fit.
inline int first_device(const NcclSetup& s, int visible) {
  const int n = s.gpus;
  if (n < 1) throw UsageError(fmt::format("-g/--ngpus '{}': must be at least 1", n));
  // One GPU: the node-local rank's, wrapping. Several: node-local rank L drives GPUs
  // L*n .. L*n + n - 1, as nccl-tests; --device D makes them D .. D + n - 1.
  const int base = s.device ? *s.device : (n == 1 ? s.local_rank % std::max(visible, 1) : s.local_rank * n);
  if (base >= 0 && base + n <= visible) return base;
  if (s.device && n == 1) throw UsageError(fmt::format("--device '{}': only {} GPUs are visible", base, visible));
  if (s.device)
    throw UsageError(fmt::format("--device '{}' with -g/--ngpus '{}': needs GPUs {}..{} but only {} are visible", base,
                                 n, base, base + n - 1, visible));
  throw UsageError(fmt::format("-g/--ngpus '{}': node-local rank {} drives GPUs {}..{} but only {} are visible "
                               "(CUDA_VISIBLE_DEVICES, --device and the ranks per node decide which)",
                               n, s.local_rank, base, base + n - 1, visible));
}

/// How many ranks of the node's `local_processes` processes (node-local ranks 0 .. n-1, each with
/// `s`'s -g and --device) put their buffers on GPU `device` of `visible`. A process whose range
/// does not fit is left out: it refuses to run itself.
inline int ranks_on_device(const NcclSetup& s, int visible, int local_processes, int device) {
  int ranks = 0;
  for (int l = 0; l < local_processes; ++l) {
    NcclSetup other = s;
    other.local_rank = l;
    try {
      const int base = first_device(other, visible);
      if (device >= base && device < base + s.gpus) ++ranks;
    } catch (const UsageError&) {
    }
  }
  return ranks;
}

/// The blocking mode NCCL gives a communicator whose config asked for `asked`: NCCL_COMM_BLOCKING
/// 0 or 1 overrides any config (NCCL 2.28 src/init.cc, envConfigOverride), parsed as NCCL parses
/// its integer parameters (src/misc/param.cc, ncclLoadParam: ignored when empty, strtoll base 0,
/// ignored on a range error; "abc" reads as 0). `env` is the variable's value after NCCL started
/// (its nccl.conf files are in the environment by then), null when unset.
struct BlockingMode {
  bool blocking = true;
  bool overridden = false;  ///< NCCL_COMM_BLOCKING made it differ from `asked`
};
inline BlockingMode effective_blocking(bool asked, const char* env) {
  if (!env || !*env) return {asked, false};
  errno = 0;
  const long long v = std::strtoll(env, nullptr, 0);
  if (errno != 0 || (v != 0 && v != 1)) return {asked, false};
  return {v == 1, (v == 1) != asked};
}

/// The `communicators` fact of a results document: what NCCL used, and why when it is not what
/// railkit asked for.
inline std::string blocking_fact(const BlockingMode& m, bool asked, const std::string& env) {
  const char* kind = m.blocking ? "blocking" : "non-blocking";
  if (!m.overridden) return kind;
  const std::string config = asked ? "the blocking config railkit-bench asked for"
                                   : "the non-blocking config railkit-bench asked for with --nonblocking";
  if (env.empty()) return fmt::format("{} (NCCL's init returned ncclInProgress, overriding {})", kind, config);
  return fmt::format("{} (NCCL_COMM_BLOCKING={} overrode {})", kind, env, config);
}

}  // namespace railkit::bench::nccl
