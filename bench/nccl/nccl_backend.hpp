#pragma once
// The NCCL backend: CUDA device memory, NCCL collectives, one GPU per rank and one or more GPUs
// (-g) per process. Built only when CUDA and NCCL are found (RAILKIT_HAVE_NCCL). Reaches the
// other processes only through a Bootstrap (the ncclUniqueId travels over it).
#include <memory>
#include <optional>
#include <string>

#include "bench/backend.hpp"
#include "bench/bootstrap.hpp"
#include "bench/communicator.hpp"
#include "bench/poll.hpp"

namespace railkit::bench::nccl {

/// Empty when a GPU is usable here, else a one-line reason (no driver, no device ...).
std::string unusable_gpu_reason();

/// "NCCL 2.28.9 (built 2.28.9), CUDA runtime 13.0, driver 13.0".
std::string version_text();

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
/// visible; throws UsageError naming the flags when the range does not fit. Pure.
int first_device(const NcclSetup& setup, int visible);

/// Checks, on this process alone, what make_communicator would refuse (no usable GPU, a GPU
/// range beyond the visible ones), so every rank can agree before anything collective.
void check_setup(const NcclSetup& setup);

/// Creates this process's communicators, one per GPU, over the processes of `group` (process p
/// of the group drives ranks p*gpus .. p*gpus + gpus - 1). Collective over `group`.
/// Throws UnavailableError without a usable GPU, NcclError / CudaError on failures.
std::unique_ptr<Communicator> make_communicator(const NcclSetup& setup, Bootstrap& group);

/// The nccl backend's registry entry (bench/backend.hpp).
BackendEntry backend_entry();

}  // namespace railkit::bench::nccl
