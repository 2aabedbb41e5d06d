#include "core/strings.hpp"

#include <charconv>
#include <cstdlib>

#include <fmt/format.h>

#include "core/error.hpp"

namespace railkit {

bool natural_less(std::string_view a, std::string_view b) {
  const auto digit = [](char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; };
  std::size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    if (digit(a[i]) && digit(b[j])) {
      std::size_t ie = i, je = j;
      while (ie < a.size() && digit(a[ie])) ++ie;
      while (je < b.size() && digit(b[je])) ++je;
      std::string_view na = a.substr(i, ie - i), nb = b.substr(j, je - j);
      while (na.size() > 1 && na[0] == '0') na.remove_prefix(1);
      while (nb.size() > 1 && nb[0] == '0') nb.remove_prefix(1);
      if (na.size() != nb.size()) return na.size() < nb.size();
      if (na != nb) return na < nb;
      i = ie;
      j = je;
    } else {
      if (a[i] != b[j]) return a[i] < b[j];
      ++i;
      ++j;
    }
  }
  if (a.size() - i != b.size() - j) return a.size() - i < b.size() - j;
  return a < b;
}

std::string slug(std::string_view name) {
  std::string s;
  for (char c : name) {
    const bool keep = std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-' || c == '=';
    s += keep ? c : '_';
    if (s.size() >= 80) break;
  }
  if (s.empty() || s[0] == '.') s.insert(s.begin(), '_');
  return s;
}

std::optional<long long> to_int(std::string_view text) {
  long long v = 0;
  const auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || ec != std::errc() || p != text.data() + text.size()) return std::nullopt;
  return v;
}

std::optional<double> to_double(std::string_view text) {
  if (text.empty()) return std::nullopt;
  const std::string s(text);
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  if (end != s.c_str() + s.size()) return std::nullopt;
  return v;
}

long long parse_int(std::string_view what, std::string_view text, long long lo, long long hi) {
  const auto v = to_int(text);
  if (!v) throw UsageError(fmt::format("{} '{}': expected an integer", what, text));
  if (*v < lo || *v > hi) throw UsageError(fmt::format("{} '{}': must be between {} and {}", what, text, lo, hi));
  return *v;
}

}  // namespace railkit
