#include "core/nccl_log.hpp"
#include "core/strings.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <fstream>
#include <system_error>
#include <tuple>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/nccl_log_cursor.hpp"

namespace railkit {
namespace {

using nccl_log_detail::Cursor;

constexpr std::string_view kInfoMarker = "NCCL INFO ";
constexpr std::string_view kWarnMarker = "NCCL WARN ";
constexpr std::string_view kVersionPrefix = "NCCL version ";

template <typename T>
std::optional<T> to_number(std::string_view s) {
  s = trim(s);
  T v{};
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc{} || p != s.data() + s.size()) return std::nullopt;
  return v;
}

/// `s` with every byte that is not part of a valid UTF-8 sequence replaced by '?', so that
/// whatever the summary keeps from a line can go into JSON.
std::string utf8_clean(std::string_view s) {
  std::string out(s);
  std::size_t i = 0;
  while (i < out.size()) {
    const auto c = static_cast<unsigned char>(out[i]);
    std::size_t len = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 0;
    bool ok = len > 0 && i + len <= out.size() && !(len == 2 && c < 0xC2) && !(len == 4 && c > 0xF4);
    for (std::size_t k = 1; ok && k < len; ++k) ok = (static_cast<unsigned char>(out[i + k]) & 0xC0) == 0x80;
    if (ok && len == 3) {  // no overlong forms, no surrogates
      const auto c1 = static_cast<unsigned char>(out[i + 1]);
      ok = !(c == 0xE0 && c1 < 0xA0) && !(c == 0xED && c1 >= 0xA0);
    }
    if (ok && len == 4) {
      const auto c1 = static_cast<unsigned char>(out[i + 1]);
      ok = !(c == 0xF0 && c1 < 0x90) && !(c == 0xF4 && c1 >= 0x90);
    }
    if (ok) {
      i += len;
    } else {
      out[i] = '?';
      ++i;
    }
  }
  return out;
}

bool has_high_bytes(std::string_view s) {
  return std::any_of(s.begin(), s.end(), [](char c) { return static_cast<unsigned char>(c) >= 0x80; });
}

/// The part of a line NCCL formatted, and which process wrote it.
struct LineView {
  enum class Kind { Info, Warn, Version, Other } kind = Kind::Other;
  std::string_view message;
  std::string_view host;
  std::string process;  ///< "host:pid", empty when the line has no recognisable prefix
};

/// Finds `marker` at the start of `line` or after a space.
std::size_t find_marker(std::string_view line, std::string_view marker) {
  for (auto pos = line.find(marker); pos != std::string_view::npos; pos = line.find(marker, pos + 1))
    if (pos == 0 || line[pos - 1] == ' ') return pos;
  return std::string_view::npos;
}

/// Reads "host:pid:tid" from the token before "[dev]" (or the last token) of a line prefix such
/// as "[1,0]<stdout>:node1:4242:4300 [3] " or "[2026-11-29 10:00:00] node1:4242:4300 [3] file.cc:12".
void read_prefix(std::string_view prefix, LineView& v) {
  std::vector<std::string_view> tokens;
  Cursor c{prefix};
  for (c.spaces(); !c.done(); c.spaces()) tokens.push_back(c.until(" "));
  for (std::size_t i = tokens.size(); i-- > 0;) {
    auto t = tokens[i];
    // Last three ':' fields must be host, pid (number), tid (number).
    auto tid_colon = t.rfind(':');
    if (tid_colon == std::string_view::npos || tid_colon == 0) continue;
    auto pid_colon = t.rfind(':', tid_colon - 1);
    if (pid_colon == std::string_view::npos) continue;
    auto host_start = t.rfind(':', pid_colon == 0 ? 0 : pid_colon - 1);
    host_start = (host_start == std::string_view::npos || host_start >= pid_colon) ? 0 : host_start + 1;
    auto host = t.substr(host_start, pid_colon - host_start);
    auto pid = t.substr(pid_colon + 1, tid_colon - pid_colon - 1);
    auto tid = t.substr(tid_colon + 1);
    if (host.empty() || !to_number<long>(pid) || !to_number<long>(tid)) continue;
    v.host = host;
    v.process = fmt::format("{}:{}", host, pid);
    return;
  }
}

LineView classify(std::string_view line) {
  LineView v;
  if (auto pos = find_marker(line, kInfoMarker); pos != std::string_view::npos) {
    v.kind = LineView::Kind::Info;
    v.message = trim(line.substr(pos + kInfoMarker.size()));
    read_prefix(line.substr(0, pos), v);
  } else if (pos = find_marker(line, kWarnMarker); pos != std::string_view::npos) {
    v.kind = LineView::Kind::Warn;
    v.message = trim(line.substr(pos + kWarnMarker.size()));
    read_prefix(line.substr(0, pos), v);
  } else if (trim(line).starts_with(kVersionPrefix)) {
    v.kind = LineView::Kind::Version;  // NCCL_DEBUG=VERSION prints the bare version line
    v.message = trim(line);
  }
  return v;
}

/// The per-source parse: a summary plus what can only be resolved at the end of the source.
class Parser {
 public:
  explicit Parser(std::string_view source) : source_(utf8_clean(source)) { s_.files.emplace_back(source_); }

