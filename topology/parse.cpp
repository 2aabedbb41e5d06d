#include "topology/parse.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdio>
#include <sstream>

namespace railkit::topo {

std::string trim(std::string_view s) {
  size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return std::string(s.substr(b, e - b));
}

std::optional<std::uint32_t> parse_hex(std::string_view s) {
  std::string t = trim(s);
  std::string_view v = t;
  if (v.size() > 2 && v[0] == '0' && (v[1] == 'x' || v[1] == 'X')) v.remove_prefix(2);
  if (v.empty() || v.size() > 8) return std::nullopt;
  std::uint32_t out = 0;
  auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), out, 16);
  if (ec != std::errc() || p != v.data() + v.size()) return std::nullopt;
  return out;
}

std::optional<long long> parse_int(std::string_view s) {
  std::string t = trim(s);
  if (t.empty()) return std::nullopt;
  long long out = 0;
  auto [p, ec] = std::from_chars(t.data(), t.data() + t.size(), out, 10);
  if (ec != std::errc() || p != t.data() + t.size()) return std::nullopt;
  return out;
}

namespace {

// Leading decimal number (with optional fraction) of `s`, and the rest.
std::optional<std::pair<double, std::string_view>> leading_number(std::string_view s) {
  size_t i = 0;
  while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
  const size_t start = i;
  while (i < s.size() && (std::isdigit(static_cast<unsigned char>(s[i])) || s[i] == '.')) ++i;
  if (i == start) return std::nullopt;
  double v = 0;
  auto [p, ec] = std::from_chars(s.data() + start, s.data() + i, v);
  if (ec != std::errc() || p != s.data() + i) return std::nullopt;
  return std::make_pair(v, s.substr(i));
}

}  // namespace

std::optional<double> parse_link_speed_GTps(std::string_view s) {
  auto n = leading_number(s);
  if (!n) return std::nullopt;
  std::string rest = trim(n->second);
  if (rest.rfind("GT/s", 0) != 0) return std::nullopt;
  if (n->first <= 0) return std::nullopt;
  return n->first;
}

std::optional<double> parse_rate_Gbps(std::string_view s) {
  auto n = leading_number(s);
  if (!n) return std::nullopt;
  std::string rest = trim(n->second);
  if (rest.rfind("Gb/sec", 0) != 0 && rest.rfind("Gb/s", 0) != 0) return std::nullopt;
  return n->first;
}

std::string parse_port_state(std::string_view s) {
  std::string t = trim(s);
  const auto colon = t.find(':');
  if (colon != std::string::npos && parse_int(t.substr(0, colon))) return trim(t.substr(colon + 1));
  return t;
}

std::optional<std::vector<int>> parse_cpulist(std::string_view s) {
  std::string t = trim(s);
  std::vector<int> out;
  if (t.empty()) return out;
  std::stringstream ss(t);
  std::string item;
  while (std::getline(ss, item, ',')) {
    const auto dash = item.find('-');
    if (dash == std::string::npos) {
      auto v = parse_int(item);
      if (!v || *v < 0 || *v > 1 << 20) return std::nullopt;
      out.push_back(static_cast<int>(*v));
    } else {
      auto a = parse_int(item.substr(0, dash));
      auto b = parse_int(item.substr(dash + 1));
      if (!a || !b || *a < 0 || *b < *a || *b > 1 << 20) return std::nullopt;
      for (long long c = *a; c <= *b; ++c) out.push_back(static_cast<int>(c));
    }
  }
  return out;
}

std::string cpus_to_cpumap(const std::vector<int>& cpus) {
  int max_cpu = -1;
  for (int c : cpus) max_cpu = std::max(max_cpu, c);
  const size_t words = max_cpu < 0 ? 1 : static_cast<size_t>(max_cpu / 32 + 1);
  std::vector<std::uint32_t> w(words, 0);
  for (int c : cpus) w[static_cast<size_t>(c / 32)] |= 1u << (c % 32);
  std::string out;
  for (size_t i = words; i-- > 0;) {
    char buf[16];
    std::snprintf(buf, sizeof buf, "%08x", w[i]);
    if (!out.empty()) out += ',';
    out += buf;
  }
  return out;
}

namespace {

std::vector<std::string> gid_groups(std::string_view gid) {
  std::vector<std::string> g;
  std::stringstream ss{trim(gid)};
  std::string item;
  while (std::getline(ss, item, ':')) g.push_back(item);
  return g;
}

}  // namespace

bool gid_is_ipv4_mapped(std::string_view gid) {
  auto g = gid_groups(gid);
  if (g.size() != 8) return false;
  for (int i = 0; i < 5; ++i) {
    auto v = parse_hex(g[i]);
    if (!v || *v != 0) return false;
  }
  auto f = parse_hex(g[5]);
  return f && *f == 0xffff;
}

bool gid_is_zero(std::string_view gid) {
  auto g = gid_groups(gid);
  if (g.size() != 8) return false;
  return std::all_of(g.begin(), g.end(), [](const std::string& x) {
    auto v = parse_hex(x);
    return v && *v == 0;
  });
}

