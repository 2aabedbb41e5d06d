#pragma once
// Comparing topology documents captured on several nodes: what differs, most telling first.
#include <cstddef>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace railkit::topo {

/// One node's fingerprint as read back from its JSON document.
struct NodeFacts {
  std::string node;  ///< the node's name in every output (see name_nodes)
  std::string hash;
  std::map<std::string, std::string> facts;
};

/// What a difference is about. CompareReport::diffs is ordered by kind, in this order: a device
/// absent or extra first, then node-wide counts (`gpu.count`, `nic.models` ...), then a device's
/// own facts (model, link, rate, ports, NUMA), then rails, then GPU-NIC paths.
enum class DiffKind { Device, Count, Property, Rail, Path };

/// "device", "count", "property", "rail", "path".
const char* diff_kind_name(DiffKind k) noexcept;

/// A fact whose value is not the same on every node.
struct FactDiff {
  std::string fact;  ///< fact name; for kind Device the device's name ("mlx5_0")
  DiffKind kind = DiffKind::Property;
  std::string device;    ///< the device a per-device fact belongs to ("" for node-wide facts)
  std::string majority;  ///< the reference value (Device: "present" or "absent")
  bool tie = false;      ///< no reference value: every node is listed
  /// The fact differs only on nodes where its device is absent (or extra): the Device entry of
  /// the same device already says so.
  bool presence_only = false;
  std::vector<std::pair<std::string, std::string>> nodes;  ///< (node, its value) for the odd ones
};

/// The comparison of N nodes. The reference value of each fact is that of the majority
/// fingerprint; with no majority fingerprint, the fact's most common value (a device present on
/// as many nodes as it is absent from counts as present). A node is listed only where one of its
/// facts differs from the reference, or where a fact has no reference (a tie).
struct CompareReport {
  std::size_t nodes = 0;
  std::vector<std::string> node_names;  ///< every node, in input order
  std::string majority_hash;
  int majority_count = 0;
  bool tie = false;                    ///< no majority fingerprint
  std::vector<std::string> odd_nodes;  ///< nodes listed in at least one difference, input order
  std::vector<FactDiff> diffs;         ///< most telling first (DiffKind order), then by fact name
  bool all_equal() const noexcept { return diffs.empty() && odd_nodes.empty(); }
};

/// Compares fingerprints; pure.
CompareReport compare_nodes(const std::vector<NodeFacts>& nodes);

/// Names the nodes one way for all: by host name when every document has its own, otherwise
/// every node by the file it came from (`sources[i]`, same size as `nodes`).
void name_nodes(std::vector<NodeFacts>& nodes, const std::vector<std::string>& sources);

/// Reads the `host` and `fingerprint` of a `railkit topo --format json` document.
/// Throws UsageError naming `source` when the text is not such a document.
NodeFacts node_facts_from_json(const std::string& text, const std::string& source);

}  // namespace railkit::topo
