#pragma once
// The flow level's view of a collective's transfers: links (every GPU's NVLink egress and
// ingress, the fabric's directed links at goodput) and the flows a transfer makes on them. Used
// by run_flow_plan and by the cost model's bandwidth term (busiest_link_s). Pure: no ns-3 here.
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "sim/collective.hpp"
#include "sim/topology.hpp"

namespace railkit::sim {

/// One flow of a transfer: its links (CollLinks indices) and bytes.
struct TransferFlow {
  std::vector<int> links;
  std::uint64_t bytes = 0;
  bool spine = false;  ///< its ECMP path crosses a spine
};

/// A transfer as flows: qps flows on their ECMP paths when it crosses the network (with the
/// NVLink hop to a PXN relay in front), one NVLink flow otherwise; none for 0 bytes or a GPU to
/// itself. `delay_ps`: the longest path's propagation delay (NVLink delay included).
struct TransferFlows {
  std::vector<TransferFlow> flows;
  std::int64_t delay_ps = 0;
  std::uint64_t net_bytes = 0;
  std::uint64_t spine_bytes = 0;
  std::uint64_t nvlink_bytes = 0;
};

/// Links numbered as they are first used (0, 1, ...).
class CollLinks {
 public:
  explicit CollLinks(const ClusterSpec& c);

  TransferFlows flows_of(const Transfer& t);
  std::size_t count() const noexcept { return capacity_.size(); }
  /// Goodput of link `l` in bytes per second.
  double capacity(int l) const { return capacity_[static_cast<std::size_t>(l)]; }
  /// "NVLink egress of n0g3", "leaf2 -> spine1" ...
  std::string name(int l) const;

 private:
  int nvlink(int gpu, int dir);
  int fabric(std::int64_t port);

  const ClusterSpec& c_;
  FabricGraph graph_;
  double payload_share_ = 1;
  std::vector<int> nvlink_;                        ///< per GPU and direction: link or -1
  std::unordered_map<std::int64_t, int> fabric_;   ///< node * 65536 + port -> link
  std::vector<double> capacity_;
  std::vector<std::int64_t> what_;                 ///< per link: -1 - (2 gpu + dir) or node * 65536 + port
};

}  // namespace railkit::sim