  void line(std::string_view raw) {
    ++s_.lines;
    std::string cleaned;
    if (has_high_bytes(raw)) {
      cleaned = utf8_clean(raw);
      raw = cleaned;
    }
    auto v = classify(raw);
    switch (v.kind) {
      case LineView::Kind::Other:
        return;
      case LineView::Kind::Warn:
        ++s_.nccl_lines;
        if (!v.host.empty()) s_.hosts.emplace(v.host);
        if (s_.nccl_warnings.size() < NcclLogSummary::kMaxNcclWarnings) s_.nccl_warnings.emplace_back(v.message);
        return;
      case LineView::Kind::Version:
        ++s_.nccl_lines;
        version(v.message);
        return;
      case LineView::Kind::Info:
        ++s_.nccl_lines;
        if (!v.host.empty()) s_.hosts.emplace(v.host);
        info(v);
        return;
    }
  }

  NcclLogSummary finish() {
    resolve_nics();
    // Which network: the one connections used; else the announced one; else a lone NIC list's.
    if (!net_connections_.empty()) {
      auto top = std::max_element(net_connections_.begin(), net_connections_.end(),
                                  [](const auto& a, const auto& b) { return a.second < b.second; });
      s_.net = top->first;
      if (net_connections_.size() > 1) {
        std::string all;
        for (const auto& [n, count] : net_connections_) all += fmt::format("{}{} ({})", all.empty() ? "" : ", ", n, count);
        warn(fmt::format("connections used several networks: {}", all));
      }
    } else if (announced_net_) {
      s_.net = announced_net_;
    } else if (listed_nets_.size() == 1) {
      s_.net = *listed_nets_.begin();
    }
    decide_transport();
    if (!incomplete_nic_entries_.empty()) warn_incomplete_nic_entries();
    if (unreadable_ > 0)
      warn(fmt::format("{} NCCL line(s) looked like connection, pattern or ring lines but could not be read",
                       unreadable_));
    if (s_.lines > 0 && s_.nccl_lines == 0)
      warn("no NCCL log lines found (was NCCL_DEBUG=INFO set for this run?)");
    return std::move(s_);
  }

 private:
  using NicMap = std::map<int, NcclNic>;  // device index -> NIC

  void warn(const std::string& what) { s_.warnings.push_back(fmt::format("{}: {}", source_, what)); }

  void warn_incomplete_nic_entries() {
    constexpr std::size_t kNamed = 5;
    std::string named;
    std::size_t n = 0;
    for (const auto& e : incomplete_nic_entries_)
      if (n++ < kNamed) named += fmt::format("{}{}", named.empty() ? "" : ", ", e);
    const auto total = incomplete_nic_entries_.size() + more_incomplete_nic_entries_;
    if (total > kNamed) named += fmt::format(" and {} more", total - kNamed);
    warn(fmt::format("ignored {} NIC list entr{} not of the form [i]name:port/link ([i]name:address<port> for "
                     "NET/Socket; NCCL cuts lines at 2047 characters): {}",
                     total, total == 1 ? "y" : "ies", named));
  }

  void version(std::string_view msg) {
    Cursor c{msg};
    c.lit(kVersionPrefix);
    auto v = std::string(c.until(" "));
    if (v.empty()) return;
    if (!s_.nccl_version) {
      s_.nccl_version = v;
    } else if (*s_.nccl_version != v && mixed_versions_.insert(v).second) {
      warn(fmt::format("NCCL versions differ: {} and {}", *s_.nccl_version, v));
    }
  }

