#include "launch/job.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <utility>

#include <fmt/format.h>

#include "core/bench_flags.hpp"
#include "core/error.hpp"
#include "core/quote.hpp"
#include "core/strings.hpp"
#include "core/version.hpp"
#include "launch/bench_run.hpp"

namespace railkit::launch {
namespace {

constexpr std::array<std::pair<std::string_view, JobFormat>, 2> kFormats = {{
    {"sbatch", JobFormat::Sbatch}, {"mpijob", JobFormat::MpiJob}}};
constexpr std::array<std::pair<std::string_view, GpuRequest>, 2> kGpuRequests = {{
    {"gpus-per-task", GpuRequest::GpusPerTask}, {"gres", GpuRequest::Gres}}};
constexpr std::array<std::string_view, 3> kCleanPodPolicies = {"All", "Running", "None"};

/// Ranks of one job above this are a typo (and would overflow the arithmetic of -np).
constexpr std::int64_t kMaxRanks = 1'000'000;
/// Where the MPIJob's pods see the results volume.
constexpr std::string_view kResultsMount = "/results";
/// Where the launcher sees the profile document (mpijob --accept --profile).
constexpr std::string_view kProfileMount = "/etc/railkit";

/// A YAML value: a string (always emitted double-quoted), an integer, a boolean, a map (keys in
/// the order given) or a sequence. Just enough for the manifests written here.
struct Yaml {
  enum class Kind { Str, Int, Bool, Map, Seq };
  Kind kind = Kind::Map;
  std::string str;
  std::int64_t num = 0;
  std::vector<std::pair<std::string, Yaml>> map;
  std::vector<Yaml> seq;

  static Yaml s(std::string v) {
    Yaml y;
    y.kind = Kind::Str;
    y.str = std::move(v);
    return y;
  }
  static Yaml i(std::int64_t v) {
    Yaml y;
    y.kind = Kind::Int;
    y.num = v;
    return y;
  }
  static Yaml b(bool v) {
    Yaml y;
    y.kind = Kind::Bool;
    y.num = v ? 1 : 0;
    return y;
  }
  static Yaml list(std::vector<Yaml> items = {}) {
    Yaml y;
    y.kind = Kind::Seq;
    y.seq = std::move(items);
    return y;
  }
  static Yaml strings(const std::vector<std::string>& items) {
    Yaml y = list();
    for (const auto& v : items) y.seq.push_back(s(v));
    return y;
  }
  /// Adds key: value to a map; returns the value added.
  Yaml& add(std::string key, Yaml value) {
    map.emplace_back(std::move(key), std::move(value));
    return map.back().second;
  }
  Yaml& add(std::string key) { return add(std::move(key), Yaml{}); }
};

bool plain_key(std::string_view k) {
  return !k.empty() && std::all_of(k.begin(), k.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
  });
}

std::string yaml_key(const std::string& k) { return plain_key(k) ? k : yaml_quote(k, "a key"); }

bool collection(const Yaml& y) {
  return (y.kind == Yaml::Kind::Map && !y.map.empty()) || (y.kind == Yaml::Kind::Seq && !y.seq.empty());
}

std::string scalar(const Yaml& y, std::string_view where) {
  switch (y.kind) {
    case Yaml::Kind::Str: return yaml_quote(y.str, where);
    case Yaml::Kind::Int: return std::to_string(y.num);
    case Yaml::Kind::Bool: return y.num ? "true" : "false";
    case Yaml::Kind::Map: return "{}";
    case Yaml::Kind::Seq: return "[]";
  }
  return {};
}

/// Block style: maps indented by two, sequence items "- " at their parent key's indent + 2.
void emit(const Yaml& y, int indent, std::string& out, const std::string& where) {
  const std::string pad(static_cast<std::size_t>(indent), ' ');
  if (y.kind == Yaml::Kind::Map) {
    for (const auto& [k, v] : y.map) {
      const std::string at = where.empty() ? k : where + "." + k;
      if (collection(v)) {
        out += pad + yaml_key(k) + ":\n";
        emit(v, indent + 2, out, at);
      } else {
        out += pad + yaml_key(k) + ": " + scalar(v, at) + "\n";
      }
    }
  } else if (y.kind == Yaml::Kind::Seq) {
    for (std::size_t n = 0; n < y.seq.size(); ++n) {
      const Yaml& v = y.seq[n];
      const std::string at = fmt::format("{}[{}]", where, n);
      if (v.kind == Yaml::Kind::Map && !v.map.empty()) {
        std::string item;
        emit(v, indent + 2, item, at);
        out += pad + "- " + item.substr(static_cast<std::size_t>(indent) + 2);  // first key on the dash line
      } else if (collection(v)) {
        out += pad + "-\n";
        emit(v, indent + 2, out, at);
      } else {
        out += pad + "- " + scalar(v, at) + "\n";
      }
    }
  }
}

std::string emit_document(const Yaml& y) {
  std::string out;
  emit(y, 0, out, "");
  return out;
}

/// `s` as one word for bash: as is when made only of characters no shell treats specially,
/// else in single quotes.
std::string shell_word(std::string_view s) {
  const bool safe = !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           std::string_view("_@%+=:,./-").find(c) != std::string_view::npos;
  });
  return safe ? std::string(s) : posix_quote(s);
}

