#pragma once
// Shared by the libFuzzer targets of tests/fuzz: the input as text, a private temporary
// directory per process for readers that take a path, and the one rule every target checks:
// a reader of outside input may refuse it only with a railkit::Error (a documented exit code
// and one line). Any other exception escapes the target, and libFuzzer reports it as a crash,
// as it does every sanitizer finding.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.hpp"
#include "tests/lib/temp_dir.hpp"

namespace railkit::fuzz {

inline std::string_view text(const std::uint8_t* data, std::size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

/// A directory under $TMPDIR that lives as long as the fuzzing process (removed at exit).
inline test::TempDir& scratch() {
  static test::TempDir dir("railkit-fuzz");
  return dir;
}

/// Writes `bytes` to scratch()/name (replacing it, creating its folders) and returns the path.
inline std::filesystem::path write_scratch(const std::string& name, std::string_view bytes) {
  const auto p = scratch().path / name;
  std::filesystem::create_directories(p.parent_path());
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!out) std::abort();
  return p;
}

/// A fixture tree made by a generator (run_fuzz.py --tree; RAILKIT_FUZZ_TREE names it), copied
/// once into the scratch directory, links kept as links. reset() puts back the bytes of every
/// regular file it had, so each input starts from the same tree.
class FixtureTree {
 public:
  FixtureTree() {
    const char* source = std::getenv("RAILKIT_FUZZ_TREE");
    if (source == nullptr || !std::filesystem::is_directory(source)) {
      std::fputs("fuzz: RAILKIT_FUZZ_TREE must name a generated fixture tree (run_fuzz.py --tree)\n", stderr);
      std::abort();
    }
    root_ = scratch().path / "root";
    std::filesystem::copy(source, root_,
                          std::filesystem::copy_options::recursive | std::filesystem::copy_options::copy_symlinks);
    for (auto it = std::filesystem::recursive_directory_iterator(root_); it != std::filesystem::recursive_directory_iterator();
         ++it) {
      if (!it->is_symlink() && it->is_regular_file()) files_.push_back(it->path());
    }
    std::sort(files_.begin(), files_.end());
    if (files_.empty()) std::abort();
    for (const auto& f : files_) original_.push_back(read(f));
  }
  const std::filesystem::path& root() const { return root_; }
  /// The tree's regular files, sorted.
  const std::vector<std::filesystem::path>& files() const { return files_; }

  static std::string read(const std::filesystem::path& p) {
    std::ifstream in(p, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  }
  static void write(const std::filesystem::path& p, std::string_view bytes) {
    std::ofstream(p, std::ios::binary | std::ios::trunc).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  }
  /// Every regular file back to its original bytes (only those that changed are rewritten).
  void reset() const {
    for (std::size_t i = 0; i < files_.size(); ++i) reset(i);
  }
  /// files()[i] back to its original bytes.
  void reset(std::size_t i) const {
    if (read(files_[i]) != original_[i]) write(files_[i], original_[i]);
  }

 private:
  std::filesystem::path root_;
  std::vector<std::filesystem::path> files_;
  std::vector<std::string> original_;
};

/// Runs `f`; a railkit::Error is a refusal the reader is allowed to make, anything else escapes.
template <typename F>
void refuse_only_with_railkit_errors(F&& f) {
  try {
    f();
  } catch (const railkit::Error&) {
  }
}

}  // namespace railkit::fuzz
