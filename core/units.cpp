#include "core/units.hpp"

#include <cctype>
#include <charconv>
#include <cmath>
#include <limits>
#include <sstream>

#include <fmt/format.h>

#include "core/error.hpp"

namespace railkit {

std::uint64_t parse_size_bytes(std::string_view text, std::string_view what) {
  const auto bad = [&](std::string_view why) {
    return UsageError(std::string(what) + " '" + std::string(text) + "': " + std::string(why));
  };
  std::string_view s = text;
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  if (s.empty()) throw bad("empty size");
  if (s.front() == '-') throw bad("sizes cannot be negative");
  size_t digits = 0;
  while (digits < s.size() && (std::isdigit(static_cast<unsigned char>(s[digits])) || s[digits] == '.')) ++digits;
  if (digits == 0) throw bad("expected a number with an optional K, M or G suffix");
  double value = 0;
  const auto [ptr, ec] = std::from_chars(s.data(), s.data() + digits, value);
  if (ec != std::errc() || ptr != s.data() + digits) throw bad("expected a number with an optional K, M or G suffix");
  std::string unit(s.substr(digits));
  for (char& c : unit) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  while (!unit.empty() && unit.front() == ' ') unit.erase(0, 1);
  double mult = 1;
  if (unit.empty() || unit == "B") mult = 1;
  else if (unit == "K" || unit == "KB" || unit == "KIB") mult = 1024.0;
  else if (unit == "M" || unit == "MB" || unit == "MIB") mult = 1024.0 * 1024;
  else if (unit == "G" || unit == "GB" || unit == "GIB") mult = 1024.0 * 1024 * 1024;
  else if (unit == "T" || unit == "TB" || unit == "TIB") mult = 1024.0 * 1024 * 1024 * 1024;
  else throw bad("unknown unit (use K, M, G or T, binary)");
  const double bytes = value * mult;
  if (!std::isfinite(bytes) || bytes >= 1.8e19) throw bad("size too large");
  if (bytes != std::floor(bytes)) throw bad("not a whole number of bytes");
  return static_cast<std::uint64_t>(bytes);
}

std::string format_bytes(std::uint64_t bytes) {
  static constexpr const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  while (u < 4 && bytes >= 1024 && bytes % 1024 == 0) {
    bytes /= 1024;
    ++u;
  }
  return std::to_string(bytes) + " " + kUnits[u];
}

std::string format_number(double v) {
  std::ostringstream os;
  os << v;
  return os.str();
}

std::string format_duration(double s) {
  if (s < 0) s = 0;
  if (s < 10) return fmt::format("{:.1f} s", s);
  const long t = std::lround(s);
  if (t < 60) return fmt::format("{} s", t);
  if (t < 3600) return fmt::format("{} min {:02d} s", t / 60, t % 60);
  return fmt::format("{} h {:02d} min", t / 3600, (t % 3600) / 60);
}

}  // namespace railkit
