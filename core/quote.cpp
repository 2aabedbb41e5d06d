#include "core/quote.hpp"

#include <cstdint>
#include <optional>

#include <fmt/format.h>

#include "core/error.hpp"

namespace railkit {
namespace {

/// Decodes one UTF-8 sequence at s[i]; advances i. nullopt on an invalid sequence.
std::optional<std::uint32_t> next_code_point(std::string_view s, std::size_t& i) {
  const auto b0 = static_cast<unsigned char>(s[i]);
  if (b0 < 0x80) {
    ++i;
    return b0;
  }
  int len = 0;
  std::uint32_t cp = 0, min = 0;
  if ((b0 & 0xE0) == 0xC0) {
    len = 2, cp = b0 & 0x1Fu, min = 0x80;
  } else if ((b0 & 0xF0) == 0xE0) {
    len = 3, cp = b0 & 0x0Fu, min = 0x800;
  } else if ((b0 & 0xF8) == 0xF0) {
    len = 4, cp = b0 & 0x07u, min = 0x10000;
  } else {
    return std::nullopt;
  }
  if (i + static_cast<std::size_t>(len) > s.size()) return std::nullopt;
  for (int k = 1; k < len; ++k) {
    const auto b = static_cast<unsigned char>(s[i + static_cast<std::size_t>(k)]);
    if ((b & 0xC0) != 0x80) return std::nullopt;
    cp = (cp << 6) | (b & 0x3Fu);
  }
  if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return std::nullopt;
  i += static_cast<std::size_t>(len);
  return cp;
}

}  // namespace

std::string posix_quote(std::string_view value) {
  std::string r = "'";
  for (char c : value) {
    if (c == '\'')
      r += "'\\''";
    else
      r += c;
  }
  return r + "'";
}

std::string yaml_quote(std::string_view value, std::string_view where) {
  std::string r = "\"";
  std::size_t i = 0;
  while (i < value.size()) {
    const auto cp = next_code_point(value, i);
    if (!cp) throw UsageError(fmt::format("{}: the value is not valid UTF-8, which YAML cannot carry", where));
    const std::uint32_t c = *cp;
    if (c == '\\') r += "\\\\";
    else if (c == '"') r += "\\\"";
    else if (c == '\n') r += "\\n";
    else if (c == '\t') r += "\\t";
    else if (c == '\r') r += "\\r";
    else if (c < 0x20 || c == 0x7f) r += fmt::format("\\x{:02x}", c);
    else if (c < 0x7f) r += static_cast<char>(c);
    else if (c <= 0xFFFF) r += fmt::format("\\u{:04x}", c);
    else r += fmt::format("\\U{:08x}", c);
  }
  return r + "\"";
}

}  // namespace railkit
