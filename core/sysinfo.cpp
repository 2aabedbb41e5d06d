#include "core/sysinfo.hpp"

#include <fstream>
#include <sstream>
#include <string>

namespace railkit {
namespace {

std::optional<std::uint64_t> read_kib_field(const std::filesystem::path& file, const std::string& field) {
  std::ifstream in(file);
  if (!in) return std::nullopt;
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(field + ":", 0) != 0) continue;
    std::istringstream ss(line.substr(field.size() + 1));
    std::uint64_t kib = 0;
    std::string unit;
    if (!(ss >> kib)) return std::nullopt;
    ss >> unit;
    return unit == "kB" ? kib * 1024 : kib;
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::uint64_t> mem_available_bytes(const SysRoot& root) {
  return read_kib_field(root / "proc/meminfo", "MemAvailable");
}

std::optional<std::uint64_t> peak_rss_bytes(const SysRoot& root) {
  return read_kib_field(root / "proc/self/status", "VmHWM");
}

}  // namespace railkit
