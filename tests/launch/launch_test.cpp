// The launcher table and one railkit-bench launch's argv: mpirun, srun and local, the
// environment passed to every rank, per-node and one-host commands, the bench-argument matcher,
// and the telling line of a failed launch's stderr.
#include "launch/bench_run.hpp"

#include <gtest/gtest.h>

#include <filesystem>

#include "core/bench_flags.hpp"
#include "core/error.hpp"
#include "core/atomic_file.hpp"
#include "launch/preflight.hpp"
#include "test_util.hpp"

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

TEST(Launch, SrunPassesPmixUnlessTheLauncherArgumentsChooseThePlugin) {
  LauncherOptions l;
  l.kind = LauncherKind::Srun;
  l.np = 2;
  l.args = {"--partition", "p"};
  EXPECT_EQ(world_argv(l, {{"A", "1"}}, {"rb"}),
            (Args{"srun", "--ntasks=2", "--mpi=pmix", "--partition", "p", "--export=ALL,A=1", "rb"}));
  EXPECT_EQ(per_node_argv(l, {"x"}), (Args{"srun", "--ntasks-per-node=1", "--mpi=pmix", "--partition", "p", "x"}));
  EXPECT_EQ(one_host_argv(l, "", {"x"}), (Args{"srun", "--ntasks=1", "--nodes=1", "--mpi=pmix", "--partition", "p", "x"}));
  l.args = {"--mpi", "pmi2"};  // the separate form
  EXPECT_EQ(world_argv(l, {}, {"rb"}), (Args{"srun", "--ntasks=2", "--mpi", "pmi2", "--export=ALL", "rb"}));
  l.args = {"--mpi=none"};
  EXPECT_EQ(per_node_argv(l, {"x"}), (Args{"srun", "--ntasks-per-node=1", "--mpi=none", "x"}));
  EXPECT_EQ(one_host_argv(l, "n1", {"x"}), (Args{"srun", "--ntasks=1", "--nodes=1", "--nodelist=n1", "--mpi=none", "x"}));
  l.args = {"--mpix"};  // not the flag
  EXPECT_EQ(world_argv(l, {}, {"rb"})[2], "--mpi=pmix");
  LauncherOptions m = mpirun_opts();  // mpirun never gets it
  for (const auto& a : world_argv(m, {}, {"rb"})) EXPECT_EQ(a.find("--mpi"), std::string::npos) << a;
}

TEST(Launch, SrunTrialJobIsTheRunsJobRunningTrue) {
  LauncherOptions l;
  l.kind = LauncherKind::Srun;
  l.np = 4;
  l.ppn = 2;
  l.hostfile = "hosts";
  l.args = {"--partition", "gpu"};
  EXPECT_EQ(srun_trial_argv(l), (Args{"srun", "--job-name=railkit-preflight", "--ntasks=4", "--ntasks-per-node=2",
                                      "--nodefile=hosts", "--mpi=pmix", "--partition", "gpu", "--export=ALL", "true"}));
}

/// A directory of fake Slurm clients (shell scripts) for the preflight.
struct FakeSlurm {
  test::TempDir dir{"railkit-preflight-test"};
  std::string path_var;
  std::vector<char*> env;
  void program(const std::string& name, const std::string& body) {
    const auto p = dir.write(name, "#!/bin/sh\n" + body + "\n");
    std::filesystem::permissions(p, std::filesystem::perms::owner_all);
  }
  char* const* envp(const std::string& conf = "") {
    path_var = "PATH=" + dir.path.string() + ":/usr/bin:/bin";
    conf_var = "SLURM_CONF=" + conf;
    env = {path_var.data()};
    if (!conf.empty()) env.push_back(conf_var.data());
    env.push_back(nullptr);
    return env.data();
  }
  std::string conf_var;
};

std::string preflight_error(const LauncherOptions& l, char* const* envp, const PreflightOptions& o = {}) {
  try {
    preflight(l, envp, o);
  } catch (const UnavailableError& e) {
    return e.what();
  }
  return "";
}

