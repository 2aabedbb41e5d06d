#pragma once
// The rdma-pair stage of `railkit accept`: ib_write_bw between the same rail's NICs of two nodes,
// for each pair of each circle-method round (server on one node, client on the other, both
// through the launcher: `railkit rdma-pair`), judged against the line rate; slow pairs are
// isolated to a node (slow with its partners) or a link (`A:mlx5_0 <-> B:mlx5_0`). Running and
// judging are separate: judge_rdma_pairs is pure.
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "accept/stages.hpp"
#include "accept/suite.hpp"
#include "accept/topo_rdma.hpp"

namespace railkit::accept {

/// One ib_write_bw between node a's NIC (server) and node b's NIC (client) on one rail.
struct RdmaPairRun {
  int round = 0;
  int a = 0, b = 0;  ///< node indices: a ran the server, b the client
  std::string rail, nic_a, nic_b;
  std::optional<double> measured_Gbps;         ///< the client's figure
  std::optional<double> rate_a_Gbps, rate_b_Gbps;  ///< the two ports' line rates
  std::string error;        ///< why it failed ("" when it measured)
  std::string unavailable;  ///< why it could not run at all (exit 5: no perftest); not judged
};

/// What the rdma-pair stage found: checks per node (`rdma.pair.<nic>` per rail), and accept.json's
/// `rdma_pairs` and `rdma_isolation`.
struct RdmaPairStage : StageResult {
  nlohmann::ordered_json pairs = nlohmann::ordered_json::array();
  nlohmann::ordered_json isolation = nlohmann::ordered_json::object();
};

/// Judges the runs: a run is slow below `fraction` x the lower of the two line rates (rule `line
/// rate`; no rate known: reported, rule `none`), and a failed run is slow too. Per rail, the slow
/// runs are isolated as the pair stage's pairs are (isolate_pairs): a node slow with all its
/// partners (2 or more), or in 2 or more slow runs whose partners pass their other runs, is
/// guilty; a slow run no guilty node explains names its link. Each node gets one
/// `rdma.pair.<nic>` check per rail it ran on: failed when it is guilty on that rail or an end of
/// a guilty link, its partners and figures as evidence.
RdmaPairStage judge_rdma_pairs(const std::vector<RdmaPairRun>& runs, const std::vector<std::string>& names,
                               double fraction);

/// The stage: for each circle round, every pair of the round at once; per pair, the rails both
/// nodes have (`nics`, per node), `railkit rdma-pair --role server` on the first node's NICs and
/// `--role client --peer ADDRESS` on the second's, ADDRESS the suite's rdma_addresses entry of
/// the first node, else its host. Skipped for emulated nodes (one machine's NICs: no link between
/// them), with fewer than 2 nodes, when no pair shares a rail, or when rdma-pair was unavailable
/// everywhere. Throws InterruptedError when a signal interrupted it.
RdmaPairStage rdma_pair_stage(const NodeTools& t, const std::vector<AcceptNode>& nodes,
                              const std::vector<std::vector<RailNic>>& nics, const AcceptSuite& suite,
                              std::ostream& progress);

}  // namespace railkit::accept
