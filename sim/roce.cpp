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

const char* ecn_preset_name(EcnPreset p) noexcept {
  switch (p) {
    case EcnPreset::Given: return "given";
    case EcnPreset::DcqcnPaper: return "dcqcn_paper";
    case EcnPreset::Hpcc: return "hpcc";
    case EcnPreset::Sonic: return "sonic";
  }
  return "given";
}

std::optional<EcnPreset> ecn_preset_from_name(std::string_view name) noexcept {
  for (EcnPreset p : {EcnPreset::DcqcnPaper, EcnPreset::Hpcc, EcnPreset::Sonic})
    if (name == ecn_preset_name(p)) return p;
  return std::nullopt;
}

const char* ecn_preset_description(EcnPreset p) noexcept {
  switch (p) {
    case EcnPreset::Given: return "given";
    case EcnPreset::DcqcnPaper: return "dcqcn_paper: 5 kB, 200 kB, 1% x rate/40G";
    case EcnPreset::Hpcc: return "hpcc: 100 kB, 400 kB x rate/25G, 0.2";
    case EcnPreset::Sonic: return "sonic: 1 MiB, 2 MiB, 5%";
  }
  return "given";
}

EcnThresholds ecn_thresholds(EcnPreset p, double rate_bps, const EcnThresholds& given) noexcept {
  switch (p) {
    case EcnPreset::Given: return given;
    case EcnPreset::DcqcnPaper: {
      const double scale = rate_bps / 40e9;
      return {static_cast<std::uint64_t>(std::llround(static_cast<double>(kDcqcnPaperEcn.kmin_bytes) * scale)),
              static_cast<std::uint64_t>(std::llround(static_cast<double>(kDcqcnPaperEcn.kmax_bytes) * scale)),
              kDcqcnPaperEcn.pmax};
    }
    case EcnPreset::Hpcc: return hpcc_ecn_thresholds(rate_bps);
    case EcnPreset::Sonic: return {1u << 20, 2u << 20, 0.05};
  }
  return given;
}

EcnThresholds hpcc_ecn_thresholds(double rate_bps) noexcept {
  const double scale = rate_bps / 25e9;
  return {static_cast<std::uint64_t>(std::llround(100e3 * scale)),
          static_cast<std::uint64_t>(std::llround(400e3 * scale)), 0.2};
}

}  // namespace railkit::sim
