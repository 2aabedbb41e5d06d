#pragma once
// Job templates (`railkit job`): a Slurm batch script or a Kubeflow MPIJob (kubeflow.org/v2beta1)
// manifest that runs railkit-bench, or `railkit accept`, on N nodes with G GPUs each. Text only:
// nothing here reads the machine or a profile (the caller passes the profile's ConfigMap and the
// names of its variables). Documented in README.md ("railkit job").
#include <string>
#include <string_view>
#include <vector>

namespace railkit::launch {

enum class JobFormat { Sbatch, MpiJob };

/// How a batch script asks Slurm for GPUs: one per task, or G per node as a generic resource.
enum class GpuRequest { GpusPerTask, Gres };

/// Parses "sbatch" | "mpijob" and "gpus-per-task" | "gres". Throws UsageError naming the flag.
JobFormat parse_job_format(std::string_view name);
GpuRequest parse_gpu_request(std::string_view name);

/// Everything a template depends on. Defaults are what `railkit job` uses without flags.
struct JobSpec {
  JobFormat format = JobFormat::Sbatch;
  std::string name;          ///< job name / metadata.name; "" = railkit-bench, or railkit-accept with `accept`
  int nodes = 1;             ///< N >= 1
  int gpus_per_node = 8;     ///< G >= 0; 0: no GPU is requested and the bench runs its mpi backend
  int tasks_per_node = 0;    ///< ranks per node; 0 = G (1 when G is 0)
  bool accept = false;       ///< run `railkit accept` instead of one railkit-bench run
  std::string profile;       ///< sbatch: the profile's path as the job's nodes see it; "" = none
  std::string railkit = "railkit";        ///< the railkit program the job runs
  std::string bench = "railkit-bench";    ///< the railkit-bench program the job runs
  std::vector<std::string> bench_args;    ///< after `--`, passed on (accept: as --bench-args)

  // sbatch
  GpuRequest gpu_request = GpuRequest::GpusPerTask;
  bool exclusive = true;
  std::string results_dir = "results";  ///< results go to RESULTS_DIR/<job name>-<job id>/

  // mpijob
  std::string image;                                       ///< required
  std::string rdma_resource = "rdma/rdma_shared_device_a"; ///< device-plugin resource; "none" = not requested
  std::string network;                                     ///< Multus NetworkAttachmentDefinition(s); "" = none
  std::string clean_pod_policy = "Running";                ///< All | Running | None
  std::string ssh_auth_mount_path = "/root/.ssh";
  std::string results_pvc;  ///< PersistentVolumeClaim mounted at /results; "" = an emptyDir per pod
  /// With a profile: the ConfigMap document (YAML, emitted first, `---` separated), its name
  /// (envFrom configMapRef) and the variables it holds (forwarded to every rank with mpirun -x).
  std::string configmap_yaml;
  std::string configmap_name;
  std::vector<std::string> profile_env_names;
  /// With accept and a profile: the profile document (JSON text). It goes into a second
  /// ConfigMap, <configmap_name>-doc, mounted at /etc/railkit, and accept reads it from there.
  std::string profile_json;
};

/// The job name the spec resolves to (`name`, else the default).
std::string job_name(const JobSpec& spec);
/// Ranks per node the spec resolves to (tasks_per_node, else G, else 1).
int ranks_per_node(const JobSpec& spec);

/// Whether `s` is a DNS-1123 label: 1 to 63 lowercase letters, digits and '-', starting and
/// ending with a letter or digit (Kubernetes object and pod host names).
bool is_dns1123_label(std::string_view s);

/// The bench arguments railkit job sets itself (`-J`, `--backend`; with accept also accept's own:
/// `--split`, `--ranks-per-node`, `--label`, `-N`). Throws UsageError naming the first one found.
void check_job_bench_args(const JobSpec& spec);

/// Throws UsageError, one line naming the flag, for a spec no template can be made from.
void validate(const JobSpec& spec);

/// The batch script (bash; submit with `sbatch FILE`). Validates first.
std::string sbatch_script(const JobSpec& spec);
/// The manifest (`kubectl apply -f FILE`): the profile's ConfigMap when given, then the MPIJob.
/// Every string scalar is a YAML double-quoted string. Validates first.
std::string mpijob_manifest(const JobSpec& spec);
/// sbatch_script or mpijob_manifest, as spec.format says.
std::string render_job(const JobSpec& spec);

}  // namespace railkit::launch
