#pragma once
// Comparing topology documents captured on several nodes: what differs from the majority.
#include <cstddef>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace railkit::topo {

/// One node's fingerprint as read back from its JSON document.
struct NodeFacts {
  std::string node;  ///< host name from the document (file name when missing or duplicated)
  std::string hash;
  std::map<std::string, std::string> facts;
};

/// A fact whose value is not the same on every node.
struct FactDiff {
  std::string fact;
  std::string majority;  ///< the most common value
  bool tie = false;      ///< no single most common value: every node is listed
  std::vector<std::pair<std::string, std::string>> nodes;  ///< (node, its value) for the odd ones
};

/// The comparison of N nodes.
struct CompareReport {
  std::size_t nodes = 0;
  std::string majority_hash;
  int majority_count = 0;
  bool tie = false;
  std::vector<std::string> odd_nodes;  ///< nodes whose fingerprint differs from the majority
  std::vector<FactDiff> diffs;
  bool all_equal() const noexcept { return diffs.empty() && odd_nodes.empty(); }
};

/// Compares fingerprints; pure.
CompareReport compare_nodes(const std::vector<NodeFacts>& nodes);

/// Reads the `host` and `fingerprint` of a `railkit topo --format json` document.
/// Throws UsageError naming `source` when the text is not such a document.
NodeFacts node_facts_from_json(const std::string& text, const std::string& source);

}  // namespace railkit::topo
