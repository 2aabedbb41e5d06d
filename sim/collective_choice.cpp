// The choice of algorithm and protocol as NCCL's cost model makes it (src/graph/tuning.cc:
// time = latency(algo, proto) + bytes / bandwidth(algo, proto), the least time among the allowed
// pairs), with this model's own estimates: NCCL's latencies (which the plan also runs with) and
// the bandwidth the busiest link of the algorithm's plan allows.
#include <algorithm>
#include <string>

#include <fmt/format.h>

#include "core/collectives.hpp"
#include "core/error.hpp"
#include "sim/collective.hpp"
#include "sim/collective_model.hpp"

namespace railkit::sim {
namespace {

/// NCCL's cost-model latencies in microseconds (src/graph/tuning.cc), indexed by protocol
/// LL, LL128, Simple.
struct AlgoLatency {
  double base[3];
  double net[3];
  double nvlink[3];
};
constexpr AlgoLatency kRingLatency{{6.6, 14, 8.4}, {2.7, 4, 14}, {0.6, 1.9, 3.4}};
constexpr AlgoLatency kTreeLatency{{6.8, 14, 8.4}, {5, 8.5, 14}, {0.6, 1.25, 4}};

int proto_index(Proto p) noexcept { return p == Proto::LL ? 0 : p == Proto::LL128 ? 1 : 2; }

int log2_ceil(int n) {
  int k = 0;
  while ((1 << k) < n) ++k;
  return k;
}

bool contains(const auto& list, auto v) { return std::find(list.begin(), list.end(), v) != list.end(); }

std::string candidate_text(const AlgoCandidate& k, bool chosen) {
  std::string t = fmt::format("{}/{} {:.1f} us", algo_name(k.algo), proto_name(k.proto), k.predicted_us);
  if (chosen) t += " (chosen)";
  else if (!k.allowed) t += " (not allowed)";
  return t;
}

/// The notes of a choice: what was chosen and why, and every candidate's predicted time.
void note_choice(CollPlan& p, const std::vector<AlgoCandidate>& ks, std::size_t best) {
  const AlgoCandidate& b = ks[best];
  p.notes.push_back(fmt::format(
      "algorithm {}, protocol {}: NCCL's cost model (latency + bytes / bandwidth; bandwidth: the busiest link of the "
      "algorithm's plan, {}) predicts {:.1f} us = {:.1f} + {:.1f}, the least of the allowed candidates",
      algo_name(b.algo), proto_name(b.proto), b.busiest_link, b.predicted_us, b.latency_us, b.bandwidth_us));
  std::string all;
  for (std::size_t i = 0; i < ks.size(); ++i) all += (i ? ", " : "") + candidate_text(ks[i], i == best);
  p.notes.push_back("cost model candidates (predicted time): " + all);
}

/// Every (algorithm, protocol) the model has for `r`, in NCCL's order (Tree, Ring; LL, LL128,
/// Simple: the first of equal times wins, as in NCCL), each priced.
std::vector<AlgoCandidate> price(const ClusterSpec& c, const NcclSettings& s, const CollRequest& r, const Shape& sh) {
  std::vector<AlgoCandidate> ks;
  for (Algo a : {Algo::Tree, Algo::Ring}) {
    if (!has_algo(r.coll, a, sh)) continue;
    const CollPlan simple = plan_with(c, s, r, a, Proto::Simple);
    const auto [bw_s, link] = busiest_link_s(c, simple.steps);
    for (Proto p : {Proto::LL, Proto::LL128, Proto::Simple}) {
      AlgoCandidate k;
      k.algo = a;
      k.proto = p;
      k.allowed = contains(s.algos, a) && contains(s.protos, p);
      k.latency_us = nccl_latency_us(r.coll, a, p, sh);
      k.bandwidth_us = bw_s * 1e6 / proto_factor(p);  // the protocol moves bytes / factor
      k.predicted_us = k.latency_us + k.bandwidth_us;
      k.busiest_link = link;
      ks.push_back(std::move(k));
    }
  }
  return ks;
}

}  // namespace

Shape shape_of(const ClusterSpec& c) {
  Shape s;
  s.G = c.gpus_per_node();
  s.N = c.nodes();
  s.n = c.gpus();
  return s;
}

double proto_factor(Proto p) noexcept { return p == Proto::LL ? 0.5 : p == Proto::LL128 ? 0.92 : 1.0; }

bool has_algo(CollKind coll, Algo a, const Shape& s) {
  if (collective(coll).point_to_point) return a == Algo::Ring;
  return a == Algo::Ring || (coll == CollKind::AllReduce && s.N >= 2);
}

double nccl_latency_us(CollKind coll, Algo a, Proto p, const Shape& s) {
  const int k = proto_index(p);
  if (collective(coll).point_to_point)
    return kRingLatency.base[2] + (s.N > 1 ? kRingLatency.net[2] : kRingLatency.nvlink[2]);
  if (a == Algo::Tree)
    return kTreeLatency.base[k] + 2.0 * ((s.G - 1) * kTreeLatency.nvlink[k] + log2_ceil(s.N) * kTreeLatency.net[k]);
  int steps = s.n - 1, inter = s.N - 1;
  if (coll == CollKind::AllReduce) {
    steps = 2 * (s.n - 1);
    inter = 2 * (s.N - 1);
  }
  return kRingLatency.base[k] + (steps - inter) * kRingLatency.nvlink[k] + inter * kRingLatency.net[k];
}

CollPlan plan_collective(const ClusterSpec& c, const NcclSettings& s, const CollRequest& r) {
  if (c.gpus() < 2) throw UsageError("the simulated cluster needs at least 2 GPUs");
  const Shape sh = shape_of(c);
  if (collective(r.coll).point_to_point) {
    CollPlan p = plan_with(c, s, r, Algo::Ring, Proto::Simple);
    p.notes.push_back("point-to-point (grouped send/recv): no algorithm choice, protocol Simple");
    return p;
  }
  std::vector<AlgoCandidate> ks = price(c, s, r, sh);
  std::size_t best = ks.size();
  for (std::size_t i = 0; i < ks.size(); ++i)
    if (ks[i].allowed && (best == ks.size() || ks[i].predicted_us < ks[best].predicted_us)) best = i;
  std::string fallback;
  if (best == ks.size()) {
    // Only Tree allowed where the model has no tree: Ring, with the allowed protocol predicted fastest.
    for (std::size_t i = 0; i < ks.size(); ++i)
      if (ks[i].algo == Algo::Ring && contains(s.protos, ks[i].proto) &&
          (best == ks.size() || ks[i].predicted_us < ks[best].predicted_us))
        best = i;
    if (best == ks.size()) throw Error(ErrorCode::Internal, "cost model: no candidate for the collective");
    fallback = "NCCL_ALGO allows only Tree, which this collective does not have here: Ring";
  }
  CollPlan p = plan_with(c, s, r, ks[best].algo, ks[best].proto);
  if (!fallback.empty()) p.notes.push_back(fallback);
  note_choice(p, ks, best);
  p.candidates = std::move(ks);
  return p;
}

}  // namespace railkit::sim
