#pragma once
// The data-check generator, shared by host code and CUDA kernels: the value a rank puts at an
// input index in a check pass. Small integers (0..16; 1 or 2 for prod) keep sums and products exact.
#if defined(__CUDACC__)
#define RAILKIT_HD __host__ __device__
#else
#define RAILKIT_HD
#endif

namespace railkit::bench {

/// gen depends on the index only through index mod kGenPeriod (17, or 5 for prod).
inline constexpr unsigned long long kGenPeriod = 85;

RAILKIT_HD constexpr long long gen_raw(bool prod, unsigned long long rank, unsigned long long index,
                                       unsigned long long rep) {
  return prod ? (((rank + index + rep) % 5 == 0) ? 2 : 1) : static_cast<long long>((rank * 7 + index * 3 + rep * 5) % 17);
}

}  // namespace railkit::bench
