// The sim backend: every rank of a cluster file simulated in this process (sim_communicator.hpp).
#include "bench/sim/sim_communicator.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>
#include <set>
#include <string_view>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/nccl_log.hpp"
#include "core/strings.hpp"
#include "core/units.hpp"

#ifndef RAILKIT_NS3_VERSION
#define RAILKIT_NS3_VERSION "unknown"
#endif

namespace railkit::bench::sim {
namespace {

model::CollKind coll_kind(Coll c) {
  switch (c) {
    case Coll::AllReduce: return model::CollKind::AllReduce;
    case Coll::AllGather: return model::CollKind::AllGather;
    case Coll::ReduceScatter: return model::CollKind::ReduceScatter;
    case Coll::Broadcast: return model::CollKind::Broadcast;
    case Coll::Reduce: return model::CollKind::Reduce;
    case Coll::AllToAll: return model::CollKind::AllToAll;
    case Coll::SendRecv: return model::CollKind::SendRecv;
  }
  throw Error(ErrorCode::Internal, "sim backend: unknown collective");
}

nlohmann::json settings_json(const model::NcclSettings& s) {
  nlohmann::json algos = nlohmann::json::array(), protos = nlohmann::json::array();
  for (model::Algo a : s.algos) algos.push_back(model::algo_name(a));
  for (model::Proto p : s.protos) protos.push_back(model::proto_name(p));
  nlohmann::json honoured = nlohmann::json::object();
  for (const auto& [name, value] : s.honoured) honoured[name] = value;
  return {{"honoured", honoured},
          {"inert", s.inert},
          {"model",
           {{"algos", algos},
            {"protos", protos},
            {"pxn_disable", s.pxn_disable},
            {"p2p_pxn_level", s.p2p_pxn_level},
            {"cross_nic", s.cross_nic},
            {"min_channels", s.min_channels},
            {"max_channels", s.max_channels},
            {"channels_per_net_peer", s.channels_per_net_peer},
            {"qps_per_connection", s.qps_per_connection},
            {"ib_tc", s.ib_tc ? nlohmann::json(*s.ib_tc) : nlohmann::json(nullptr)}}}};
}

/// The fabric counters of `outcomes`, each the mean per simulated collective.
nlohmann::json mean_counters(const std::vector<const model::CollOutcome*>& outcomes) {
  const std::pair<const char*, std::uint64_t model::FabricCounters::*> fields[] = {
      {"net_bytes", &model::FabricCounters::net_bytes},
      {"spine_bytes", &model::FabricCounters::spine_bytes},
      {"nvlink_bytes", &model::FabricCounters::nvlink_bytes},
      {"ecn_marked", &model::FabricCounters::ecn_marked},
      {"pause_tx", &model::FabricCounters::pause_tx},
      {"drops", &model::FabricCounters::drops},
      {"retransmitted_packets", &model::FabricCounters::retransmitted_packets},
      {"cnps", &model::FabricCounters::cnps},
      {"packet_hops", &model::FabricCounters::packet_hops},
      {"events", &model::FabricCounters::events}};
  nlohmann::json j = nlohmann::json::object();
  for (const auto& [name, member] : fields) {
    double sum = 0;
    for (const model::CollOutcome* o : outcomes) sum += static_cast<double>(o->counters.*member);
    j[name] = outcomes.empty() ? 0.0 : sum / static_cast<double>(outcomes.size());
  }
  return j;
}

/// What the cost model weighed: every (algorithm, protocol) with its predicted time.
nlohmann::json candidates_json(const std::vector<model::AlgoCandidate>& ks) {
  nlohmann::json a = nlohmann::json::array();
  for (const model::AlgoCandidate& k : ks)
    a.push_back({{"algo", model::algo_name(k.algo)},
                 {"proto", model::proto_name(k.proto)},
                 {"allowed", k.allowed},
                 {"latency_us", k.latency_us},
                 {"bandwidth_us", k.bandwidth_us},
                 {"predicted_us", k.predicted_us},
                 {"busiest_link", k.busiest_link}});
  return a;
}

/// One collective at one size: what a timed loop asks the simulator, the key of the cache of
/// its simulations (in place repeats the out-of-place simulation: the model has no difference).
struct CallKey {
  model::CollKind coll = model::CollKind::AllReduce;
  std::uint64_t bytes = 0;
  int root = 0;
  bool operator==(const CallKey&) const = default;
};

class SimCommunicator final : public Communicator, public EventTiming, public SelfObserved {
 public:
  explicit SimCommunicator(std::shared_ptr<const SimSetup> setup) : setup_(std::move(setup)) {
    if (setup_->cluster.gpus() < 1) throw UsageError(setup_->cluster_file + ": the cluster has no GPU");
  }
  ~SimCommunicator() override {
    for (const auto& [p, bytes] : reserved_) ::munmap(p, bytes);
  }
  SimCommunicator(const SimCommunicator&) = delete;
  SimCommunicator& operator=(const SimCommunicator&) = delete;

