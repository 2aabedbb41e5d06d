// `railkit job`: parses the flags into a launch::JobSpec, adds what the profile gives (its
// ConfigMap through profiles/consume's k8s-configmap export, the names of its variables, the
// document for accept) and writes launch/job's template to stdout or --out (atomically).
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "apps/railkit/launcher_flags.hpp"
#include "apps/railkit/subcommands.hpp"
#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "core/profile.hpp"
#include "core/strings.hpp"
#include "launch/job.hpp"
#include "profiles/consume.hpp"

namespace railkit::app {
namespace {

/// Flags of `railkit job`, as given, and the options registered for the format-specific ones.
struct JobCli {
  launch::JobSpec spec;
  std::string format;
  std::string gpu_request = "gpus-per-task";
  bool no_exclusive = false;
  std::string out;
  std::vector<CLI::Option*> sbatch_only, mpijob_only;
};

/// Refuses a flag of the other format (given, it would change nothing).
void check_format_flags(const JobCli& cli) {
  const bool sbatch = cli.spec.format == launch::JobFormat::Sbatch;
  for (const CLI::Option* o : sbatch ? cli.mpijob_only : cli.sbatch_only)
    if (o->count() > 0)
      throw UsageError(fmt::format("{}: applies to --format {} only", o->get_name(), sbatch ? "mpijob" : "sbatch"));
}

/// What --profile adds to the spec. sbatch: the job's nodes read the file at that path (checked
/// here when this machine has it); mpijob: its settings.env as a ConfigMap, and for accept the
/// document itself.
void add_profile(launch::JobSpec& spec) {
  const std::string& path = spec.profile;
  std::error_code ec;
  if (spec.format == launch::JobFormat::Sbatch && !std::filesystem::exists(path, ec)) {
    std::cerr << "railkit: warning: --profile " << profiles::display(path)
              << ": not found here; the job's nodes must find it at that path\n";
    return;
  }
  const ProfileDocument p = load_profile(path);
  warn_all(p.warnings);
  if (p.env.empty() && !spec.accept)
    throw UsageError(fmt::format("--profile {}: settings.env is empty, nothing for the job to apply (with --accept "
                                 "its expectations are used)",
                                 profiles::display(path)));
  if (spec.format == launch::JobFormat::Sbatch) return;
  spec.configmap_name = launch::job_name(spec) + "-profile";
  if (!launch::is_dns1123_label(spec.configmap_name) || spec.configmap_name.size() > 59)
    throw UsageError(fmt::format("--name {}: too long for the profile's ConfigMap name ({}); give a shorter --name",
                                 profiles::display(launch::job_name(spec)), spec.configmap_name));
  if (!p.env.empty()) {
    const profiles::Rendered r = profiles::export_profile(p, profiles::ExportFormat::K8sConfigMap, {spec.configmap_name});
    warn_all(r.warnings);
    spec.configmap_yaml = r.text;
    for (const auto& [k, v] : p.env) spec.profile_env_names.push_back(k);
  }
  if (spec.accept) spec.profile_json = read_file(path);
}

int run_job(JobCli& cli) {
  launch::JobSpec& spec = cli.spec;
  spec.format = launch::parse_job_format(cli.format);
  spec.gpu_request = launch::parse_gpu_request(cli.gpu_request);
  spec.exclusive = !cli.no_exclusive;
  check_format_flags(cli);
  launch::validate(spec);  // the flags first, before the profile is read
  const bool to_file = !cli.out.empty() && cli.out != "-";
  if (to_file) (void)write_target(cli.out);  // a directory or device: refused before anything is read
  if (!spec.profile.empty()) add_profile(spec);
  const std::string text = launch::render_job(spec);
  if (!to_file) {
    std::cout << text << std::flush;
    return 0;
  }
  std::error_code ec;
  if (!spec.profile.empty() && std::filesystem::equivalent(write_target(cli.out), spec.profile, ec))
    throw UsageError(fmt::format("--out {}: that is the profile being read; write to another file", cli.out));
  write_file_atomic(cli.out, text);
  std::cerr << fmt::format("railkit: wrote {}\n", cli.out);
  return 0;
}

}  // namespace

std::function<int()> setup_job(CLI::App& app) {
  auto cli = std::make_shared<JobCli>();
  launch::JobSpec& s = cli->spec;
  app.add_option("--format", cli->format, "sbatch | mpijob")->check(CLI::IsMember({"sbatch", "mpijob"}))->required();
  app.add_option("--nodes", s.nodes, "nodes (N)")->check(positive())->capture_default_str();
  app.add_option("--gpus-per-node", s.gpus_per_node, "GPUs per node (G); 0: none requested, the mpi backend runs")
      ->check(non_negative())
      ->capture_default_str();
  app.add_option("--tasks-per-node", s.tasks_per_node, "ranks per node (default: G, or 1 with no GPUs)")->check(positive());
  app.add_option("--name", s.name, "job name / metadata.name (default: railkit-bench, railkit-accept with --accept)");
  app.add_option("--profile", s.profile,
                 "a railkit.profile/1: sbatch runs the bench through `railkit profile exec P`; mpijob puts settings.env "
                 "in a ConfigMap (envFrom); with --accept, railkit accept --profile");
  app.add_flag("--accept", s.accept, "run railkit accept over the job's nodes instead of one railkit-bench run");
  app.add_option("--out", cli->out, "write to FILE (atomically) instead of stdout");
  app.add_option("--railkit", s.railkit, "the railkit program the job runs")->capture_default_str();
  app.add_option("--bench", s.bench, "the railkit-bench program the job runs")->capture_default_str();
  cli->sbatch_only = {
      app.add_option("--gpu-request", cli->gpu_request, "sbatch: gpus-per-task (--gpus-per-task=1) | gres (--gres=gpu:G)")
          ->check(CLI::IsMember({"gpus-per-task", "gres"}))
          ->capture_default_str(),
      app.add_flag("--no-exclusive", cli->no_exclusive, "sbatch: share the nodes (no #SBATCH --exclusive)"),
      app.add_option("--results-dir", s.results_dir, "sbatch: results go to DIR/<job name>-<job id>/")->capture_default_str(),
  };
  cli->mpijob_only = {
      app.add_option("--image", s.image, "mpijob: the container image (railkit, railkit-bench, Open MPI, sshd); required"),
      app.add_option("--rdma-resource", s.rdma_resource, "mpijob: the RDMA device plugin's resource; none: not requested")
          ->capture_default_str(),
      app.add_option("--network", s.network, "mpijob: k8s.v1.cni.cncf.io/networks of the workers (Multus NAD)"),
      app.add_option("--clean-pod-policy", s.clean_pod_policy, "mpijob: All | Running | None")->capture_default_str(),
      app.add_option("--ssh-auth-mount-path", s.ssh_auth_mount_path, "mpijob: where the SSH keys are mounted")
          ->capture_default_str(),
      app.add_option("--results-pvc", s.results_pvc,
                     "mpijob: a PersistentVolumeClaim mounted at /results (default: an emptyDir); needed with --accept"),
  };
  app.add_option("bench_args", s.bench_args, "railkit-bench arguments (after --)");
  return [cli] { return run_job(*cli); };
}

}  // namespace railkit::app
