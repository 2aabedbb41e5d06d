#pragma once
// The topology fingerprint a profile records, taken from the nodes that were measured:
// `railkit topo --format json` run once on each host of the session's results documents through
// the launcher (`--launcher local`: here), or a captured or fixture tree (`--topo-root DIR`)
// probed here. The facts are journaled (the `topology` line, tuner/journal.hpp), so a resumed
// session reuses them; judge() says what they give the profile.
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "launch/launcher.hpp"

namespace railkit::tuner {

/// What the probe of one node said.
struct NodeFingerprint {
  std::string host;                     ///< as the results documents name it (topo-root: the tree's host)
  std::string hash;                     ///< "" when the probe failed
  std::vector<std::string> nic_models;  ///< distinct, sorted
  std::string document;                 ///< its topology document, relative to the session directory ("" for topo-root)
  std::string error;                    ///< why the probe failed
  std::map<std::string, std::string> facts = {};  ///< the facts the hash is made of (topology's fingerprint.facts)
  bool operator==(const NodeFingerprint&) const = default;
};

/// Where a profile's fingerprint came from and what each probe said.
struct FingerprintFacts {
  std::string source;                 ///< "nodes" (each measured node, through the launcher) | "topo-root" |
                                      ///< "sim" (a simulated session: no node, no fingerprint)
  std::string root;                   ///< the tree (topo-root)
  std::vector<NodeFingerprint> nodes;
  std::string probed;                 ///< UTC ISO 8601
  bool operator==(const FingerprintFacts&) const = default;
};

/// What the facts give a profile: the fingerprint when every node was probed and all agree;
/// otherwise "" and the problem (no node probed, a probe that failed, nodes that differ).
struct FingerprintVerdict {
  std::string hash;
  std::vector<std::string> nic_models;  ///< distinct over the probed nodes
  std::string problem;                  ///< "" exactly when hash is set
};
FingerprintVerdict judge(const FingerprintFacts& facts);

/// A node's facts from its `railkit topo --format json` document (host, fingerprint hash, NIC
/// models). Throws UsageError naming `source` when the text is not such a document.
NodeFingerprint node_fingerprint_from_json(const std::string& text, const std::string& source);

/// Probes a captured or fixture tree here, as `railkit topo --root ROOT` does; a probe error is
/// recorded in the node.
FingerprintFacts probe_topo_root(const std::string& root);

/// How to probe the measured nodes.
struct NodeProbe {
  launch::LauncherOptions launcher;
  std::string railkit;         ///< the executable the nodes run
  std::filesystem::path dir;   ///< the session directory: documents go to DIR/topology/
  double timeout_s = 120;      ///< per node
  double kill_grace_s = 5;
};

/// Runs `railkit topo --format json` once on each of `hosts` (launch::one_host_argv; an empty
/// name runs wherever the launcher puts it). A probe that fails is recorded in its node, with
/// the telling line of its stderr. Throws InterruptedError (its message: the signal) when a
/// signal stops a probe.
FingerprintFacts probe_nodes(const NodeProbe& probe, const std::vector<std::string>& hosts, char* const* envp);

}  // namespace railkit::tuner