  void info(const LineView& v) {
    std::string_view m = v.message;
    if (m.starts_with("Channel ")) return channel(m, v.process);
    if (m.starts_with("Pattern ")) return pattern(m);
    if (m.starts_with("Connected all rings")) return rings(m);
    if (m.starts_with(kVersionPrefix)) return version(m);
    if (m.starts_with("NET/") && (m.find(" : Using") != std::string_view::npos ||
                                  (m.find("Using") != std::string_view::npos && m.find('[') != std::string_view::npos)))
      return nic_list(m, v.process);  // also NET/IB's deviceless "Using ; OOB eth0:..."
    if (m.starts_with("Bootstrap")) return bootstrap(m);
    if (m.starts_with("Using network ")) {
      auto n = trim(m.substr(std::string_view("Using network ").size()));
      if (!n.empty() && !announced_net_) announced_net_ = std::string(n);
      return;
    }
    if (m.starts_with("TUNER/Plugin: Using ")) return tuner(m.substr(std::string_view("TUNER/Plugin: Using ").size()));
    if (m.starts_with("NET/Plugin: Loaded net plugin ")) {
      auto name = m.substr(std::string_view("NET/Plugin: Loaded net plugin ").size());
      if (auto paren = name.rfind(" ("); paren != std::string_view::npos) name = name.substr(0, paren);
      if (!s_.net_plugin && !trim(name).empty()) s_.net_plugin = std::string(trim(name));
      return;
    }
    if (m.starts_with("comm ") && m.find(" nRanks ") != std::string_view::npos) return comm(m);
    if (m.starts_with("NCCL_")) {
      constexpr std::string_view kSet = " set by environment to ";
      if (auto pos = m.find(kSet); pos != std::string_view::npos) {
        auto value = trim(m.substr(pos + kSet.size()));
        if (value.ends_with('.')) value.remove_suffix(1);  // NCCL_PARAM echoes end with "."
        s_.env_from_log.emplace(std::string(m.substr(0, pos)), std::string(value));
      }
    }
  }

  // "Channel 02/1 : 3[3] -> 11[3] [send] via NET/IB/3(11)/GDRDMA/Shared" (connection), or
  // "Channel 00/24 :    0   1   2 ..." (a ring, printed by rank 0).
  void channel(std::string_view m, const std::string& process) {
    Cursor c{m};
    c.lit("Channel ");
    c.spaces();
    auto chan = c.integer();
    std::optional<int> second;
    if (c.lit("/")) second = c.integer();
    c.spaces();
    if (!chan || !c.lit(":")) return void(++unreadable_);
    c.spaces();
    if (c.rest().find("->") == std::string_view::npos) {
      // A ring: only rank numbers follow; the number after '/' is the channel count.
      for (Cursor r{c.rest()}; !r.done(); r.spaces())
        if (!r.integer()) return void(++unreadable_);
      if (second) s_.ring_channels = std::max(s_.ring_channels, *second);
      return;
    }
    const int conn_index = second.value_or(0);
    if (!c.integer()) return void(++unreadable_);
    c.bracket();
    c.spaces();
    if (!c.lit("->")) return void(++unreadable_);
    c.spaces();
    if (!c.integer()) return void(++unreadable_);
    c.bracket();
    c.spaces();
    enum class Dir { Send, Receive, Unknown } dir = Dir::Unknown;
    if (c.lit("[send]")) dir = Dir::Send;
    else if (c.lit("[receive]")) dir = Dir::Receive;
    c.spaces();
    if (!c.lit("via ")) return void(++unreadable_);
    auto transport = c.until("/ ");
    if (transport.empty()) return void(++unreadable_);
    if (transport != "NET") {
      ++s_.transports[std::string(transport)];
      return;
    }
    c.lit("/");
    auto net = c.until("/");  // plugin names may hold spaces: "AWS Libfabric"
    if (net.empty() || !c.lit("/")) return void(++unreadable_);
    auto dev = c.integer();
    if (!dev) return void(++unreadable_);
    std::optional<int> relay;
    if (c.lit("(")) {
      relay = c.integer();
      if (!relay || !c.lit(")")) return void(++unreadable_);
    }
    ++s_.transports["NET"];
    ++net_connections_[std::string(net)];
    ++pending_[std::make_tuple(process, std::string(net), *dev)];
    if (c.rest().find("/GDRDMA") != std::string_view::npos) ++s_.gdr_connections;
    if (dir == Dir::Receive) {
      ++s_.recv_net_connections;
    } else {
      if (dir == Dir::Send) ++s_.send_net_connections;
      if (relay) {
        ++s_.pxn_relays;
        if (conn_index > 0) ++s_.p2p_pxn_relays;
        s_.relay_ranks.insert(*relay);
      } else if (dir == Dir::Send) {
        ++s_.direct_net_connections;
      }
    }
  }

