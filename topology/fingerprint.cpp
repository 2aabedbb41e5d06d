#include <algorithm>
#include <map>
#include <set>
#include <sstream>

#include "core/units.hpp"
#include "topology/analyze.hpp"
#include "topology/parse.hpp"

namespace railkit::topo {
namespace {


std::string link_text(const PciLink& l, bool gpu) {
  // GPUs drop their link speed when idle: their fingerprint uses the maximum speed and the
  // trained width, so an idle and a busy node of the same build compare equal.
  std::string w = l.cur_width ? "x" + std::to_string(*l.cur_width) : "x?";
  std::optional<double> s = gpu ? l.max_speed_GTps : l.cur_speed_GTps;
  return w + "@" + (s ? format_number(*s) : "?") + "GT/s";
}

std::string multiset(std::vector<std::string> items) {
  std::sort(items.begin(), items.end());
  std::map<std::string, int> counts;
  for (const auto& i : items) ++counts[i];
  std::string out;
  for (const auto& [k, c] : counts) out += (out.empty() ? "" : ", ") + std::to_string(c) + "x " + k;
  return out.empty() ? "none" : out;
}

}  // namespace

Fingerprint fingerprint(const Topology& t) {
  Fingerprint fp;
  auto& f = fp.facts;
  std::vector<std::string> gpu_models, nic_models;
  for (const auto& g : t.gpus) {
    gpu_models.push_back(g.model);
    const std::string k = g.name + ".";
    if (const auto* pf = t.function(g.bdf)) f[k + "link"] = link_text(pf->link, true);
    f[k + "model"] = g.model;
    f[k + "numa"] = g.numa ? std::to_string(*g.numa) : "?";
    std::string row;
    for (const auto& n : t.nics) {
      const auto* p = t.path(g.name, n.name);
      row += (row.empty() ? "" : ",") + n.name + ":" + (p ? p->path.str() : "?");
    }
    f[k + "nic_paths"] = row;
  }
  for (const auto& n : t.nics) {
    const Port* p = n.main_port();
    const std::string rate = p && p->rate_Gbps ? format_number(*p->rate_Gbps) + "Gbps" : "?";
    nic_models.push_back(n.model + "@" + rate);
    const std::string k = n.name + ".";
    f[k + "model"] = n.model;
    f[k + "rate_Gbps"] = p && p->rate_Gbps ? format_number(*p->rate_Gbps) : "?";
    f[k + "ports"] = std::to_string(n.ports.size());
    if (const auto* pf = t.function(n.bdf)) f[k + "link"] = link_text(pf->link, false);
    f[k + "numa"] = n.numa ? std::to_string(*n.numa) : "?";
  }
  for (const auto& r : t.rails) f[r.gpu + ".rail"] = r.nic + " " + r.path.str();
  f["gpu.count"] = std::to_string(t.gpus.size());
  f["gpu.models"] = multiset(gpu_models);
  f["nic.count"] = std::to_string(t.nics.size());
  f["nic.models"] = multiset(nic_models);
  std::set<std::string> rail_nics;
  for (const auto& r : t.rails) rail_nics.insert(r.nic);
  f["rail.count"] = std::to_string(rail_nics.size());
  f["numa.count"] = std::to_string(t.numa_nodes.size());
  std::string all;
  for (const auto& [k, v] : f) all += k + "=" + v + "\n";
  fp.hash = fnv1a64_hex(all);
  return fp;
}

}  // namespace railkit::topo
