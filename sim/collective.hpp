#pragma once
// NCCL-like collectives on a simulated rail-optimized cluster (railkit-bench --backend sim).
//
// A cluster file describes the machine (nodes x GPUs, NVLink, one NIC per GPU on its rail's leaf,
// spines, switch and NIC settings); NcclSettings is what the simulated NCCL reads from NCCL_*
// variables; plan_collective() chooses the algorithm and protocol by NCCL's cost model and turns
// one collective into steps of transfers the way NCCL moves data (channels, rings, trees, grouped
// point-to-point, PXN relays), each transfer waiting only for the transfers it depends on;
// simulate_collective() runs the plan at flow level (max-min fair sharing) or packet level (the
// ns-3 fabric of sim/network.hpp) and returns the simulated completion time with fabric counters.
// Everything here is simulated: callers label it so.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/collective_kind.hpp"
#include "core/nccl_log.hpp"
#include "sim/scenario.hpp"

namespace railkit::sim {

/// A cluster for collectives: a rail-optimized fabric (a scenario without flows) plus NVLink.
struct ClusterSpec {
  Scenario fabric;                           ///< topology (rail_optimized), nic, switch, seed, name
  double nvlink_rate_bps = 3.6e12;           ///< per GPU and direction (H100 NVLink 4: 450 GB/s)
  std::int64_t nvlink_delay_ps = 0;          ///< per NVLink hop (0: NCCL's per-step latency holds it)
  nlohmann::json source;                     ///< the document as read (after overrides)

