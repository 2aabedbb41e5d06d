#pragma once
// The nccl backend's one check of a CUDA runtime call, for its C++ sources and its .cu file
// (C++17, no fmt, so nvcc compiles it too).
#include <cuda_runtime.h>

#include <string>

#include "core/error.hpp"

namespace railkit::bench::nccl {

/// Throws CudaError "WHAT: <CUDA's text>" unless `e` is cudaSuccess.
inline void cuda_check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw CudaError(std::string(what) + ": " + cudaGetErrorString(e));
}

}  // namespace railkit::bench::nccl
