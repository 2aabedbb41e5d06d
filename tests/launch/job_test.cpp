// Job templates (launch/job): the batch script's lines for given specs, the MPIJob manifest read
// back through core's YAML reader, quoting of awkward bench arguments, and the refusals.
#include "launch/job.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/strings.hpp"
#include "core/yaml.hpp"

namespace railkit::launch {
namespace {

using nlohmann::json;

bool has_line(const std::string& text, const std::string& line) {
  for (const auto& l : split(text, '\n'))
    if (l == line) return true;
  return false;
}

/// The documents of a manifest (split at `---` lines), each parsed.
std::vector<json> documents(const std::string& text) {
  std::vector<json> out;
  std::string cur;
  for (const auto& l : split(text, '\n')) {
    if (l == "---") {
      json doc = parse_yaml(cur, "manifest");
      if (!doc.is_null()) out.push_back(std::move(doc));  // not the header comment
      cur.clear();
    } else {
      cur += l + "\n";
    }
  }
  if (!trim(cur).empty()) out.push_back(parse_yaml(cur, "manifest"));
  return out;
}

JobSpec mpijob(int nodes = 2, int gpus = 8) {
  JobSpec s;
  s.format = JobFormat::MpiJob;
  s.nodes = nodes;
  s.gpus_per_node = gpus;
  s.image = "registry.example/railkit:0.1";
  return s;
}

/// The line of the script that runs railkit-bench (the one after srun's).
std::string bench_line(const std::string& script) {
  const auto lines = split(script, '\n');
  for (std::size_t i = 0; i + 1 < lines.size(); ++i)
    if (lines[i].rfind("srun ", 0) == 0) return lines[i + 1];
  return "";
}

TEST(Job, SbatchShapeWithGpusPerTask) {
  JobSpec s;
  s.nodes = 4;
  s.gpus_per_node = 8;
  s.bench_args = {"-b", "8", "-e", "128M"};
  const std::string t = sbatch_script(s);
  EXPECT_EQ(t.rfind("#!/bin/bash\n", 0), 0u);
  EXPECT_TRUE(has_line(t, "#SBATCH --job-name=railkit-bench"));
  EXPECT_TRUE(has_line(t, "#SBATCH --nodes=4"));
  EXPECT_TRUE(has_line(t, "#SBATCH --ntasks-per-node=8"));
  EXPECT_TRUE(has_line(t, "#SBATCH --gpus-per-task=1"));
  EXPECT_TRUE(has_line(t, "#SBATCH --exclusive"));
  EXPECT_TRUE(has_line(t, "#SBATCH --output=%x-%j.out"));
  EXPECT_EQ(t.find("--gres"), std::string::npos);
  EXPECT_TRUE(has_line(t, "results=results/\"${SLURM_JOB_NAME}-${SLURM_JOB_ID}\""));
  EXPECT_TRUE(has_line(t, "srun --mpi=pmix --cpu-bind=none \\"));
  EXPECT_EQ(bench_line(t),
            "  railkit-bench --backend nccl -b 8 -e 128M --label \"${SLURM_JOB_NAME}-${SLURM_JOB_ID}\" -J "
            "\"$results/bench.json\"");
}

TEST(Job, SbatchGresNoGpusAndSharedNodes) {
  JobSpec s;
  s.gpus_per_node = 4;
  s.tasks_per_node = 2;
  s.gpu_request = GpuRequest::Gres;
  s.exclusive = false;
  std::string t = sbatch_script(s);
  EXPECT_TRUE(has_line(t, "#SBATCH --gres=gpu:4"));
  EXPECT_TRUE(has_line(t, "#SBATCH --ntasks-per-node=2"));
  EXPECT_EQ(t.find("--exclusive"), std::string::npos);

  s.gpus_per_node = 0;  // no GPU requested at all; the mpi backend
  t = sbatch_script(s);
  EXPECT_EQ(t.find("gpu"), std::string::npos) << t;
  EXPECT_NE(bench_line(t).find("--backend mpi"), std::string::npos);
  EXPECT_TRUE(has_line(t, "srun --mpi=pmix --cpu-bind=cores \\"));

  s.tasks_per_node = 0;  // no GPUs and no --tasks-per-node: one rank per node
  EXPECT_TRUE(has_line(sbatch_script(s), "#SBATCH --ntasks-per-node=1"));
}

TEST(Job, SbatchProfileRunsThroughProfileExec) {
  JobSpec s;
  s.profile = "/shared/profiles/it's.json";
  s.railkit = "/opt/railkit/bin/railkit";
  const std::string t = sbatch_script(s);
  EXPECT_TRUE(has_line(t, "  /opt/railkit/bin/railkit profile exec '/shared/profiles/it'\\''s.json' -- \\")) << t;
}

TEST(Job, SbatchAccept) {
  JobSpec s;
  s.accept = true;
  s.nodes = 2;
  s.gpus_per_node = 8;
  s.profile = "p.json";
  s.bench_args = {"-b", "64M", "-e", "1G"};
  const std::string t = sbatch_script(s);
  EXPECT_TRUE(has_line(t, "#SBATCH --job-name=railkit-accept"));
  EXPECT_TRUE(has_line(t, "scontrol show hostnames \"$SLURM_JOB_NODELIST\" > \"$results/hosts\""));
  EXPECT_TRUE(has_line(t, "railkit accept --launcher srun --hostfile \"$results/hosts\" --ppn 8 --out \"$results/accept\" "
                          "--junit \"$results/accept.xml\" --profile p.json --bench-args='--backend nccl -b 64M -e 1G'"))
      << t;
  EXPECT_EQ(t.find("srun --mpi"), std::string::npos);
}

TEST(Job, AwkwardBenchArgumentsAreQuotedForBash) {
  JobSpec s;
  s.bench_args = {"--label", "it's $(rm -rf /) `x` \"q\"\nnext", "", "-b", "8K", "a b", "*", "~"};
  const std::string t = sbatch_script(s);
  EXPECT_NE(t.find("  railkit-bench --backend nccl --label 'it'\\''s $(rm -rf /) `x` \"q\"\nnext' '' -b 8K 'a b' '*' '~' -J "
                   "\"$results/bench.json\"\n"),
            std::string::npos)
      << t;
  EXPECT_EQ(t.find("--label \"${SLURM"), std::string::npos);  // the user's label wins

  JobSpec m = mpijob();
  m.bench_args = s.bench_args;
  m.bench_args.push_back("\xc3\xa9");
  const auto docs = documents(mpijob_manifest(m));
  ASSERT_EQ(docs.size(), 1u);
  const json cmd = docs[0]["spec"]["mpiReplicaSpecs"]["Launcher"]["template"]["spec"]["containers"][0]["command"];
  std::vector<std::string> got = cmd.get<std::vector<std::string>>();
  const std::vector<std::string> tail(got.end() - 2 - static_cast<long>(m.bench_args.size()), got.end() - 2);
  EXPECT_EQ(tail, m.bench_args);  // read back byte for byte
  EXPECT_EQ(got.back(), "/results/railkit-bench.json");
}

TEST(Job, MpiJobShape) {
  JobSpec s = mpijob(3, 8);
  s.network = "default/rdma-net";
  s.bench_args = {"-b", "8"};
  const auto docs = documents(mpijob_manifest(s));
  ASSERT_EQ(docs.size(), 1u);
  const json& j = docs[0];
  EXPECT_EQ(j["apiVersion"], "kubeflow.org/v2beta1");
  EXPECT_EQ(j["kind"], "MPIJob");
  EXPECT_EQ(j["metadata"]["name"], "railkit-bench");
  EXPECT_EQ(j["spec"]["slotsPerWorker"], 8);
  EXPECT_EQ(j["spec"]["runPolicy"]["cleanPodPolicy"], "Running");
  EXPECT_EQ(j["spec"]["sshAuthMountPath"], "/root/.ssh");
  const json& l = j["spec"]["mpiReplicaSpecs"]["Launcher"];
  EXPECT_EQ(l["replicas"], 1);
  const json& lc = l["template"]["spec"]["containers"][0];
  EXPECT_EQ(lc["image"], s.image);
  EXPECT_EQ(lc["command"][0], "mpirun");
  EXPECT_EQ(lc["command"][3], "24");  // -np N*G
  EXPECT_FALSE(lc.contains("resources"));
  const json& w = j["spec"]["mpiReplicaSpecs"]["Worker"];
  EXPECT_EQ(w["replicas"], 3);
  EXPECT_EQ(w["template"]["metadata"]["annotations"]["k8s.v1.cni.cncf.io/networks"], "default/rdma-net");
  const json& wc = w["template"]["spec"]["containers"][0];
  EXPECT_EQ(wc["resources"]["limits"], (json{{"nvidia.com/gpu", 8}, {"rdma/rdma_shared_device_a", 1}}));
  EXPECT_EQ(wc["securityContext"]["capabilities"]["add"], json::array({"IPC_LOCK"}));
  EXPECT_EQ(wc["volumeMounts"][0], (json{{"name", "dshm"}, {"mountPath", "/dev/shm"}}));
  EXPECT_EQ(w["template"]["spec"]["volumes"][0], (json{{"name", "dshm"}, {"emptyDir", {{"medium", "Memory"}}}}));
  EXPECT_FALSE(wc.contains("envFrom"));
}

TEST(Job, MpiJobWithoutGpusOrRdmaAndWithProfile) {
  JobSpec s = mpijob(2, 0);
  s.tasks_per_node = 4;
  s.rdma_resource = "none";
  s.clean_pod_policy = "None";
  s.configmap_name = "railkit-bench-profile";
  s.configmap_yaml = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: railkit-bench-profile\ndata:\n  NCCL_IB_TC: \"106\"\n";
  s.profile_env_names = {"NCCL_IB_TC", "OMPI_MCA_btl"};
  const auto docs = documents(mpijob_manifest(s));
  ASSERT_EQ(docs.size(), 2u);
  EXPECT_EQ(docs[0]["kind"], "ConfigMap");
  const json& j = docs[1];
  EXPECT_EQ(j["spec"]["slotsPerWorker"], 4);
  EXPECT_EQ(j["spec"]["runPolicy"]["cleanPodPolicy"], "None");
  const json& wc = j["spec"]["mpiReplicaSpecs"]["Worker"]["template"]["spec"]["containers"][0];
  EXPECT_FALSE(wc.contains("resources"));
  EXPECT_EQ(wc["envFrom"][0]["configMapRef"]["name"], "railkit-bench-profile");
  const auto cmd = j["spec"]["mpiReplicaSpecs"]["Launcher"]["template"]["spec"]["containers"][0]["command"]
                       .get<std::vector<std::string>>();
  const std::string joined = join(cmd, " ");
  EXPECT_NE(joined.find("-np 8 --bind-to none -x NCCL_IB_TC -x OMPI_MCA_btl railkit-bench --backend mpi"),
            std::string::npos)
      << joined;
}

TEST(Job, MpiJobAcceptReadsTheProfileFromItsConfigMap) {
  JobSpec s = mpijob(4, 8);
  s.accept = true;
  s.results_pvc = "shared-results";
  s.configmap_name = "railkit-accept-profile";
  s.profile_json = "{\"schema\": \"railkit.profile/1\"}\n";
  const auto docs = documents(mpijob_manifest(s));
  ASSERT_EQ(docs.size(), 2u);
  EXPECT_EQ(docs[0]["metadata"]["name"], "railkit-accept-profile-doc");
  EXPECT_EQ(docs[0]["data"]["profile.json"], s.profile_json);
  const json& lspec = docs[1]["spec"]["mpiReplicaSpecs"]["Launcher"]["template"]["spec"];
  const auto cmd = lspec["containers"][0]["command"].get<std::vector<std::string>>();
  EXPECT_EQ(join(cmd, " "), "railkit accept --launcher mpirun --hostfile /etc/mpi/hostfile --ppn 8 --out "
                            "/results/railkit-accept --junit /results/railkit-accept.xml --profile "
                            "/etc/railkit/profile.json --bench-args=--backend nccl");
  EXPECT_EQ(lspec["volumes"][0]["persistentVolumeClaim"]["claimName"], "shared-results");
  EXPECT_EQ(lspec["volumes"][1]["configMap"]["name"], "railkit-accept-profile-doc");
}

void expect_usage(const JobSpec& s, const std::string& says) {
  try {
    (void)render_job(s);
    ADD_FAILURE() << "accepted; expected a refusal saying " << says;
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find(says), std::string::npos) << e.what();
    EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos) << "one line: " << e.what();
  }
}