TEST(Preflight, SrunChecksTheControllerThenATrialJob) {
  LauncherOptions l;
  l.kind = LauncherKind::Srun;
  l.np = 2;
  FakeSlurm f;
  const std::string log = (f.dir.path / "srun.log").string();
  f.program("srun", "echo \"$@\" >> " + log + "; exit 0");
  f.program("scontrol", "echo \"Slurmctld(primary) at c1 is DOWN\"; echo '** RESTORE SLURMCTLD **'; exit 1");
  std::string e = preflight_error(l, f.envp("/nonexistent/slurm.conf"));
  EXPECT_EQ(e, "--launcher srun: no Slurm controller answers (SLURM_CONF=/nonexistent/slurm.conf): cannot read the "
               "configuration file");
  const std::string conf = f.dir.write("slurm.conf", "").string();
  e = preflight_error(l, f.envp(conf));
  EXPECT_EQ(e, "--launcher srun: no Slurm controller answers (SLURM_CONF=" + conf +
                   "): scontrol ping: exit code 1: Slurmctld(primary) at c1 is DOWN");
  EXPECT_FALSE(std::filesystem::exists(log)) << "a job was tried although no controller answers";
  EXPECT_NE(preflight_error(l, f.envp()).find("(SLURM_CONF unset)"), std::string::npos);

  f.program("scontrol", "echo \"Slurmctld(primary) at c1 is UP\"");
  EXPECT_EQ(preflight_error(l, f.envp()), "");
  EXPECT_EQ(read_file(log), "--job-name=railkit-preflight --ntasks=2 --mpi=pmix --export=ALL true\n");

  f.program("srun", "echo \"srun: error: Unable to allocate resources: Invalid partition name specified\" >&2; exit 1");
  l.args = {"--partition", "nosuch"};
  e = preflight_error(l, f.envp(conf));
  EXPECT_EQ(e, "--launcher srun: a job with the run's launcher options cannot start (srun --job-name=railkit-preflight "
               "--ntasks=2 --mpi=pmix --partition nosuch --export=ALL true; SLURM_CONF=" +
                   conf +
                   "): exit code 1: srun: error: Unable to allocate resources: Invalid partition name specified");

  f.program("srun", "echo \"srun: job 7 queued and waiting for resources\" >&2; exec sleep 30");
  PreflightOptions quick;
  quick.job_timeout_s = 0.5;
  e = preflight_error(l, f.envp(), quick);
  EXPECT_NE(e.find("cannot start"), std::string::npos) << e;
  EXPECT_NE(e.find("it did not start and end within 0.5 s (srun: job 7 queued and waiting for resources)"),
            std::string::npos)
      << e;
}

TEST(Preflight, MissingLauncherAndOtherLaunchers) {
  LauncherOptions l;
  l.kind = LauncherKind::Srun;
  char path_var[] = "PATH=/nonexistent-railkit-dir";
  char* env[] = {path_var, nullptr};
  EXPECT_NE(preflight_error(l, env).find("--launcher srun: srun is not on the PATH"), std::string::npos);
  l.kind = LauncherKind::Mpirun;
  EXPECT_NE(preflight_error(l, env).find("--launcher mpirun: mpirun is not on the PATH"), std::string::npos);
  l.kind = LauncherKind::Local;
  EXPECT_EQ(preflight_error(l, env), "");
  l.np = 3;
  EXPECT_THROW(preflight(l, env), UsageError);
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
  EXPECT_EQ(per_node_argv(s, {"x"}), (Args{"srun", "--ntasks-per-node=1", "--mpi=pmix", "x"}));
  EXPECT_EQ(one_host_argv(s, "n1", {"x"}), (Args{"srun", "--ntasks=1", "--nodes=1", "--nodelist=n1", "--mpi=pmix", "x"}));
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
  // The control plane asks core's bench flags table (sets_bench_flag), which reads -n/--iters as CLI11 does.
  EXPECT_TRUE(sets_bench_flag({"-n", "5"}, BenchFlag::Iters));
  EXPECT_TRUE(sets_bench_flag({"-n5"}, BenchFlag::Iters));
  EXPECT_TRUE(sets_bench_flag({"--iters=5"}, BenchFlag::Iters));
  EXPECT_FALSE(sets_bench_flag({"--itersx"}, BenchFlag::Iters));
  EXPECT_FALSE(sets_bench_flag({"--nonblocking"}, BenchFlag::Iters));
  EXPECT_FALSE(sets_bench_flag({"-b", "8"}, BenchFlag::Iters));
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
