#pragma once
// A simulation scenario: topology, NICs, switches, flows and outputs, read from a YAML or JSON
// file. Every key, its unit and its default are documented in sim/README.md; an unknown key, a
// rate or time without a unit, or an impossible topology is a UsageError naming the key.
#include <array>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/dcqcn.hpp"
#include "sim/roce.hpp"

namespace railkit::sim {

inline constexpr int kPriorities = 8;

/// The most hosts (NICs) a topology may have: 2048 nodes of 8 GPUs. Checked while the scenario
/// is read, before anything is built (a fabric of 65536 hosts took 38 s and 810 MB to build).
inline constexpr std::int64_t kMaxHosts = 16384;
/// The most flows a scenario's `flows` may expand to (an all-to-all of 128 hosts is 16256):
/// every flow is sampled over the whole run.
inline constexpr std::int64_t kMaxFlows = 16384;

enum class TopologyKind { SingleSwitch, LeafSpine, RailOptimized };

/// The fabric's shape and links.
struct TopologySpec {
  TopologyKind kind = TopologyKind::SingleSwitch;
  int hosts = 0;               ///< single_switch: hosts on the switch
  int leaves = 0;              ///< leaf_spine: leaf switches
  int hosts_per_leaf = 0;      ///< leaf_spine: hosts under each leaf
  int nodes = 0;               ///< rail_optimized: nodes (servers)
  int gpus_per_node = 0;       ///< rail_optimized: GPUs = NICs = rails per node
  int spines = 0;              ///< leaf_spine, rail_optimized: spine switches (given, or from a given oversubscription)
  double oversubscription = 1; ///< host bandwidth / uplink bandwidth per leaf, as resolved: hosts per leaf x
                               ///< link rate / (spines x fabric rate)
  double link_rate_bps = 0;    ///< host (NIC) links
  std::int64_t link_delay_ps = 1'000'000;
  double fabric_rate_bps = 0;  ///< one leaf-spine link; resolved: link_rate_bps unless given
  std::int64_t fabric_delay_ps = -1;  ///< -1: link_delay_ps
  std::uint32_t mtu_bytes = 4096;     ///< RoCE path MTU (payload bytes per packet)

  /// Number of hosts (NICs) the topology has.
  int host_count() const noexcept;
};

enum class CcKind { None, DcqcnNvidia, DcqcnPaper };

/// The scenario name of a congestion control: "none", "dcqcn_nvidia", "dcqcn_paper".
std::string_view cc_name(CcKind k) noexcept;

/// NIC behaviour (identical on every NIC).
struct NicSpec {
  CcKind cc = CcKind::DcqcnNvidia;
  NvidiaDcqcn nvidia = nvidia_defaults();
  PaperDcqcn paper;
  std::uint64_t byte_reset_unit_bytes = 64;  ///< unit of rpg_byte_reset (disputed; see README)
  int data_priority = 3;
  std::uint32_t ack_every_packets = 16;
  std::int64_t retransmit_timeout_ps = 67'108'864'000;  ///< 4.096 us x 2^14 (perftest's default)
};

enum class SchedulerKind { Strict, Dwrr };

/// ECN marking of one egress queue: a preset (by default the DCQCN paper's 40G thresholds scaled
/// to each port's rate) or the thresholds given.
struct EcnSpec {
  bool enabled = false;
  EcnPreset preset = EcnPreset::DcqcnPaper;
  EcnThresholds thresholds = kDcqcnPaperEcn;  ///< EcnPreset::Given
};

/// ECN on priority 3 only, thresholds from the port's rate.
constexpr std::array<EcnSpec, 8> default_ecn() noexcept {
  std::array<EcnSpec, 8> e{};
  e[3].enabled = true;
  return e;
}

/// Switch behaviour (identical on every switch).
struct SwitchSpec {
  std::uint64_t buffer_bytes = 16ull << 20;
  SchedulerKind scheduler = SchedulerKind::Dwrr;
  std::array<std::uint32_t, kPriorities> dwrr_weights{1, 1, 1, 1, 1, 1, 1, 1};
  std::array<bool, kPriorities> strict{false, false, false, false, false, false, true, true};
  std::array<EcnSpec, kPriorities> ecn = default_ecn();
  bool ecn_on_dequeue = true;             ///< mark when a packet leaves (else when it arrives)
  bool pfc_enabled = true;
  std::array<bool, kPriorities> pfc{false, false, false, true, false, false, false, false};
  std::int64_t headroom_bytes = -1;       ///< per port and lossless priority; -1: mlx5 formula
  double threshold_alpha = 1.0;           ///< dynamic threshold: alpha x free shared buffer
  std::int64_t xoff_bytes = -1;           ///< static threshold instead of the dynamic one; -1: dynamic
  std::int64_t xon_offset_bytes = -1;     ///< -1: two MTU frames
  std::uint32_t pause_quanta = 65535;
  std::uint64_t ecmp_seed = 0;
};

/// One flow (queue pair) from host `src` to host `dst`.
struct FlowSpec {
  int src = 0;
  int dst = 0;
  std::int64_t start_ps = 0;
  std::uint64_t bytes = 0;  ///< 0: long-lived
  int priority = 3;
};

/// What the document and the CSV series hold.
struct OutputSpec {
  std::int64_t sample_interval_ps = 0;  ///< 0: duration / 1000
  std::int64_t steady_from_ps = -1;     ///< -1: half the duration
  int max_series_ports = 64;
  int max_series_flows = 256;
};

/// A whole scenario, resolved (defaults filled in, hosts numbered).
struct Scenario {
  std::string name;
  std::uint64_t seed = 1;
  std::int64_t duration_ps = 0;
  std::string event_scheduler = "priority_queue";
  TopologySpec topology;
  NicSpec nic;
  SwitchSpec sw;
  std::vector<FlowSpec> flows;
  OutputSpec output;
  nlohmann::json source;  ///< the document as read (after overrides), echoed in the results

  /// The steady-state window's start: output.steady_from_ps or half the duration.
  std::int64_t steady_from() const noexcept;
  /// The series' sample interval: output.sample_interval_ps or duration / 1000 (at least 1 us).
  std::int64_t sample_interval() const noexcept;
};

/// Resolves a scenario document. `source` names it in errors; `base_dir` anchors relative paths
/// (nic.dcqcn_file). Throws UsageError "<source>: <key>: <problem>".
Scenario parse_scenario(const nlohmann::json& doc, const std::string& source, const std::filesystem::path& base_dir);

/// Applies one `--set key.path=value` override to a document (value parsed as a YAML scalar or
/// flow collection). Throws UsageError naming the override.
void apply_override(nlohmann::json& doc, const std::string& assignment);

/// Reads a YAML (.yaml/.yml) or JSON file and applies the overrides in order. `what` names the
/// input in an error reading it ("scenario", "--sim-cluster"). Throws UsageError.
nlohmann::json read_document(const std::filesystem::path& path, const std::vector<std::string>& overrides, const std::string& what);

/// Reads a scenario file (.yaml/.yml as YAML, else JSON), applies overrides, resolves it.
Scenario load_scenario(const std::filesystem::path& path, const std::vector<std::string>& overrides = {});

/// The host name of host `i` ("h3"; rail_optimized: "n1g3").
std::string host_name(const TopologySpec& t, int i);

/// Reads the DCQCN attributes of a profile document (settings.dcqcn of `priority`), a
/// `railkit dcqcn show` document (its first netdev) or a plain map of attribute names, into `d`.
void load_dcqcn_attributes(const nlohmann::json& j, int priority, NvidiaDcqcn& d, const std::string& where);

}  // namespace railkit::sim
