#pragma once
// JSON text from outside railkit (files, journal lines, a socket): parsed with a bound on its
// nesting. nlohmann's parser is iterative, but dump() and railkit's readers recurse once per
// level, so a document nested 200 000 levels deep would overflow the stack; it is refused while
// it is read, before anything deep is built. Dumps replace bytes that are not UTF-8 (json_dump).
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace railkit {

/// Deeper than any document railkit reads or writes (results, profiles, journals: under 10).
inline constexpr int kMaxJsonDepth = 128;

/// nlohmann::json::parse(text), except that nesting deeper than `max_depth` throws
/// nlohmann::json::parse_error too ("nested deeper than 128 levels"), so callers that catch
/// parse errors catch both.
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

}  // namespace railkit
