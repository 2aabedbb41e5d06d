#pragma once
// The profile document, schema "railkit.profile/1": settings measured on a cluster and the
// evidence that they beat the defaults there. Written by `railkit tune`, read by `railkit
// profile`, the NCCL tuner plugin and `railkit accept`. Documented in profiles/README.md, JSON
// Schema in profiles/railkit.profile.schema.json. Types here, JSON in core/profile.cpp.
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace railkit {

inline constexpr const char* kProfileSchema = "railkit.profile/1";

/// What the profile was made on; `railkit profile check` compares it with a node.
struct ProfileCluster {
  std::string fingerprint;        ///< `railkit topo` fingerprint; "" when the probe could not run
  /// The facts the fingerprint hashes (`railkit topo`'s fingerprint.facts: fact -> value, e.g.
  /// "nic.count" -> "8"), so `railkit profile check` can name the facts that differ. Optional in
  /// the document: empty when the profile stores only the hash (then it is not written).
  std::map<std::string, std::string> fingerprint_facts;
  int nodes = 0;
  int ranks = 0;
  int ranks_per_node = 0;
  std::string backend;            ///< "mpi" | "nccl" | "sim" (a simulated profile is never validated)
  std::string backend_version;    ///< "Open MPI v4.1.4", "NCCL 2.28.9"
  std::vector<std::string> hosts;
  std::vector<std::string> gpu_models;  ///< distinct, may be empty
  std::vector<std::string> nic_models;  ///< distinct, may be empty
  nlohmann::json extra = nlohmann::json::object();  ///< cuda versions and anything else observed
};

/// One decision: what to use for a collective over a range of message sizes.
struct ProfileDecision {
  std::string coll;              ///< bench name: all_reduce, all_gather, ...
  std::uint64_t min_bytes = 0;   ///< inclusive
  std::uint64_t max_bytes = 0;   ///< inclusive
  std::map<std::string, std::string> env;  ///< the settings that won this bucket (empty = the defaults)
  std::string config;            ///< its label ("allreduce_algorithm=4")
  double busbw_GBps = 0;         ///< validated busbw with these settings
  double baseline_busbw_GBps = 0;
  double ratio = 1;              ///< paired tuned/baseline ratio (geometric mean)
  double ratio_lo = 1, ratio_hi = 1;  ///< its 95% interval
  bool significant = false;      ///< ratio_lo > 1: the decision is not the baseline
};

/// Expected busbw for acceptance tests.
struct ProfileExpectation {
  std::string coll;
  std::uint64_t bytes = 0;
  double busbw_GBps = 0;
  double tolerance = 0;          ///< relative (0.05 = a measurement down to 95% passes)
  /// The settings it was measured with when they are not settings.env: those of the decision
  /// whose bucket holds `bytes` (optional in the file; absent = settings.env).
  std::optional<std::map<std::string, std::string>> env = std::nullopt;
  std::string config = {};       ///< that decision's label ("" when env is absent)
};

/// One A/B measurement round of the validation, per bucket.
struct ProfileEvidenceRow {
  std::string coll;
  std::uint64_t bytes = 0;       ///< bucket lower edge
  std::vector<double> baseline_busbw_GBps;  ///< one per pair, in run order
  std::vector<double> tuned_busbw_GBps;
  double ratio = 1, ratio_lo = 1, ratio_hi = 1;
};

struct ProfileEvidence {
  bool validated = false;        ///< true only when the A/B validation ran on a real backend
  std::string validated_at;      ///< UTC ISO 8601
  std::string railkit_version;
  std::string strategy, space;
  int trials = 0;
  int pairs = 0;                 ///< A/B pairs of the validation
  double max_regression = 0.02;
  std::map<std::string, std::string> baseline_env;
  std::vector<ProfileEvidenceRow> rows;
  std::string tune_dir;          ///< where the journal and results documents are
  nlohmann::json extra = nlohmann::json::object();
};

struct ProfileDocument {
  std::string schema = kProfileSchema;
  std::string name;
  std::string created;           ///< UTC ISO 8601
  ProfileCluster cluster;
  std::map<std::string, std::string> env;  ///< settings.env: NAME -> value
  /// settings.dcqcn: priority ("3") -> attribute (tunable name, roce_rp.rpg_time_reset) -> value
  std::map<std::string, std::map<std::string, std::string>> dcqcn;
  /// settings.switch_ecn (optional in the document; written only when non-empty): switch ECN
  /// marking (switch.ecn.kmin_bytes, kmax_bytes, pmax -> value) found on the simulator. Advice to
  /// configure on the switches' RoCE queues: railkit never applies it and no consumer exports it.
  std::map<std::string, std::string> switch_ecn;
  std::vector<ProfileDecision> decisions;
  std::vector<ProfileExpectation> expectations;
  ProfileEvidence evidence;
  /// Filled by profile_from_json, never serialized: one line per env key that has an allowed
  /// prefix but is not in the tunables table ("settings.env.NCCL_SOCKET_IFNAME: not in the
  /// tunables table; passed through unchanged").
  std::vector<std::string> warnings;
};

/// Whether a profile may set the environment variable `key`: a name of letters, digits and '_'
/// starting with NCCL_, NVSHMEM_, UCX_, OMPI_MCA_, TORCH_NCCL_ or RAILKIT_ (followed by at least
/// one character), or exactly CUDA_DEVICE_MAX_CONNECTIONS.
bool env_key_allowed(std::string_view key);

/// The document as JSON, keys in documented order.
nlohmann::ordered_json to_json(const ProfileDocument& p);
/// Parses and validates (schema version, types, env keys and values against the tunables table,
/// the rules of profiles/README.md). Throws UsageError "<source>: <field path>: <reason>" on the
/// first problem; fills `warnings` for env keys passed through unchecked.
ProfileDocument profile_from_json(const nlohmann::json& j, const std::string& source);
/// Reads a profile file. Throws IoError / UsageError naming the file.
ProfileDocument load_profile(const std::filesystem::path& path);
/// Writes atomically (temporary file, then rename). Throws IoError; UsageError when a string is
/// not valid UTF-8 (JSON cannot carry it).
void write_profile(const std::filesystem::path& path, const ProfileDocument& p);

}  // namespace railkit
