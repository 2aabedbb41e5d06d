// railkit-bench's sim backend (bench/sim) on the real simulator: the harness over a
// SimCommunicator of a cluster file, compared with simulate_collective called directly. No
// stand-in for the simulator: every time here comes from sim/collective.
#include <gtest/gtest.h>

#include <sys/resource.h>

#include <cmath>
#include <cstdlib>
#include <string>
#include <vector>

#include "bench/harness.hpp"
#include "bench/lone_bootstrap.hpp"
#include "bench/sim/sim_communicator.hpp"
#include "core/error.hpp"

using namespace railkit::bench;
using railkit::ResultRecord;
using railkit::ResultsDocument;
namespace model = railkit::sim;

namespace {

const std::string kExample1to1 = std::string(RAILKIT_SOURCE_DIR) + "/sim/examples/cluster-4x8-1to1.yaml";
const std::string kSmall = std::string(RAILKIT_SOURCE_DIR) + "/tests/bench/fixtures/sim-cluster-2x4.yaml";

BenchOptions sim_options(const std::string& cluster, const std::string& fidelity) {
  BenchOptions o;
  o.backend = BackendChoice::Sim;
  o.sim_cluster = cluster;
  o.sim_fidelity = fidelity;
  o.check_passes = 0;  // what railkit-bench runs the sim backend with
  o.iters = 3;
  o.warmup_iters = 2;
  return o;
}

std::shared_ptr<const sim::SimSetup> setup_of(const BenchOptions& o,
                                              const std::vector<std::pair<std::string, std::string>>& env = {}) {
  return std::make_shared<const sim::SimSetup>(sim::prepare(o, env));
}

std::vector<ResultRecord> run_harness(const BenchOptions& o, Communicator& comm) {
  const auto boot = make_lone_bootstrap("simulating-host");
  Group all;
  for (int r = 0; r < comm.size(); ++r) all.ranks.push_back(r);
  const std::vector<Group> groups{all};
  Watchdog wd(*boot, 0, nullptr);
  ResultsSink sink(ResultsDocument{});
  Harness h(o, *boot, comm, groups, wd, sink, nullptr);
  EXPECT_EQ(h.run(make_plan(o, comm.size())), 0);
  return sink.snapshot().results;
}

std::uint64_t peak_rss_kib() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<std::uint64_t>(u.ru_maxrss);
}

}  // namespace

TEST(SimBackend, RequestIsNcclTestsSize) {
  // The simulator is asked for nccl-tests' size column (CollSizes.bytes) of each collective.
  const int n = 32;
  for (const CollInfo& ci : all_colls()) {
    for (DType t : {DType::Float, DType::Int8, DType::Double}) {
      const CollSizes s = coll_sizes(ci.coll, 1 << 20, info(t).size_bytes, n);
      const OpCall call{ci.coll, t, RedOp::Sum, 5, nullptr, nullptr, s.param_count, false};
      const model::CollRequest r = sim::request_of(call, n);
      EXPECT_EQ(r.bytes, s.bytes) << ci.name << " " << info(t).name;
      EXPECT_EQ(r.root, ci.has_root ? 5 : 0) << ci.name;
    }
  }
  const OpCall a2a{Coll::AllToAll, DType::Float, RedOp::Sum, 0, nullptr, nullptr, 100, false};
  EXPECT_EQ(sim::request_of(a2a, 4).coll, model::CollKind::AllToAll);
  EXPECT_EQ(sim::request_of(a2a, 4).bytes, 1600u);  // each rank's send buffer: 4 blocks of 100 floats
}