/// A value in an error line: as shell_word, its control characters as \\xNN (one line).
std::string shown(std::string_view s) { return shell_word(printable(s)); }

std::string shell_words(const std::vector<std::string>& words) {
  std::vector<std::string> q;
  for (const auto& w : words) q.push_back(shell_word(w));
  return join(q, " ");
}

bool printable_word(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
    return static_cast<unsigned char>(c) > 0x20 && static_cast<unsigned char>(c) < 0x7f;
  });
}

bool slurm_name(std::string_view s) {
  return !s.empty() && s.size() <= 128 && s.front() != '-' && s.front() != '.' &&
         std::all_of(s.begin(), s.end(), [](char c) {
           return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-' ||
                  c == '.';
         });
}

/// An extended resource name: PREFIX/NAME, each part of letters, digits, '.', '_' and '-'.
bool resource_name(std::string_view s) {
  const auto slash = s.find('/');
  if (slash == std::string_view::npos || slash == 0 || slash + 1 == s.size() ||
      s.find('/', slash + 1) != std::string_view::npos)
    return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' ||
           c == '-' || c == '/';
  });
}

/// Refuses a control character (newline, CR, NUL, ESC, DEL...) in a value the templates write into
/// a comment, an #SBATCH line or a command: a newline in a comment would end it, and the next line
/// would run as a command.
void refuse_control(std::string_view flag, std::string_view value) {
  if (has_control_chars(value))
    throw UsageError(fmt::format("{} {}: holds a control character (a newline would end the script's comment and "
                                 "run what follows); give a value without one",
                                 flag, printable(value)));
}

std::string backend(const JobSpec& spec) { return spec.gpus_per_node > 0 ? "nccl" : "mpi"; }

/// What railkit job adds to the bench arguments: the backend its GPUs call for.
std::vector<std::string> bench_args_with_backend(const JobSpec& spec) {
  std::vector<std::string> a = bench_flag_args(BenchFlag::Backend, backend(spec));
  a.insert(a.end(), spec.bench_args.begin(), spec.bench_args.end());
  return a;
}

std::string what_runs(const JobSpec& spec) {
  return fmt::format("{} on {} node(s), {} rank(s) per node, {} GPU(s) per node", spec.accept ? "railkit accept" : "railkit-bench",
                     spec.nodes, ranks_per_node(spec), spec.gpus_per_node);
}

}  // namespace

JobFormat parse_job_format(std::string_view name) {
  for (const auto& [n, f] : kFormats)
    if (n == name) return f;
  throw UsageError(fmt::format("--format {}: not a job format (sbatch, mpijob)", name));
}

GpuRequest parse_gpu_request(std::string_view name) {
  for (const auto& [n, g] : kGpuRequests)
    if (n == name) return g;
  throw UsageError(fmt::format("--gpu-request {}: not a way to request GPUs (gpus-per-task, gres)", name));
}

