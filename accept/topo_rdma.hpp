#pragma once
// The node-local stages of `railkit accept`: `railkit topo --lint` per node (lint and
// homogeneity) and `railkit rdma-loopback` per node with RDMA NICs. Running the tools and judging
// what they wrote are separate: the judging functions are pure.
#include <cstddef>
#include <filesystem>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "accept/stages.hpp"
#include "accept/suite.hpp"
#include "core/launch.hpp"
#include "launch/launcher.hpp"
#include "topology/compare.hpp"

namespace railkit::accept {

/// How the node-local tools are started: one process per node through the launcher (one_host_argv).
struct NodeTools {
  launch::LauncherOptions launcher;
  bool emulated = false;          ///< emulated nodes: every process on this machine (no host named)
  std::string railkit;            ///< railkit path on the nodes
  std::filesystem::path out_dir;  ///< documents in out_dir/topo/ and out_dir/rdma/
  double timeout_s = 600;         ///< per launch (topo: at most 120 s)
  char* const* envp = nullptr;
};

/// An RDMA NIC of a node and the rail it is matched by between nodes (the rdma-pair stage).
struct RailNic {
  std::string rail;  ///< "GPU<i>": the rail NIC of GPU i (the lowest it serves); "NIC<k>": the k-th serving no GPU; or the NIC's name
  std::string nic;
  /// It can carry a test: an ACTIVE port, with a RoCE v2 GID on Ethernet (else the loopback and
  /// lint say why not).
  bool usable = true;
};

/// What the topo stage found: checks, and each node's RDMA NICs from its document.
struct TopoStage : StageResult {
  std::vector<std::vector<std::string>> nics;    ///< per node (empty: none, or no document)
  std::vector<std::vector<RailNic>> rail_nics;   ///< per node, in document order
};

/// The RDMA NICs of a topology document with their rails: a NIC serving GPUs (`nics[].gpus`) is
/// on rail "GPU<i>", i the lowest index (`gpus[].index`) of those GPUs; the others are "NIC<k>",
/// k counting them in document order; `usable` from its ports. None when the document has no such list.
std::vector<RailNic> rail_nics(const nlohmann::json& doc);

/// NICs known only by name (no topology document): each is its own rail, matched by name.
std::vector<RailNic> named_rail_nics(const std::vector<std::string>& names);

/// A node-local tool on node `n` through the launcher (one_host_argv; no host for emulated
/// nodes): stdout in out_dir/<dir>/<stem>.json, stderr in out_dir/<dir>/<stem>.stderr.txt.
LaunchSpec node_tool_spec(const NodeTools& t, const AcceptNode& n, const std::string& dir, const std::string& stem,
                          const std::vector<std::string>& cmd);

/// The JSON document in `path`, or null when it is missing or not JSON.
nlohmann::json read_json_or_null(const std::filesystem::path& path);

/// `railkit topo --root R --format json --lint` once per node: `topo.lint` per node, then
/// `topo.homogeneity` per node whose document was read (when two or more were).
TopoStage topo_stage(const NodeTools& t, const std::vector<AcceptNode>& nodes);

/// The topo.lint check of a node. `doc`: its topology document when it parsed as one with
/// findings; `lr`: how `railkit topo` ended; `stderr_line`: its telling stderr line.
AcceptCheck lint_check(const std::string& topo_root, const std::optional<nlohmann::json>& doc, const LaunchResult& lr,
                       const std::string& stderr_line);

/// The topo.homogeneity checks of the nodes whose facts were read, in that order: each
/// fingerprint against the majority (topo::compare_nodes), naming the facts that differ.
std::vector<AcceptCheck> homogeneity_checks(const std::vector<topo::NodeFacts>& facts);

/// The NIC names of a topology document (`nics[].name`); none when it has no such list.
std::vector<std::string> nic_names(const nlohmann::json& doc);

/// The RDMA devices of each node's root (sys/class/infiniband), for when the topo stage was skipped.
std::vector<std::vector<std::string>> sysfs_nics(const std::vector<AcceptNode>& nodes);

/// `railkit rdma-loopback` once per node with NICs (`nics` per node; real nodes at once, emulated
/// nodes one after the other: they share this machine's NICs); one check per NIC against its line
/// rate. Skipped when no node has an RDMA device, or when the loopback was unavailable everywhere.
/// Throws InterruptedError when a signal interrupted it.
StageResult rdma_stage(const NodeTools& t, const std::vector<AcceptNode>& nodes,
                       const std::vector<std::vector<std::string>>& nics, const AcceptSuite& suite,
                       std::ostream& progress);

/// The checks of one node from `railkit rdma-loopback`'s document (`doc`, null when unreadable),
/// how it ended and its telling stderr line. `unavailable` gets the reason when the loopback was
/// unavailable there (exit 5: no perftest).
std::vector<AcceptCheck> rdma_checks(const std::string& topo_root, double rdma_fraction, const nlohmann::json& doc,
                                     const LaunchResult& lr, const std::string& stderr_line, std::string& unavailable);

}  // namespace railkit::accept
