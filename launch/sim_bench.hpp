#pragma once
// railkit-bench's simulated backend (`--backend sim`) as the control plane drives it: one
// process that simulates every rank of a cluster file (no launcher), the cluster file, fidelity
// and seed read from the bench arguments, and the `--sim-set key.path=value` overrides that
// carry DCQCN attributes and switch ECN settings to the simulated fabric. Everything such a run
// produces is simulated and is labelled so by its callers.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/results.hpp"
#include "launch/launcher.hpp"

namespace railkit::launch {

/// Whether the bench arguments run the simulated backend (the last --backend is `sim`).
bool is_sim(const std::vector<std::string>& bench_args);

/// The launcher railkit-bench runs under. With --backend sim: `local`, one process that
/// simulates every rank; an explicit --launcher mpirun or srun (`kind_given`), --np above 1,
/// --ppn, --hostfile or --launcher-args is refused (UsageError, exit 6). Otherwise `l` as given,
/// with bind_cores set for srun when the bench arguments say `--backend mpi`.
LauncherOptions launcher_for_bench(LauncherOptions l, bool kind_given, const std::vector<std::string>& bench_args);

/// What the bench arguments say about the simulation.
struct SimBenchArgs {
  std::string cluster;                ///< --sim-cluster as given; "" when absent
  std::string fidelity;               ///< --fidelity as given; "" = railkit-bench's default
  std::optional<std::uint64_t> seed;  ///< the last `--sim-set seed=N`
  std::vector<std::string> sets;      ///< every --sim-set value, in order
};
/// Reads them (`--opt value` and `--opt=value` forms). Throws UsageError for a seed that is not
/// a non-negative integer.
SimBenchArgs sim_bench_args(const std::vector<std::string>& bench_args);

/// The bench arguments with the value of every --sim-cluster made absolute (so a session resumes
/// from any directory).
std::vector<std::string> with_absolute_sim_cluster(std::vector<std::string> bench_args);

/// The simulator's key of a tunable: DCQCN attributes under `nic.dcqcn.` (roce_rp.rpg_ai_rate ->
/// nic.dcqcn.roce_rp.rpg_ai_rate); switch settings (switch.ecn.kmin_bytes) as they are named.
std::string sim_key(const std::string& tunable_name);

/// `--sim-set KEY=VALUE` pairs for DCQCN attributes and switch settings, DCQCN first, each
/// group in name order.
std::vector<std::string> sim_set_args(const std::map<std::string, std::string>& dcqcn,
                                      const std::map<std::string, std::string>& switch_settings);

/// `--sim-set seed=N`.
std::vector<std::string> sim_seed_args(std::uint64_t seed);

/// Replicas of a simulation: replica k (from 0) of a run with seed `base` simulates with
/// base + 1000 k, apart from the seeds its own iterations use (packet fidelity: seed + i for
/// iteration i), so replicas sample other ECMP placements and ECN marks.
inline constexpr std::uint64_t kSimReplicaSeedStride = 1000;
std::uint64_t sim_replica_seed(std::uint64_t base, int replica);

/// The cluster file of a simulated run: where it is and what it held.
struct SimCluster {
  std::string path;                   ///< absolute
  std::string hash;                   ///< "fnv1a64:<16 hex digits>" of its bytes
  std::optional<std::uint64_t> seed;  ///< its top-level `seed`, when it sets one
  std::optional<int> nic_priority;    ///< its `nic.priority` (the RoCE priority of the traffic), when set
};
/// Reads the cluster file (YAML or JSON) for its identity. Throws UsageError naming the bench
/// argument when it is missing or unreadable, or is not YAML/JSON.
SimCluster read_sim_cluster(const std::string& path);

/// The seed the bench arguments simulate with: `--sim-set seed=N`, else the cluster file's
/// `seed`, else 1 (the simulator's default).
std::uint64_t sim_seed(const SimBenchArgs& args, const SimCluster& cluster);

/// What a simulated run's evidence records (the profile's `evidence.extra.simulated`, sweep.json's
/// `sim`): backend sim, simulated true, the cluster file and its hash, the fidelity and the seed.
struct SimEvidence {
  std::string cluster;                ///< absolute path
  std::string cluster_hash;
  std::string fidelity;               ///< "" = railkit-bench's default
  std::uint64_t seed = 1;
  int nic_priority = 3;               ///< the cluster's nic.priority (the simulator's default 3)
  std::vector<std::string> sets;      ///< the bench arguments' --sim-set values (seed included)
  bool operator==(const SimEvidence&) const = default;
};
/// Whether a results document was simulated (`simulated: true`, or run.backend sim).
bool is_simulated(const ResultsDocument& d) noexcept;

/// From the bench arguments (their --sim-cluster must name a readable file). Throws UsageError
/// when --backend sim comes without --sim-cluster, or the file cannot be read.
SimEvidence sim_evidence(const std::vector<std::string>& bench_args);

/// The fidelity a simulated results document says it ran (run.sim.fidelity); "" when it says none.
std::string simulated_fidelity(const ResultsDocument& d);

/// As JSON: {backend: "sim", simulated: true, cluster, cluster_hash, fidelity (null = the
/// bench's default), seed, nic_priority, sim_set}; and back (UsageError naming `where`).
nlohmann::ordered_json to_json(const SimEvidence& e);
SimEvidence sim_evidence_from_json(const nlohmann::json& j, const std::string& where);

}  // namespace railkit::launch