TEST(SimBackend, FlowRunOnTheExampleClusterIsTheSimulatorsTime) {
  BenchOptions o = sim_options(kExample1to1, "flow");
  o.min_bytes = 1 << 20;
  o.max_bytes = 16 << 20;
  o.step_factor = 4;
  const auto setup = setup_of(o);
  ASSERT_EQ(setup->cluster.gpus(), 32);
  const auto comm = sim::make_communicator(setup);
  EXPECT_EQ(comm->size(), 32);
  EXPECT_EQ(comm->slots(), 32);
  const std::vector<ResultRecord> rs = run_harness(o, *comm);
  ASSERT_EQ(rs.size(), 6u);  // 3 sizes x out-of-place and in-place
  for (const ResultRecord& r : rs) {
    SCOPED_TRACE(std::to_string(r.bytes) + (r.in_place ? " in place" : ""));
    const model::CollOutcome direct = model::simulate_collective(
        setup->cluster, setup->nccl, model::CollRequest{model::CollKind::AllReduce, r.bytes, 0}, model::Fidelity::Flow);
    EXPECT_NEAR(r.time_us.avg, direct.time_us, 1e-9 * direct.time_us);
    EXPECT_NEAR(r.time_us.min, direct.time_us, 1e-9 * direct.time_us);  // deterministic: every iteration alike
    EXPECT_NEAR(r.time_us.max, direct.time_us, 1e-9 * direct.time_us);
    EXPECT_DOUBLE_EQ(r.algbw_GBps, static_cast<double>(r.bytes) / r.time_us.avg / 1e3);
    EXPECT_DOUBLE_EQ(r.busbw_GBps, r.algbw_GBps * 2.0 * 31 / 32);
    EXPECT_FALSE(r.wrong.has_value()) << "nothing was checked, so nothing may read as passed";
    EXPECT_EQ(r.ranks.slowest_host.rfind('n', 0), 0u) << r.ranks.slowest_host;  // a simulated node
    ASSERT_TRUE(r.observed.is_object());
    EXPECT_EQ(r.observed["simulated"], true);
    EXPECT_EQ(r.observed["fidelity"], "flow");
    EXPECT_EQ(r.observed["simulations"], 1);
    EXPECT_EQ(r.observed["seeds"], nlohmann::json::array({1}));
    EXPECT_EQ(r.observed["reused"], r.in_place);  // in place repeats the out-of-place simulation
    EXPECT_EQ(r.observed["algo"], model::algo_name(direct.plan.algo));
    EXPECT_EQ(r.observed["channels"], direct.plan.channels);
    EXPECT_DOUBLE_EQ(r.observed["protocol_factor"].get<double>(), direct.plan.protocol_factor);
    ASSERT_EQ(r.observed["candidates"].size(), direct.plan.candidates.size());
    for (std::size_t i = 0; i < direct.plan.candidates.size(); ++i) {
      EXPECT_EQ(r.observed["candidates"][i]["algo"], model::algo_name(direct.plan.candidates[i].algo));
      EXPECT_DOUBLE_EQ(r.observed["candidates"][i]["predicted_us"].get<double>(), direct.plan.candidates[i].predicted_us);
    }
    EXPECT_DOUBLE_EQ(r.observed["counters"]["net_bytes"].get<double>(), static_cast<double>(direct.counters.net_bytes));
    for (const char* k : {"spine_bytes", "nvlink_bytes", "ecn_marked", "pause_tx", "drops", "retransmitted_packets",
                          "cnps", "packet_hops", "events"})
      EXPECT_TRUE(r.observed["counters"].contains(k)) << k;
  }
  const std::optional<railkit::NcclLogSummary> nccl = comm->self_observed()->observed_nccl();
  ASSERT_TRUE(nccl.has_value());
  EXPECT_EQ(nccl->files, std::vector<std::string>{"simulated"});
}