  int rank() const override { return 0; }
  int size() const override { return setup_->cluster.gpus(); }
  int slots() const override { return size(); }
  std::string name() const override { return "sim"; }
  std::string version() const override { return version_text(); }
  std::string device(int slot) const override {
    const int g = setup_->cluster.gpus_per_node();
    return fmt::format("simulated GPU {} of n{} (NIC {})", slot % g, slot / g,
                       model::host_name(setup_->cluster.fabric.topology, slot));
  }
  std::string host(int slot) const override { return fmt::format("n{}", slot / setup_->cluster.gpus_per_node()); }
  // The simulator moves bytes, not values: every datatype and reduction NCCL has.
  std::string unsupported_reason(DType, RedOp) const override { return {}; }

  std::vector<std::pair<std::string, std::string>> facts() const override {
    const bool flow = setup_->fidelity == model::Fidelity::Flow;
    return {{"timing", "simulated completion time of each timed launch (the host clock measured the simulator)"},
            {"fidelity", flow ? "flow: deterministic, simulated once per collective and size, its time repeated for "
                                "every iteration"
                              : "packet: one simulation per timed iteration, iteration i with seed + i and ecmp_seed + i"},
            {"warmup", "not simulated"},
            {"in_place", "the same simulation as out-of-place (the model has no in-place difference)"},
            {"buffers", "address-space reservations (PROT_NONE), never touched: no data moves"},
            {"check", "none: the sim backend moves no data"}};
  }

  void* allocate(int slot, std::uint64_t bytes) override {
    // Distinct addresses the size the harness asks for, reserved but never backed: 128 ranks of
    // 1 GiB cost no memory, and anything that wrote into one would fault at once.
    const std::size_t n = static_cast<std::size_t>(std::max<std::uint64_t>(bytes, 1));
    void* p = ::mmap(nullptr, n, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) {  // an address-space limit (ulimit -v) below the buffers asked for: a usage error, not a bug
      const int err = errno;
      std::uint64_t held = 0;
      for (const auto& [q, size] : reserved_) held += size;
      throw UsageError(fmt::format("-e/--maxbytes: the sim backend cannot reserve {} of address space for rank {}'s "
                                   "buffer ({}), after {} for the buffers before it: this process may not map that "
                                   "much (ulimit -v); give a smaller -e/--maxbytes or raise the limit",
                                   format_bytes(n), slot, std::strerror(err), format_bytes(held)));
    }
    reserved_.emplace(p, n);
    return p;
  }
  void release(int, void* p) noexcept override {
    const auto it = reserved_.find(p);
    if (it == reserved_.end()) return;
    ::munmap(it->first, it->second);
    reserved_.erase(it);
  }

  EventTiming* event_timing() override { return this; }
  const SelfObserved* self_observed() const override { return this; }
  bool simulated_clock() const override { return true; }
  // As NCCL, whose collectives it models: grouped send/recv cannot run in place.
  bool supports_in_place(Coll c) const override { return c != Coll::AllToAll && c != Coll::SendRecv; }

