#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <string>
#include <type_traits>

#include "bench/expected.hpp"
#include "bench/gen.hpp"
#include "bench/nccl/cuda_check.hpp"
#include "bench/nccl/nccl_kernels.hpp"
#include "core/error.hpp"

namespace railkit::bench::gpu {
namespace {

using nccl::cuda_check;

template <typename T>
inline constexpr bool kFloatish =
    std::is_floating_point_v<T> || std::is_same_v<T, __half> || std::is_same_v<T, __nv_bfloat16>;

template <typename T>
__device__ T from_i64(long long v) {
  if constexpr (std::is_same_v<T, __half>) return __float2half(static_cast<float>(v));
  else if constexpr (std::is_same_v<T, __nv_bfloat16>) return __float2bfloat16(static_cast<float>(v));
  else if constexpr (std::is_floating_point_v<T>) return static_cast<T>(v);
  else return static_cast<T>(static_cast<std::make_unsigned_t<T>>(static_cast<unsigned long long>(v)));
}

template <typename T>
__device__ double to_double(T v) {
  if constexpr (std::is_same_v<T, __half>) return static_cast<double>(__half2float(v));
  else if constexpr (std::is_same_v<T, __nv_bfloat16>) return static_cast<double>(__bfloat162float(v));
  else return static_cast<double>(v);
}

struct Args {
  ExpectRule expect;
  int nranks, rank, root, rep;
  bool prod;
  unsigned long long pc, count;
  double tol_rel;
};

template <typename T>
__global__ void fill_kernel(T* dst, unsigned long long count, Args a) {
  for (unsigned long long i = blockIdx.x * 1ull * blockDim.x + threadIdx.x; i < count; i += 1ull * gridDim.x * blockDim.x)
    dst[i] = from_i64<T>(gen_raw(a.prod, static_cast<unsigned long long>(a.rank), i, static_cast<unsigned long long>(a.rep)));
}

template <typename T>
__global__ void wrong_kernel(const T* out, Args a, ReductionTable table, unsigned long long* wrong) {
  unsigned long long bad = 0;
  for (unsigned long long i = blockIdx.x * 1ull * blockDim.x + threadIdx.x; i < a.count; i += 1ull * gridDim.x * blockDim.x) {
    const ExpectSource src = expect_source(a.expect, i, a.pc, a.rank, a.root, a.nranks);
    if (src.reduced) {
      const unsigned long long m = src.index % kGenPeriod;
      if constexpr (kFloatish<T>) {
        const double want = table.as_double[m];
        const double got = to_double(out[i]);
        const double tol = a.tol_rel * (want < 0 ? -want : want);
        if (got - want > tol || want - got > tol) ++bad;
      } else {
        const T want = static_cast<T>(static_cast<std::make_unsigned_t<T>>(table.as_bits[m]));
        if (out[i] != want) ++bad;
      }
    } else {
      const T want = from_i64<T>(gen_raw(a.prod, src.rank, src.index, static_cast<unsigned long long>(a.rep)));
      if (to_double(out[i]) != to_double(want)) ++bad;
    }
  }
  if (bad) atomicAdd(wrong, bad);
}

Args make_args(const CheckArgs& s, unsigned long long count) {
  Args a{};
  a.expect = s.expect;
  a.nranks = s.nranks;
  a.rank = s.rank;
  a.root = s.root;
  a.rep = s.rep;
  a.prod = s.op == RedOp::Prod;
  a.pc = s.param_count;
  a.count = count;
  a.tol_rel = check_tolerance_rel(s.dtype, s.op, s.nranks);
  return a;
}

constexpr int kThreads = 256;

int blocks_for(unsigned long long n) {
  const unsigned long long b = (n + kThreads - 1) / kThreads;
  return static_cast<int>(b < 1024 ? (b == 0 ? 1 : b) : 1024);
}

template <typename F>
void dispatch(DType t, F&& f) {
  switch (t) {
    case DType::Int8: f(static_cast<signed char*>(nullptr)); break;
    case DType::Uint8: f(static_cast<unsigned char*>(nullptr)); break;
    case DType::Int32: f(static_cast<int*>(nullptr)); break;
    case DType::Uint32: f(static_cast<unsigned int*>(nullptr)); break;
    case DType::Int64: f(static_cast<long long*>(nullptr)); break;
    case DType::Uint64: f(static_cast<unsigned long long*>(nullptr)); break;
    case DType::Half: f(static_cast<__half*>(nullptr)); break;
    case DType::BFloat16: f(static_cast<__nv_bfloat16*>(nullptr)); break;
    case DType::Float: f(static_cast<float*>(nullptr)); break;
    case DType::Double: f(static_cast<double*>(nullptr)); break;
  }
}

}  // namespace

void fill_input(void* dst, std::uint64_t count, const CheckArgs& spec, void* stream) {
  const Args a = make_args(spec, count);
  dispatch(spec.dtype, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    fill_kernel<T><<<blocks_for(count), kThreads, 0, static_cast<cudaStream_t>(stream)>>>(static_cast<T*>(dst), count, a);
  });
  cuda_check(cudaGetLastError(), "fill_input kernel");
}

std::int64_t count_wrong(const void* out, const CheckArgs& spec, void* stream) {
  if (!has_expected_output(spec.expect, spec.rank, spec.root)) return 0;
  const Args a = make_args(spec, spec.recv_count);
  const ReductionTable table = reduction_table(spec.op, spec.dtype, spec.nranks, spec.rep);
  unsigned long long* d_wrong = nullptr;
  cuda_check(cudaMallocAsync(reinterpret_cast<void**>(&d_wrong), sizeof(unsigned long long), static_cast<cudaStream_t>(stream)),
             "cudaMallocAsync");
  cuda_check(cudaMemsetAsync(d_wrong, 0, sizeof(unsigned long long), static_cast<cudaStream_t>(stream)), "cudaMemsetAsync");
  dispatch(spec.dtype, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    wrong_kernel<T><<<blocks_for(a.count), kThreads, 0, static_cast<cudaStream_t>(stream)>>>(static_cast<const T*>(out), a,
                                                                                               table, d_wrong);
  });
  cuda_check(cudaGetLastError(), "count_wrong kernel");
  unsigned long long h = 0;
  cuda_check(cudaMemcpyAsync(&h, d_wrong, sizeof h, cudaMemcpyDeviceToHost, static_cast<cudaStream_t>(stream)),
             "cudaMemcpyAsync");
  cuda_check(cudaFreeAsync(d_wrong, static_cast<cudaStream_t>(stream)), "cudaFreeAsync");
  cuda_check(cudaStreamSynchronize(static_cast<cudaStream_t>(stream)), "cudaStreamSynchronize");
  return static_cast<std::int64_t>(h);
}

}  // namespace railkit::bench::gpu
