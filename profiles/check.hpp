#pragma once
// `railkit profile check`: what differs between the cluster a profile was made on and this node
// (topology fingerprint, NCCL major.minor, GPU and NIC models).
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/profile.hpp"

namespace railkit::profiles {

/// What `check` knows about the node.
struct NodeFacts {
  std::string fingerprint;              ///< topo fingerprint hash ("" when the probe failed)
  std::map<std::string, std::string> fingerprint_facts;  ///< the facts it hashes (topo's fingerprint.facts)
  std::string fingerprint_error;        ///< why the probe failed
  std::vector<std::string> gpu_models;  ///< distinct, from the probe
  std::vector<std::string> nic_models;  ///< distinct, from the probe
  std::optional<std::string> nccl_version;  ///< "2.28" (major.minor); nullopt when not found
  std::string nccl_source;              ///< where the version came from (a file, "--nccl-version")
};

/// Probes the node under `root` (topo::probe_node + analyze) and finds its NCCL: `nccl_override`
/// when given (any text holding X.Y), else the file name of libnccl.so.X.Y.Z (see find_nccl_version).
/// Never throws for a node that cannot be probed; the failure is in fingerprint_error.
NodeFacts probe_node_facts(const std::filesystem::path& root, const std::optional<std::string>& nccl_override);

/// The NCCL version of the node under `root` from a library file name libnccl.so.X.Y.Z: in
/// LD_LIBRARY_PATH and `ldconfig -p` (only when root is "/"), then <root>/usr/lib/<arch>-linux-gnu,
/// usr/lib64, usr/lib, usr/local/lib, usr/local/cuda/lib64 and a few more; a symlink named
/// libnccl.so.2 is followed to its target's name. Returns {major.minor, the file}, or nullopt.
std::optional<std::pair<std::string, std::string>> find_nccl_version(const std::filesystem::path& root);

/// "2.28" from any text holding a version ("NCCL 2.28.9 (built 2.28.9)", "2.28.9+cuda13.0",
/// "libnccl.so.2.28.9"); nullopt when there is none.
std::optional<std::string> major_minor(std::string_view text);

/// The NCCL major.minor the profile was measured with: cluster.extra.nccl_version, else
/// cluster.backend_version when the backend is nccl; nullopt when not recorded.
std::optional<std::string> profile_nccl_version(const ProfileDocument& p);

/// One fingerprint fact whose value differs; nullopt where the fact is absent (a device that
/// one side lacks).
struct FactDifference {
  std::string fact;                    ///< "nic.count", "GPU3.rail"
  std::optional<std::string> profile;  ///< cluster.fingerprint_facts' value
  std::optional<std::string> node;     ///< this node's value
  bool operator==(const FactDifference&) const = default;
};

/// Every fact whose value differs between two fingerprints' facts, ordered to point at the cause:
/// facts present on one side only (a missing or extra device) first, then totals (names ending in
/// `.count` or `.models`), then the rest; by name within each group.
std::vector<FactDifference> fact_differences(const std::map<std::string, std::string>& profile,
                                             const std::map<std::string, std::string>& node);

/// One compared item.
struct CheckItem {
  enum class Status { Same, Differs, NotRecorded, Unknown };
  std::string what;     ///< "fingerprint", "NCCL", "GPU models", "NIC models"
  Status status = Status::Same;
  std::string profile;  ///< the profile's value, as shown
  std::string node;     ///< this node's value, as shown
  std::string note;     ///< why NotRecorded / Unknown, or how the values were compared
  std::vector<FactDifference> facts;  ///< fingerprint: the facts that differ (when the profile stores them)
};

/// Compares the profile's cluster with the node. An item the profile does not record is
/// NotRecorded and one the node does not reveal is Unknown; neither is a mismatch. The
/// fingerprint is compared by hash; when it differs and the profile stores the facts
/// (cluster.fingerprint_facts), every differing fact is named (CheckItem::facts), otherwise the
/// note says that only the hash is stored. GPU models are compared by family (the profile holds
/// CUDA's device names, "NVIDIA H100 80GB HBM3"; the probe names PCI ids, "H100 SXM5 80GB": both
/// are family h100); NIC models exactly, as sets.
std::vector<CheckItem> check_profile(const ProfileDocument& p, const NodeFacts& node);

/// True when any item has status Differs.
bool has_mismatch(const std::vector<CheckItem>& items);

/// One line per item ("fingerprint: differs: profile 0123..., this node 4567..."), each followed
/// by one indented line per differing fact ("  nic.count: profile 8, this node 7"); values shown
/// with display().
std::vector<std::string> check_lines(const std::vector<CheckItem>& items);

/// "h100" from "NVIDIA H100 80GB HBM3" or "H100 SXM5 80GB": the first word, lowercase, without
/// the vendor.
std::string gpu_family(std::string_view model);

}  // namespace railkit::profiles
