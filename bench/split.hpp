#pragma once
// --split: concurrent groups of ranks, each with its own communicator (nccl-tests'
// NCCL_TESTS_SPLIT, made rail-aware). `rail` groups the ranks with the same node-local index
// across nodes (one communicator per rail), `node` the ranks of one node, `mod:K` rank % K,
// `nodes:0+3,1+2` explicit groups of nodes (node indices joined by '+', groups separated by ','):
// the ranks of nodes not listed sit the run out (they take part in the control traffic and
// measure nothing), as the pair rounds and the bisection of `railkit accept` need.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace railkit::bench {

enum class SplitMode { None, Rail, Node, Mod, Nodes };

struct SplitSpec {
  SplitMode mode = SplitMode::None;
  int mod = 0;  ///< K of mod:K
  std::vector<std::vector<int>> nodes;  ///< groups of node indices of nodes:...
};

/// Parses "rail", "node", "mod:K" (K >= 1), "nodes:A+B,C+D" (node indices >= 0, each node in at most
/// one group), "none". nullopt when malformed.
std::optional<SplitSpec> parse_split(std::string_view text);
std::string split_name(const SplitSpec& s);

/// Node index and node-local index of every rank.
struct NodeLayout {
  std::vector<int> node_of_rank;
  std::vector<int> local_of_rank;
};

/// From the launcher's node of each rank, or, when ranks_per_node > 0, ranks [kK, (k+1)K) form node k
/// (for tests and launchers that place ranks unusually).
NodeLayout node_layout(const std::vector<int>& node_of_rank, int ranks_per_node);

struct Group {
  int index = 0;
  std::string name;       ///< "rail0", "node1", "mod8:3", "nodes0+3"; empty when there is no split
  std::vector<int> ranks; ///< world ranks, ascending
};

/// The groups of a split, ordered by index; one group of every rank for SplitMode::None. With
/// SplitMode::Nodes only the listed nodes' ranks are in a group, in the order listed (the others
/// are idle: group_of gives -1). Throws UsageError when the groups differ in size (their sizes
/// decide counts and busbw) or, for nodes:, when a node index is beyond the nodes of the run.
std::vector<Group> make_groups(const SplitSpec& s, const NodeLayout& layout);

/// Index of the group that holds `rank`; -1 when it is in none (an idle rank of nodes:).
int group_of(const std::vector<Group>& groups, int rank);

}  // namespace railkit::bench
