#pragma once
// --split: concurrent groups of ranks, each with its own communicator (nccl-tests'
// NCCL_TESTS_SPLIT, made rail-aware). `rail` groups the ranks with the same node-local index
// across nodes (one communicator per rail), `node` the ranks of one node, `mod:K` rank % K.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace railkit::bench {

enum class SplitMode { None, Rail, Node, Mod };

struct SplitSpec {
  SplitMode mode = SplitMode::None;
  int mod = 0;  ///< K of mod:K
};

/// Parses "rail", "node", "mod:K" (K >= 1), "none". nullopt when malformed.
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
  std::string name;       ///< "rail0", "node1", "mod8:3"; empty when there is no split
  std::vector<int> ranks; ///< world ranks, ascending
};

/// The groups of a split, ordered by index; one group of every rank for SplitMode::None.
/// Throws UsageError when the groups differ in size (their sizes decide counts and busbw).
std::vector<Group> make_groups(const SplitSpec& s, const NodeLayout& layout);

/// Index of the group that holds `rank`.
int group_of(const std::vector<Group>& groups, int rank);

}  // namespace railkit::bench
