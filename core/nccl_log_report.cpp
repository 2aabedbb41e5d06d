// The summary of NCCL's log as JSON, and what railkit concludes from it against the environment
// the run had: which NICs NCCL_IB_HCA allows, and contradictions between what was asked and
// what NCCL did.
#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "core/nccl_log.hpp"
#include "core/strings.hpp"

namespace railkit {
namespace {

std::optional<long long> to_int_trimmed(std::string_view s) { return to_int(trim(s)); }

std::string join(const auto& items, std::string_view sep = ", ") {
  std::string out;
  for (const auto& i : items) out += fmt::format("{}{}", out.empty() ? "" : sep, i);
  return out;
}

/// "0, 1, 2 ... and 13 more": at most `max_items` listed.
std::string join_some(const std::set<int>& items, std::size_t max_items = 8) {
  std::string out;
  std::size_t n = 0;
  for (int i : items) {
    if (n++ == max_items) return out + fmt::format(" and {} more", items.size() - max_items);
    out += fmt::format("{}{}", out.empty() ? "" : ", ", i);
  }
  return out;
}

bool env_flag_on(const std::map<std::string, std::string>& env, const std::string& key) {
  auto it = env.find(key);
  if (it == env.end()) return false;
  auto v = to_int(trim(it->second));
  return v && *v != 0;
}

std::optional<std::string> env_get(const std::map<std::string, std::string>& env, const std::string& key) {
  auto it = env.find(key);
  if (it == env.end() || trim(it->second).empty()) return std::nullopt;
  return std::string(trim(it->second));
}

}  // namespace

std::string nccl_pattern_name(int pattern) {
  switch (pattern) {
    case 1: return "balanced_tree";
    case 2: return "split_tree";
    case 3: return "tree";
    case 4: return "ring";
    case 5: return "nvls";
    case 6: return "collnet_direct";
    default: return fmt::format("pattern{}", pattern);
  }
}

nlohmann::json to_json(const NcclLogSummary& s) {
  using nlohmann::json;
  auto opt = [](const auto& o) -> json { return o ? json(*o) : json(nullptr); };
  json patterns = json::array();
  for (const auto& p : s.patterns)
    patterns.push_back({{"pattern", p.pattern},
                        {"name", nccl_pattern_name(p.pattern)},
                        {"crossNic", p.cross_nic},
                        {"nChannels", p.n_channels},
                        {"bw_intra_GBps", p.bw_intra_GBps},
                        {"bw_inter_GBps", p.bw_inter_GBps},
                        {"type", p.type_intra + "/" + p.type_inter},
                        {"type_intra", p.type_intra},
                        {"type_inter", p.type_inter},
                        {"sameChannels", p.same_channels}});
  std::vector<std::string> available;
  for (const auto& n : s.nics_available)
    if (std::find(available.begin(), available.end(), n.name) == available.end()) available.push_back(n.name);
  return json{{"pxn", s.pxn()},
              {"pxn_relays", s.pxn_relays},
              {"p2p_pxn_relays", s.p2p_pxn_relays},
              {"relay_ranks", s.relay_ranks},
              {"direct_net_connections", s.direct_net_connections},
              {"send_net_connections", s.send_net_connections},
              {"recv_net_connections", s.recv_net_connections},
              {"gdr", s.gdr()},
              {"gdr_connections", s.gdr_connections},
              {"net", opt(s.net)},
              {"net_plugin", opt(s.net_plugin)},
              {"nics_used", s.nics_used()},
              {"nic_connections", s.nic_connections},
              {"nics_available", available},
              {"transports", s.transports},
              {"channels", s.channels()},
              {"graph_channels", s.graph_channels},
              {"ring_channels", s.ring_channels},
              {"patterns", patterns},
              {"ring_pxn", opt(s.ring_pxn)},
              {"ring_gdr", opt(s.ring_gdr)},
              {"tuner_plugin", opt(s.tuner_plugin)},
              {"tuner_plugin_abi", opt(s.tuner_plugin_abi)},
              {"nccl_version", opt(s.nccl_version)},
              {"nranks", opt(s.nranks)},
              {"nnodes", opt(s.nnodes)},
              {"hosts", s.hosts},
              {"env_from_log", s.env_from_log},
              {"nccl_warnings", s.nccl_warnings},
              {"files", s.files},
              {"lines", s.lines},
              {"nccl_lines", s.nccl_lines},
              {"warnings", s.warnings}};
}

bool nccl_ib_hca_allows(std::string_view spec, std::string_view name, std::optional<int> port) {
  spec = trim(spec);
  const bool exclude = spec.starts_with('^');
  if (exclude) spec.remove_prefix(1);
  const bool exact = spec.starts_with('=');
  if (exact) spec.remove_prefix(1);
  bool listed = false;
  bool any_entry = false;
  while (!spec.empty() && !listed) {
    auto comma = spec.find(',');
    auto entry = trim(spec.substr(0, comma));
    spec = comma == std::string_view::npos ? std::string_view{} : spec.substr(comma + 1);
    auto colon = entry.find(':');
    auto prefix = entry.substr(0, colon);
    if (prefix.empty()) continue;
    any_entry = true;
    std::optional<int> want_port;
    if (colon != std::string_view::npos) {
      auto p = entry.substr(colon + 1);
      want_port = to_int_trimmed(p.substr(0, p.find(':')));
    }
    const bool name_ok = exact ? name == prefix : name.starts_with(prefix);
    const bool port_ok = !want_port || !port || *want_port == *port;
    listed = name_ok && port_ok;
  }
  if (!any_entry) return true;
  return listed != exclude;
}

std::vector<std::string> nccl_log_contradictions(const NcclLogSummary& s,
                                                 const std::map<std::string, std::string>& env) {
  std::vector<std::string> out;
  const bool init_seen = s.nranks.has_value() || !s.patterns.empty() || s.send_net_connections > 0 ||
                         s.recv_net_connections > 0 || s.ring_pxn.has_value() || !s.transports.empty();

  if (env_flag_on(env, "NCCL_PXN_DISABLE")) {
    if (s.pxn_relays > 0)
      out.push_back(fmt::format("NCCL_PXN_DISABLE=1 but {} send connection(s) went through a PXN relay (relay ranks {})",
                                s.pxn_relays, join_some(s.relay_ranks)));
    else if (s.ring_pxn.value_or(false))
      out.push_back("NCCL_PXN_DISABLE=1 but NCCL reported `Connected all rings, use ring PXN 1`");
  }
  if (auto level = env_get(env, "NCCL_P2P_PXN_LEVEL"); level && to_int_trimmed(*level) == 0LL &&
                                                         s.p2p_pxn_relays > 0)
    out.push_back(fmt::format("NCCL_P2P_PXN_LEVEL=0 but {} send/recv connection(s) went through a PXN relay",
                              s.p2p_pxn_relays));

  if (auto hca = env_get(env, "NCCL_IB_HCA"); hca && s.net == "IB") {
    std::vector<std::string> outside;
    for (const auto& name : s.nics_used()) {
      std::vector<std::optional<int>> ports;
      for (const auto& n : s.nics_available)
        if (n.name == name) ports.push_back(n.port);
      if (ports.empty()) ports.push_back(std::nullopt);
      if (std::none_of(ports.begin(), ports.end(), [&](const auto& p) { return nccl_ib_hca_allows(*hca, name, p); }))
        outside.push_back(name);
    }
    if (!outside.empty())
      out.push_back(fmt::format("NCCL_IB_HCA={} but NIC(s) outside it carried traffic: {}", *hca, join(outside)));
  }

  if (auto level = env_get(env, "NCCL_NET_GDR_LEVEL"); level && (iequals(*level, "LOC") || *level == "0")) {
    if (s.gdr_connections > 0)
      out.push_back(fmt::format("NCCL_NET_GDR_LEVEL={} (GPUDirect RDMA off) but {} connection(s) used GDRDMA", *level,
                                s.gdr_connections));
    else if (s.ring_gdr.value_or(false))
      out.push_back(fmt::format("NCCL_NET_GDR_LEVEL={} (GPUDirect RDMA off) but NCCL reported `use ring ... GDR 1`",
                                *level));
  }

  if (env_flag_on(env, "NCCL_IB_DISABLE") && s.net == "IB")
    out.push_back("NCCL_IB_DISABLE=1 but connections used NET/IB");
  if (auto want = env_get(env, "NCCL_NET"); want && s.net && !iequals(*want, *s.net))
    out.push_back(fmt::format("NCCL_NET={} but connections used NET/{}", *want, *s.net));

  if (auto tuner = env_get(env, "NCCL_TUNER_PLUGIN")) {
    if (iequals(*tuner, "none")) {
      if (s.tuner_plugin) out.push_back(fmt::format("NCCL_TUNER_PLUGIN=none but tuner plugin {} loaded", *s.tuner_plugin));
    } else if (!s.tuner_plugin && init_seen) {
      out.push_back(fmt::format("NCCL_TUNER_PLUGIN={} but no tuner plugin loaded (no `TUNER/Plugin: Using` line)", *tuner));
    }
  }
  return out;
}

}  // namespace railkit
