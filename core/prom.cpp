#include "core/prom.hpp"

#include <cctype>

namespace railkit {

std::string prom_escape(std::string_view s) {
  std::string out;
  for (char ch : s) {
    if (ch == '\\') out += "\\\\";
    else if (ch == '"') out += "\\\"";
    else if (ch == '\n') out += "\\n";
    else out += ch;
  }
  return out;
}

std::string prom_label_value(std::string_view s) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (!std::isspace(static_cast<unsigned char>(s[i]))) {
      out += s[i];
      continue;
    }
    const bool after_digit = i > 0 && std::isdigit(static_cast<unsigned char>(s[i - 1]));
    if (!after_digit) out += '_';
  }
  return prom_escape(out);
}

std::string prom_help_type(std::string_view name, std::string_view help, std::string_view type) {
  std::string h;
  for (char ch : help) {
    if (ch == '\\') h += "\\\\";
    else if (ch == '\n') h += "\\n";
    else h += ch;
  }
  std::string out;
  out.append("# HELP ").append(name).append(" ").append(h).append("\n");
  out.append("# TYPE ").append(name).append(" ").append(type).append("\n");
  return out;
}

std::string prom_labels(const std::vector<std::pair<std::string, std::string>>& labels) {
  std::string out;
  for (const auto& [k, v] : labels) {
    if (!out.empty()) out += ',';
    out += k + "=\"" + prom_label_value(v) + "\"";
  }
  return out;
}

}  // namespace railkit
