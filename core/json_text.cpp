#include "core/json_text.hpp"

#include <cmath>
#include <limits>
#include <type_traits>

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
  } catch (const json::out_of_range& e) {
    // A number too large for a double (1e400) is out_of_range 406, not a parse_error: one kind
    // of error for every text that is not a document railkit can hold.
    throw json::parse_error::create(101, 0, json_error_text(e), nullptr);
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

// ---------------------------------------------------------------- typed readers

namespace {

[[noreturn]] void wrong_type(const json& v, std::string_view kind, std::string_view where) {
  throw UsageError(fmt::format("{} must be {}, not {}", where, kind, v.type_name()));
}

template <typename T>
T integer_as(const json& v, std::string_view where) {
  using L = std::numeric_limits<T>;
  const auto out_of_range = [&](const std::string& shown) {
    throw UsageError(fmt::format("{} must be an integer from {} to {}, not {}", where, L::min(), L::max(), shown));
  };
  if (v.is_number_unsigned()) {
    const auto x = v.get<std::uint64_t>();
    if (x > static_cast<std::uint64_t>(L::max())) out_of_range(std::to_string(x));
    return static_cast<T>(x);
  }
  if (v.is_number_integer()) {
    const auto x = v.get<std::int64_t>();
    if constexpr (std::is_unsigned_v<T>) {
      if (x < 0) out_of_range(std::to_string(x));
      if (static_cast<std::uint64_t>(x) > static_cast<std::uint64_t>(L::max())) out_of_range(std::to_string(x));
    } else {
      if (x < static_cast<std::int64_t>(L::min()) || x > static_cast<std::int64_t>(L::max())) out_of_range(std::to_string(x));
    }
    return static_cast<T>(x);
  }
  if (v.is_number_float()) {
    const double d = v.get<double>();
    if (!std::isfinite(d) || d != std::floor(d))
      throw UsageError(fmt::format("{} must be an integer, not {}", where, json_dump(v)));
    // 2^63 and 2^64 are exact doubles: compare against them, not against max() rounded up.
    const double hi = std::ldexp(1.0, L::digits);
    const double lo = L::is_signed ? -hi : 0.0;
    if (d < lo || d >= hi) out_of_range(json_dump(v));
    return static_cast<T>(d);
  }
  wrong_type(v, "an integer", where);
}

std::string key_where(std::string_view where, std::string_view key) { return fmt::format("{}: {}", where, key); }

}  // namespace

template <typename T>
T json_as(const json& v, std::string_view where) {
  if constexpr (std::is_same_v<T, json>) {
    return v;
  } else if constexpr (std::is_same_v<T, std::string>) {
    if (!v.is_string()) wrong_type(v, "a string", where);
    return v.get<std::string>();
  } else if constexpr (std::is_same_v<T, bool>) {
    if (!v.is_boolean()) wrong_type(v, "a boolean", where);
    return v.get<bool>();
  } else if constexpr (std::is_same_v<T, double>) {
    if (!v.is_number()) wrong_type(v, "a number", where);
    return v.get<double>();
  } else if constexpr (std::is_integral_v<T>) {
    return integer_as<T>(v, where);
  } else if constexpr (std::is_same_v<T, std::vector<std::string>>) {
    if (!v.is_array()) wrong_type(v, "an array of strings", where);
    std::vector<std::string> out;
    out.reserve(v.size());
    for (std::size_t i = 0; i < v.size(); ++i) out.push_back(json_as<std::string>(v[i], fmt::format("{}[{}]", where, i)));
    return out;
  } else {
    static_assert(std::is_same_v<T, JsonStringMap>);
    if (!v.is_object()) wrong_type(v, "an object of strings", where);
    JsonStringMap out;
    for (const auto& [k, x] : v.items()) out.emplace(k, json_as<std::string>(x, fmt::format("{}.{}", where, k)));
    return out;
  }
}

const json& json_object(const json& obj, std::string_view where) {
  if (!obj.is_object()) wrong_type(obj, "an object", where);
  return obj;
}

const json& json_member(const json& obj, std::string_view key, std::string_view where) {
  const auto it = json_object(obj, where).find(key);
  if (it == obj.end()) throw UsageError(fmt::format("{}: {} is missing", where, key));
  return *it;
}

template <typename T>
T field(const json& obj, std::string_view key, std::string_view where) {
  return json_as<T>(json_member(obj, key, where), key_where(where, key));
}

template <typename T>
T field_or(const json& obj, std::string_view key, T fallback, std::string_view where) {
  const auto it = json_object(obj, where).find(key);
  if (it == obj.end()) return fallback;
  return json_as<T>(*it, key_where(where, key));
}

template <typename T>
std::optional<T> field_opt(const json& obj, std::string_view key, std::string_view where) {
  const auto it = json_object(obj, where).find(key);
  if (it == obj.end() || it->is_null()) return std::nullopt;
  return json_as<T>(*it, key_where(where, key));
}

#define RAILKIT_JSON_READERS(T)                                                                     \
  template T json_as<T>(const json&, std::string_view);                                           \
  template T field<T>(const json&, std::string_view, std::string_view);                           \
  template T field_or<T>(const json&, std::string_view, T, std::string_view);                     \
  template std::optional<T> field_opt<T>(const json&, std::string_view, std::string_view);
RAILKIT_JSON_READERS(std::string)
RAILKIT_JSON_READERS(bool)
RAILKIT_JSON_READERS(double)
RAILKIT_JSON_READERS(int)
RAILKIT_JSON_READERS(long)
RAILKIT_JSON_READERS(long long)
RAILKIT_JSON_READERS(unsigned)
RAILKIT_JSON_READERS(unsigned long)
RAILKIT_JSON_READERS(unsigned long long)
RAILKIT_JSON_READERS(json)
RAILKIT_JSON_READERS(std::vector<std::string>)
RAILKIT_JSON_READERS(JsonStringMap)
#undef RAILKIT_JSON_READERS

}  // namespace railkit