TEST(SimBackend, PacketIterationsUseSeedPlusIAndWarmupIsNotSimulated) {
  const BenchOptions o = sim_options(kSmall, "packet");
  const auto setup = setup_of(o);
  ASSERT_EQ(setup->cluster.gpus(), 8);
  const std::uint64_t seed = setup->cluster.fabric.seed;
  const auto comm = sim::make_communicator(setup);
  const CollSizes s = coll_sizes(Coll::AllToAll, 256 << 10, 4, 8);
  const std::vector<OpCall> calls(8, OpCall{Coll::AllToAll, DType::Float, RedOp::Sum, 0, nullptr, nullptr, s.param_count, false});
  comm->run(calls);  // warm-up: not simulated
  comm->run(calls);
  EXPECT_TRUE(comm->self_observed()->timed_observed().is_null());
  comm->event_timing()->start_event_timing(3);
  for (int i = 0; i < 3; ++i) comm->launch(calls);
  comm->complete();
  const std::vector<std::vector<double>> ev = comm->event_timing()->event_times_us();
  ASSERT_EQ(ev.size(), 8u);
  const nlohmann::json obs = comm->self_observed()->timed_observed();
  EXPECT_EQ(obs["simulations"], 3);  // one per timed iteration, none for the warm-ups
  EXPECT_EQ(obs["seeds"], nlohmann::json::array({seed, seed + 1, seed + 2}));
  EXPECT_EQ(obs["fidelity"], "packet");
  for (int i = 0; i < 3; ++i) {
    model::ClusterSpec c = setup->cluster;
    c.fabric.seed += static_cast<std::uint64_t>(i);
    c.fabric.sw.ecmp_seed += static_cast<std::uint64_t>(i);
    const model::CollOutcome direct = model::simulate_collective(
        c, setup->nccl, model::CollRequest{model::CollKind::AllToAll, s.bytes, 0}, model::Fidelity::Packet);
    for (const auto& slot : ev) {
      ASSERT_EQ(slot.size(), 3u);
      EXPECT_DOUBLE_EQ(slot[static_cast<std::size_t>(i)], direct.time_us) << "iteration " << i;
    }
  }
}

TEST(SimBackend, HarnessLoopTimeIsTheMeanSimulatedTime) {
  BenchOptions o = sim_options(kSmall, "packet");
  o.colls = {Coll::AllToAll};
  o.min_bytes = o.max_bytes = 256 << 10;
  const auto comm = sim::make_communicator(setup_of(o));
  const std::vector<ResultRecord> rs = run_harness(o, *comm);
  ASSERT_EQ(rs.size(), 1u);  // alltoall runs out-of-place only, as on NCCL
  const ResultRecord& r = rs.front();
  EXPECT_LE(r.time_us.min, r.time_us.avg);
  EXPECT_GE(r.time_us.max, r.time_us.avg);
  EXPECT_GT(r.time_us.avg, 1.0);    // a simulated alltoall of 256 KiB over 100 Gb/s takes tens of us,
  EXPECT_LT(r.time_us.avg, 1e4);    // whatever the host clock measured
  EXPECT_DOUBLE_EQ(r.busbw_GBps, r.algbw_GBps * 7.0 / 8);
}

TEST(SimBackend, BuffersAreNeverBackedOrTouched) {
  const auto comm = sim::make_communicator(setup_of(sim_options(kSmall, "flow")));
  const std::uint64_t before_kib = peak_rss_kib();
  std::vector<void*> bufs;
  for (int k = 0; k < 64; ++k) bufs.push_back(comm->allocate(k % 8, 1ull << 30));  // 64 GiB asked for
  for (void* p : bufs) {
    comm->fill_sentinel(0, p, 1ull << 30);  // the harness's page touch: a no-op here
    EXPECT_NE(p, nullptr);
  }
  std::sort(bufs.begin(), bufs.end());
  EXPECT_EQ(std::adjacent_find(bufs.begin(), bufs.end()), bufs.end()) << "addresses must be distinct";
  EXPECT_LT(peak_rss_kib() - before_kib, 64u << 10) << "the reservations may not cost memory";
  EXPECT_THROW(comm->count_wrong(0, bufs.front(), CheckSpec{}), railkit::Error);
  // Reserved, not readable or writable: anything that wrote into one would stop right there.
  EXPECT_DEATH(*static_cast<volatile char*>(bufs.front()) = 1, "");
  for (std::size_t k = 0; k < bufs.size(); ++k) comm->release(static_cast<int>(k % 8), bufs[k]);
}