  // "Pattern 4, crossNic 0, nChannels 16, bw 40.000000/40.000000, type NVL/PXN, sameChannels 1"
  void pattern(std::string_view m) {
    NcclGraphPattern p;
    bool have_pattern = false, have_channels = false;
    while (!m.empty()) {
      auto comma = m.find(',');
      auto field = trim(m.substr(0, comma));
      m = comma == std::string_view::npos ? std::string_view{} : m.substr(comma + 1);
      auto space = field.find(' ');
      if (space == std::string_view::npos) continue;
      auto key = field.substr(0, space);
      auto value = trim(field.substr(space + 1));
      auto slash = value.find('/');
      auto first = value.substr(0, slash);
      auto second = slash == std::string_view::npos ? std::string_view{} : value.substr(slash + 1);
      if (key == "Pattern") {
        if (auto n = to_number<int>(value)) {
          p.pattern = *n;
          have_pattern = true;
        }
      } else if (key == "crossNic") {
        p.cross_nic = to_number<int>(value).value_or(0);
      } else if (key == "nChannels") {
        if (auto n = to_number<int>(value)) {
          p.n_channels = *n;
          have_channels = true;
        }
      } else if (key == "sameChannels") {
        p.same_channels = to_number<int>(value).value_or(0);
      } else if (key == "bw") {
        p.bw_intra_GBps = to_number<double>(first).value_or(0);
        p.bw_inter_GBps = to_number<double>(second).value_or(0);
      } else if (key == "type") {
        p.type_intra = std::string(first);
        p.type_inter = std::string(second);
      }
    }
    if (!have_pattern || !have_channels) return void(++unreadable_);
    s_.graph_channels = std::max(s_.graph_channels, p.n_channels);
    if (std::find(s_.patterns.begin(), s_.patterns.end(), p) == s_.patterns.end()) s_.patterns.push_back(p);
  }

  // "Connected all rings, use ring PXN 1 GDR 1" (older NCCL: "Connected all rings" alone)
  void rings(std::string_view m) {
    if (auto pos = m.find("PXN "); pos != std::string_view::npos) {
      Cursor c{m.substr(pos + 4)};
      if (auto v = c.integer()) s_.ring_pxn = s_.ring_pxn.value_or(false) || *v != 0;
    }
    if (auto pos = m.find("GDR "); pos != std::string_view::npos) {
      Cursor c{m.substr(pos + 4)};
      if (auto v = c.integer()) s_.ring_gdr = s_.ring_gdr.value_or(false) || *v != 0;
    }
  }

  /// The NIC of one list entry after its "[i]": `name:port[:...]/link` (NET/IB and other net
  /// plugins: "mlx5_0:1/RoCE", "mlx5_1:1::3/IB"), `name:address<port>` for NET/Socket
  /// ("eth0:10.0.0.1<0>"); nullopt when the entry is not complete.
  static std::optional<NcclNic> nic_entry(std::string_view net, std::string_view entry) {
    Cursor t{entry};
    NcclNic nic;
    nic.name = std::string(t.until(":/"));
    if (nic.name.empty() || !t.lit(":")) return std::nullopt;
    if (net == "Socket") {
      const auto lt = t.rest().rfind('<');
      if (lt == 0 || lt == std::string_view::npos || !t.rest().ends_with('>')) return std::nullopt;
      return nic;
    }
    nic.port = t.integer();
    const auto slash = t.rest().rfind('/');
    if (!nic.port || slash == std::string_view::npos || slash + 1 == t.rest().size()) return std::nullopt;
    nic.link = std::string(t.rest().substr(slash + 1));
    return nic;
  }

