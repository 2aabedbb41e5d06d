#pragma once
// The NCCL backend: CUDA device memory, NCCL collectives on non-blocking communicators, one GPU
// per rank and one or more GPUs (-g) per process. Built only when CUDA and NCCL are found (RAILKIT_HAVE_NCCL).
#include <memory>
#include <optional>
#include <string>

#include "bench/communicator.hpp"

namespace railkit::bench::nccl {

/// Empty when a GPU is usable here, else a one-line reason (no driver, no device ...).
std::string unusable_gpu_reason();

/// "NCCL 2.28.9 (built 2.28.9), CUDA runtime 13.0, driver 13.0".
std::string version_text();

struct NcclSetup {
  int color = 0;                 ///< group of --split: ranks of MPI_COMM_WORLD with the same color
  int local_rank = 0;            ///< node-local rank, picks the GPU
  std::optional<int> device;     ///< --device override (the first of this process's GPUs)
  int gpus = 1;                  ///< -g: GPUs (ranks) this process drives
  double init_timeout_s = 0;     ///< 0 = wait for init forever
};

/// Creates this process's communicators, one per GPU (ncclUniqueId broadcast over MPI within the
/// group; process p of the group drives ranks p*gpus .. p*gpus + gpus - 1).
/// Throws UnavailableError without a usable GPU, NcclError / CudaError on failures.
std::unique_ptr<Communicator> make_communicator(const NcclSetup& setup);

}  // namespace railkit::bench::nccl
