#pragma once
// What the planner and the cost model share (sim/collective_plan.cpp, sim/collective_choice.cpp):
// the cluster's shape and NCCL's latency and protocol figures (src/graph/tuning.cc).
#include "sim/collective.hpp"

namespace railkit::sim {

/// A cluster as ranks: G GPUs per node, N nodes, n ranks (rank = node x G + local GPU).
struct Shape {
  int G = 1;  ///< GPUs per node
  int N = 1;  ///< nodes
  int n = 1;  ///< ranks
  int gpu(int node, int local) const { return node * G + local; }
  int node(int rank) const { return rank / G; }
  int local(int rank) const { return rank % G; }
};

Shape shape_of(const ClusterSpec& c);

/// NCCL's total latency in microseconds of algorithm `a` and protocol `p` for `coll` on `s`
/// (base + per-step NVLink and network latencies of its cost model).
double nccl_latency_us(CollKind coll, Algo a, Proto p, const Shape& s);

/// Payload share of what a protocol moves (NCCL's cost model: LL at half the bus bandwidth,
/// LL128 at 0.92 of it, Simple all of it).
double proto_factor(Proto p) noexcept;

/// Whether the model has algorithm `a` for `coll` on `s` (Tree: all-reduce across nodes).
bool has_algo(CollKind coll, Algo a, const Shape& s);

}  // namespace railkit::sim