  void launch(std::span<const OpCall> calls) override {
    if (calls.size() != static_cast<std::size_t>(slots()))
      throw Error(ErrorCode::Internal, fmt::format("sim backend: {} calls for {} ranks", calls.size(), slots()));
    for (const OpCall& c : calls)
      if (c.coll != calls.front().coll || c.count != calls.front().count || c.dtype != calls.front().dtype ||
          c.root != calls.front().root)
        throw Error(ErrorCode::Internal, "sim backend: the ranks of one launch ask for different collectives");
    if (!timing_) return;  // warm-up (and anything untimed): not simulated
    if (launched_ >= timed_)
      throw Error(ErrorCode::Internal, fmt::format("sim backend: launch {} of {} timed", launched_ + 1, timed_));
    const model::CollRequest r = request_of(calls.front(), size());
    const CallKey key{r.coll, r.bytes, r.root};
    if (!(key == cache_key_)) {
      cache_.clear();
      cache_key_ = key;
    }
    const bool flow = setup_->fidelity == model::Fidelity::Flow;
    const std::size_t index = flow ? 0 : static_cast<std::size_t>(launched_);
    if (index >= cache_.size()) {
      cache_.push_back(simulate(r, static_cast<std::uint64_t>(index)));
      note_observed(cache_.back().outcome.plan.observed);
      ++new_simulations_;
    }
    loop_.push_back(index);
    times_us_.push_back(cache_[index].outcome.time_us);
    ++launched_;
  }

  void start_event_timing(int iters) override {
    timing_ = true;
    timed_ = iters;
    launched_ = 0;
    new_simulations_ = 0;
    times_us_.clear();
    loop_.clear();
  }

  std::vector<std::vector<double>> event_times_us() override {
    if (!timing_) return {};
    timing_ = false;
    // Every rank ends the simulated collective at its completion time.
    return std::vector<std::vector<double>>(static_cast<std::size_t>(slots()), times_us_);
  }

  nlohmann::json timed_observed() const override {
    if (loop_.empty()) return nullptr;
    std::vector<const model::CollOutcome*> distinct;
    nlohmann::json seeds = nlohmann::json::array();
    double wall_s = 0;
    std::set<std::size_t> seen;
    for (std::size_t i : loop_) {
      if (!seen.insert(i).second) continue;
      distinct.push_back(&cache_[i].outcome);
      seeds.push_back(cache_[i].seed);
      wall_s += cache_[i].outcome.wall_s;
    }
    const model::CollOutcome& first = *distinct.front();
    return {{"simulated", true},
            {"fidelity", model::fidelity_name(setup_->fidelity)},
            {"simulations", distinct.size()},
            {"reused", new_simulations_ == 0},
            {"seeds", seeds},
            {"algo", model::algo_name(first.plan.algo)},
            {"proto", model::proto_name(first.plan.proto)},
            {"channels", first.plan.channels},
            {"protocol_factor", first.plan.protocol_factor},
            {"priority", first.plan.priority},
            {"latency_us", first.latency_us},
            {"counters", mean_counters(distinct)},
            {"wall_s", wall_s},
            {"candidates", candidates_json(first.plan.candidates)},
            {"notes", first.plan.notes}};
  }

  std::optional<NcclLogSummary> observed_nccl() const override {
    if (observed_.empty()) return std::nullopt;
    NcclLogSummary all = observed_.front();
    for (std::size_t i = 1; i < observed_.size(); ++i) merge_nccl_log(all, observed_[i]);
    all.files = {"simulated"};
    return all;
  }

  void fill_input(int, void*, std::uint64_t, const CheckSpec&) override {}
  void fill_sentinel(int, void*, std::uint64_t) override {}
  std::int64_t count_wrong(int, const void*, const CheckSpec&) override {
    throw Error(ErrorCode::Internal, "sim backend: asked to check data, but it moves none");
  }

 private:
  struct Simulated {
    model::CollOutcome outcome;
    std::uint64_t seed = 0;
  };

  /// Iteration `index` of the cache's collective: packet level with the cluster's seeds + index.
  Simulated simulate(const model::CollRequest& r, std::uint64_t index) const {
    model::ClusterSpec c = setup_->cluster;
    c.fabric.seed += index;
    c.fabric.sw.ecmp_seed += index;
    return Simulated{model::simulate_collective(c, setup_->nccl, r, setup_->fidelity), c.fabric.seed};
  }

  /// Keeps what the simulated NCCL would log, once per distinct log (one communicator's rings
  /// serve every ring collective: the same log is not counted twice).
  void note_observed(const NcclLogSummary& s) {
    const std::string text = to_json(s).dump();
    if (observed_texts_.insert(text).second) observed_.push_back(s);
  }

