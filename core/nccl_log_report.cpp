// The summary of NCCL's log: its derived views (PXN, GDR, NICs in natural order), the merge of
// several files' summaries, JSON and a short text report, and what railkit concludes from it
// against the environment the run had: which NICs NCCL_IB_HCA allows, and contradictions
// between what was asked and what NCCL did.
#include <algorithm>
#include <cctype>
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


std::vector<std::string> naturally_sorted(std::vector<std::string> names) {
  std::sort(names.begin(), names.end(), [](const std::string& a, const std::string& b) { return natural_less(a, b); });
  return names;
}

std::vector<std::string> naturally_sorted(const std::set<std::string>& names) {
  return naturally_sorted(std::vector<std::string>(names.begin(), names.end()));
}

/// "NET/IB (RoCE)", "NET/Socket", "NET/AWS Libfabric": the network and, when it says more, its transport.
std::string net_label(const NcclLogSummary& s) {
  if (!s.net) return "no network";
  if (!s.transport || *s.transport == *s.net) return "NET/" + *s.net;
  return fmt::format("NET/{} ({})", *s.net, *s.transport);
}

template <typename T>
void keep_first(std::optional<T>& into, const std::optional<T>& from) {
  if (!into && from) into = from;
}

void or_into(std::optional<bool>& into, const std::optional<bool>& from) {
  if (from) into = into.value_or(false) || *from;
}

}  // namespace

bool NcclLogSummary::pxn() const {
  if (pxn_relays > 0 || ring_pxn.value_or(false)) return true;
  return std::any_of(patterns.begin(), patterns.end(), [](const auto& p) { return p.type_inter == "PXN"; });
}

bool NcclLogSummary::gdr() const { return gdr_connections > 0 || ring_gdr.value_or(false); }

std::vector<std::string> NcclLogSummary::nics_used() const {
  std::vector<std::string> out;
  for (const auto& [name, count] : nic_connections)
    if (count > 0) out.push_back(name);
  return naturally_sorted(std::move(out));
}

std::vector<std::string> NcclLogSummary::nics_listed() const {
  std::vector<std::string> names;  // nics_available is ordered by name first: one name's entries are adjacent
  names.reserve(nics_available.size());
  for (const auto& n : nics_available)
    if (names.empty() || names.back() != n.name) names.push_back(n.name);
  return naturally_sorted(std::move(names));
}

int NcclLogSummary::channels() const { return ring_channels > 0 ? ring_channels : graph_channels; }