  // "NET/IB : Using [0]mlx5_0:1/RoCE [1]mlx5_3:1:2/IB [RO]; OOB eth0:10.0.0.1<0>"
  // "NET/Socket : Using [0]eth0:10.0.0.1<0> [1]eth1:10.0.1.1<0>"
  // One pass over the list; each entry is read once. NCCL cuts the line at 2047 characters, so
  // the last entry may be truncated ("[3]mlx5"): an entry that is not complete is ignored.
  void nic_list(std::string_view m, const std::string& process) {
    Cursor c{m};
    c.lit("NET/");
    auto net = std::string(trim(c.until(" :")));
    auto using_pos = c.rest().find("Using");
    if (using_pos == std::string_view::npos) return;
    Cursor list{c.rest().substr(using_pos + 5)};
    auto& map = nic_maps_[process][net];
    bool any = false;
    for (list.spaces(); !list.done() && !list.rest().starts_with(';'); list.spaces()) {
      const auto token = list.until(" ;");
      Cursor t{token};
      if (!t.lit("[")) continue;
      auto index = t.integer();
      if (!index || !t.lit("]")) continue;  // "[RO]" (relaxed ordering) and the like
      auto nic = nic_entry(net, t.rest());
      if (!nic) {
        if (incomplete_nic_entries_.size() < kKeptIncompleteEntries)
          incomplete_nic_entries_.emplace(fmt::format("NET/{} '{}'", net, token));
        else
          ++more_incomplete_nic_entries_;
        continue;
      }
      if (net == "IB") ib_links_listed_.insert(nic->link);
      s_.nics_available.insert(*nic);
      map[*index] = std::move(*nic);
      any = true;
    }
    if (any) listed_nets_.insert(net);
    if (auto oob = m.find("; OOB "); net == "IB" && oob != std::string_view::npos) {
      Cursor o{m.substr(oob + 6)};
      if (auto name = o.until(": "); !name.empty()) s_.ib_oob_interfaces.emplace(name);
    }
  }

  // "Bootstrap: Using eth0:10.0.0.1<0>" (NCCL 2.24+), "Bootstrap : Using eth0:..." (before),
  // "Bootstrap: Using mlx5_0:1" (bootstrap over the net plugin, NCCL_OOB_NET_ENABLE=1).
  void bootstrap(std::string_view m) {
    Cursor c{m};
    c.lit("Bootstrap");
    c.spaces();
    if (!c.lit(": Using")) return;  // "Bootstrap timings ..." and the like
    c.spaces();
    c.bracket();  // NCCL 2.7 and before listed "[0]eth0:..."
    auto name = c.until(": ");
    if (!name.empty() && name != "N/A") s_.bootstrap_interfaces.emplace(name);
  }

  // "TUNER/Plugin: Using railkit (v5)"
  void tuner(std::string_view rest) {
    rest = trim(rest);
    std::optional<std::string> abi;
    if (auto paren = rest.rfind(" ("); paren != std::string_view::npos && rest.ends_with(')')) {
      abi = std::string(rest.substr(paren + 2, rest.size() - paren - 3));
      rest = trim(rest.substr(0, paren));
    }
    if (rest.empty() || s_.tuner_plugin) return;
    s_.tuner_plugin = std::string(rest);
    s_.tuner_plugin_abi = abi;
  }

  // "comm 0x55d4 rank 0 nRanks 16 nNodes 2 localRanks 8 localRank 0 MNNVL 0"
  void comm(std::string_view m) {
    auto field = [&](std::string_view key) -> std::optional<int> {
      auto pos = m.find(key);
      if (pos == std::string_view::npos) return std::nullopt;
      Cursor c{m.substr(pos + key.size())};
      return c.integer();
    };
    if (auto n = field(" nRanks ")) s_.nranks = std::max(s_.nranks.value_or(0), *n);
    if (auto n = field(" nNodes ")) s_.nnodes = std::max(s_.nnodes.value_or(0), *n);
  }

  const NcclNic* lookup(const std::string& process, const std::string& net, int dev) const {
    auto find_in = [&](const std::string& p) -> const NcclNic* {
      auto pi = nic_maps_.find(p);
      if (pi == nic_maps_.end()) return nullptr;
      auto ni = pi->second.find(net);
      if (ni == pi->second.end()) return nullptr;
      auto di = ni->second.find(dev);
      return di == ni->second.end() ? nullptr : &di->second;
    };
    if (auto* n = find_in(process)) return n;
    if (auto* n = find_in("")) return n;  // a NIC list without a line prefix
    // Another process of this source listed the index: use it when all that did agree.
    const NcclNic* agreed = nullptr;
    for (const auto& [p, nets] : nic_maps_) {
      auto* n = find_in(p);
      if (!n) continue;
      if (agreed && agreed->name != n->name) return nullptr;
      agreed = n;
    }
    return agreed;
  }

