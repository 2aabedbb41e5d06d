// `railkit tune` on the simulator: what run_tune refuses before anything runs or is written
// (switch settings on a real backend, --dcqcn-root or --topo-root or a launcher with --backend
// sim, a cluster file that is missing, switch knobs that are not a set).
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "test_util.hpp"
#include "tuner/tune.hpp"
#include "tuner_test_util.hpp"

namespace railkit::tuner {
namespace {

namespace fs = std::filesystem;
using railkit::test::TempDir;
using railkit::test::usage_error_of;
using Args = std::vector<std::string>;

char* const kNoEnv[] = {nullptr};

struct Fixture {
  TempDir dir;
  fs::path cluster = dir.write("c.yaml", "name: c\nseed: 4\nnic: {priority: 5}\n");

  TuneOptions options(const std::string& space, Args bench_args) const {
    TuneOptions o;
    o.space = builtin_space(space);
    o.strategy = "grid";
    o.bench = "/bin/true";  // never run: every case is refused first
    o.bench_args = std::move(bench_args);
    o.launcher.kind = launch::LauncherKind::Local;
    o.out_dir = dir.path / "session";
    return o;
  }
  Args sim() const { return {"--backend", "sim", "--sim-cluster", cluster.string(), "--coll", "alltoall"}; }

  /// run_tune's UsageError; checks that nothing was written.
  std::string refusal(const TuneOptions& o) const {
    std::ostringstream progress;
    const std::string m = usage_error_of([&] { (void)run_tune(o, kNoEnv, progress, false, true); });
    EXPECT_FALSE(fs::exists(o.out_dir / "journal.jsonl")) << m;
    return m;
  }
};

TEST(SimTune, SwitchEcnIsRefusedOnARealBackend) {
  const Fixture f;
  const std::string want =
      "space switch-ecn: switch.ecn.kmin_bytes (and switch.ecn.kmax_bytes, switch.ecn.pmax) are each a setting of the "
      "fabric's switches: no host reaches a switch, so railkit tunes it only on the simulator (-- --backend sim "
      "--sim-cluster FILE) and a profile records the winner as advice to configure on the switches";
  TuneOptions mpi = f.options("switch-ecn", {"--backend", "mpi"});
  EXPECT_EQ(f.refusal(mpi), want);
  mpi.allow_inert = true;  // measuring noise is not the question: nothing can set a switch
  EXPECT_EQ(f.refusal(mpi), want);
  EXPECT_EQ(f.refusal(f.options("switch-ecn", {"--backend", "nccl"})), want);
  EXPECT_EQ(f.refusal(f.options("switch-ecn", {})), want);  // auto: a real backend, whichever
}

TEST(SimTune, SwitchKnobsComeAsASet) {
  const Fixture f;
  TuneOptions o = f.options("switch-ecn", f.sim());
  o.space.knobs.pop_back();  // no Pmax
  EXPECT_EQ(f.refusal(o),
            "space switch-ecn: has switch.ecn.kmin_bytes, switch.ecn.kmax_bytes but not switch.ecn.pmax: the simulator "
            "takes switch ECN Kmin, Kmax and Pmax together (switch.ecn.kmin_bytes, kmax_bytes, pmax)");
}

TEST(SimTune, SimRunsOneLocalProcess) {
  const Fixture f;
  TuneOptions o = f.options("dcqcn", f.sim());
  o.launcher.kind = launch::LauncherKind::Mpirun;
  EXPECT_NE(f.refusal(o).find("--launcher mpirun: --backend sim runs one railkit-bench process"), std::string::npos);
  o.launcher.kind = launch::LauncherKind::Local;
  o.launcher.np = 1;
  o.launcher.ppn = 0;
  o.dcqcn = DcqcnOnNodes{"/bin/railkit", "/", {}, 3};
  EXPECT_EQ(f.refusal(o),
            "--dcqcn-root /: with --backend sim the DCQCN knobs go to the simulated NICs (--sim-set nic.dcqcn.*) and no "
            "node is written; leave --dcqcn-root out");
  o.dcqcn.reset();
  o.topo.root = f.dir.path.string();
  EXPECT_EQ(f.refusal(o), "--topo-root " + f.dir.path.string() +
                              ": a simulated session measures no node (its cluster is the --sim-cluster file) and its "
                              "profile records no fingerprint; leave --topo-root out");
}

TEST(SimTune, DcqcnOnARealBackendStillNeedsItsRoot) {
  const Fixture f;
  EXPECT_EQ(f.refusal(f.options("dcqcn", {"--backend", "mpi"})),
            "space dcqcn has DCQCN knobs: say where they apply (--dcqcn-root)");
}

TEST(SimTune, TheClusterFileMustBeThere) {
  const Fixture f;
  EXPECT_EQ(f.refusal(f.options("nccl-net", {"--backend", "sim", "--coll", "alltoall"})),
            "bench arguments: --backend sim needs --sim-cluster FILE (the cluster it simulates)");
  const std::string missing = (f.dir.path / "none.yaml").string();
  EXPECT_EQ(f.refusal(f.options("nccl-net", {"--backend", "sim", "--sim-cluster", missing})),
            "bench arguments: --sim-cluster " + missing + ": no such file");
}

TEST(SimTune, OpenMpiKnobsCannotReachTheSimulator) {
  const Fixture f;
  const std::string m = f.refusal(f.options("ompi-coll", f.sim()));
  EXPECT_NE(m.find("cannot reach the sim backend"), std::string::npos) << m;
}

}  // namespace
}  // namespace railkit::tuner
