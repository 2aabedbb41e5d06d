#pragma once
// The NCCL backend: CUDA device memory, NCCL collectives, one GPU per rank and one or more GPUs
// (-g) per process. Built only when CUDA and NCCL are found (RAILKIT_HAVE_NCCL). Reaches the
// other processes only through a Bootstrap (the ncclUniqueId travels over it).
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "bench/backend.hpp"
#include "bench/bootstrap.hpp"
#include "bench/communicator.hpp"
#include "bench/nccl/nccl_rules.hpp"
#include "bench/poll.hpp"

namespace railkit::bench::nccl {

/// Empty when a GPU is usable here, else a one-line reason (no driver, no device ...).
std::string unusable_gpu_reason();

/// "NCCL 2.28.9 (built 2.28.9), CUDA runtime 13.0, driver 13.0".
std::string version_text();

/// Checks, on this process alone, what make_communicator would refuse (no usable GPU, a GPU
/// range beyond the visible ones), so every rank can agree before anything collective.
void check_setup(const NcclSetup& setup);

/// Each GPU this process drives (setup's -g and --device), with the ranks of the node's
/// `local_processes` processes that put their buffers there and its free memory (cudaMemGetInfo).
std::vector<BufferRoom> device_rooms(const NcclSetup& setup, int local_processes);

/// Creates this process's communicators, one per GPU, over the processes of `group` (process p
/// of the group drives ranks p*gpus .. p*gpus + gpus - 1). Collective over `group`.
/// Throws UnavailableError without a usable GPU, NcclError / CudaError on failures.
std::unique_ptr<Communicator> make_communicator(const NcclSetup& setup, Bootstrap& group);

/// The nccl backend's registry entry (bench/backend.hpp).
BackendEntry backend_entry();

}  // namespace railkit::bench::nccl