std::string job_name(const JobSpec& spec) {
  if (!spec.name.empty()) return spec.name;
  return spec.accept ? "railkit-accept" : "railkit-bench";
}

int ranks_per_node(const JobSpec& spec) {
  if (spec.tasks_per_node > 0) return spec.tasks_per_node;
  return spec.gpus_per_node > 0 ? spec.gpus_per_node : 1;
}

bool is_dns1123_label(std::string_view s) {
  const auto alnum = [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); };
  return !s.empty() && s.size() <= 63 && alnum(s.front()) && alnum(s.back()) &&
         std::all_of(s.begin(), s.end(), [&](char c) { return alnum(c) || c == '-'; });
}

void check_job_bench_args(const JobSpec& spec) {
  struct Reserved {
    BenchFlag flag;
    const char* why;
    bool accept_only;
  };
  static constexpr std::array<Reserved, 6> reserved{{
      {BenchFlag::OutputFile, "the job writes its results document in its results directory", false},
      {BenchFlag::Backend, "the job runs nccl with GPUs, mpi with --gpus-per-node 0", false},
      {BenchFlag::Split, "railkit accept sets each stage's split", true},
      {BenchFlag::RanksPerNode, "railkit accept takes the ranks per node from the job", true},
      {BenchFlag::Label, "railkit accept labels each stage's results", true},
      {BenchFlag::RunCycles, "railkit accept judges one cycle", true},
  }};
  for (const Reserved& r : reserved) {
    if (r.accept_only && !spec.accept) continue;
    if (sets_bench_flag(spec.bench_args, r.flag))
      throw UsageError(
          fmt::format("bench arguments: {} is set by railkit job ({})", bench_flag_names(r.flag), r.why));
  }
  if (spec.accept)
    for (const auto& a : spec.bench_args)
      if (a.empty() || std::any_of(a.begin(), a.end(), [](char c) { return std::isspace(static_cast<unsigned char>(c)); }))
        throw UsageError(fmt::format("bench argument {}: railkit accept splits --bench-args at spaces, so with --accept "
                                     "no argument may be empty or hold whitespace",
                                     shown(a)));
}

