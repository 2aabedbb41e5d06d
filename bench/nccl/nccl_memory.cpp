// Where the nccl backend's buffers go: each GPU's free memory, for the check before the run that
// the largest size fits (bench/app.cpp, agree_on_plan).
#include <cuda_runtime.h>

#include <fmt/format.h>

#include "bench/nccl/cuda_check.hpp"
#include "bench/nccl/nccl_backend.hpp"

namespace railkit::bench::nccl {

std::vector<BufferRoom> device_rooms(const NcclSetup& setup, int local_processes) {
  int visible = 0;
  cuda_check(cudaGetDeviceCount(&visible), "cudaGetDeviceCount");
  const int base = first_device(setup, visible);
  std::vector<BufferRoom> rooms;
  for (int k = 0; k < setup.gpus; ++k) {
    const int dev = base + k;
    cuda_check(cudaSetDevice(dev), "cudaSetDevice");
    size_t free_bytes = 0, total_bytes = 0;
    cuda_check(cudaMemGetInfo(&free_bytes, &total_bytes), "cudaMemGetInfo");
    cudaDeviceProp p{};
    cuda_check(cudaGetDeviceProperties(&p, dev), "cudaGetDeviceProperties");
    rooms.push_back(BufferRoom{fmt::format("GPU {} ({})", dev, p.name), ranks_on_device(setup, visible, local_processes, dev),
                               static_cast<std::uint64_t>(free_bytes)});
  }
  return rooms;
}

}  // namespace railkit::bench::nccl