TEST(SimBackend, NcclSettingsComeFromTheEnvironmentAndInertOnesAreNamed) {
  std::string a = "NCCL_ALGO=Ring", b = "NCCL_IB_HCA=mlx5_0", c = "PATH=/bin", d = "NCCL_PXN_DISABLE=1";
  char* envp[] = {a.data(), b.data(), c.data(), d.data(), nullptr};
  const auto env = sim::nccl_variables(envp);
  ASSERT_EQ(env.size(), 3u);
  EXPECT_EQ(env[1], (std::pair<std::string, std::string>{"NCCL_IB_HCA", "mlx5_0"}));
  BenchOptions o = sim_options(kSmall, "flow");
  o.sim_sets = {"seed=9", "topology.spines=1"};
  const auto setup = setup_of(o, env);
  EXPECT_EQ(setup->cluster.fabric.seed, 9u);
  EXPECT_EQ(setup->nccl.algos, std::vector<model::Algo>{model::Algo::Ring});
  EXPECT_TRUE(setup->nccl.pxn_disable);
  const std::string w = sim::inert_warning(setup->nccl);
  EXPECT_NE(w.find("NCCL_IB_HCA"), std::string::npos) << w;
  EXPECT_EQ(w.find('\n'), std::string::npos);
  const nlohmann::json j = sim::run_json(*setup, "the-machine");
  EXPECT_EQ(j["cluster"]["name"], "bench-test-2x4");
  EXPECT_EQ(j["cluster"]["file"], kSmall);
  EXPECT_EQ(j["cluster"]["nodes"], 2);
  EXPECT_EQ(j["cluster"]["gpus_per_node"], 4);
  EXPECT_EQ(j["cluster"]["spines"], 1);
  EXPECT_DOUBLE_EQ(j["cluster"]["link_rate_Gbps"].get<double>(), 100.0);
  // One spine instead of the file's two, its link still at 100 Gb/s: 2 x 100 Gb/s down, 100 up.
  EXPECT_DOUBLE_EQ(j["cluster"]["fabric_rate_Gbps"].get<double>(), 100.0);
  EXPECT_DOUBLE_EQ(j["cluster"]["oversubscription"].get<double>(), 2.0);
  EXPECT_TRUE(j["cluster"]["nvlink_rate_Gbps"].is_number());
  EXPECT_EQ(j["sets"], nlohmann::json::array({"seed=9", "topology.spines=1"}));
  EXPECT_EQ(j["fidelity"], "flow");
  EXPECT_EQ(j["seed"], 9);
  EXPECT_EQ(j["seed_per_iteration"], false);
  EXPECT_EQ(j["nccl"]["honoured"]["NCCL_ALGO"], "Ring");
  EXPECT_EQ(j["nccl"]["honoured"]["NCCL_PXN_DISABLE"], "1");
  EXPECT_NE(std::find(j["nccl"]["inert"].begin(), j["nccl"]["inert"].end(), "NCCL_IB_HCA"), j["nccl"]["inert"].end());
  EXPECT_EQ(j["machine"], "the-machine");
  EXPECT_EQ(sim::node_names(setup->cluster), (std::vector<std::string>{"n0", "n1"}));
}

TEST(SimBackend, BadClusterOrSettingIsAUsageError) {
  EXPECT_THROW(setup_of(sim_options("/no/such/cluster.yaml", "flow")), railkit::UsageError);
  BenchOptions o = sim_options(kSmall, "flow");
  o.sim_sets = {"topology.no_such_key=1"};
  EXPECT_THROW(setup_of(o), railkit::UsageError);
  EXPECT_THROW(setup_of(sim_options(kSmall, "flow"), {{"NCCL_ALGO", "NVLS"}}), railkit::UsageError);
  EXPECT_THROW(setup_of(sim_options(kSmall, "fluid")), railkit::UsageError);
}