  int nodes() const noexcept { return fabric.topology.nodes; }
  int gpus_per_node() const noexcept { return fabric.topology.gpus_per_node; }
  int gpus() const noexcept { return nodes() * gpus_per_node(); }
};

/// Resolves a cluster document: the scenario keys name, seed, event_scheduler, topology, nic and
/// switch (sim/README.md), topology.kind rail_optimized (the default here), plus nvlink.rate and
/// nvlink.delay. duration, flows and output belong to railkit-sim scenarios and are refused.
/// Throws UsageError "<source>: <key>: <problem>".
ClusterSpec parse_cluster(const nlohmann::json& doc, const std::string& source, const std::filesystem::path& base_dir);

/// Reads a cluster file (YAML or JSON), applies `--sim-set key.path=value` overrides in order,
/// resolves it.
ClusterSpec load_cluster(const std::filesystem::path& path, const std::vector<std::string>& overrides = {});

/// The collective: core's CollKind (core/collectives.hpp describes each).
using CollKind = railkit::CollKind;
enum class Algo { Ring, Tree };
enum class Proto { LL, LL128, Simple };
enum class Fidelity { Packet, Flow };

const char* algo_name(Algo a) noexcept;    ///< "Ring", "Tree" (NCCL's spelling)
const char* proto_name(Proto p) noexcept;  ///< "LL", "LL128", "Simple"
const char* fidelity_name(Fidelity f) noexcept;  ///< "packet", "flow"
/// "packet" or "flow"; throws UsageError naming `what` otherwise.
Fidelity parse_fidelity(const std::string& text, const std::string& what);

/// What the simulated NCCL honours, read from NCCL_* variables.
struct NcclSettings {
  std::vector<Algo> algos{Algo::Ring, Algo::Tree};  ///< NCCL_ALGO: allowed, in preference order
  std::vector<Proto> protos{Proto::LL, Proto::LL128, Proto::Simple};  ///< NCCL_PROTO: allowed
  bool pxn_disable = false;        ///< NCCL_PXN_DISABLE
  int p2p_pxn_level = 2;           ///< NCCL_P2P_PXN_LEVEL: 0 none, 1 if needed, 2 always
  int cross_nic = 2;               ///< NCCL_CROSS_NIC: 0 same rail, 1 may cross, 2 same rail if possible
  int min_channels = 0;            ///< NCCL_MIN_NCHANNELS (0: none)
  int max_channels = 64;           ///< NCCL_MAX_NCHANNELS
  int channels_per_net_peer = 2;   ///< NCCL_NCHANNELS_PER_NET_PEER
  int qps_per_connection = 1;      ///< NCCL_IB_QPS_PER_CONNECTION
  std::optional<int> ib_tc;        ///< NCCL_IB_TC (priority = DSCP >> 3 = TC >> 5); unset: nic.priority
  std::vector<std::pair<std::string, std::string>> honoured;  ///< the variables read, as given
  std::vector<std::string> inert;  ///< NCCL_* variables present that the simulator does not model
};

/// Reads the settings from `env` (name, value pairs; only NCCL_* names matter). A bad value of
/// an honoured variable is a UsageError naming it; NCCL_ALGO / NCCL_PROTO lists that leave no
/// modelled choice (only NVLS, CollNet, PAT ...) are UsageErrors too.
NcclSettings read_nccl_settings(const std::vector<std::pair<std::string, std::string>>& env);

/// One collective as railkit-bench asks for it: `bytes` is nccl-tests' size column (all-reduce,
/// broadcast, reduce: the buffer; all-gather: the receive buffer of n blocks; reduce-scatter: the
/// send buffer of n blocks; all-to-all: each rank's send buffer, n blocks; send/recv: what each
/// rank sends to rank + 1).
struct CollRequest {
  CollKind coll = CollKind::AllReduce;
  std::uint64_t bytes = 0;
  int root = 0;
};

/// One data movement between GPUs (global GPU index = node * gpus_per_node + local GPU; a GPU's
/// NIC is the fabric host with the same index).
struct Transfer {
  int src = 0;                ///< GPU whose data it is
  int dst = 0;                ///< GPU it lands on
  std::uint64_t bytes = 0;    ///< bytes moved (protocol overhead included: payload / factor)
  int relay = -1;             ///< PXN: the local GPU on the peer's rail that posts the network send
  bool net = false;           ///< crosses the network; false: NVLink only
  int nic_src = -1;           ///< net: the fabric host that sends (src's NIC, or the relay's)
  int nic_dst = -1;           ///< net: the fabric host that receives (dst's NIC)
  int qps = 1;                ///< queue pairs the transfer is spread over (ECMP sees each)
  int channel = 0;
  /// In a repeated step: the transfers of the step (indices) whose previous run this one's run
  /// waits for, as NCCL's ring waits for the chunk it forwards (a rank sends step s of its ring
  /// once it has received step s - 1 from its neighbour on the same channel). Empty: every
  /// transfer of the previous run (a barrier). A transfer's run also waits for its own previous
  /// run (a connection sends in order).
  std::vector<std::uint32_t> after;
};

/// Transfers run `repeat` times. Run 0 of step 0 starts at once, run 0 of a later step when the
/// previous step is done; run r > 0 of a transfer when what its `after` names has done run r - 1
/// (no barrier across channels). Every run starts latency_us (NCCL's cost model: software and
/// hardware latency) after it may start; the collective ends when the last transfer lands.
struct Step {
  std::vector<Transfer> transfers;
  int repeat = 1;
  double latency_us = 0;
};

/// One (algorithm, protocol) pair as NCCL's cost model sees it: predicted time = latency +
/// bytes / bandwidth (src/graph/tuning.cc), with this model's bandwidth: the time the busiest
/// link of the algorithm's plan (a NIC port, a switch port on its ECMP path, a GPU's NVLink egress
/// or ingress) needs for the bytes the plan puts on it.
struct AlgoCandidate {
  Algo algo = Algo::Ring;
  Proto proto = Proto::Simple;
  bool allowed = true;        ///< NCCL_ALGO and NCCL_PROTO allow it
  double latency_us = 0;      ///< NCCL's latency of the algorithm and protocol here
  double bandwidth_us = 0;    ///< the busiest link's bytes over its rate (the bandwidth term)
  double predicted_us = 0;    ///< latency_us + bandwidth_us
  std::string busiest_link;   ///< which link that is (e.g. "NVLink egress of n0g3")
};

/// How NCCL would run one collective on the cluster.
struct CollPlan {
  Algo algo = Algo::Ring;
  Proto proto = Proto::Simple;
  int channels = 1;
  double protocol_factor = 1;  ///< payload share of the bytes a protocol moves (LL 0.5, LL128 0.92, Simple 1)
  int priority = 3;            ///< fabric priority of the traffic
  std::vector<Step> steps;
  NcclLogSummary observed;     ///< what a log of this NCCL would show (files = {"simulated"})
  std::vector<AlgoCandidate> candidates;  ///< every pair the cost model weighed (empty: no choice, point-to-point)
  std::vector<std::string> notes;  ///< choices worth reporting (the algorithm/protocol and why)
};

/// Plans `r` on `c` with `s`: the algorithm and protocol of least predicted time among those
/// NCCL_ALGO / NCCL_PROTO allow (all candidates kept in `candidates` and summed up in `notes`).
/// Throws UsageError for a request the model cannot place (a root out of range, fewer than 2 GPUs).
CollPlan plan_collective(const ClusterSpec& c, const NcclSettings& s, const CollRequest& r);

/// Plans `r` with the algorithm and protocol given (no choice, no candidates; a Tree where the
/// collective has none here is planned as Ring). Throws like plan_collective.
CollPlan plan_with(const ClusterSpec& c, const NcclSettings& s, const CollRequest& r, Algo a, Proto p);

/// Counters of one simulated collective. Byte counts are payload (protocol overhead included).
struct FabricCounters {
  std::uint64_t net_bytes = 0;      ///< bytes that crossed the network (sum over transfers)
  std::uint64_t spine_bytes = 0;    ///< of those, bytes whose route crossed a spine
  std::uint64_t nvlink_bytes = 0;   ///< bytes over NVLink (PXN relay copies included)
  std::uint64_t ecn_marked = 0;     ///< packet level only (0 at flow level)
  std::uint64_t pause_tx = 0;       ///< PFC pause frames sent, packet level only
  std::uint64_t drops = 0;
  std::uint64_t retransmitted_packets = 0;
  std::uint64_t cnps = 0;
  std::uint64_t packet_hops = 0;
  std::uint64_t events = 0;         ///< simulator events (packet level) or rate solutions (flow)
};

/// What one simulated collective took.
struct CollOutcome {
  double time_us = 0;      ///< simulated completion time
  double latency_us = 0;   ///< of which fixed latency (sum of the steps' latency_us)
  Fidelity fidelity = Fidelity::Flow;
  CollPlan plan;           ///< steps emptied (only the choices and observed kept)
  FabricCounters counters;
  double wall_s = 0;       ///< wall time the simulation took
};

/// Plans and runs `r`. Throws UsageError like plan_collective.
CollOutcome simulate_collective(const ClusterSpec& c, const NcclSettings& s, const CollRequest& r, Fidelity f);

/// Work (active flows summed over the events) a step may take event by event at flow level
/// before it is timed channel by channel: about half a second of one core (a count, so that the
/// outcome does not depend on the machine).
inline constexpr double kFlowWorkBudget = 4e6;

/// Runs a plan at flow level: every transfer run starts when its dependencies are done (plus the
/// step's latency), and the running transfers share NVLink (per GPU, each direction) and the
/// fabric's links (ECMP paths by flow hash) max-min fairly, rates solved again at every start and
/// completion. Repetitions found to repeat exactly (the same state one period later) are skipped
/// over by that period; a step still running past `work_budget` is timed channel by channel (all
/// its unfinished channels' transfers active together, a channel's run = latency + its slowest
/// transfer; rates solved again when a channel is done), with a note saying so. Deterministic.
CollOutcome run_flow_plan(const ClusterSpec& c, CollPlan plan, double work_budget = kFlowWorkBudget);

/// Runs a plan at packet level on the ns-3 fabric (sim/packet_collective.cpp): every network
/// transfer is qps queue pairs; NVLink copies are at flow level; every transfer run starts when
/// its dependencies are done, plus the step's latency.
CollOutcome run_packet_plan(const ClusterSpec& c, CollPlan plan);

/// The bandwidth term of the cost model for `steps` (bytes per run x runs on every link of the
/// flow level's link model, over the link's rate): seconds, and the busiest link's name.
std::pair<double, std::string> busiest_link_s(const ClusterSpec& c, const std::vector<Step>& steps);

}  // namespace railkit::sim
