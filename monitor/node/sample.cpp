#include "monitor/node/sample.hpp"

#include <charconv>

#include "core/prom.hpp"
#include "core/strings.hpp"

namespace railkit::monitor {

std::string series_key(std::string_view metric, const Labels& labels) {
  return std::string(metric) + "{" + prom_labels(labels) + "}";
}

std::optional<std::uint64_t> parse_counter(std::string_view text) {
  const std::string_view t = trim(text);
  std::uint64_t v = 0;
  if (t.empty()) return std::nullopt;
  const auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
  if (ec != std::errc() || end != t.data() + t.size()) return std::nullopt;
  return v;
}

const std::string& label_value(const Labels& labels, std::string_view label) {
  static const std::string kNone;
  for (const auto& [k, v] : labels)
    if (k == label) return v;
  return kNone;
}

}  // namespace railkit::monitor
