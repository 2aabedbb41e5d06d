#pragma once
// Internal to sim/scenario*.cpp: reading a JSON object through a table of keys, so that every
// section rejects unknown keys the same way and errors name "<file>: <section.key>".
#include <array>
#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "sim/scenario.hpp"

namespace railkit::sim::detail {

using json = nlohmann::json;

/// Where the document came from.
struct Ctx {
  std::string source;               ///< file name, for messages
  std::filesystem::path base_dir;   ///< anchors relative paths
  /// "<source>: <key>" for messages.
  std::string where(const std::string& key) const { return source + ": " + key; }
};

/// Reads one key's value into the scenario; `key` is its full dotted path.
using Handler = void (*)(const json& v, const std::string& key, const Ctx& ctx, Scenario& s);

/// One key of a section.
struct Field {
  std::string_view key;
  Handler read;
};

/// Reads the object `j` (at dotted `path`, "" for the top level): calls each present key's
/// handler in table order, then throws UsageError for the first key the table does not know.
void read_object(const json& j, const std::string& path, std::span<const Field> fields, const Ctx& ctx, Scenario& s);

/// "<path>.<key>" or "<key>" at the top level.
std::string join_key(const std::string& path, std::string_view key);

/// An integer in [lo, hi]. Throws UsageError naming the key.
std::int64_t read_int(const json& v, const std::string& key, const Ctx& ctx, std::int64_t lo, std::int64_t hi);
/// A finite number in [lo, hi].
double read_number(const json& v, const std::string& key, const Ctx& ctx, double lo, double hi);
/// true or false.
bool read_bool(const json& v, const std::string& key, const Ctx& ctx);
/// A string.
std::string read_string(const json& v, const std::string& key, const Ctx& ctx);
/// A list of priorities 0..7 (a single integer is a list of one).
std::array<bool, kPriorities> read_priorities(const json& v, const std::string& key, const Ctx& ctx);

/// nic.* and switch.* (sim/scenario_devices.cpp).
std::span<const Field> nic_fields() noexcept;
std::span<const Field> switch_fields() noexcept;

}  // namespace railkit::sim::detail
