// The launcher table and one railkit-bench launch's argv: mpirun, srun and local, the
// environment passed to every rank, per-node and one-host commands, the bench-argument matcher,
// and the telling line of a failed launch's stderr.
#include "launch/bench_run.hpp"

#include <gtest/gtest.h>

#include "core/error.hpp"

namespace railkit::launch {
namespace {

using Args = std::vector<std::string>;

void check_bench_args_sweep(const std::vector<std::string>& args) { check_bench_args(args, "sweep"); }

LauncherOptions mpirun_opts() {
  LauncherOptions l;
  l.kind = LauncherKind::Mpirun;
  l.np = 4;
  l.cpus = 2;
  return l;
}

TEST(Launch, MpirunSingleHost) {
  LauncherOptions l = mpirun_opts();
  l.as_root = true;
  const BenchConfig c{"x", {{"NCCL_ALGO", "Ring"}, {"NCCL_IB_HCA", "=mlx5_0:1,mlx5_1:1"}}, {"-n", "5"}};
  EXPECT_EQ(bench_argv(l, c, "/b/railkit-bench", {"-b", "8"}, "/o/r.json"),
            (Args{"mpirun", "--allow-run-as-root", "--oversubscribe", "-np", "4", "-x", "NCCL_ALGO=Ring", "-x",
                  "NCCL_IB_HCA==mlx5_0:1,mlx5_1:1", "/b/railkit-bench", "-b", "8", "-n", "5", "--label", "x", "-J",
                  "/o/r.json"}));
}

TEST(Launch, MpirunWithHostfile) {
  LauncherOptions l = mpirun_opts();
  l.np = 2;
  l.ppn = 1;
  l.hostfile = "hosts";
  l.args = {"--bind-to", "numa"};
  const BenchConfig c{"x", {}, {}};
  EXPECT_EQ(bench_argv(l, c, "rb", {"--label", "mine"}, "r.json"),
            (Args{"mpirun", "-np", "2", "-N", "1", "--hostfile", "hosts", "--bind-to", "numa", "rb", "--label", "mine",
                  "-J", "r.json"}));
  l.np = 16;  // more ranks than this machine's cores: oversubscribe even with a hostfile
  EXPECT_EQ(bench_argv(l, c, "rb", {}, "r.json")[1], "--oversubscribe");
}

TEST(Launch, Srun) {
  LauncherOptions l;
  l.kind = LauncherKind::Srun;
  l.np = 16;
  l.ppn = 8;
  l.args = {"--mpi=pmix"};
  const BenchConfig c{"x", {{"NCCL_ALGO", "Ring"}, {"NCCL_IB_HCA", "=mlx5_0:1,mlx5_1:1"}}, {}};
  EXPECT_EQ(bench_argv(l, c, "rb", {}, "r.json"),
            (Args{"srun", "--ntasks=16", "--ntasks-per-node=8", "--mpi=pmix", "--export=ALL,NCCL_ALGO=Ring,NCCL_IB_HCA",
                  "rb", "--label", "x", "-J", "r.json"}));
}

TEST(Launch, Local) {
  LauncherOptions l;
  l.kind = LauncherKind::Local;
  EXPECT_EQ(bench_argv(l, BenchConfig{"x", {{"A", "1"}}, {}}, "rb", {"-b", "8"}, "r.json"),
            (Args{"rb", "-b", "8", "--label", "x", "-J", "r.json"}));
}

TEST(Launch, Validation) {
  LauncherOptions l;
  l.kind = LauncherKind::Local;
  l.np = 2;
  EXPECT_THROW(l.validate(), UsageError);
  l.np = 1;
  EXPECT_NO_THROW(l.validate());
  l.hostfile = "h";
  EXPECT_THROW(l.validate(), UsageError);
  LauncherOptions m = mpirun_opts();
  m.ppn = 8;
  EXPECT_THROW(m.validate(), UsageError);
  EXPECT_THROW(parse_launcher("ssh"), UsageError);
  EXPECT_EQ(parse_launcher("srun"), LauncherKind::Srun);
  EXPECT_THROW(check_bench_args_sweep({"-b", "8", "-J", "x.json"}), UsageError);
  EXPECT_THROW(check_bench_args_sweep({"-Jx.json"}), UsageError);
  EXPECT_THROW(check_bench_args_sweep({"--output_file=x.json"}), UsageError);
  EXPECT_NO_THROW(check_bench_args_sweep({"-b", "8", "--label", "J"}));
}

TEST(Launch, PerNodeAndOneHost) {
  LauncherOptions m = mpirun_opts();
  m.as_root = true;
  m.hostfile = "hosts";
  EXPECT_EQ(per_node_argv(m, {"railkit", "dcqcn", "show"}),
            (Args{"mpirun", "--allow-run-as-root", "--hostfile", "hosts", "--map-by", "ppr:1:node", "railkit", "dcqcn",
                  "show"}));
  m.args = {"--mca", "btl", "self,vader,tcp"};
  EXPECT_EQ(one_host_argv(m, "node7", {"railkit", "topo"}),
            (Args{"mpirun", "--allow-run-as-root", "-np", "1", "--hostfile", "hosts", "--host", "node7", "--mca", "btl",
                  "self,vader,tcp", "railkit", "topo"}));
  m.hostfile.clear();
  m.args.clear();
  EXPECT_EQ(one_host_argv(m, "", {"railkit", "topo"}), (Args{"mpirun", "--allow-run-as-root", "-np", "1", "railkit", "topo"}));
  LauncherOptions s;
  s.kind = LauncherKind::Srun;
  EXPECT_EQ(per_node_argv(s, {"x"}), (Args{"srun", "--ntasks-per-node=1", "x"}));
  EXPECT_EQ(one_host_argv(s, "n1", {"x"}), (Args{"srun", "--ntasks=1", "--nodes=1", "--nodelist=n1", "x"}));
  LauncherOptions l;
  l.kind = LauncherKind::Local;
  EXPECT_EQ(per_node_argv(l, {"x"}), (Args{"x"}));
  EXPECT_EQ(one_host_argv(l, "n1", {"x"}), (Args{"x"}));
}

TEST(Launch, AvailabilityIsCheckedOnThePath) {
  LauncherOptions l;
  l.kind = LauncherKind::Srun;
  char path_var[] = "PATH=/nonexistent-railkit-dir";
  char* env[] = {path_var, nullptr};
  try {
    check_available(l, env);
    FAIL() << "srun found on an empty PATH";
  } catch (const UnavailableError& e) {
    EXPECT_NE(std::string(e.what()).find("--launcher srun: srun is not on the PATH (install Slurm"), std::string::npos)
        << e.what();
  }
  l.kind = LauncherKind::Local;
  EXPECT_NO_THROW(check_available(l, env));
}

TEST(Launch, SetsFlagMatchesShortLongAndAttachedForms) {
  EXPECT_TRUE(sets_flag({"-n", "5"}, {"-n", "--iters"}));
  EXPECT_TRUE(sets_flag({"-n5"}, {"-n"}));
  EXPECT_TRUE(sets_flag({"--iters=5"}, {"--iters"}));
  EXPECT_FALSE(sets_flag({"--itersx"}, {"--iters"}));
  EXPECT_FALSE(sets_flag({"--nonblocking"}, {"-n"}));
  EXPECT_FALSE(sets_flag({"-b", "8"}, {"-n", "--iters"}));
}

}  // namespace
}  // namespace railkit::launch

