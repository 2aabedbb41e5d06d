#pragma once
// Facts about the machine, read through a root directory so tests can point at fixtures.
#include <cstdint>
#include <filesystem>
#include <optional>

namespace railkit {

/// A directory standing for "/" (a live node, or a captured/fixture tree).
struct SysRoot {
  std::filesystem::path dir{"/"};
  std::filesystem::path operator/(const std::filesystem::path& rel) const { return dir / rel.relative_path(); }
};

/// MemAvailable from <root>/proc/meminfo in bytes; nullopt when the file or the field is missing.
std::optional<std::uint64_t> mem_available_bytes(const SysRoot& root);

/// Peak resident set size of this process (VmHWM from <root>/proc/self/status) in bytes.
std::optional<std::uint64_t> peak_rss_bytes(const SysRoot& root);

}  // namespace railkit
