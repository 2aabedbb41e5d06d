#include "bench/split.hpp"

#include <charconv>
#include <map>

#include <fmt/format.h>

#include "core/error.hpp"

namespace railkit::bench {

std::optional<SplitSpec> parse_split(std::string_view t) {
  if (t == "none") return SplitSpec{};
  if (t == "rail") return SplitSpec{SplitMode::Rail, 0};
  if (t == "node") return SplitSpec{SplitMode::Node, 0};
  if (t.starts_with("mod:")) {
    int k = 0;
    const auto rest = t.substr(4);
    const auto [p, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), k);
    if (ec == std::errc() && p == rest.data() + rest.size() && k >= 1) return SplitSpec{SplitMode::Mod, k};
  }
  return std::nullopt;
}

std::string split_name(const SplitSpec& s) {
  switch (s.mode) {
    case SplitMode::None: return "none";
    case SplitMode::Rail: return "rail";
    case SplitMode::Node: return "node";
    case SplitMode::Mod: return fmt::format("mod:{}", s.mod);
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
  for (int r = 0; r < n; ++r) {
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
    }
    Group& g = by_color[color];
    g.index = color;
    g.name = name;
    g.ranks.push_back(r);
  }
  std::vector<Group> out;
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
