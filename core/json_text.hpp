#pragma once
// JSON text from outside railkit (files, journal lines, a socket): parsed with a bound on its
// nesting. nlohmann's parser is iterative, but dump() and railkit's readers recurse once per
// level, so a document nested 200 000 levels deep would overflow the stack; it is refused while
// it is read, before anything deep is built. Dumps replace bytes that are not UTF-8 (json_dump).
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/error.hpp"

namespace railkit {

/// Deeper than any document railkit reads or writes (results, profiles, journals: under 10).
inline constexpr int kMaxJsonDepth = 128;

/// nlohmann::json::parse(text), except that nesting deeper than `max_depth` throws
/// nlohmann::json::parse_error too ("nested deeper than 128 levels"), and so does a number too
/// large for a double (nlohmann's out_of_range 406), so callers that catch parse errors catch all.
nlohmann::json parse_json(std::string_view text, int max_depth = kMaxJsonDepth);

/// As parse_json, but a discarded value (is_discarded()) instead of any exception.
nlohmann::json parse_json_or_discarded(std::string_view text, int max_depth = kMaxJsonDepth);

/// j.dump(indent) (-1: one line), except that bytes that are not UTF-8 are written as U+FFFD
/// instead of throwing type_error 316: text from outside (sysfs files, host names, flags, the
/// environment) is stored with its bad bytes replaced and the run goes on. Use it for every dump,
/// and for the ordered round trips (ojson::parse(json_dump(j))).
std::string json_dump(const nlohmann::json& j, int indent = -1);
std::string json_dump(const nlohmann::ordered_json& j, int indent = -1);

/// The message of a nlohmann exception without its "[json.exception.parse_error.101] " prefix.
std::string json_error_text(const std::exception& e);

// ---------------------------------------------------------------- typed readers of outside JSON
// `where` names the file and the JSON path of the value or object ("results.json: results[3]",
// "journal.jsonl:12: trial"); every mistake is a UsageError (exit 6) that names it, never a raw
// nlohmann::json::type_error. T is one of: std::string, bool, double, int, long, long long,
// unsigned, unsigned long, unsigned long long (std::int64_t, std::uint64_t), nlohmann::json,
// std::vector<std::string>, std::map<std::string, std::string>. Integers take only integer
// numbers (or floats with an integral value) in T's range: 1.5, or -1 into an unsigned, is refused.

/// `v` as T; UsageError "<where> must be a <kind>, not <type>" otherwise.
template <typename T>
T json_as(const nlohmann::json& v, std::string_view where);

/// `obj` itself, after checking that it is an object (UsageError "<where> must be an object, not ...").
const nlohmann::json& json_object(const nlohmann::json& obj, std::string_view where);

/// The member `key` of the object `obj`: UsageError "<where>: <key> is missing" if absent.
const nlohmann::json& json_member(const nlohmann::json& obj, std::string_view key, std::string_view where);

/// The required field `key` of `obj` as T: missing or of another type (null included) is a
/// UsageError "<where>: <key> must be a string, not null".
template <typename T>
T field(const nlohmann::json& obj, std::string_view key, std::string_view where);

/// The field `key` of `obj` as T, or `fallback` when the key is absent. Present with another
/// type (null included, unless T is nlohmann::json) is a UsageError naming `where` and `key`.
template <typename T>
T field_or(const nlohmann::json& obj, std::string_view key, T fallback, std::string_view where);

/// field_or for const char* fallbacks: a std::string.
inline std::string field_or(const nlohmann::json& obj, std::string_view key, const char* fallback, std::string_view where) {
  return field_or<std::string>(obj, key, std::string(fallback), where);
}

/// The field `key` of `obj` as T, or nullopt when it is absent or null; another type is a UsageError.
template <typename T>
std::optional<T> field_opt(const nlohmann::json& obj, std::string_view key, std::string_view where);

/// Runs `body`; a nlohmann::json::exception escaping it becomes UsageError("<source>: <message>").
/// The safety net of each top-level reader of outside JSON, behind its typed field reads.
template <typename F>
auto with_json_errors(std::string_view source, F&& body) -> decltype(body()) {
  try {
    return body();
  } catch (const nlohmann::json::exception& e) {
    throw UsageError(std::string(source) + ": " + json_error_text(e));
  }
}

#define RAILKIT_JSON_READERS_EXTERN(T)                                                                     \
  extern template T json_as<T>(const nlohmann::json&, std::string_view);                                \
  extern template T field<T>(const nlohmann::json&, std::string_view, std::string_view);                \
  extern template T field_or<T>(const nlohmann::json&, std::string_view, T, std::string_view);          \
  extern template std::optional<T> field_opt<T>(const nlohmann::json&, std::string_view, std::string_view);
RAILKIT_JSON_READERS_EXTERN(std::string)
RAILKIT_JSON_READERS_EXTERN(bool)
RAILKIT_JSON_READERS_EXTERN(double)
RAILKIT_JSON_READERS_EXTERN(int)
RAILKIT_JSON_READERS_EXTERN(long)
RAILKIT_JSON_READERS_EXTERN(long long)
RAILKIT_JSON_READERS_EXTERN(unsigned)
RAILKIT_JSON_READERS_EXTERN(unsigned long)
RAILKIT_JSON_READERS_EXTERN(unsigned long long)
RAILKIT_JSON_READERS_EXTERN(nlohmann::json)
RAILKIT_JSON_READERS_EXTERN(std::vector<std::string>)
using JsonStringMap = std::map<std::string, std::string>;
RAILKIT_JSON_READERS_EXTERN(JsonStringMap)
#undef RAILKIT_JSON_READERS_EXTERN

}  // namespace railkit