void validate(const JobSpec& spec) {
  if (spec.nodes < 1) throw UsageError(fmt::format("--nodes {}: give 1 or more", spec.nodes));
  if (spec.gpus_per_node < 0) throw UsageError(fmt::format("--gpus-per-node {}: give 0 or more", spec.gpus_per_node));
  if (spec.tasks_per_node < 0) throw UsageError(fmt::format("--tasks-per-node {}: give 1 or more", spec.tasks_per_node));
  const std::int64_t ranks = std::int64_t{spec.nodes} * ranks_per_node(spec);
  if (ranks > kMaxRanks)
    throw UsageError(fmt::format("--nodes {} x {} ranks per node: {} ranks, more than {} (a typo?)", spec.nodes,
                                 ranks_per_node(spec), ranks, kMaxRanks));
  const std::string name = job_name(spec);
  if (spec.railkit.empty()) throw UsageError("--railkit: give the railkit program the job runs");
  if (spec.bench.empty()) throw UsageError("--bench: give the railkit-bench program the job runs");
  refuse_control("--railkit", spec.railkit);
  refuse_control("--bench", spec.bench);
  refuse_control("--profile", spec.profile);
  refuse_control("--results-dir", spec.results_dir);
  check_job_bench_args(spec);

  if (spec.format == JobFormat::Sbatch) {
    if (!slurm_name(name))
      throw UsageError(fmt::format("--name {}: not a job name for a batch script (1 to 128 letters, digits, '_', '-' "
                                   "and '.', not starting with '-' or '.')",
                                   shown(name)));
    if (spec.gpu_request == GpuRequest::GpusPerTask && spec.gpus_per_node > 0 && spec.tasks_per_node > 0 &&
        spec.tasks_per_node != spec.gpus_per_node)
      throw UsageError(fmt::format("--tasks-per-node {} with --gpu-request gpus-per-task: each task gets one GPU, so it "
                                   "must equal --gpus-per-node {} (or use --gpu-request gres)",
                                   spec.tasks_per_node, spec.gpus_per_node));
    if (spec.results_dir.empty()) throw UsageError("--results-dir: give a directory");
    return;
  }

  if (!is_dns1123_label(name))
    throw UsageError(fmt::format("--name {}: not a Kubernetes name (DNS-1123 label: lowercase letters, digits and '-', "
                                 "at most 63, starting and ending with a letter or digit)",
                                 shown(name)));
  if (name.front() < 'a' || name.front() > 'z')  // mpi-operator's validation: IsDNS1035Label(<name>-worker-<N-1>)
    throw UsageError(fmt::format("--name {}: must start with a letter (the worker pods' host names, {}-worker-<i>, are "
                                 "DNS-1035 labels)",
                                 name, name));
  const std::string last_worker = fmt::format("{}-worker-{}", name, spec.nodes - 1);
  if (last_worker.size() > 63)
    throw UsageError(fmt::format("--name {}: the worker pods' host names ({}) would be longer than 63 characters; "
                                 "give a shorter --name",
                                 name, last_worker));
  if (spec.image.empty()) throw UsageError("--image: required with --format mpijob (the container image holding railkit, "
                                           "railkit-bench, Open MPI and sshd)");
  if (!printable_word(spec.image))
    throw UsageError(fmt::format("--image {}: not an image reference (printable, no spaces)", shown(spec.image)));
  if (spec.rdma_resource != "none" && !resource_name(spec.rdma_resource))
    throw UsageError(fmt::format("--rdma-resource {}: not a resource name (PREFIX/NAME, e.g. rdma/rdma_shared_device_a; "
                                 "none to request none)",
                                 shown(spec.rdma_resource)));
  if (!spec.network.empty() && !printable_word(spec.network))
    throw UsageError(fmt::format("--network {}: not a network attachment list (printable, no spaces)",
                                 shown(spec.network)));
  if (std::find(kCleanPodPolicies.begin(), kCleanPodPolicies.end(), spec.clean_pod_policy) == kCleanPodPolicies.end())
    throw UsageError(fmt::format("--clean-pod-policy {}: not a policy (All, Running, None)", shown(spec.clean_pod_policy)));
  if (spec.ssh_auth_mount_path.empty() || spec.ssh_auth_mount_path.front() != '/' ||
      !printable_word(spec.ssh_auth_mount_path))
    throw UsageError(fmt::format("--ssh-auth-mount-path {}: give an absolute path", shown(spec.ssh_auth_mount_path)));
  if (!spec.results_pvc.empty() && !is_dns1123_label(spec.results_pvc))
    throw UsageError(fmt::format("--results-pvc {}: not a PersistentVolumeClaim name (DNS-1123 label)",
                                 shown(spec.results_pvc)));
  if (spec.accept && spec.results_pvc.empty())
    throw UsageError("--accept with --format mpijob needs --results-pvc CLAIM: railkit accept on the launcher reads the "
                     "results documents that rank 0 writes on a worker, so both must mount the same volume");
  for (std::size_t i = 0; i < spec.bench_args.size(); ++i)  // YAML carries UTF-8 only
    (void)yaml_quote(spec.bench_args[i], fmt::format("bench argument {}", i + 1));
  (void)yaml_quote(spec.bench, "--bench");
  (void)yaml_quote(spec.railkit, "--railkit");
  if (!spec.configmap_yaml.empty() && !is_dns1123_label(spec.configmap_name))
    throw UsageError(fmt::format("the profile's ConfigMap name {} is not a Kubernetes name", shown(spec.configmap_name)));
  if (!spec.profile_json.empty() && !is_dns1123_label(spec.configmap_name + "-doc"))
    throw UsageError(fmt::format("the profile document's ConfigMap name {}-doc is not a Kubernetes name (at most 63)",
                                 shown(spec.configmap_name)));
  for (const auto& n : spec.profile_env_names)
    if (!printable_word(n)) throw UsageError(fmt::format("the profile's variable {} cannot be forwarded", posix_quote(n)));
}

