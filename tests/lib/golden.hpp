#pragma once
// Shared by the tests: golden files, google/benchmark's output tests as the model. A rendered text
// must equal its golden file byte for byte; a mismatch reads like a diff's first hunk: the file, the
// first differing line (from 1), expected and got. RAILKIT_UPDATE_GOLDEN=1 in the environment
// rewrites the golden files from what the code renders now (review their diff before committing).
#include <cstddef>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

namespace railkit::test {

/// The lines of `text` without their '\n'; a last line without one is marked so.
inline std::vector<std::string> golden_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::size_t start = 0;
  for (std::size_t nl = text.find('\n'); nl != std::string::npos; nl = text.find('\n', start)) {
    lines.push_back(text.substr(start, nl - start));
    start = nl + 1;
  }
  if (start < text.size()) lines.push_back(text.substr(start) + "  (no newline at the end)");
  return lines;
}

/// Empty when `got` equals `want` (the text of golden file `path`); else a diff-like message naming
/// `path`, the first differing line, the expected and the got line.
inline std::string golden_text_mismatch(const std::string& path, const std::string& want, const std::string& got) {
  if (want == got) return "";
  const auto w = golden_lines(want), g = golden_lines(got);
  std::size_t k = 0;
  while (k < w.size() && k < g.size() && w[k] == g[k]) ++k;
  std::ostringstream os;
  os << path << ":" << k + 1 << ": the rendered text differs from the golden file from this line on\n"
     << "  expected: " << (k < w.size() ? "'" + w[k] + "'" : "(end of the golden file)") << "\n"
     << "  got:      " << (k < g.size() ? "'" + g[k] + "'" : "(end of the rendered text)") << "\n"
     << "(" << w.size() << " golden lines, " << g.size()
     << " rendered; RAILKIT_UPDATE_GOLDEN=1 rewrites the golden files from the current code)";
  return os.str();
}

/// Whether RAILKIT_UPDATE_GOLDEN=1 asks the tests to rewrite their golden files.
inline bool update_golden() {
  const char* u = std::getenv("RAILKIT_UPDATE_GOLDEN");
  return u && std::string_view(u) == "1";
}

/// Empty when `got` equals golden file `path`; else golden_text_mismatch's message, or one saying
/// the file is missing. Under RAILKIT_UPDATE_GOLDEN=1 the file is written with `got` first.
inline std::string golden_mismatch(const std::string& path, const std::string& got) {
  if (update_golden()) std::ofstream(path, std::ios::binary) << got;
  std::ifstream in(path, std::ios::binary);
  if (!in) return path + ": no golden file (RAILKIT_UPDATE_GOLDEN=1 writes it)";
  std::stringstream want;
  want << in.rdbuf();
  return golden_text_mismatch(path, want.str(), got);
}

}  // namespace railkit::test
