#include "sim/roce.hpp"

#include <cmath>

namespace railkit::sim {

std::int64_t serialization_ps(std::uint64_t bytes, double rate_bps) noexcept {
  return std::llround(static_cast<double>(bytes) * 8.0e12 / rate_bps);
}

std::int64_t pause_duration_ps(std::uint32_t quanta, double rate_bps) noexcept {
  return std::llround(static_cast<double>(quanta) * kPauseQuantumBits * 1e12 / rate_bps);
}

double ecn_mark_probability(std::uint64_t queue_bytes, std::uint64_t kmin_bytes, std::uint64_t kmax_bytes,
                            double pmax) noexcept {
  if (queue_bytes <= kmin_bytes) return 0.0;
  if (queue_bytes > kmax_bytes) return 1.0;
  if (kmax_bytes == kmin_bytes) return 1.0;
  return pmax * static_cast<double>(queue_bytes - kmin_bytes) / static_cast<double>(kmax_bytes - kmin_bytes);
}

std::uint64_t mlx5_headroom_bytes(double speed_Gbps, double cable_m, std::uint32_t mtu_bytes) noexcept {
  const double xoff = (301.0 + 2.16 * cable_m) * speed_Gbps + 2.72 * static_cast<double>(mtu_bytes);
  return static_cast<std::uint64_t>(std::ceil(xoff));
}

EcnThresholds hpcc_ecn_thresholds(double rate_bps) noexcept {
  const double scale = rate_bps / 25e9;
  return {static_cast<std::uint64_t>(std::llround(100e3 * scale)),
          static_cast<std::uint64_t>(std::llround(400e3 * scale)), 0.2};
}

}  // namespace railkit::sim
