#pragma once
// Reading files under a root directory (a live "/" or a captured/fixture tree).
// Symlinks are resolved inside the root: an absolute link target is re-rooted, and ".." never
// climbs above the root, so a captured tree reads exactly like the node it came from.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/sysinfo.hpp"
#include "topology/model.hpp"

namespace railkit::topo {

/// Reads sysfs-style files under a root and records unreadable or garbled inputs as findings.
class SysfsReader {
 public:
  explicit SysfsReader(SysRoot root);

  const SysRoot& root() const noexcept { return root_; }

  /// Resolves every symlink in `rel` (relative to the root) inside the root; returns the
  /// resolved path relative to the root, or nullopt when a component is missing or links loop.
  std::optional<std::filesystem::path> resolve(const std::filesystem::path& rel) const;

  /// The whole file, trimmed; nullopt when missing or unreadable.
  std::optional<std::string> text(const std::filesystem::path& rel) const;

  /// The raw bytes of a file (binary `config`); nullopt when unreadable.
  std::optional<std::vector<std::uint8_t>> bytes(const std::filesystem::path& rel) const;

  /// Names in a directory (sorted, natural order); empty when missing.
  std::vector<std::string> list(const std::filesystem::path& rel) const;

  bool exists(const std::filesystem::path& rel) const;

  /// Records an input problem (check "input.unreadable" or "input.garbled") naming the file.
  void problem(const std::filesystem::path& rel, std::string_view subject, bool missing, std::string_view what);

  /// Input problems recorded so far.
  const std::vector<Finding>& problems() const noexcept { return problems_; }

 private:
  std::filesystem::path abs(const std::filesystem::path& rel) const { return root_ / rel; }
  std::optional<std::filesystem::path> resolve_impl(const std::filesystem::path& rel, int& budget) const;
  /// Raw content of a file, its directory resolved through the cache.
  std::optional<std::string> read(const std::filesystem::path& rel) const;
  SysRoot root_;
  /// Resolved paths by their unresolved relative path; a per-reader memo, not shared state.
  mutable std::unordered_map<std::string, std::optional<std::filesystem::path>> cache_;
  std::vector<Finding> problems_;
};

}  // namespace railkit::topo