void merge_nccl_log(NcclLogSummary& into, const NcclLogSummary& from) {
  if (into.net && from.net && *into.net != *from.net)
    into.warnings.push_back(fmt::format("logs disagree on the network: {} and {}", *into.net, *from.net));
  if (into.nccl_version && from.nccl_version && *into.nccl_version != *from.nccl_version)
    into.warnings.push_back(
        fmt::format("logs show different NCCL versions: {} and {}", *into.nccl_version, *from.nccl_version));
  if (into.net == from.net && into.transport && from.transport && *into.transport != *from.transport)
    into.warnings.push_back(fmt::format("logs disagree on the transport: {} and {}", *into.transport, *from.transport));
  keep_first(into.net, from.net);
  keep_first(into.transport, from.transport);
  into.bootstrap_interfaces.insert(from.bootstrap_interfaces.begin(), from.bootstrap_interfaces.end());
  into.ib_oob_interfaces.insert(from.ib_oob_interfaces.begin(), from.ib_oob_interfaces.end());
  keep_first(into.net_plugin, from.net_plugin);
  keep_first(into.nccl_version, from.nccl_version);
  if (!into.tuner_plugin && from.tuner_plugin) {
    into.tuner_plugin = from.tuner_plugin;
    into.tuner_plugin_abi = from.tuner_plugin_abi;
  }
  or_into(into.ring_pxn, from.ring_pxn);
  or_into(into.ring_gdr, from.ring_gdr);
  if (from.nranks) into.nranks = std::max(into.nranks.value_or(0), *from.nranks);
  if (from.nnodes) into.nnodes = std::max(into.nnodes.value_or(0), *from.nnodes);
  into.send_net_connections += from.send_net_connections;
  into.recv_net_connections += from.recv_net_connections;
  into.pxn_relays += from.pxn_relays;
  into.p2p_pxn_relays += from.p2p_pxn_relays;
  into.direct_net_connections += from.direct_net_connections;
  into.gdr_connections += from.gdr_connections;
  into.relay_ranks.insert(from.relay_ranks.begin(), from.relay_ranks.end());
  for (const auto& [k, v] : from.nic_connections) into.nic_connections[k] += v;
  into.nics_available.insert(from.nics_available.begin(), from.nics_available.end());
  for (const auto& [k, v] : from.transports) into.transports[k] += v;
  into.graph_channels = std::max(into.graph_channels, from.graph_channels);
  into.ring_channels = std::max(into.ring_channels, from.ring_channels);
  for (const auto& p : from.patterns)
    if (std::find(into.patterns.begin(), into.patterns.end(), p) == into.patterns.end()) into.patterns.push_back(p);
  for (const auto& [k, v] : from.env_from_log) into.env_from_log.emplace(k, v);
  into.hosts.insert(from.hosts.begin(), from.hosts.end());
  for (const auto& w : from.nccl_warnings)
    if (into.nccl_warnings.size() < NcclLogSummary::kMaxNcclWarnings) into.nccl_warnings.push_back(w);
  into.files.insert(into.files.end(), from.files.begin(), from.files.end());
  into.lines += from.lines;
  into.nccl_lines += from.nccl_lines;
  into.warnings.insert(into.warnings.end(), from.warnings.begin(), from.warnings.end());
}

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
              {"transport", opt(s.transport)},
              {"net_plugin", opt(s.net_plugin)},
              {"nics_used", s.nics_used()},
              {"nic_connections", s.nic_connections},
              {"nics_available", s.nics_listed()},
              {"bootstrap_interfaces", naturally_sorted(s.bootstrap_interfaces)},
              {"ib_oob_interfaces", naturally_sorted(s.ib_oob_interfaces)},
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

namespace {

constexpr std::string_view kNotLogged = "not in the log";

void text_line(std::string& out, std::string_view label, std::string_view value) {
  out += fmt::format("{:<15}{}\n", label, value);
}

std::string text_network(const NcclLogSummary& s) {
  if (!s.net) return std::string(kNotLogged);
  std::string v = "NET/" + *s.net;
  if (!s.transport) v += " (transport not in the log)";
  else if (*s.transport == "Socket") v += " (TCP sockets)";
  else v += " over " + (*s.transport == "IB" ? std::string("InfiniBand") : *s.transport);
  if (s.net_plugin) v += fmt::format(", net plugin {}", *s.net_plugin);
  return v;
}

std::string text_nics(const NcclLogSummary& s) {
  const auto used = s.nics_used();
  const auto listed = s.nics_listed();
  std::vector<std::string> unused;
  for (const auto& n : listed) {
    auto it = s.nic_connections.find(n);
    if (it == s.nic_connections.end() || it->second <= 0) unused.push_back(n);
  }
  if (used.empty() && listed.empty()) return std::string(kNotLogged);
  if (used.empty()) return fmt::format("none carried traffic; listed: {}", join(listed));
  std::string v = fmt::format("{}: {}", used.size(), join(used));
  if (!unused.empty()) v += fmt::format("; listed but unused: {}", join(unused));
  return v;
}

std::string text_bootstrap(const NcclLogSummary& s) {
  if (!s.bootstrap_interfaces.empty()) return join(naturally_sorted(s.bootstrap_interfaces));
  std::string v = "not in the log (NCCL 2.23+ prints it when NCCL_DEBUG_SUBSYS includes BOOTSTRAP)";
  if (!s.ib_oob_interfaces.empty())
    v += fmt::format("; NET/IB out-of-band interface: {}", join(naturally_sorted(s.ib_oob_interfaces)));
  return v;
}

std::string text_pxn(const NcclLogSummary& s) {
  if (!s.pxn() && s.direct_net_connections == 0) return "off";
  if (!s.pxn()) return fmt::format("off: {} direct send(s)", s.direct_net_connections);
  if (s.pxn_relays == 0) return "on (ring PXN or a PXN graph), no relayed send seen";
  return fmt::format("on: {} relayed send(s) ({} send/recv) through {} relay rank(s); {} direct", s.pxn_relays,
                     s.p2p_pxn_relays, s.relay_ranks.size(), s.direct_net_connections);
}

std::string text_gdr(const NcclLogSummary& s) {
  const bool known = s.ring_gdr.has_value() || s.send_net_connections + s.recv_net_connections > 0;
  if (!s.gdr()) return known ? "off" : std::string(kNotLogged);
  if (s.gdr_connections == 0) return "on (use ring ... GDR 1)";
  return fmt::format("on: {} NET connection(s) with GDRDMA", s.gdr_connections);
}

std::string text_graph(const NcclLogSummary& s) {
  std::string v = s.channels() > 0 ? fmt::format("{} channel(s)", s.channels()) : "channels not in the log";
  if (s.ring_channels > 0 && s.graph_channels > 0) v += fmt::format(" (graph search {})", s.graph_channels);
  std::vector<std::string> patterns;
  for (const auto& p : s.patterns)
    patterns.push_back(
        fmt::format("{} {}/{} x{}", nccl_pattern_name(p.pattern), p.type_intra, p.type_inter, p.n_channels));
  if (!patterns.empty()) v += "; " + join(patterns);
  return v;
}

std::string text_run(const NcclLogSummary& s) {
  std::string v = s.nccl_version ? "NCCL " + *s.nccl_version : std::string("NCCL version not in the log");
  if (s.nranks) v += fmt::format(", {} rank(s)", *s.nranks);
  if (s.nnodes) v += fmt::format(" on {} node(s)", *s.nnodes);
  if (!s.hosts.empty()) v += fmt::format(" ({})", join(naturally_sorted(s.hosts)));
  return v + fmt::format("; {} file(s)", s.files.size());
}

}  // namespace