std::string sbatch_script(const JobSpec& spec) {
  validate(spec);
  const std::string name = job_name(spec);
  const int rpn = ranks_per_node(spec);
  std::string s = "#!/bin/bash\n";
  s += fmt::format("# railkit job (railkit {}): {}.\n", kVersion, what_runs(spec));
  s += "# Submit with `sbatch FILE`. Slurm's log: <job name>-<job id>.out in the submission directory;\n";
  s += fmt::format("# results: {}/<job name>-<job id>/ (on a file system every node shares).\n", spec.results_dir);
  s += fmt::format("#SBATCH --job-name={}\n", name);
  s += fmt::format("#SBATCH --nodes={}\n", spec.nodes);
  s += fmt::format("#SBATCH --ntasks-per-node={}\n", rpn);
  if (spec.gpus_per_node > 0) {
    if (spec.gpu_request == GpuRequest::GpusPerTask)
      s += "#SBATCH --gpus-per-task=1\n";
    else
      s += fmt::format("#SBATCH --gres=gpu:{}\n", spec.gpus_per_node);
  }
  if (spec.exclusive) s += "#SBATCH --exclusive\n";
  s += "#SBATCH --output=%x-%j.out\n";
  s += "set -euo pipefail\n\n";
  s += fmt::format("results={}/\"${{SLURM_JOB_NAME}}-${{SLURM_JOB_ID}}\"\n", shell_word(spec.results_dir));
  s += "mkdir -p \"$results\"\n";
  s += "echo \"railkit job: results in $results\"\n";
  const std::vector<std::string> args = bench_args_with_backend(spec);
  if (spec.accept) {
    s += "scontrol show hostnames \"$SLURM_JOB_NODELIST\" > \"$results/hosts\"\n";
    std::vector<std::string> accept{spec.railkit, "accept", "--launcher", "srun"};
    s += shell_words(accept) + " --hostfile \"$results/hosts\"" +
         fmt::format(" --ppn {} --out \"$results/accept\" --junit \"$results/accept.xml\"", rpn);
    if (!spec.profile.empty()) s += " --profile " + shell_word(spec.profile);
    if (spec.bench != JobSpec{}.bench) s += " --bench " + shell_word(spec.bench);
    s += " --bench-args=" + posix_quote(join(args, " ")) + "\n";  // with =: the value starts with --
    return s;
  }
  // GPUs: NCCL places its threads near each rank's GPU, a binding of its own would fight it; host
  // memory (mpi backend): one core per rank, so that ranks do not share cores.
  s += fmt::format("srun --mpi=pmix --cpu-bind={} \\\n", spec.gpus_per_node > 0 ? "none" : "cores");
  if (!spec.profile.empty())
    s += fmt::format("  {} profile exec {} -- \\\n", shell_word(spec.railkit), shell_word(spec.profile));
  s += "  " + shell_word(spec.bench) + " " + shell_words(args);
  if (!sets_bench_flag(spec.bench_args, BenchFlag::Label))
    s += fmt::format(" {} \"${{SLURM_JOB_NAME}}-${{SLURM_JOB_ID}}\"", bench_flag_name(BenchFlag::Label));
  s += fmt::format(" {} \"$results/bench.json\"\n", bench_flag_name(BenchFlag::OutputFile));
  return s;
}

