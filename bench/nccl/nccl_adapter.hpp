#pragma once
// The one place that knows about NCCL version differences (built against 2.28.9 here).
// Everything else uses these names.
#include <nccl.h>

#include <cstddef>
#include <string>

#include <fmt/format.h>

namespace railkit::bench::nccl {

inline constexpr int kBuiltVersion = NCCL_VERSION_CODE;

/// "2.28.9" from ncclGetVersion's code (2.9+ encoding: major*10000 + minor*100 + patch).
inline std::string version_string(int code) {
  return code >= 10000 ? fmt::format("{}.{}.{}", code / 10000, (code % 10000) / 100, code % 100)
                       : fmt::format("{}.{}.{}", code / 1000, (code % 1000) / 100, code % 100);
}

/// The version of the libnccl loaded at run time (may differ from the headers built against).
inline int runtime_version() {
  int code = 0;
  return ncclGetVersion(&code) == ncclSuccess ? code : 0;
}

/// A communicator configuration as nccl-tests makes it (src/common.cu, initComms): blocking
/// unless asked otherwise (NCCL_CONFIG_INITIALIZER's default is blocking), and from NCCL 2.28
/// nvlinkCentricSched = 1. NCCL_COMM_BLOCKING 0/1 still overrides `blocking` (NCCL's init.cc,
/// envConfigOverride): the communicator reports what NCCL used (nccl_rules.hpp, effective_blocking).
inline ncclConfig_t comm_config(bool blocking) {
  ncclConfig_t c = NCCL_CONFIG_INITIALIZER;
  c.blocking = blocking ? 1 : 0;
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 28, 0)
  c.nvlinkCentricSched = 1;
#endif
  return c;
}

/// Whether ncclAlltoAll exists (built against and running NCCL >= 2.28), as nccl-tests checks
/// before using it (src/alltoall.cu, AlltoAllRunColl).
inline bool has_native_alltoall(int runtime_code) {
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 28, 0)
  return runtime_code >= NCCL_VERSION(2, 28, 0);
#else
  (void)runtime_code;
  return false;
#endif
}

/// ncclAlltoAll where has_native_alltoall(), else ncclInvalidUsage (callers fall back to grouped
/// ncclSend/ncclRecv).
inline ncclResult_t native_alltoall(const void* send, void* recv, size_t count, ncclDataType_t t, ncclComm_t comm,
                                    cudaStream_t stream) {
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 28, 0)
  return ncclAlltoAll(send, recv, count, t, comm, stream);
#else
  (void)send, (void)recv, (void)count, (void)t, (void)comm, (void)stream;
  return ncclInvalidUsage;
#endif
}

/// Device buffers as nccl-tests allocates them (src/common.cu, AllocateBuffs: ncclMemAlloc from
/// NCCL 2.19): cuMem allocations NCCL can register and map across processes. Freed with mem_free.
inline ncclResult_t mem_alloc(void** p, size_t bytes) { return ncclMemAlloc(p, bytes); }
inline ncclResult_t mem_free(void* p) { return ncclMemFree(p); }

}  // namespace railkit::bench::nccl