std::string to_text(const NcclLogSummary& s, const std::vector<std::string>& contradictions) {
  std::string out;
  text_line(out, "run", text_run(s));
  text_line(out, "network", text_network(s));
  text_line(out, "NICs used", text_nics(s));
  text_line(out, "bootstrap", text_bootstrap(s));
  text_line(out, "PXN", text_pxn(s));
  text_line(out, "GDR", text_gdr(s));
  text_line(out, "graph", text_graph(s));
  const std::string tuner = s.tuner_plugin ? fmt::format("{} ({})", *s.tuner_plugin, s.tuner_plugin_abi.value_or("?"))
                                           : std::string("none loaded");
  text_line(out, "tuner plugin", tuner);
  if (!s.nccl_warnings.empty())
    text_line(out, "NCCL WARN",
              fmt::format("{} line(s), first: {}", s.nccl_warnings.size(), printable(s.nccl_warnings.front(), 400)));
  for (const auto& c : contradictions) text_line(out, "CONTRADICTION", printable(c, 400));
  std::vector<std::string> warnings;  // run_nccl_log adds the contradictions to the warnings: print them once
  for (const auto& w : s.warnings)
    if (std::find(contradictions.begin(), contradictions.end(), w) == contradictions.end()) warnings.push_back(w);
  for (const auto& w : summarize_warnings(warnings)) text_line(out, "warning", w);
  if (contradictions.empty()) text_line(out, "contradictions", "none found");
  return out;
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
    // The ports each listed NIC had; a used NIC no list names ("IB/3") cannot be judged.
    std::map<std::string, std::vector<std::optional<int>>> ports;
    for (const auto& n : s.nics_available) ports[n.name].push_back(n.port);
    std::vector<std::string> outside;
    for (const auto& name : s.nics_used()) {
      auto it = ports.find(name);
      if (it == ports.end()) continue;
      if (std::none_of(it->second.begin(), it->second.end(),
                       [&](const auto& p) { return nccl_ib_hca_allows(*hca, name, p); }))
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
    out.push_back("NCCL_IB_DISABLE=1 but connections used " + net_label(s));
  if (auto want = env_get(env, "NCCL_NET"); want && s.net && !iequals(*want, *s.net))
    out.push_back(fmt::format("NCCL_NET={} but connections used {}", *want, net_label(s)));

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
