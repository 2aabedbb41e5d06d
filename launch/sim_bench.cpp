#include "launch/sim_bench.hpp"

#include <filesystem>

#include <fmt/format.h>

#include "core/atomic_file.hpp"
#include "core/bench_flags.hpp"
#include "core/error.hpp"
#include "core/json_text.hpp"
#include "core/strings.hpp"
#include "core/tunables.hpp"
#include "core/yaml.hpp"
#include "launch/bench_run.hpp"
#include "topology/parse.hpp"

namespace railkit::launch {
namespace fs = std::filesystem;

namespace {

std::optional<std::uint64_t> seed_value(const std::string& text, const std::string& where) {
  const auto v = to_int(text);
  if (!v || *v < 0) throw UsageError(fmt::format("{}: seed={}: expected a non-negative integer", where, printable(text)));
  return static_cast<std::uint64_t>(*v);
}

}  // namespace

bool is_sim(const std::vector<std::string>& bench_args) { return backend_arg(bench_args) == "sim"; }

LauncherOptions launcher_for_bench(LauncherOptions l, bool kind_given, const std::vector<std::string>& bench_args) {
  if (!is_sim(bench_args)) {
    l.bind_cores = l.kind == LauncherKind::Srun && backend_arg(bench_args) == "mpi";
    return l;
  }
  constexpr const char* why = "--backend sim runs one railkit-bench process that simulates every rank of its --sim-cluster file";
  if (kind_given && l.kind != LauncherKind::Local)
    throw UsageError(fmt::format("--launcher {}: {}; leave --launcher out (or use --launcher local)", launcher_name(l.kind), why));
  if (l.np > 1) throw UsageError(fmt::format("--np {}: {} (the cluster file sets the ranks); leave --np out", l.np, why));
  if (l.ppn > 0) throw UsageError(fmt::format("--ppn {}: {}; leave --ppn out", l.ppn, why));
  if (!l.hostfile.empty()) throw UsageError(fmt::format("--hostfile {}: {}; leave --hostfile out", l.hostfile, why));
  if (!l.args.empty()) throw UsageError(fmt::format("--launcher-args {}: {}; leave them out", join(l.args, " "), why));
  l.kind = LauncherKind::Local;
  return l;
}

SimBenchArgs sim_bench_args(const std::vector<std::string>& bench_args) {
  SimBenchArgs a;
  a.cluster = last_bench_flag_value(bench_args, BenchFlag::SimCluster).value_or("");
  a.fidelity = last_bench_flag_value(bench_args, BenchFlag::Fidelity).value_or("");
  a.sets = bench_flag_values(bench_args, BenchFlag::SimSet);
  for (const auto& s : a.sets)
    if (s.rfind("seed=", 0) == 0) a.seed = seed_value(s.substr(5), "bench arguments: --sim-set");
  return a;
}

std::vector<std::string> with_absolute_sim_cluster(std::vector<std::string> bench_args) {
  edit_bench_flag_values(bench_args, BenchFlag::SimCluster, [](const std::string& p) {
    return p.empty() ? p : fs::absolute(p).lexically_normal().string();
  });
  return bench_args;
}

std::string sim_key(const std::string& tunable_name) {
  const Tunable* t = find_tunable(tunable_name);
  if (t != nullptr && t->scope == TunableScope::Dcqcn) return "nic.dcqcn." + tunable_name;
  return tunable_name;
}

std::vector<std::string> sim_set_args(const std::map<std::string, std::string>& dcqcn,
                                      const std::map<std::string, std::string>& switch_settings) {
  std::vector<std::string> out;
  const auto add = [&](std::string set) {
    const auto a = bench_flag_args(BenchFlag::SimSet, std::move(set));
    out.insert(out.end(), a.begin(), a.end());
  };
  for (const auto& [k, v] : dcqcn) add("nic.dcqcn." + k + "=" + v);
  for (const auto& [k, v] : switch_settings) add(sim_key(k) + "=" + v);
  return out;
}

std::vector<std::string> sim_seed_args(std::uint64_t seed) {
  return bench_flag_args(BenchFlag::SimSet, fmt::format("seed={}", seed));
}

std::uint64_t sim_replica_seed(std::uint64_t base, int replica) {
  return base + kSimReplicaSeedStride * static_cast<std::uint64_t>(replica < 0 ? 0 : replica);
}

SimCluster read_sim_cluster(const std::string& path) {
  SimCluster c;
  std::error_code ec;
  if (!fs::exists(path, ec))
    throw UsageError(fmt::format("bench arguments: --sim-cluster {}: no such file", printable(path)));
  c.path = fs::absolute(path).lexically_normal().string();
  std::string text;
  try {
    text = read_input_file(path, "bench arguments: --sim-cluster");  // a FIFO or directory: one line
  } catch (const UsageError&) {
    throw;
  } catch (const Error& e) {
    throw UsageError(fmt::format("bench arguments: --sim-cluster {}: {}", printable(path), e.what()));
  }
  c.hash = "fnv1a64:" + topo::fnv1a64_hex(text);
  nlohmann::json doc;
  try {
    doc = is_yaml_path(path) ? parse_yaml(text, path) : parse_json(text);
  } catch (const UsageError& e) {
    throw UsageError(fmt::format("bench arguments: --sim-cluster {}", e.what()));
  } catch (const std::exception& e) {
    throw UsageError(fmt::format("bench arguments: --sim-cluster {}: not valid JSON: {}", printable(path), json_error_text(e)));
  }
  if (doc.is_object() && doc.contains("seed") && doc["seed"].is_number_integer() && doc["seed"].get<std::int64_t>() >= 0)
    c.seed = static_cast<std::uint64_t>(doc["seed"].get<std::int64_t>());
  if (doc.is_object() && doc.contains("nic") && doc["nic"].is_object() && doc["nic"].contains("priority") &&
      doc["nic"]["priority"].is_number_integer()) {
    const auto p = doc["nic"]["priority"].get<std::int64_t>();
    if (p >= 0 && p <= 7) c.nic_priority = static_cast<int>(p);
  }
  return c;
}

std::uint64_t sim_seed(const SimBenchArgs& args, const SimCluster& cluster) {
  if (args.seed) return *args.seed;
  if (cluster.seed) return *cluster.seed;
  return 1;
}

SimEvidence sim_evidence(const std::vector<std::string>& bench_args) {
  const SimBenchArgs a = sim_bench_args(bench_args);
  if (a.cluster.empty())
    throw UsageError("bench arguments: --backend sim needs --sim-cluster FILE (the cluster it simulates)");
  const SimCluster c = read_sim_cluster(a.cluster);
  return SimEvidence{c.path, c.hash, a.fidelity, sim_seed(a, c), c.nic_priority.value_or(3), a.sets};
}

std::string simulated_fidelity(const ResultsDocument& d) {
  if (d.run.sim.is_object() && d.run.sim.contains("fidelity") && d.run.sim["fidelity"].is_string())
    return d.run.sim["fidelity"].get<std::string>();
  return "";
}

bool is_simulated(const ResultsDocument& d) noexcept { return d.simulated || d.run.backend == "sim"; }

nlohmann::ordered_json to_json(const SimEvidence& e) {
  return {{"backend", "sim"},
          {"simulated", true},
          {"cluster", e.cluster},
          {"cluster_hash", e.cluster_hash},
          {"fidelity", e.fidelity.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(e.fidelity)},
          {"seed", e.seed},
          {"nic_priority", e.nic_priority},
          {"sim_set", e.sets}};
}

SimEvidence sim_evidence_from_json(const nlohmann::json& j, const std::string& where) {
  json_object(j, where);
  SimEvidence e;
  e.cluster = field<std::string>(j, "cluster", where);
  e.cluster_hash = field<std::string>(j, "cluster_hash", where);
  e.fidelity = field_opt<std::string>(j, "fidelity", where).value_or("");
  e.seed = field<std::uint64_t>(j, "seed", where);
  e.nic_priority = field_or(j, "nic_priority", 3, where);
  e.sets = field_or<std::vector<std::string>>(j, "sim_set", {}, where);
  return e;
}

}  // namespace railkit::launch