AcsState parse_acs(std::span<const std::uint8_t> config) {
  AcsState st;
  st.config_complete = config.size() >= 4096;
  if (!st.config_complete) return st;
  auto rd16 = [&](size_t off) -> std::uint16_t {
    return static_cast<std::uint16_t>(config[off] | (config[off + 1] << 8));
  };
  auto rd32 = [&](size_t off) -> std::uint32_t {
    return static_cast<std::uint32_t>(config[off]) | (static_cast<std::uint32_t>(config[off + 1]) << 8) |
           (static_cast<std::uint32_t>(config[off + 2]) << 16) | (static_cast<std::uint32_t>(config[off + 3]) << 24);
  };
  size_t off = 0x100;
  for (int guard = 0; guard < 512 && off >= 0x100 && off + 8 <= config.size(); ++guard) {
    const std::uint32_t hdr = rd32(off);
    if (hdr == 0 || hdr == 0xffffffffu) break;
    const std::uint16_t id = static_cast<std::uint16_t>(hdr & 0xffff);
    if (id == 0x000D) {
      st.present = true;
      st.capability = rd16(off + 4);
      st.control = rd16(off + 6);
      break;
    }
    const size_t next = (hdr >> 20) & 0xffc;
    if (next == 0 || next <= off) break;
    off = next;
  }
  return st;
}

std::vector<std::string> acs_control_bits(std::uint16_t control) {
  static constexpr const char* kNames[] = {"SrcValid",    "TransBlk",   "ReqRedir",   "CmpltRedir",
                                           "UpstreamFwd", "EgressCtrl", "DirectTrans"};
  std::vector<std::string> out;
  for (int i = 0; i < 7; ++i)
    if (control & (1u << i)) out.emplace_back(kNames[i]);
  return out;
}

std::optional<std::array<bool, 8>> parse_pfc(std::string_view s) {
  std::string text{s};
  std::string chosen = text;
  std::stringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    std::string low = line;
    std::transform(low.begin(), low.end(), low.begin(), [](unsigned char c) { return std::tolower(c); });
    if (low.find("enable") != std::string::npos) {
      const auto colon = line.find(':');
      if (colon != std::string::npos) {
        chosen = line.substr(colon + 1);
      } else {
        const auto digit = line.find_first_of("0123456789");
        chosen = digit == std::string::npos ? std::string() : line.substr(digit);
      }
      break;
    }
  }
  std::vector<int> vals;
  std::string tok;
  for (char c : chosen + " ") {
    if (std::isdigit(static_cast<unsigned char>(c))) {
      tok += c;
    } else if (!tok.empty()) {
      auto v = parse_int(tok);
      tok.clear();
      if (!v || (*v != 0 && *v != 1)) return std::nullopt;
      vals.push_back(static_cast<int>(*v));
    } else if (!(std::isspace(static_cast<unsigned char>(c)) || c == ',')) {
      return std::nullopt;
    }
  }
  if (vals.size() != 8) return std::nullopt;
  std::array<bool, 8> out{};
  for (size_t i = 0; i < 8; ++i) out[i] = vals[i] == 1;
  return out;
}

std::string parse_trust(std::string_view s) {
  std::string low = trim(s);
  std::transform(low.begin(), low.end(), low.begin(), [](unsigned char c) { return std::tolower(c); });
  if (low.find("dscp") != std::string::npos) return "dscp";
  if (low.find("pcp") != std::string::npos) return "pcp";
  return "";
}

namespace {

std::string strip_ansi(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\x1b' && i + 1 < s.size() && s[i + 1] == '[') {
      i += 2;
      while (i < s.size() && !std::isalpha(static_cast<unsigned char>(s[i]))) ++i;
      continue;
    }
    out += s[i];
  }
  return out;
}

std::vector<std::string> split_ws(const std::string& line) {
  std::vector<std::string> out;
  std::stringstream ss(line);
  std::string t;
  while (ss >> t) out.push_back(t);
  return out;
}

bool is_device_name(const std::string& s) {
  auto numbered = [&](std::string_view prefix) {
    return s.size() > prefix.size() && s.rfind(prefix, 0) == 0 &&
           std::all_of(s.begin() + static_cast<long>(prefix.size()), s.end(),
                       [](unsigned char c) { return std::isdigit(c); });
  };
  return numbered("GPU") || numbered("NIC") || numbered("mlx5_");
}

}  // namespace

std::optional<NvsmiTopo> parse_nvsmi_topo(std::string_view text) {
  NvsmiTopo t;
  std::stringstream lines(strip_ansi(text));
  std::string line;
  bool have_header = false;
  while (std::getline(lines, line)) {
    auto toks = split_ws(line);
    if (toks.empty()) continue;
    if (!have_header) {
      if (is_device_name(toks[0]) && toks[0].rfind("GPU", 0) == 0) {
        for (const auto& tk : toks) {
          if (!is_device_name(tk)) break;
          t.columns.push_back(tk);
        }
        have_header = true;
      }
      continue;
    }
    if (!is_device_name(toks[0])) {
      if (!t.cells.empty()) break;  // legend or blank area after the matrix
      continue;
    }
    const std::string row = toks[0];
    for (size_t c = 0; c < t.columns.size() && c + 1 < toks.size(); ++c) t.cells[{row, t.columns[c]}] = toks[c + 1];
  }
  if (!have_header || t.cells.empty()) return std::nullopt;
  return t;
}

std::optional<int> parse_nv_cell(std::string_view cell) {
  std::string c = trim(cell);
  if (c.size() < 3 || c.rfind("NV", 0) != 0) return std::nullopt;
  auto v = parse_int(c.substr(2));
  if (!v || *v <= 0 || *v > 64) return std::nullopt;
  return static_cast<int>(*v);
}

}  // namespace railkit::topo
