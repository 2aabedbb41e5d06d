#include <fmt/format.h>

#include "core/error.hpp"
#include "core/json_text.hpp"
#include "topology/analyze.hpp"
#include "topology/render.hpp"

namespace railkit::topo {
namespace {
using nlohmann::json;

template <class T>
json opt(const std::optional<T>& v) {
  return v ? json(*v) : json(nullptr);
}

json hex(const std::optional<std::uint32_t>& v, int digits) {
  if (!v) return nullptr;
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%0*x", digits, *v);
  return buf;
}

json link_json(const PciLink& l) {
  return {{"cur_speed_GTps", opt(l.cur_speed_GTps)},
          {"max_speed_GTps", opt(l.max_speed_GTps)},
          {"cur_width", opt(l.cur_width)},
          {"max_width", opt(l.max_width)}};
}

json port_json(const Port& p) {
  json gids = json::array();
  for (const auto& g : p.gids)
    gids.push_back({{"index", g.index}, {"gid", g.gid}, {"type", g.type}, {"netdev", g.netdev}, {"ipv4", g.ipv4}});
  json ecn = nullptr;
  if (p.ecn.present) {
    auto en = [](const std::map<int, bool>& m) {
      json o = json::object();
      for (const auto& [k, v] : m) o[std::to_string(k)] = v;
      return o;
    };
    ecn = {{"rp_enable", en(p.ecn.rp_enable)},
           {"np_enable", en(p.ecn.np_enable)},
           {"rp_params", p.ecn.rp_params},
           {"np_params", p.ecn.np_params}};
  }
  json pfc = nullptr;
  if (p.qos.pfc) {
    pfc = json::array();
    for (size_t i = 0; i < 8; ++i)
      if ((*p.qos.pfc)[i]) pfc.push_back(static_cast<int>(i));
  }
  json verbs = nullptr;
  if (p.verbs.queried)
    verbs = {{"state", p.verbs.state},
             {"active_mtu_bytes", p.verbs.active_mtu_bytes},
             {"rate_Gbps", opt(p.verbs.rate_Gbps)},
             {"link_layer", p.verbs.link_layer}};
  return {{"port", p.num},
          {"link_layer", p.link_layer},
          {"state", p.state},
          {"phys_state", p.phys_state},
          {"rate_Gbps", opt(p.rate_Gbps)},
          {"netdev", p.netdev},
          {"mtu_bytes", opt(p.mtu_bytes)},
          {"gids", gids},
          {"recommended_gid_index", opt(p.recommended_gid)},
          {"ecn", ecn},
          {"pfc_enabled_priorities", pfc},
          {"trust", p.qos.trust.empty() ? json(nullptr) : json(p.qos.trust)},
          {"verbs", verbs}};
}

json gpus_json(const Topology& t) {
  json gpus = json::array();
  std::map<std::string, std::string> rail_of;
  for (const auto& r : t.rails) rail_of[r.gpu] = r.nic;
  for (const auto& g : t.gpus) {
    const auto* f = t.function(g.bdf);
    gpus.push_back({{"name", g.name},
                    {"index", g.index},
                    {"bdf", g.bdf},
                    {"model", g.model},
                    {"device_id", f ? hex(f->device, 4) : json(nullptr)},
                    {"numa", opt(g.numa)},
                    {"cpus", g.cpulist},
                    {"link", f ? link_json(f->link) : json(nullptr)},
                    {"nic", rail_of.count(g.name) ? json(rail_of[g.name]) : json(nullptr)}});
  }
  return gpus;
}

json nics_json(const Topology& t) {
  json nics = json::array();
  for (const auto& n : t.nics) {
    const auto* f = t.function(n.bdf);
    json ports = json::array();
    for (const auto& p : n.ports) ports.push_back(port_json(p));
    nics.push_back({{"name", n.name},
                    {"index", n.index},
                    {"bdf", n.bdf},
                    {"model", n.model},
                    {"device_id", f ? hex(f->device, 4) : json(nullptr)},
                    {"numa", opt(n.numa)},
                    {"node_guid", n.node_guid},
                    {"netdevs", n.netdevs},
                    {"link", f ? link_json(f->link) : json(nullptr)},
                    {"rail", n.rail},
                    {"in_band", n.in_band},
                    {"gpus", n.gpus},
                    {"ports", ports}});
  }
  return nics;
}

json rails_json(const Topology& t) {
  json rails = json::array();
  for (const auto& r : t.rails) {
    json bridges = json::array();
    const Gpu* g = t.gpu(r.gpu);
    const Nic* n = t.nic(r.nic);
    const PciFunction* fg = g ? t.function(g->bdf) : nullptr;
    const PciFunction* fn = n ? t.function(n->bdf) : nullptr;
    if (fg && fn)
      for (const auto& b : p2p_bridges(*fg, *fn)) {
        const PciFunction* fb = t.function(b);
        json acs = nullptr;
        if (fb && fb->acs.config_complete) acs = fb->acs.present ? json(fb->acs.control) : json(0);
        bridges.push_back({{"bdf", b}, {"acs_control", acs}});
      }
    rails.push_back({{"gpu", r.gpu},
                     {"nic", r.nic},
                     {"port", r.port},
                     {"path", r.path.str()},
                     {"shared", r.shared},
                     {"borrowed", r.borrowed},
                     {"bridges", bridges}});
  }
  return rails;
}

json bridges_json(const Topology& t) {
  json bridges = json::array();
  for (const auto& [bdf, f] : t.pci) {
    if (!f.is_bridge()) continue;
    json acs = nullptr;
    if (f.acs.config_complete)
      acs = {{"present", f.acs.present}, {"capability", f.acs.capability}, {"control", f.acs.control}};
    bridges.push_back({{"bdf", bdf}, {"host_bridge", f.host_bridge}, {"link", link_json(f.link)}, {"acs", acs}});
  }
  return bridges;
}

}  // namespace

nlohmann::json to_json(const Topology& t) {
  json j;
  j["schema"] = "railkit.topology/1";
  j["host"] = t.host;
  j["root"] = t.root;
  j["cpu"] = {{"arch", t.cpu_arch}, {"vendor", t.cpu_vendor}};
  json numa = json::array();
  for (const auto& n : t.numa_nodes) numa.push_back({{"id", n.id}, {"cpus", n.cpulist}});
  j["numa_nodes"] = numa;
  j["gpus"] = gpus_json(t);
  j["nics"] = nics_json(t);
  json paths = json::array();
  for (const auto& p : t.paths)
    if (t.gpu(p.from) || t.gpu(p.to))  // GPU-NIC and GPU-GPU only
      paths.push_back({{"from", p.from}, {"to", p.to}, {"type", p.path.str()}, {"pci", p.pci}});
  j["paths"] = paths;
  j["rails"] = rails_json(t);
  j["rail_optimized"] = t.rail_optimized;
  json non_rail = json::array();
  for (const auto& n : t.nics)
    if (!n.rail) non_rail.push_back(n.name);
  j["non_rail_nics"] = non_rail;
  j["suggestions"] = {{"NCCL_IB_HCA", t.nccl_ib_hca}, {"per_local_rank_hca", t.per_rank_hca}};
  j["bridges"] = bridges_json(t);
  j["gdr_module"] = {{"loaded", t.gdr_module}, {"source", t.gdr_source}};
  j["nvlink_source"] = t.nvlink_source.empty() ? json(nullptr) : json(t.nvlink_source);
  json findings = json::array();
  for (const auto& f : t.findings)
    findings.push_back({{"check", f.check},
                        {"severity", severity_name(f.severity)},
                        {"subject", f.subject},
                        {"message", f.message},
                        {"fix", f.fix}});
  j["findings"] = findings;
  j["fingerprint"] = {{"hash", t.fingerprint.hash}, {"facts", t.fingerprint.facts}};
  return j;
}

NodeFacts node_facts_from_json(const std::string& text, const std::string& source) {
  return with_json_errors(source, [&] {
  json j = parse_json_or_discarded(text);
  if (j.is_discarded() || !j.is_object()) throw UsageError(fmt::format("{}: not a JSON document (or nested deeper than {} levels)", source, kMaxJsonDepth));
  if (!j.contains("fingerprint") || !j["fingerprint"].is_object() || !j["fingerprint"].contains("hash") ||
      !j["fingerprint"]["hash"].is_string() || !j["fingerprint"].contains("facts") || !j["fingerprint"]["facts"].is_object())
    throw UsageError(source + ": no fingerprint {hash, facts}; expected the output of `railkit topo --format json`");
  NodeFacts n;
  n.node = field_or(j, "host", source, source);  // a host of another type is refused, not replaced
  n.hash = field<std::string>(j["fingerprint"], "hash", source + ": fingerprint");
  for (const auto& [k, v] : j["fingerprint"]["facts"].items())
    n.facts[k] = v.is_string() ? v.get<std::string>() : json_dump(v);
  return n;
  });
}

nlohmann::json compare_to_json(const CompareReport& rep) {
  json diffs = json::array();
  for (const auto& d : rep.diffs) {
    json nodes = json::array();
    for (const auto& [node, v] : d.nodes) nodes.push_back({{"node", node}, {"value", v}});
    diffs.push_back({{"fact", d.fact},
                     {"kind", diff_kind_name(d.kind)},
                     {"device", d.device.empty() ? json(nullptr) : json(d.device)},
                     {"majority", d.tie ? json(nullptr) : json(d.majority)},
                     {"presence_only", d.presence_only},
                     {"nodes", nodes}});
  }
  return {{"schema", "railkit.topology-compare/1"},
          {"nodes", rep.nodes},
          {"node_names", rep.node_names},
          {"majority_fingerprint", rep.tie ? json(nullptr) : json(rep.majority_hash)},
          {"majority_count", rep.majority_count},
          {"equal", rep.all_equal()},
          {"odd_nodes", rep.odd_nodes},
          {"differences", diffs}};
}

}  // namespace railkit::topo
