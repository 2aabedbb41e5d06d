#pragma once
// Text helpers every folder shares: split, join, trim, lower case, file-name-safe names, and
// integer parsing with a clear error. The inline ones need nothing but the standard library
// (the NCCL tuner plugin uses them without linking railkit::core).
#include <cctype>
#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace railkit {

/// The fields of `s` between `sep`s, empty ones included ("a,,b" -> a, "", b; "" -> one "").
inline std::vector<std::string> split(std::string_view s, char sep) {
  std::vector<std::string> out;
  for (std::size_t start = 0;;) {
    const std::size_t at = s.find(sep, start);
    out.emplace_back(s.substr(start, at == std::string_view::npos ? std::string_view::npos : at - start));
    if (at == std::string_view::npos) return out;
    start = at + 1;
  }
}

/// The non-empty fields of `s` between `sep`s ("a,,b," -> a, b).
inline std::vector<std::string> split_nonempty(std::string_view s, char sep) {
  std::vector<std::string> out;
  for (std::string& f : split(s, sep))
    if (!f.empty()) out.push_back(std::move(f));
  return out;
}

/// The words of `s` (separated by any whitespace).
inline std::vector<std::string> split_ws(std::string_view s) {
  std::vector<std::string> out;
  std::size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
    std::size_t j = i;
    while (j < s.size() && !std::isspace(static_cast<unsigned char>(s[j]))) ++j;
    if (j > i) out.emplace_back(s.substr(i, j - i));
    i = j;
  }
  return out;
}

/// `s` without leading and trailing whitespace (and NUL bytes, which sysfs files can end with).
inline std::string_view trim(std::string_view s) {
  const auto blank = [](char c) { return c == '\0' || std::isspace(static_cast<unsigned char>(c)); };
  while (!s.empty() && blank(s.front())) s.remove_prefix(1);
  while (!s.empty() && blank(s.back())) s.remove_suffix(1);
  return s;
}

/// The items' text joined with `sep` between them (anything std::string can be built from).
template <typename Range>
std::string join(const Range& items, std::string_view sep) {
  std::string out;
  bool first = true;
  for (const auto& item : items) {
    if (!first) out += sep;
    out += std::string_view(item);
    first = false;
  }
  return out;
}

/// The items as a list in a sentence: "a", "a or b", "a, b or c" (`last` before the last item).
template <typename Range>
std::string join_list(const Range& items, std::string_view last = " or ") {
  std::vector<std::string_view> v;
  for (const auto& item : items) v.emplace_back(item);
  if (v.empty()) return "";
  std::string out;
  for (std::size_t i = 0; i + 1 < v.size(); ++i) out += std::string(i == 0 ? "" : ", ") + std::string(v[i]);
  if (v.size() > 1) out += last;
  return out + std::string(v.back());
}

/// Whether the rows of `table` carry `names` (row.*field), one each and in order: for the
/// static_assert that ties a list of names to the table whose rows it names.
template <typename Table, typename Names, typename Field>
constexpr bool names_in_order(const Table& table, const Names& names, Field field) {
  if (std::size(table) != std::size(names)) return false;
  for (std::size_t i = 0; i < std::size(names); ++i)
    if (std::string_view(table[i].*field) != std::string_view(names[i])) return false;
  return true;
}

/// Equal ignoring ASCII case.
inline bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(a[i])) != std::tolower(static_cast<unsigned char>(b[i]))) return false;
  return true;
}

/// ASCII lower case.
inline std::string to_lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

/// Natural order of names, as `railkit topo` sorts devices: digit runs compare as numbers, so
/// "mlx5_3" < "mlx5_10". Equal-ranking names ("mlx5_01", "mlx5_1") fall back to plain order.
bool natural_less(std::string_view a, std::string_view b);

/// A file-name-safe form of a name (letters, digits, '.', '_', '-', '='; everything else '_'),
/// at most 80 characters, never starting with '.'.
std::string slug(std::string_view name);

/// `text` safe for one line of a terminal: control characters (C0, DEL, and C1 written as
/// UTF-8) and bytes that are not UTF-8 written as \xNN; text past `max_bytes` of input is cut
/// at a character and ends "... (N bytes)", N the whole text's size. Use it for text taken from
/// files, the environment or flags in error and warning lines.
std::string printable(std::string_view text, std::size_t max_bytes = 200);

/// A field taken from an input document (a label, a host name, a path) for a table printed to a
/// terminal: printable without the length cut, so an ESC sequence or a newline in a document
/// cannot move the cursor, recolour or retitle the terminal.
std::string terminal_field(std::string_view text);

/// Text for a terminal, its line breaks and tabs kept: every other control character (C0, DEL, C1
/// as UTF-8, so ESC and CSI) and every byte that is not UTF-8 written as \xNN. For whole renderings
/// (tables) that carry text from input documents.
std::string terminal_text(std::string_view text);

/// Whether `text` holds a control character (C0, DEL, or C1 as UTF-8): what printable escapes,
/// less the bytes that are not UTF-8.
bool has_control_chars(std::string_view text);

/// `text` with every byte that is not part of a UTF-8 character replaced by U+FFFD, as the JSON
/// documents are written (json_dump): for formats that must be UTF-8 (Prometheus exposition).
std::string replace_invalid_utf8(std::string_view text);

/// Warning lines for a terminal: each through printable (at most 400 bytes), and the lines of
/// one kind (the same text after its first ": ", digits aside) as one line, the first of them
/// and a count: "TEXT (10000 times)" when all are the same, "TEXT (and 9999 more like it)"
/// otherwise. In the order each kind first appears.
std::vector<std::string> summarize_warnings(std::span<const std::string> lines);

/// The whole of `text` as a decimal integer, or nullopt (no sign games: "+1", " 1", "1x" fail).
std::optional<long long> to_int(std::string_view text);
/// The whole of `text` as a number, or nullopt.
std::optional<double> to_double(std::string_view text);

/// `text` as an integer in [lo, hi]. Throws UsageError "WHAT 'TEXT': expected an integer" or
/// "...: must be between LO and HI", naming the input.
long long parse_int(std::string_view what, std::string_view text, long long lo, long long hi);

/// FNV-1a 64-bit of `s` as 16 lowercase hex digits (content hashes, fingerprints).
std::string fnv1a64_hex(std::string_view s);

}  // namespace railkit