TEST(Job, Refusals) {
  JobSpec s;
  s.bench_args = {"-J", "x.json"};
  expect_usage(s, "-J/--output_file is set by railkit job");
  s.bench_args = {"--output_file=x.json"};
  expect_usage(s, "-J/--output_file");
  s.bench_args = {"--backend", "mpi"};
  expect_usage(s, "--backend is set by railkit job");
  s.bench_args = {"--split", "MOD 8"};
  EXPECT_NO_THROW((void)render_job(s));  // a bench run may split
  s.accept = true;
  expect_usage(s, "--split is set by railkit job");
  s.bench_args = {"-N3"};
  expect_usage(s, "-N/--run_cycles");
  s.bench_args = {"--coll", "all_reduce all_gather"};
  expect_usage(s, "splits --bench-args at spaces");

  s = JobSpec{};
  s.nodes = 0;
  expect_usage(s, "--nodes 0");
  s = JobSpec{};
  s.tasks_per_node = 4;  // 8 GPUs, one per task
  expect_usage(s, "must equal --gpus-per-node 8");
  s.gpu_request = GpuRequest::Gres;
  EXPECT_NO_THROW((void)render_job(s));
  s.name = "my job";
  expect_usage(s, "--name 'my job'");
  s = JobSpec{};
  s.nodes = 1'000'000;
  expect_usage(s, "a typo?");

  JobSpec m = mpijob();
  m.image.clear();
  expect_usage(m, "--image: required");
  m = mpijob();
  m.name = "Railkit";
  expect_usage(m, "not a Kubernetes name");
  m.name = "1railkit";
  expect_usage(m, "must start with a letter");
  m.name = std::string(60, 'a');
  expect_usage(m, "longer than 63");
  m = mpijob();
  m.rdma_resource = "rdma shared";
  expect_usage(m, "--rdma-resource");
  m = mpijob();
  m.clean_pod_policy = "running";
  expect_usage(m, "--clean-pod-policy running");
  m = mpijob();
  m.accept = true;
  expect_usage(m, "needs --results-pvc");
  m = mpijob();
  m.bench_args = {"\xff"};
  expect_usage(m, "bench argument 1: the value is not valid UTF-8");
  EXPECT_THROW((void)parse_job_format("slurm"), UsageError);
  EXPECT_THROW((void)parse_gpu_request("gpus"), UsageError);
}

