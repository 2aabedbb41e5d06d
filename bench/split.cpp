#include "bench/split.hpp"

#include <algorithm>
#include <charconv>
#include <map>
#include <set>

#include <fmt/format.h>

#include "core/error.hpp"

namespace railkit::bench {

namespace {

/// "0+3<sep>1+2".
std::string nodes_text(const std::vector<std::vector<int>>& groups, const char* sep) {
  std::string out;
  for (size_t g = 0; g < groups.size(); ++g) {
    if (g > 0) out += sep;
    for (size_t i = 0; i < groups[g].size(); ++i) out += (i > 0 ? "+" : "") + std::to_string(groups[g][i]);
  }
  return out;
}

/// Groups of SplitMode::Nodes: the listed nodes' ranks, in the order listed.
std::vector<Group> node_groups(const SplitSpec& s, const NodeLayout& layout) {
  const int nnodes = layout.node_of_rank.empty()
                         ? 0
                         : *std::max_element(layout.node_of_rank.begin(), layout.node_of_rank.end()) + 1;
  std::vector<Group> out;
  for (size_t g = 0; g < s.nodes.size(); ++g) {
    Group grp;
    grp.index = static_cast<int>(g);
    grp.name = "nodes" + nodes_text({s.nodes[g]}, "");
    for (int node : s.nodes[g]) {
      if (node >= nnodes)
        throw UsageError(fmt::format("--split '{}': node {} does not exist (the run has {} node{}; see --ranks-per-node)",
                                     split_name(s), node, nnodes, nnodes == 1 ? "" : "s"));
    }
    for (size_t r = 0; r < layout.node_of_rank.size(); ++r)
      if (std::find(s.nodes[g].begin(), s.nodes[g].end(), layout.node_of_rank[r]) != s.nodes[g].end())
        grp.ranks.push_back(static_cast<int>(r));
    out.push_back(std::move(grp));
  }
  return out;
}

}  // namespace

std::optional<SplitSpec> parse_split(std::string_view t) {
  if (t == "none") return SplitSpec{};
  if (t == "rail") return SplitSpec{SplitMode::Rail, 0, {}};
  if (t == "node") return SplitSpec{SplitMode::Node, 0, {}};
  if (t.starts_with("mod:")) {
    int k = 0;
    const auto rest = t.substr(4);
    const auto [p, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), k);
    if (ec == std::errc() && p == rest.data() + rest.size() && k >= 1) return SplitSpec{SplitMode::Mod, k, {}};
  }
  if (t.starts_with("nodes:")) {
    SplitSpec s{SplitMode::Nodes, 0, {}};
    std::set<int> seen;
    std::string_view rest = t.substr(6);
    for (;;) {
      const size_t comma = rest.find(',');
      std::string_view grp = rest.substr(0, comma);
      std::vector<int> members;
      for (;;) {
        const size_t plus = grp.find('+');
        const std::string_view num = grp.substr(0, plus);
        int v = -1;
        const auto [p, ec] = std::from_chars(num.data(), num.data() + num.size(), v);
        if (num.empty() || ec != std::errc() || p != num.data() + num.size() || v < 0 || !seen.insert(v).second)
          return std::nullopt;
        members.push_back(v);
        if (plus == std::string_view::npos) break;
        grp = grp.substr(plus + 1);
      }
      s.nodes.push_back(std::move(members));
      if (comma == std::string_view::npos) break;
      rest = rest.substr(comma + 1);
    }
    return s;
  }
  return std::nullopt;
}

std::string split_name(const SplitSpec& s) {
  switch (s.mode) {
    case SplitMode::None: return "none";
    case SplitMode::Rail: return "rail";
    case SplitMode::Node: return "node";
    case SplitMode::Mod: return fmt::format("mod:{}", s.mod);
    case SplitMode::Nodes: return "nodes:" + nodes_text(s.nodes, ",");
  }
  return "none";
}

NodeLayout node_layout(const std::vector<int>& node_of_rank, int ranks_per_node) {
  NodeLayout l;
  const int n = static_cast<int>(node_of_rank.size());
  std::map<int, int> seen;
  for (int r = 0; r < n; ++r) {
    const int node = ranks_per_node > 0 ? r / ranks_per_node : node_of_rank[static_cast<size_t>(r)];
    l.node_of_rank.push_back(node);
    l.local_of_rank.push_back(seen[node]++);
  }
  return l;
}

std::vector<Group> make_groups(const SplitSpec& s, const NodeLayout& layout) {
  const int n = static_cast<int>(layout.node_of_rank.size());
  std::map<int, Group> by_color;
  for (int r = 0; r < n && s.mode != SplitMode::Nodes; ++r) {
    int color = 0;
    std::string name;
    switch (s.mode) {
      case SplitMode::None: break;
      case SplitMode::Rail:
        color = layout.local_of_rank[static_cast<size_t>(r)];
        name = fmt::format("rail{}", color);
        break;
      case SplitMode::Node:
        color = layout.node_of_rank[static_cast<size_t>(r)];
        name = fmt::format("node{}", color);
        break;
      case SplitMode::Mod:
        color = r % s.mod;
        name = fmt::format("mod{}:{}", s.mod, color);
        break;
      case SplitMode::Nodes: break;
    }
    Group& g = by_color[color];
    g.index = color;
    g.name = name;
    g.ranks.push_back(r);
  }
  std::vector<Group> out;
  if (s.mode == SplitMode::Nodes) out = node_groups(s, layout);
  for (auto& [c, g] : by_color) out.push_back(std::move(g));
  for (const Group& g : out) {
    if (g.ranks.size() != out.front().ranks.size())
      throw UsageError(fmt::format("--split '{}': groups differ in size ({} has {} ranks, {} has {}); every group "
                                   "must have as many ranks (see --ranks-per-node)",
                                   split_name(s), out.front().name, out.front().ranks.size(), g.name, g.ranks.size()));
  }
  return out;
}

int group_of(const std::vector<Group>& groups, int rank) {
  for (size_t i = 0; i < groups.size(); ++i)
    for (int r : groups[i].ranks)
      if (r == rank) return static_cast<int>(i);
  return -1;
}

}  // namespace railkit::bench
