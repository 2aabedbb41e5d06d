#include "sim/quantity.hpp"

#include <array>
#include <cctype>
#include <charconv>
#include <cmath>
#include <utility>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/json_text.hpp"
#include "core/units.hpp"

namespace railkit::sim {
namespace {

struct Unit {
  std::string_view name;
  double factor;
};

constexpr std::array kRateUnits = {
    Unit{"bps", 1}, Unit{"b/s", 1}, Unit{"bit/s", 1},
    Unit{"Kbps", 1e3}, Unit{"kbps", 1e3}, Unit{"Kb/s", 1e3}, Unit{"kb/s", 1e3}, Unit{"Kbit/s", 1e3}, Unit{"kbit/s", 1e3},
    Unit{"Mbps", 1e6}, Unit{"Mb/s", 1e6}, Unit{"Mbit/s", 1e6},
    Unit{"Gbps", 1e9}, Unit{"Gb/s", 1e9}, Unit{"Gbit/s", 1e9},
    Unit{"Tbps", 1e12}, Unit{"Tb/s", 1e12}, Unit{"Tbit/s", 1e12},
};

constexpr std::array kTimeUnits = {
    Unit{"ps", 1}, Unit{"ns", 1e3}, Unit{"us", 1e6}, Unit{"µs", 1e6}, Unit{"ms", 1e9}, Unit{"s", 1e12},
};

UsageError bad(std::string_view key, const nlohmann::json& v, std::string_view why) {
  const std::string text = v.is_string() ? v.get<std::string>() : json_dump(v);
  return UsageError(fmt::format("{}: '{}': {}", key, text, why));
}

/// Splits "100 Gbps" into 100 and "Gbps". Returns false when there is no leading number.
bool split_number(std::string_view s, double& value, std::string_view& unit) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (ec != std::errc() || ptr == s.data()) return false;
  unit = s.substr(static_cast<size_t>(ptr - s.data()));
  while (!unit.empty() && unit.front() == ' ') unit.remove_prefix(1);
  return true;
}

template <size_t N>
double with_unit(const nlohmann::json& v, std::string_view key, const std::array<Unit, N>& units,
                 std::string_view what, std::string_view unit_list) {
  if (v.is_number()) throw bad(key, v, fmt::format("a {} needs a unit ({})", what, unit_list));
  if (!v.is_string()) throw bad(key, v, fmt::format("expected a {} such as {}", what, units[0].name));
  double value = 0;
  std::string_view unit;
  if (!split_number(v.get_ref<const std::string&>(), value, unit))
    throw bad(key, v, fmt::format("expected a number and a unit ({})", unit_list));
  if (unit.empty()) throw bad(key, v, fmt::format("a {} needs a unit ({})", what, unit_list));
  for (const auto& u : units)
    if (u.name == unit) {
      if (!std::isfinite(value) || value < 0) throw bad(key, v, fmt::format("a {} cannot be negative", what));
      return value * u.factor;
    }
  throw bad(key, v, fmt::format("unknown unit '{}' (use {})", unit, unit_list));
}

}  // namespace

double parse_rate_bps(const nlohmann::json& v, std::string_view key) {
  const double bps = with_unit(v, key, kRateUnits, "rate", "bps, Kbps, Mbps, Gbps, Tbps");
  if (bps <= 0) throw bad(key, v, "a rate must be positive");
  return bps;
}

std::int64_t parse_time_ps(const nlohmann::json& v, std::string_view key) {
  const double ps = with_unit(v, key, kTimeUnits, "time", "ps, ns, us, ms, s");
  if (ps > 9.0e18) throw bad(key, v, "too long");
  return static_cast<std::int64_t>(std::llround(ps));
}

std::uint64_t parse_bytes(const nlohmann::json& v, std::string_view key) {
  if (v.is_number_unsigned()) return v.get<std::uint64_t>();
  if (v.is_number_integer()) {
    if (v.get<std::int64_t>() < 0) throw bad(key, v, "a size cannot be negative");
    return static_cast<std::uint64_t>(v.get<std::int64_t>());
  }
  if (v.is_string()) return parse_size_bytes(v.get_ref<const std::string&>(), key);
  throw bad(key, v, "expected a byte count (4096, \"64K\", \"16MiB\")");
}

std::string format_rate(double bps) {
  static constexpr std::array<std::pair<double, const char*>, 4> kSteps = {
      {{1e12, "Tb/s"}, {1e9, "Gb/s"}, {1e6, "Mb/s"}, {1e3, "Kb/s"}}};
  for (const auto& [f, name] : kSteps)
    if (bps >= f) return fmt::format("{} {}", format_number(bps / f), name);
  return fmt::format("{} b/s", format_number(bps));
}

}  // namespace railkit::sim