  void resolve_nics() {
    std::set<std::string> unmapped;
    for (const auto& [key, count] : pending_) {
      const auto& [process, net, dev] = key;
      std::string name;
      if (const auto* nic = lookup(process, net, dev)) {
        name = nic->name;
        if (net == "IB" && !nic->link.empty()) links_[net][nic->link] += count;
      } else {
        name = fmt::format("{}/{}", net, dev);
        unmapped.insert(name);
      }
      s_.nic_connections[name] += count;
      if (net == "Socket") links_[net]["Socket"] += count;
    }
    for (const auto& u : unmapped)
      warn(fmt::format("NET device {} carried connections but no `NET/... : Using [i]name` line maps it", u));
  }

  /// The transport of the chosen net: the link of the NICs its connections used (the busiest one
  /// when several, with a warning); without a mapped connection, the link every listed NIC shares.
  void decide_transport() {
    if (!s_.net) return;
    if (auto it = links_.find(*s_.net); it != links_.end() && !it->second.empty()) {
      const auto& by_link = it->second;
      auto top = std::max_element(by_link.begin(), by_link.end(),
                                  [](const auto& a, const auto& b) { return a.second < b.second; });
      s_.transport = top->first;
      if (by_link.size() > 1) {
        std::string all;
        for (const auto& [l, count] : by_link) all += fmt::format("{}{} ({})", all.empty() ? "" : ", ", l, count);
        warn(fmt::format("NET/{} connections used several transports: {}", *s_.net, all));
      }
    } else if (*s_.net == "Socket") {
      s_.transport = "Socket";
    } else if (*s_.net == "IB" && ib_links_listed_.size() == 1) {
      s_.transport = *ib_links_listed_.begin();
    }
  }

  std::string source_;
  NcclLogSummary s_;
  std::map<std::string, std::map<std::string, NicMap>> nic_maps_;  // process -> net -> index -> NIC
  std::map<std::tuple<std::string, std::string, int>, std::int64_t> pending_;  // (process, net, dev) -> lines
  std::map<std::string, std::int64_t> net_connections_;
  std::optional<std::string> announced_net_;
  std::set<std::string> listed_nets_;
  std::set<std::string> ib_links_listed_;  // link layers of the NICs NET/IB listed
  std::map<std::string, std::map<std::string, std::int64_t>> links_;  // net -> transport -> connection lines
  std::set<std::string> mixed_versions_;
  static constexpr std::size_t kKeptIncompleteEntries = 64;
  std::set<std::string> incomplete_nic_entries_;  // "NET/IB '[3]mlx5'": truncated or malformed list entries
  std::size_t more_incomplete_nic_entries_ = 0;    // beyond kKeptIncompleteEntries (may repeat kept ones)
  std::int64_t unreadable_ = 0;
};

}  // namespace

NcclLogSummary parse_nccl_log(std::istream& in, std::string_view source) {
  Parser p{source};
  std::string line;
  while (std::getline(in, line)) p.line(line);
  return p.finish();
}

NcclLogSummary parse_nccl_log_lines(const std::vector<std::string>& lines, std::string_view source) {
  Parser p{source};
  for (const auto& l : lines) p.line(l);
  return p.finish();
}

NcclLogSummary read_nccl_logs(const std::vector<std::filesystem::path>& files) {
  NcclLogSummary all;
  for (std::size_t i = 0; i < files.size(); ++i) {
    const auto& path = files[i];
    std::error_code ec;
    if (!std::filesystem::exists(path, ec)) throw UsageError(fmt::format("NCCL log '{}' does not exist", path.string()));
    if (std::filesystem::is_directory(path, ec))
      throw UsageError(fmt::format("NCCL log '{}' is a directory, not a file", path.string()));
    std::ifstream in(path, std::ios::binary);
    if (!in) throw UsageError(fmt::format("cannot open NCCL log '{}'", path.string()));
    auto one = parse_nccl_log(in, path.string());
    if (in.bad()) throw IoError(fmt::format("error reading NCCL log '{}'", path.string()));
    if (i == 0) all = std::move(one);
    else merge_nccl_log(all, one);
  }
  return all;
}

}  // namespace railkit
