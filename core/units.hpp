#pragma once
// Size parsing and formatting. Suffixes are binary, as in nccl-tests: K = 1024, M = 1024^2, G = 1024^3.
#include <cstdint>
#include <string>
#include <string_view>

namespace railkit {

/// Parses "8", "64K", "1.5M", "2G", "16MiB", "4KB" into bytes (binary suffixes, case-insensitive).
/// Throws UsageError naming `what` on anything else (empty, negative, junk, fractional bytes, overflow).
std::uint64_t parse_size_bytes(std::string_view text, std::string_view what);

/// Formats bytes with the largest binary unit that divides them: 8 -> "8 B", 65536 -> "64 KiB".
std::string format_bytes(std::uint64_t bytes);

/// A duration for progress lines: "4.2 s", "12 s", "3 min 05 s", "1 h 02 min".
std::string format_duration(double seconds);

/// A number as a stream prints it by default (6 significant digits, no trailing zeros): 400, 2.5, 1e+06.
std::string format_number(double v);

/// Algorithm bandwidth in GB/s (1e9 B/s) for `bytes` moved in `time_us` microseconds.
constexpr double algbw_GBps(double bytes, double time_us) noexcept {
  return time_us > 0 ? bytes / time_us / 1e3 : 0.0;
}

}  // namespace railkit
