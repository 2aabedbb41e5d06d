#include "core/json_text.hpp"

#include <fmt/format.h>

namespace railkit {

using json = nlohmann::json;

json parse_json(std::string_view text, int max_depth) {
  // The callback sees every value with its depth; one too deep ends the parse at once.
  struct TooDeep {};
  const json::parser_callback_t bound = [max_depth](int depth, json::parse_event_t, json&) {
    if (depth >= max_depth) throw TooDeep{};  // depth counts from 0: the outermost value
    return true;
  };
  try {
    return json::parse(text.begin(), text.end(), bound);
  } catch (const TooDeep&) {
    throw json::parse_error::create(
        101, 0, fmt::format("nested deeper than {} levels (refused before it is built)", max_depth), nullptr);
  }
}

json parse_json_or_discarded(std::string_view text, int max_depth) {
  try {
    return parse_json(text, max_depth);
  } catch (const json::exception&) {
    return json(json::value_t::discarded);
  }
}

std::string json_dump(const json& j, int indent) { return j.dump(indent, ' ', false, json::error_handler_t::replace); }

std::string json_dump(const nlohmann::ordered_json& j, int indent) {
  return j.dump(indent, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

std::string json_error_text(const std::exception& e) {
  const std::string what = e.what();
  if (what.rfind("[json.exception.", 0) == 0)
    if (const auto end = what.find("] "); end != std::string::npos) return what.substr(end + 2);
  return what;
}

}  // namespace railkit
