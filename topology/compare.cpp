#include "topology/compare.hpp"

#include <algorithm>
#include <set>

#include "topology/parse.hpp"

namespace railkit::topo {
namespace {

const std::string kAbsent = "<absent>";

// The device a fact belongs to ("mlx5_0" for "mlx5_0.rate_Gbps"); "" for node-wide facts
// ("nic.count", "gpu.models").
std::string device_of(const std::string& fact) {
  const auto dot = fact.rfind('.');
  if (dot == std::string::npos) return "";
  const std::string dev = fact.substr(0, dot);
  static const std::set<std::string> node_wide = {"gpu", "nic", "rail", "numa"};
  return node_wide.count(dev) ? "" : dev;
}

DiffKind kind_of(const std::string& fact, const std::string& device) {
  if (device.empty()) return DiffKind::Count;
  const std::string field = fact.substr(device.size() + 1);
  if (field == "nic_paths") return DiffKind::Path;
  if (field == "rail") return DiffKind::Rail;
  return DiffKind::Property;
}

// The most common value among `values` at `eligible` positions; tie when several share the top.
std::pair<std::string, bool> most_common(const std::vector<std::string>& values, const std::vector<bool>& eligible) {
  std::map<std::string, int> counts;
  for (size_t i = 0; i < values.size(); ++i)
    if (eligible[i]) ++counts[values[i]];
  std::string best;
  int top = 0;
  for (const auto& [v, c] : counts)
    if (c > top) {
      top = c;
      best = v;
    }
  const bool tie = std::count_if(counts.begin(), counts.end(), [&](const auto& kv) { return kv.second == top; }) > 1;
  return {best, tie};
}

class Comparer {
 public:
  explicit Comparer(const std::vector<NodeFacts>& nodes) : n_(nodes) {}

  CompareReport run() {
    rep_.nodes = n_.size();
    for (const auto& n : n_) rep_.node_names.push_back(n.node);
    majority();
    devices();
    facts();
    std::stable_sort(rep_.diffs.begin(), rep_.diffs.end(), [](const FactDiff& a, const FactDiff& b) {
      if (a.kind != b.kind) return a.kind < b.kind;
      return natural_less(a.fact, b.fact);
    });
    std::set<std::string> odd;
    for (const auto& d : rep_.diffs)
      for (const auto& [node, v] : d.nodes) odd.insert(node);
    for (const auto& n : n_)
      if (odd.count(n.node) && std::find(rep_.odd_nodes.begin(), rep_.odd_nodes.end(), n.node) == rep_.odd_nodes.end())
        rep_.odd_nodes.push_back(n.node);
    return std::move(rep_);
  }

 private:
  void majority() {
    std::map<std::string, int> hashes;
    for (const auto& n : n_) ++hashes[n.hash];
    for (const auto& [h, c] : hashes)
      if (c > rep_.majority_count) {
        rep_.majority_count = c;
        rep_.majority_hash = h;
      }
    rep_.tie = std::count_if(hashes.begin(), hashes.end(),
                             [&](const auto& kv) { return kv.second == rep_.majority_count; }) > 1;
    for (size_t i = 0; i < n_.size() && ref_ < 0; ++i)
      if (!rep_.tie && n_[i].hash == rep_.majority_hash) ref_ = static_cast<int>(i);
  }

  // Devices present on some nodes only: the absent (or extra) device is one entry, first.
  void devices() {
    std::set<std::string> all;
    std::vector<std::set<std::string>> has(n_.size());
    for (size_t i = 0; i < n_.size(); ++i)
      for (const auto& [k, v] : n_[i].facts)
        if (const std::string d = device_of(k); !d.empty()) {
          has[i].insert(d);
          all.insert(d);
        }
    for (const auto& d : all) {
      std::vector<bool> present(n_.size());
      size_t count = 0;
      for (size_t i = 0; i < n_.size(); ++i) count += (present[i] = has[i].count(d) > 0) ? 1 : 0;
      if (count == n_.size()) continue;
      const bool ref = ref_ >= 0 ? present[static_cast<size_t>(ref_)] : count * 2 >= n_.size();
      presence_[d] = {present, ref};
      FactDiff fd;
      fd.fact = d;
      fd.kind = DiffKind::Device;
      fd.device = d;
      fd.majority = ref ? "present" : "absent";
      for (size_t i = 0; i < n_.size(); ++i)
        if (present[i] != ref) fd.nodes.emplace_back(n_[i].node, present[i] ? "present" : "absent");
      rep_.diffs.push_back(std::move(fd));
    }
  }

  void facts() {
    std::set<std::string> keys;
    for (const auto& n : n_)
      for (const auto& [k, v] : n.facts) keys.insert(k);
    for (const auto& k : keys) {
      std::vector<std::string> values;
      for (const auto& n : n_) {
        auto it = n.facts.find(k);
        values.push_back(it == n.facts.end() ? kAbsent : it->second);
      }
      if (std::all_of(values.begin(), values.end(), [&](const std::string& v) { return v == values.front(); })) continue;
      FactDiff d;
      d.fact = k;
      d.device = device_of(k);
      d.kind = kind_of(k, d.device);
      // Nodes whose value decides the reference: where the device is as the reference has it.
      std::vector<bool> eligible(n_.size(), true);
      bool device_ref = true;
      if (auto it = presence_.find(d.device); it != presence_.end()) {
        device_ref = it->second.second;
        for (size_t i = 0; i < n_.size(); ++i) eligible[i] = it->second.first[i] == device_ref;
      }
      if (!device_ref) {
        d.majority = kAbsent;
      } else if (ref_ >= 0) {
        d.majority = values[static_cast<size_t>(ref_)];
      } else {
        std::tie(d.majority, d.tie) = most_common(values, eligible);
      }
      for (size_t i = 0; i < n_.size(); ++i)
        if (values[i] != d.majority || (d.tie && eligible[i])) d.nodes.emplace_back(n_[i].node, values[i]);
      if (d.nodes.empty()) continue;
      d.presence_only = !d.tie && std::all_of(d.nodes.begin(), d.nodes.end(), [&](const auto& nv) {
        return !device_ref || nv.second == kAbsent;
      });
      if (d.presence_only && presence_.count(d.device) == 0) d.presence_only = false;
      rep_.diffs.push_back(std::move(d));
    }
  }

  const std::vector<NodeFacts>& n_;
  CompareReport rep_;
  int ref_ = -1;  ///< a node with the majority fingerprint; -1 when there is none
  std::map<std::string, std::pair<std::vector<bool>, bool>> presence_;  ///< device -> (present per node, reference)
};

}  // namespace

const char* diff_kind_name(DiffKind k) noexcept {
  switch (k) {
    case DiffKind::Device: return "device";
    case DiffKind::Count: return "count";
    case DiffKind::Property: return "property";
    case DiffKind::Rail: return "rail";
    case DiffKind::Path: return "path";
  }
  return "property";
}

CompareReport compare_nodes(const std::vector<NodeFacts>& nodes) { return Comparer(nodes).run(); }

void name_nodes(std::vector<NodeFacts>& nodes, const std::vector<std::string>& sources) {
  std::set<std::string> seen;
  bool by_host = true;
  for (size_t i = 0; i < nodes.size(); ++i) {
    const bool named = !nodes[i].node.empty() && !(i < sources.size() && nodes[i].node == sources[i]);
    if (!named || !seen.insert(nodes[i].node).second) by_host = false;
  }
  if (by_host) return;
  for (size_t i = 0; i < nodes.size() && i < sources.size(); ++i) nodes[i].node = sources[i];
}

}  // namespace railkit::topo
