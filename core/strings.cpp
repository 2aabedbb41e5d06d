#include "core/strings.hpp"

#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <unordered_map>

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

namespace {

/// Length of the UTF-8 sequence at text[i] and its code point, or 0 when it is not one
/// (a stray continuation byte, overlong, a surrogate, above U+10FFFF, cut short).
std::size_t utf8_at(std::string_view text, std::size_t i, char32_t& cp) {
  const auto b = [&](std::size_t k) { return static_cast<unsigned char>(text[k]); };
  const unsigned char c = b(i);
  std::size_t n = 0;
  char32_t min = 0;
  if (c < 0x80) {
    cp = c;
    return 1;
  }
  if (c >= 0xc2 && c <= 0xdf) n = 2, cp = c & 0x1f, min = 0x80;
  else if (c >= 0xe0 && c <= 0xef) n = 3, cp = c & 0x0f, min = 0x800;
  else if (c >= 0xf0 && c <= 0xf4) n = 4, cp = c & 0x07, min = 0x10000;
  else return 0;
  if (i + n > text.size()) return 0;
  for (std::size_t k = 1; k < n; ++k) {
    if ((b(i + k) & 0xc0) != 0x80) return 0;
    cp = (cp << 6) | (b(i + k) & 0x3f);
  }
  if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return 0;
  return n;
}

bool is_control(char32_t cp) { return cp < 0x20 || (cp >= 0x7f && cp <= 0x9f); }

/// printable's body: `keep_lines` keeps '\n' and '\t' as they are.
std::string escape_controls(std::string_view text, std::size_t max_bytes, bool keep_lines) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  const auto escape = [&](unsigned char c) {
    out += "\\x";
    out += kHex[c >> 4];
    out += kHex[c & 0xf];
  };
  std::size_t i = 0;
  while (i < text.size()) {
    char32_t cp = 0;
    const std::size_t n = utf8_at(text, i, cp);
    const std::size_t len = n == 0 ? 1 : n;
    if (i + len > max_bytes) break;
    if (n == 0 || (is_control(cp) && !(keep_lines && (cp == '\n' || cp == '\t'))))
      for (std::size_t k = 0; k < len; ++k) escape(static_cast<unsigned char>(text[i + k]));
    else
      out.append(text.substr(i, n));
    i += len;
  }
  if (i < text.size()) out += "... (" + std::to_string(text.size()) + " bytes)";
  return out;
}

}  // namespace

std::string printable(std::string_view text, std::size_t max_bytes) { return escape_controls(text, max_bytes, false); }

std::string terminal_field(std::string_view text) { return escape_controls(text, text.size(), false); }

std::string terminal_text(std::string_view text) { return escape_controls(text, text.size(), true); }

std::string replace_invalid_utf8(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    char32_t cp = 0;
    const std::size_t n = utf8_at(text, i, cp);
    if (n == 0) {
      out += "\xEF\xBF\xBD";  // U+FFFD
      ++i;
    } else {
      out.append(text.substr(i, n));
      i += n;
    }
  }
  return out;
}

bool has_control_chars(std::string_view text) {
  for (std::size_t i = 0; i < text.size();) {
    char32_t cp = 0;
    const std::size_t n = utf8_at(text, i, cp);
    if (n != 0 && is_control(cp)) return true;
    i += n == 0 ? 1 : n;
  }
  return false;
}

std::vector<std::string> summarize_warnings(std::span<const std::string> lines) {
  const auto kind = [](std::string_view line) {
    if (const auto colon = line.find(": "); colon != std::string_view::npos) line.remove_prefix(colon + 2);
    std::string k;
    for (char c : line)
      if (!std::isdigit(static_cast<unsigned char>(c))) k += c;
      else if (k.empty() || k.back() != '#') k += '#';
    return k;
  };
  struct Group {
    std::size_t first;   // index into lines
    std::size_t count = 0;
    bool same = true;    // every line equal to the first
  };
  std::vector<Group> groups;
  std::unordered_map<std::string, std::size_t> by_kind;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const auto [it, added] = by_kind.try_emplace(kind(lines[i]), groups.size());
    if (added) groups.push_back({i});
    Group& g = groups[it->second];
    ++g.count;
    g.same = g.same && lines[i] == lines[g.first];
  }
  std::vector<std::string> out;
  for (const Group& g : groups) {
    std::string line = printable(lines[g.first], 400);
    if (g.count > 1)
      line += g.same ? " (" + std::to_string(g.count) + " times)" : " (and " + std::to_string(g.count - 1) + " more like it)";
    out.push_back(std::move(line));
  }
  return out;
}

std::string fnv1a64_hex(std::string_view s) {
  std::uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : s) {
    h ^= c;
    h *= 0x100000001b3ull;
  }
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

}  // namespace railkit
