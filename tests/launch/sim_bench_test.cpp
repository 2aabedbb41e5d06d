// railkit-bench's simulated backend as the control plane drives it: the launcher it runs under
// (local, one process), the refusals of launchers and rank counts that make no sense for it, the
// --sim-set arguments that carry DCQCN and switch settings, and the cluster file's identity.
#include "launch/sim_bench.hpp"

#include <gtest/gtest.h>

#include <algorithm>

#include "launch/bench_run.hpp"
#include "test_util.hpp"

namespace railkit::launch {
namespace {

using Args = std::vector<std::string>;

const Args kSim{"--backend", "sim", "--sim-cluster", "c.yaml", "--coll", "alltoall"};

using test::usage_error_of;

TEST(SimBench, IsSimReadsTheLastBackend) {
  EXPECT_TRUE(is_sim(kSim));
  EXPECT_TRUE(is_sim({"--backend=sim"}));
  EXPECT_FALSE(is_sim({"--backend", "sim", "--backend", "mpi"}));
  EXPECT_FALSE(is_sim({"--coll", "sim"}));
  EXPECT_FALSE(is_sim({}));
}

TEST(SimBench, SimRunsUnderTheLocalLauncherAsOneProcess) {
  LauncherOptions l;  // mpirun, the default when --launcher is not given
  l.as_root = true;
  const LauncherOptions got = launcher_for_bench(l, false, kSim);
  EXPECT_EQ(got.kind, LauncherKind::Local);
  EXPECT_NO_THROW(got.validate());
  // The argv is railkit-bench itself: no mpirun, the environment goes through the process's own.
  const BenchConfig c{"pxn-off", {{"NCCL_PXN_DISABLE", "1"}}, {}};
  EXPECT_EQ(bench_argv(got, c, "rb", kSim, "r.json"),
            (Args{"rb", "--backend", "sim", "--sim-cluster", "c.yaml", "--coll", "alltoall", "--label", "pxn-off", "-J",
                  "r.json"}));
  LauncherOptions one;
  one.np = 1;
  EXPECT_EQ(launcher_for_bench(one, false, kSim).kind, LauncherKind::Local);
  LauncherOptions local;
  local.kind = LauncherKind::Local;
  EXPECT_EQ(launcher_for_bench(local, true, kSim).kind, LauncherKind::Local);
}

TEST(SimBench, RealBackendsKeepTheirLauncher) {
  LauncherOptions l;
  l.np = 4;
  const LauncherOptions got = launcher_for_bench(l, true, {"--backend", "mpi"});
  EXPECT_EQ(got.kind, LauncherKind::Mpirun);
  EXPECT_EQ(got.np, 4);
  EXPECT_EQ(launcher_for_bench(l, false, {}).kind, LauncherKind::Mpirun);
}

TEST(SimBench, SrunBindsTheRanksOfTheMpiBackendToCores) {
  LauncherOptions l;
  l.kind = LauncherKind::Srun;
  l.np = 2;
  const auto has_bind = [](const Args& argv) {
    return std::count(argv.begin(), argv.end(), std::string(kSrunMpiCpuBind)) == 1;
  };
  // --backend mpi (also as --backend=mpi, the last one counting): one core per rank.
  EXPECT_TRUE(has_bind(world_argv(launcher_for_bench(l, true, {"--backend", "mpi"}), {}, {"rb"})));
  EXPECT_TRUE(has_bind(world_argv(launcher_for_bench(l, true, {"--backend=nccl", "--backend=mpi"}), {}, {"rb"})));
  // nccl, auto or no backend named: NCCL places its own threads; nothing is added.
  EXPECT_FALSE(has_bind(world_argv(launcher_for_bench(l, true, {"--backend", "nccl"}), {}, {"rb"})));
  EXPECT_FALSE(has_bind(world_argv(launcher_for_bench(l, true, {}), {}, {"rb"})));
  // A binding in --launcher-args wins.
  LauncherOptions given = l;
  given.args = {"--cpu-bind=none"};
  const Args argv = world_argv(launcher_for_bench(given, true, {"--backend", "mpi"}), {}, {"rb"});
  EXPECT_FALSE(has_bind(argv));
  EXPECT_EQ(std::count(argv.begin(), argv.end(), std::string("--cpu-bind=none")), 1);
  // mpirun binds by itself: nothing srun-specific reaches it; per-node and one-host runs are not bound.
  LauncherOptions mpirun;
  mpirun.np = 2;
  EXPECT_FALSE(has_bind(world_argv(launcher_for_bench(mpirun, true, {"--backend", "mpi"}), {}, {"rb"})));
  const LauncherOptions bound = launcher_for_bench(l, true, {"--backend", "mpi"});
  EXPECT_FALSE(has_bind(per_node_argv(bound, {"rb"})));
  EXPECT_FALSE(has_bind(one_host_argv(bound, "h", {"rb"})));
}

TEST(SimBench, LaunchersAndRankCountsThatMakeNoSenseForSimAreRefused) {
  LauncherOptions m;
  EXPECT_EQ(usage_error_of([&] { (void)launcher_for_bench(m, true, kSim); }),
            "--launcher mpirun: --backend sim runs one railkit-bench process that simulates every rank of its "
            "--sim-cluster file; leave --launcher out (or use --launcher local)");
  LauncherOptions s;
  s.kind = LauncherKind::Srun;
  EXPECT_NE(usage_error_of([&] { (void)launcher_for_bench(s, true, kSim); }).find("--launcher srun: --backend sim"),
            std::string::npos);
  LauncherOptions np;
  np.np = 4;
  EXPECT_EQ(usage_error_of([&] { (void)launcher_for_bench(np, false, kSim); }),
            "--np 4: --backend sim runs one railkit-bench process that simulates every rank of its --sim-cluster file "
            "(the cluster file sets the ranks); leave --np out");
  LauncherOptions ppn;
  ppn.ppn = 8;
  EXPECT_NE(usage_error_of([&] { (void)launcher_for_bench(ppn, false, kSim); }).find("--ppn 8:"), std::string::npos);
  LauncherOptions hf;
  hf.hostfile = "hosts";
  EXPECT_NE(usage_error_of([&] { (void)launcher_for_bench(hf, false, kSim); }).find("--hostfile hosts:"), std::string::npos);
  LauncherOptions la;
  la.args = {"--bind-to", "none"};
  EXPECT_NE(usage_error_of([&] { (void)launcher_for_bench(la, false, kSim); }).find("--launcher-args --bind-to none:"),
            std::string::npos);
}

TEST(SimBench, ArgumentsOfTheSimulation) {
  const SimBenchArgs a = sim_bench_args({"--backend", "sim", "--sim-cluster=x.yaml", "--fidelity", "flow", "--sim-set",
                                         "seed=7", "--sim-set=nic.cc=none", "--sim-set", "seed=9"});
  EXPECT_EQ(a.cluster, "x.yaml");
  EXPECT_EQ(a.fidelity, "flow");
  EXPECT_EQ(a.seed, 9u);
  EXPECT_EQ(a.sets, (Args{"seed=7", "nic.cc=none", "seed=9"}));
  EXPECT_FALSE(sim_bench_args(kSim).seed);
  EXPECT_EQ(sim_bench_args(kSim).fidelity, "");
  EXPECT_EQ(usage_error_of([] { (void)sim_bench_args({"--sim-set", "seed=-1"}); }),
            "bench arguments: --sim-set: seed=-1: expected a non-negative integer");
}

TEST(SimBench, SimSetCarriesDcqcnUnderNicAndSwitchSettingsAsNamed) {
  EXPECT_EQ(sim_key("roce_rp.rpg_ai_rate"), "nic.dcqcn.roce_rp.rpg_ai_rate");
  EXPECT_EQ(sim_key("roce_np.min_time_between_cnps"), "nic.dcqcn.roce_np.min_time_between_cnps");
  EXPECT_EQ(sim_key("switch.ecn.kmin_bytes"), "switch.ecn.kmin_bytes");
  EXPECT_EQ(sim_set_args({{"roce_rp.rpg_ai_rate", "50"}, {"roce_np.min_time_between_cnps", "0"}},
                         {{"switch.ecn.pmax", "0.2"}, {"switch.ecn.kmin_bytes", "100000"}}),
            (Args{"--sim-set", "nic.dcqcn.roce_np.min_time_between_cnps=0", "--sim-set", "nic.dcqcn.roce_rp.rpg_ai_rate=50",
                  "--sim-set", "switch.ecn.kmin_bytes=100000", "--sim-set", "switch.ecn.pmax=0.2"}));
  EXPECT_TRUE(sim_set_args({}, {}).empty());
  EXPECT_EQ(sim_seed_args(12), (Args{"--sim-set", "seed=12"}));
}

TEST(SimBench, ClusterIdentityAndSeed) {
  test::TempDir d;
  const auto y = d.write("c.yaml", "name: c\nseed: 42\ntopology: {kind: rail_optimized, nodes: 4}\n");
  const SimCluster c = read_sim_cluster(y.string());
  EXPECT_EQ(c.path, y.string());
  EXPECT_EQ(c.hash.rfind("fnv1a64:", 0), 0u);
  EXPECT_EQ(c.hash.size(), 8u + 16u);
  EXPECT_EQ(c.seed, 42u);
  const auto y2 = d.write("d.yaml", "name: c\nseed: 43\ntopology: {kind: rail_optimized, nodes: 4}\n");
  EXPECT_NE(read_sim_cluster(y2.string()).hash, c.hash);  // one byte differs: another cluster
  EXPECT_EQ(sim_seed(SimBenchArgs{}, c), 42u);
  SimBenchArgs with_seed;
  with_seed.seed = 5;
  EXPECT_EQ(sim_seed(with_seed, c), 5u);
  EXPECT_EQ(sim_seed(SimBenchArgs{}, SimCluster{}), 1u);
  const auto j = d.write("e.json", R"({"topology": {"nodes": 2}})");
  EXPECT_FALSE(read_sim_cluster(j.string()).seed);
  EXPECT_EQ(usage_error_of([&] { (void)read_sim_cluster((d.path / "none.yaml").string()); }),
            "bench arguments: --sim-cluster " + (d.path / "none.yaml").string() + ": no such file");
  const auto bad = d.write("bad.yaml", "a: [1\n");
  EXPECT_NE(usage_error_of([&] { (void)read_sim_cluster(bad.string()); }).find("bench arguments: --sim-cluster "),
            std::string::npos);
}

TEST(SimBench, SimulatedDocuments) {
  ResultsDocument d;
  d.run.backend = "mpi";
  EXPECT_FALSE(is_simulated(d));
  EXPECT_EQ(simulated_fidelity(d), "");
  d.simulated = true;  // a document that says so is simulated whatever its backend
  EXPECT_TRUE(is_simulated(d));
  ResultsDocument s;
  s.run.backend = "sim";
  EXPECT_TRUE(is_simulated(s));
  s.run.sim = {{"fidelity", "flow"}, {"seed", 1}};
  EXPECT_EQ(simulated_fidelity(s), "flow");
  s.run.sim = {{"fidelity", 3}};
  EXPECT_EQ(simulated_fidelity(s), "");
}

TEST(SimBench, EvidenceRoundTripsAndNeedsTheClusterFile) {
  test::TempDir d;
  const auto y = d.write("c.yaml", "seed: 3\n");
  const SimEvidence e = sim_evidence({"--backend", "sim", "--sim-cluster", y.string(), "--fidelity", "flow"});
  EXPECT_EQ(e.cluster, y.string());
  EXPECT_EQ(e.seed, 3u);
  EXPECT_EQ(e.fidelity, "flow");
  const auto j = to_json(e);
  EXPECT_EQ(j["backend"], "sim");
  EXPECT_EQ(j["simulated"], true);
  EXPECT_EQ(sim_evidence_from_json(nlohmann::json::parse(j.dump()), "x"), e);
  SimEvidence nofid = e;
  nofid.fidelity.clear();
  EXPECT_TRUE(to_json(nofid)["fidelity"].is_null());
  EXPECT_EQ(sim_evidence_from_json(nlohmann::json::parse(to_json(nofid).dump()), "x"), nofid);
  EXPECT_EQ(usage_error_of([] { (void)sim_evidence({"--backend", "sim"}); }),
            "bench arguments: --backend sim needs --sim-cluster FILE (the cluster it simulates)");
}

}  // namespace
}  // namespace railkit::launch