  std::shared_ptr<const SimSetup> setup_;
  std::map<void*, std::size_t> reserved_;
  bool timing_ = false;
  int timed_ = 0;
  int launched_ = 0;
  int new_simulations_ = 0;            ///< simulations the current loop ran (0: all reused)
  std::vector<double> times_us_;       ///< simulated time of each timed launch of the loop
  std::vector<std::size_t> loop_;      ///< cache index behind each timed launch of the loop
  CallKey cache_key_{model::CollKind::AllReduce, ~std::uint64_t{0}, -1};
  std::vector<Simulated> cache_;       ///< simulations of cache_key_, by iteration (flow: one)
  std::vector<NcclLogSummary> observed_;
  std::set<std::string> observed_texts_;
};

}  // namespace

std::string version_text() { return fmt::format("ns-3 {}, simulated", RAILKIT_NS3_VERSION); }

std::vector<std::pair<std::string, std::string>> nccl_variables(char* const* envp) {
  std::vector<std::pair<std::string, std::string>> out;
  for (char* const* e = envp; e && *e; ++e) {
    const std::string_view kv(*e);
    const std::size_t eq = kv.find('=');
    if (eq == std::string_view::npos || !kv.starts_with("NCCL_")) continue;
    out.emplace_back(std::string(kv.substr(0, eq)), std::string(kv.substr(eq + 1)));
  }
  return out;
}

SimSetup prepare(const BenchOptions& o, const std::vector<std::pair<std::string, std::string>>& nccl_env) {
  SimSetup s;
  s.cluster_file = o.sim_cluster;
  s.sets = o.sim_sets;
  s.fidelity = model::parse_fidelity(o.sim_fidelity, "--fidelity");
  s.cluster = model::load_cluster(o.sim_cluster, o.sim_sets);
  s.nccl = model::read_nccl_settings(nccl_env);
  return s;
}

nlohmann::json run_json(const SimSetup& s, const std::string& machine) {
  const model::ClusterSpec& c = s.cluster;
  const model::TopologySpec& t = c.fabric.topology;
  const bool packet = s.fidelity == model::Fidelity::Packet;
  return {{"cluster",
           {{"name", c.fabric.name},
            {"file", s.cluster_file},
            {"nodes", c.nodes()},
            {"gpus_per_node", c.gpus_per_node()},
            {"gpus", c.gpus()},
            {"link_rate_Gbps", t.link_rate_bps / 1e9},
            {"link_delay_us", static_cast<double>(t.link_delay_ps) / 1e6},
            {"spines", t.spines},
            {"fabric_rate_Gbps", t.fabric_rate_bps / 1e9},
            {"oversubscription", t.oversubscription},
            {"nvlink_rate_Gbps", c.nvlink_rate_bps / 1e9},
            {"mtu_bytes", t.mtu_bytes},
            {"cc", model::cc_name(c.fabric.nic.cc)},
            {"document", c.source}}},
          {"sets", s.sets},
          {"fidelity", model::fidelity_name(s.fidelity)},
          {"seed", c.fabric.seed},
          {"ecmp_seed", c.fabric.sw.ecmp_seed},
          {"seed_per_iteration", packet},
          {"nccl", settings_json(s.nccl)},
          {"machine", machine},
          {"engine", version_text()}};
}

std::vector<std::string> node_names(const model::ClusterSpec& c) {
  std::vector<std::string> names;
  for (int n = 0; n < c.nodes(); ++n) names.push_back(fmt::format("n{}", n));
  return names;
}

std::string inert_warning(const model::NcclSettings& s) {
  if (s.inert.empty()) return {};
  std::string names;
  for (const std::string& n : s.inert) names += (names.empty() ? "" : ", ") + printable(n);
  return fmt::format("the simulator does not model {} (recorded as inert in run.sim.nccl.inert; they change nothing here)",
                     names);
}

model::CollRequest request_of(const OpCall& call, int nranks) {
  const std::uint64_t esz = info(call.dtype).size_bytes;
  const std::uint64_t n = static_cast<std::uint64_t>(std::max(nranks, 1));
  model::CollRequest r;
  r.coll = coll_kind(call.coll);
  const bool blocks = call.coll == Coll::AllGather || call.coll == Coll::ReduceScatter || call.coll == Coll::AllToAll;
  r.bytes = call.count * esz * (blocks ? n : 1);
  r.root = info(call.coll).has_root ? call.root : 0;
  return r;
}

std::unique_ptr<Communicator> make_communicator(std::shared_ptr<const SimSetup> setup) {
  return std::make_unique<SimCommunicator>(std::move(setup));
}

}  // namespace railkit::bench::sim