namespace railkit::launch {
namespace {

const char* kBox =
    "--------------------------------------------------------------------------\n"
    "Primary job  terminated normally, but 1 process returned\n"
    "a non-zero exit code. Per user-direction, the job has been aborted.\n"
    "--------------------------------------------------------------------------\n";
const char* kMsg = "-d/--datatype 'nosuchtype': unknown datatype (int8 float double)";

TEST(TellingLine, RankErrorBeforeOrAfterMpirunsBox) {
  const std::string want = std::string("railkit-bench: error: ") + kMsg;
  EXPECT_EQ(telling_stderr_line(want + "\n" + kBox), want);
  EXPECT_EQ(telling_stderr_line(std::string(kBox) + want + "\n"), want);
}

TEST(TellingLine, LineCutByMpirunsBoxIsJoined) {
  // Captured from mpirun 4.1: rank 0's unbuffered stderr interleaved with mpirun's box.
  const std::string tail = std::string("railkit-bench: error: ") + kBox + kMsg + "\n" +
                           "--------------------------------------------------------------------------\n"
                           "mpirun detected that one or more processes exited with non-zero status, thus causing\n"
                           "the job to be terminated. The first process to do so was:\n\n"
                           "  Process name: [[24778,1],2]\n  Exit code:    6\n"
                           "--------------------------------------------------------------------------\n";
  EXPECT_EQ(telling_stderr_line(tail), std::string("railkit-bench: error: ") + kMsg);
}

TEST(TellingLine, FallsBackToTheLastLine) {
  EXPECT_EQ(telling_stderr_line(kBox), "a non-zero exit code. Per user-direction, the job has been aborted.");
  EXPECT_EQ(telling_stderr_line("one\ntwo\n"), "two");
  EXPECT_EQ(telling_stderr_line(""), "");
}

}  // namespace
}  // namespace railkit::launch
