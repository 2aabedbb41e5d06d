#pragma once
// Quantities with units in scenario files: rates ("100Gbps"), times ("1us") and sizes ("16MiB").
// A rate or a time without a unit is an error: "100" could be bits or bytes, ns or us.
#include <cstdint>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace railkit::sim {

/// Parses a rate: a number and one of bps, Kbps, Mbps, Gbps, Tbps (or b/s, Kb/s, Mb/s, Gb/s, Tb/s,
/// Gbit/s ...), decimal (1 Gbps = 1e9 b/s), optional space. Returns bits per second (> 0).
/// Throws UsageError "<key>: '<text>': <why>" (a bare number: "a rate needs a unit ...").
double parse_rate_bps(const nlohmann::json& v, std::string_view key);

/// Parses a time: a number and one of ps, ns, us, ms, s. Returns picoseconds (>= 0).
/// Throws UsageError naming `key`, also for a bare number.
std::int64_t parse_time_ps(const nlohmann::json& v, std::string_view key);

/// Parses a byte count: a non-negative integer, or a string with core's binary suffixes ("64K",
/// "16MiB" = 16 * 2^20). Throws UsageError naming `key`.
std::uint64_t parse_bytes(const nlohmann::json& v, std::string_view key);

/// "100 Gb/s", "2.5 Mb/s": a rate for people.
std::string format_rate(double bps);

/// Picoseconds to microseconds.
constexpr double ps_to_us(std::int64_t ps) noexcept { return static_cast<double>(ps) * 1e-6; }

/// Microseconds to picoseconds (rounded).
constexpr std::int64_t us_to_ps(double us) noexcept { return static_cast<std::int64_t>(us * 1e6 + (us >= 0 ? 0.5 : -0.5)); }

}  // namespace railkit::sim