// Issue 32: a newline in --results-dir ended the script's comment, and the next line ran as a
// command (before the #SBATCH block ended); every value written into a script refuses control
// characters, in every format, and says so on one line.
TEST(Job, ControlCharactersInValuesWrittenIntoTheScriptAreRefused) {
  JobSpec s;
  s.results_dir = "results\nrm -rf ~ #";
  expect_usage(s, "--results-dir results\\x0arm -rf ~ #: holds a control character");
  s = JobSpec{};
  s.results_dir = "r\rx";
  expect_usage(s, "--results-dir");
  s = JobSpec{};
  s.profile = "p.json\n#SBATCH --nodes=99";
  expect_usage(s, "--profile");
  s = JobSpec{};
  s.bench = std::string("railkit-bench\0x", 15);
  expect_usage(s, "--bench");
  JobSpec m = mpijob();
  m.railkit = "railkit\x1b[2J";
  expect_usage(m, "--railkit");
  m = mpijob();
  m.bench = "bench\n";
  expect_usage(m, "--bench");
  m = mpijob();
  m.name = "job\nrm -rf ~";  // refused as a name, and the refusal is one line
  expect_usage(m, "--name 'job\\x0arm -rf ~'");
  s = JobSpec{};
  s.accept = true;
  s.bench_args = {"-b\n8"};
  expect_usage(s, "bench argument '-b\\x0a8'");

  s = JobSpec{};  // awkward but printable: quoted in the command, plain text in the comment
  s.results_dir = "/shared/it's $(x) results";
  const std::string t = render_job(s);
  EXPECT_TRUE(has_line(t, "# results: /shared/it's $(x) results/<job name>-<job id>/ (on a file system every node shares)."))
      << t;
  EXPECT_TRUE(has_line(t, "results='/shared/it'\\''s $(x) results'/\"${SLURM_JOB_NAME}-${SLURM_JOB_ID}\"")) << t;
}

TEST(Job, Dns1123Labels) {
  EXPECT_TRUE(is_dns1123_label("railkit-bench-2"));
  EXPECT_TRUE(is_dns1123_label(std::string(63, 'a')));
  EXPECT_FALSE(is_dns1123_label(std::string(64, 'a')));
  EXPECT_FALSE(is_dns1123_label(""));
  EXPECT_FALSE(is_dns1123_label("-a"));
  EXPECT_FALSE(is_dns1123_label("a-"));
  EXPECT_FALSE(is_dns1123_label("a.b"));
  EXPECT_FALSE(is_dns1123_label("A"));
}

}  // namespace
}  // namespace railkit::launch