namespace {

/// A Kubernetes object's head: apiVersion, kind and metadata (its name, railkit's managed-by label).
Yaml k8s_object(const char* api_version, const char* kind, const std::string& name) {
  Yaml o;
  o.add("apiVersion", Yaml::s(api_version));
  o.add("kind", Yaml::s(kind));
  Yaml& meta = o.add("metadata");
  meta.add("name", Yaml::s(name));
  meta.add("labels").add("app.kubernetes.io/managed-by", Yaml::s("railkit"));
  return o;
}

/// The MPIJob's envFrom: the ConfigMap of the profile's environment.
Yaml env_from(const JobSpec& spec) {
  Yaml l = Yaml::list();
  Yaml ref;
  ref.add("configMapRef").add("name", Yaml::s(spec.configmap_name));
  l.seq.push_back(std::move(ref));
  return l;
}

Yaml mount(std::string vol, std::string path) {
  Yaml m;
  m.add("name", Yaml::s(std::move(vol)));
  m.add("mountPath", Yaml::s(std::move(path)));
  return m;
}

/// Where the results go: the PersistentVolumeClaim when given, else an emptyDir per pod.
Yaml results_volume(const JobSpec& spec) {
  Yaml v;
  v.add("name", Yaml::s("results"));
  if (spec.results_pvc.empty())
    v.add("emptyDir");
  else
    v.add("persistentVolumeClaim").add("claimName", Yaml::s(spec.results_pvc));
  return v;
}

/// The launcher's command: mpirun (or railkit accept, which runs mpirun) over the workers in
/// /etc/mpi/hostfile.
std::vector<std::string> launcher_command(const JobSpec& spec, const std::string& name, int rpn,
                                          const std::vector<std::string>& args) {
  const std::string results = std::string(kResultsMount);
  std::vector<std::string> command;
  if (spec.accept) {
    command = {spec.railkit, "accept", "--launcher", "mpirun", "--hostfile", "/etc/mpi/hostfile", "--ppn",
               std::to_string(rpn), "--out", results + "/" + name, "--junit", results + "/" + name + ".xml"};
    if (spec.bench != JobSpec{}.bench) command.insert(command.end(), {"--bench", spec.bench});
    // accept passes the profile's settings to every launch itself (mpirun -x NAME=VALUE).
    if (!spec.profile_json.empty())
      command.insert(command.end(), {"--profile", std::string(kProfileMount) + "/profile.json"});
    command.push_back("--bench-args=" + join(args, " "));
  } else {
    command = {"mpirun", "--allow-run-as-root", "-np", std::to_string(std::int64_t{spec.nodes} * rpn), "--bind-to", "none"};
    for (const auto& n : spec.profile_env_names) command.insert(command.end(), {"-x", n});
    command.push_back(spec.bench);
    command.insert(command.end(), args.begin(), args.end());
    if (!sets_bench_flag(spec.bench_args, BenchFlag::Label)) {
      const auto label = bench_flag_args(BenchFlag::Label, name);
      command.insert(command.end(), label.begin(), label.end());
    }
    const auto output = bench_flag_args(BenchFlag::OutputFile, results + "/" + name + ".json");
    command.insert(command.end(), output.begin(), output.end());
  }
  return command;
}

/// The Launcher replica: one pod running `command`, the results and (with a profile) the profile
/// document mounted.
Yaml launcher_replica(const JobSpec& spec, const std::vector<std::string>& command, const std::string& doc_configmap) {
  const std::string results = std::string(kResultsMount);
  Yaml launcher_container;
  launcher_container.add("name", Yaml::s("launcher"));
  launcher_container.add("image", Yaml::s(spec.image));
  launcher_container.add("command", Yaml::strings(command));
  if (!spec.configmap_yaml.empty()) launcher_container.add("envFrom", env_from(spec));
  Yaml& launcher_mounts = launcher_container.add("volumeMounts", Yaml::list({mount("results", results)}));
  if (!spec.profile_json.empty()) launcher_mounts.seq.push_back(mount("profile", std::string(kProfileMount)));

  Yaml launcher;
  launcher.add("replicas", Yaml::i(1));
  launcher.add("restartPolicy", Yaml::s("OnFailure"));
  Yaml& lspec = launcher.add("template").add("spec");
  lspec.add("containers", Yaml::list({launcher_container}));
  Yaml& launcher_volumes = lspec.add("volumes", Yaml::list({results_volume(spec)}));
  if (!spec.profile_json.empty()) {
    Yaml v;
    v.add("name", Yaml::s("profile"));
    v.add("configMap").add("name", Yaml::s(doc_configmap));
    launcher_volumes.seq.push_back(std::move(v));
  }
  return launcher;
}

/// The Worker replicas: sshd, the GPUs, the RDMA resource and the secondary network.
Yaml worker_replica(const JobSpec& spec) {
  const std::string results = std::string(kResultsMount);
  Yaml worker_container;
  worker_container.add("name", Yaml::s("worker"));
  worker_container.add("image", Yaml::s(spec.image));
  worker_container.add("command", Yaml::strings({"/usr/sbin/sshd", "-De"}));
  if (!spec.configmap_yaml.empty()) worker_container.add("envFrom", env_from(spec));
  Yaml limits;
  if (spec.gpus_per_node > 0) limits.add("nvidia.com/gpu", Yaml::i(spec.gpus_per_node));
  if (spec.rdma_resource != "none") limits.add(spec.rdma_resource, Yaml::i(1));
  if (!limits.map.empty()) worker_container.add("resources").add("limits", std::move(limits));
  worker_container.add("securityContext").add("capabilities").add("add", Yaml::strings({"IPC_LOCK"}));
  worker_container.add("volumeMounts", Yaml::list({mount("dshm", "/dev/shm"), mount("results", results)}));

  Yaml dshm;
  dshm.add("name", Yaml::s("dshm"));
  dshm.add("emptyDir").add("medium", Yaml::s("Memory"));

  Yaml worker;
  worker.add("replicas", Yaml::i(spec.nodes));
  worker.add("restartPolicy", Yaml::s("Never"));
  Yaml& wtemplate = worker.add("template");
  if (!spec.network.empty())
    wtemplate.add("metadata").add("annotations").add("k8s.v1.cni.cncf.io/networks", Yaml::s(spec.network));
  Yaml& wspec = wtemplate.add("spec");
  wspec.add("containers", Yaml::list({worker_container}));
  wspec.add("volumes", Yaml::list({dshm, results_volume(spec)}));
  return worker;
}

}  // namespace

