#pragma once
// RoCEv2 on Ethernet: frame sizes, wire times and the switch-side formulas (ECN marking
// probability, PFC headroom, default ECN thresholds). Pure functions; sources in sim/README.md.
#include <cstdint>
#include <optional>
#include <string_view>

namespace railkit::sim {

/// Bytes a frame costs on the wire besides the frame itself: preamble + SFD (8) and the
/// minimum inter-frame gap (12).
inline constexpr std::uint32_t kWireGapBytes = 20;
/// Ethernet header (14) + IPv4 (20) + UDP (8) + InfiniBand BTH (12) + ICRC (4) + FCS (4).
inline constexpr std::uint32_t kRoceHeaderBytes = 62;
/// AETH of an ACK or NAK.
inline constexpr std::uint32_t kAethBytes = 4;
/// A CNP carries 16 reserved bytes after its BTH.
inline constexpr std::uint32_t kCnpPayloadBytes = 16;
/// The smallest Ethernet frame (with FCS), also the size of a PFC pause frame.
inline constexpr std::uint32_t kMinFrameBytes = 64;
/// One pause quantum is the time of 512 bits at the link's rate (IEEE 802.1Qbb).
inline constexpr std::uint32_t kPauseQuantumBits = 512;

/// Frame size of a data packet carrying `payload` bytes (without preamble and gap).
constexpr std::uint32_t data_frame_bytes(std::uint32_t payload) noexcept { return payload + kRoceHeaderBytes; }

/// Wire bytes of a data packet: frame + preamble + inter-frame gap.
constexpr std::uint32_t data_wire_bytes(std::uint32_t payload) noexcept {
  return data_frame_bytes(payload) + kWireGapBytes;
}

/// Wire bytes of an ACK or NAK (BTH + AETH).
constexpr std::uint32_t ack_wire_bytes() noexcept { return kRoceHeaderBytes + kAethBytes + kWireGapBytes; }

/// Wire bytes of a CNP (BTH + 16 reserved bytes).
constexpr std::uint32_t cnp_wire_bytes() noexcept { return kRoceHeaderBytes + kCnpPayloadBytes + kWireGapBytes; }

/// Wire bytes of a PFC pause frame.
constexpr std::uint32_t pause_wire_bytes() noexcept { return kMinFrameBytes + kWireGapBytes; }

/// Time to serialize `bytes` at `rate_bps`, in picoseconds (rounded to the nearest ps).
std::int64_t serialization_ps(std::uint64_t bytes, double rate_bps) noexcept;

/// How long a pause of `quanta` lasts at `rate_bps`, in picoseconds.
std::int64_t pause_duration_ps(std::uint32_t quanta, double rate_bps) noexcept;

/// Egress ECN marking probability for an instantaneous queue of `queue_bytes`: 0 up to Kmin,
/// Pmax * (q - Kmin) / (Kmax - Kmin) up to Kmax, 1 above Kmax (DCQCN's RED-like marking).
double ecn_mark_probability(std::uint64_t queue_bytes, std::uint64_t kmin_bytes, std::uint64_t kmax_bytes,
                            double pmax) noexcept;

/// mlx5's PFC headroom (drivers/net/ethernet/mellanox/mlx5/core/en/port_buffer.c):
/// xoff = (301 + 2.16 * cable_m) * speed_Gbps + 2.72 * mtu_bytes, in bytes.
std::uint64_t mlx5_headroom_bytes(double speed_Gbps, double cable_m, std::uint32_t mtu_bytes) noexcept;

/// Cable length whose propagation delay is `delay_ps`, at 5 ns per metre (light in fibre or copper).
constexpr double cable_m_from_delay(std::int64_t delay_ps) noexcept { return static_cast<double>(delay_ps) / 5000.0; }

/// ECN thresholds of one egress queue.
struct EcnThresholds {
  std::uint64_t kmin_bytes = 0;
  std::uint64_t kmax_bytes = 0;
  double pmax = 0;
};

/// The DCQCN paper's switch setting (SIGCOMM'15, 40G): Kmin 5 kB, Kmax 200 kB, Pmax 1% (kB = 1000 B).
inline constexpr EcnThresholds kDcqcnPaperEcn{5'000, 200'000, 0.01};

/// Where a queue's ECN thresholds come from.
enum class EcnPreset {
  Given,       ///< kmin_bytes, kmax_bytes, pmax as written, on every port
  DcqcnPaper,  ///< the paper's 40G setting scaled to the port rate (same queueing time): x rate/40G
  Hpcc,        ///< the HPCC paper's: 100 kB, 400 kB x rate/25G, Pmax 0.2
  Sonic,       ///< SONiC's default lossless WRED profile: 1 MiB, 2 MiB, 5% (whatever the rate)
};

/// "dcqcn_paper", "hpcc", "sonic" (and "given" for Given).
const char* ecn_preset_name(EcnPreset p) noexcept;
/// The preset of `name`, or nullopt.
std::optional<EcnPreset> ecn_preset_from_name(std::string_view name) noexcept;
/// One line saying what the preset sets ("dcqcn_paper: 5 kB, 200 kB, 1% x rate/40G").
const char* ecn_preset_description(EcnPreset p) noexcept;
/// The thresholds of preset `p` on a port of `rate_bps` (`given` for EcnPreset::Given).
EcnThresholds ecn_thresholds(EcnPreset p, double rate_bps, const EcnThresholds& given) noexcept;

/// The HPCC paper's DCQCN setting scaled to the link rate: Kmin = 100 kB * rate/25G,
/// Kmax = 400 kB * rate/25G, Pmax = 0.2 (kB = 1000 B). At 100 Gb/s: 400 kB, 1600 kB, 0.2.
EcnThresholds hpcc_ecn_thresholds(double rate_bps) noexcept;

}  // namespace railkit::sim
