#include "core/env.hpp"

namespace railkit {

std::map<std::string, std::string> capture_env(char* const* envp, std::span<const std::string_view> prefixes) {
  std::map<std::string, std::string> out;
  if (envp == nullptr) return out;
  for (char* const* e = envp; *e != nullptr; ++e) {
    const std::string_view entry(*e);
    const auto eq = entry.find('=');
    if (eq == std::string_view::npos) continue;
    const std::string_view name = entry.substr(0, eq);
    for (std::string_view p : prefixes) {
      if (name.starts_with(p)) {
        out.emplace(std::string(name), std::string(entry.substr(eq + 1)));
        break;
      }
    }
  }
  return out;
}

std::string env_value(char* const* envp, std::string_view name) {
  if (envp == nullptr) return {};
  for (char* const* e = envp; *e != nullptr; ++e) {
    const std::string_view entry(*e);
    if (entry.size() > name.size() && entry.starts_with(name) && entry[name.size()] == '=')
      return std::string(entry.substr(name.size() + 1));
  }
  return {};
}

std::string expand_nccl_debug_file(std::string_view pattern, std::string_view hostname, long pid) {
  const std::string_view host = hostname.substr(0, hostname.find('.'));
  std::string out;
  for (std::size_t i = 0; i < pattern.size(); ++i) {
    const char next = i + 1 < pattern.size() ? pattern[i + 1] : '\0';
    if (pattern[i] != '%' || (next != 'h' && next != 'p' && next != '%')) {
      out += pattern[i];
      continue;
    }
    if (next == 'h') out += host;
    else if (next == 'p') out += std::to_string(pid);
    else out += '%';
    ++i;
  }
  return out;
}

}  // namespace railkit