std::string mpijob_manifest(const JobSpec& spec) {
  validate(spec);
  const std::string name = job_name(spec);
  const int rpn = ranks_per_node(spec);
  const std::string results = std::string(kResultsMount);
  const std::string doc_configmap = spec.configmap_name + "-doc";
  Yaml launcher = launcher_replica(spec, launcher_command(spec, name, rpn, bench_args_with_backend(spec)), doc_configmap);
  Yaml worker = worker_replica(spec);

  Yaml job = k8s_object("kubeflow.org/v2beta1", "MPIJob", name);
  Yaml& jspec = job.add("spec");
  jspec.add("slotsPerWorker", Yaml::i(rpn));
  jspec.add("runPolicy").add("cleanPodPolicy", Yaml::s(spec.clean_pod_policy));
  jspec.add("sshAuthMountPath", Yaml::s(spec.ssh_auth_mount_path));
  jspec.add("mpiImplementation", Yaml::s("OpenMPI"));
  Yaml& replicas = jspec.add("mpiReplicaSpecs");
  replicas.add("Launcher", std::move(launcher));
  replicas.add("Worker", std::move(worker));

  std::string out = fmt::format("# railkit job (railkit {}): {}.\n", kVersion, what_runs(spec));
  out += fmt::format("# Apply with `kubectl apply -f FILE`; results: {} in the pods ({}).\n", results,
                     spec.results_pvc.empty() ? "an emptyDir per pod: rank 0's document stays on the first worker"
                                              : "PersistentVolumeClaim " + spec.results_pvc);
  if (!spec.configmap_yaml.empty()) {
    out += "---\n" + spec.configmap_yaml;
    if (out.back() != '\n') out += '\n';
  }
  if (!spec.profile_json.empty()) {
    Yaml cm = k8s_object("v1", "ConfigMap", doc_configmap);
    cm.add("data").add("profile.json", Yaml::s(spec.profile_json));
    out += "---\n# the profile document, for railkit accept on the launcher\n" + emit_document(cm);
  }
  out += "---\n" + emit_document(job);
  return out;
}

std::string render_job(const JobSpec& spec) {
  return spec.format == JobFormat::Sbatch ? sbatch_script(spec) : mpijob_manifest(spec);
}

}  // namespace railkit::launch
