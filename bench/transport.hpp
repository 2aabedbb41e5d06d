#pragma once
// What carried the data between ranks and where the ranks ran: each rank's CPU affinity, the MPI
// components it used per class of peer (self, same node, other nodes), the launcher and its PMI,
// and the warnings drawn from them (observed.ranks[].cpus, .transport, observed.transport). Pure
// apart from cpu_affinity(); the MPI side (bench/mpi) fills RankTransport.
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace railkit::bench {

/// "0-3,8,10-11" for {0,1,2,3,8,10,11} (sorted, duplicates dropped); "" for none.
std::string format_cpu_list(std::span<const int> ids);
/// The list format_cpu_list writes (and Linux's cpulist files): nullopt when malformed.
std::optional<std::vector<int>> parse_cpu_list(std::string_view text);

/// The CPUs this thread may run on (sched_getaffinity); empty when the call fails.
std::vector<int> cpu_affinity();

/// Who started this process, from its environment at start (before MPI_Init).
struct LauncherGuess {
  std::string launcher;        ///< "mpirun" (Open MPI's mpirun/orted, MPICH's hydra), "srun" or "none"
  std::string slurm_mpi_type;  ///< SLURM_MPI_TYPE under srun (srun --mpi=...), else ""
  std::string pmix_version;    ///< PMIX_VERSION the PMIx server set, else ""
  bool pmi2 = false;           ///< PMI_FD or PMI_PORT set (a PMI-1/2 server)
};
LauncherGuess infer_launcher(const std::map<std::string, std::string>& env);

/// The PMI flavour as the rank sees it: "pmix 4.2.2" (version from Open MPI's pmix component
/// text `ompi_pmix`, e.g. "ext3x OpenPMIx 4.2.2rc2 (...)", else the server's PMIX_VERSION),
/// "pmi2", "singleton" (no launcher), or "unknown"; under srun " (SLURM_MPI_TYPE=pmix)" follows.
std::string pmi_text(const LauncherGuess& guess, const std::string& ompi_pmix);

/// One rank's MPI transport, as its MPI library reports it.
struct RankTransport {
  std::string pml = "unknown";  ///< selected PML ("ob1", "ucx", "cm"), "unknown" when not told
  std::string mtl;              ///< selected MTL with cm, else ""
  /// ob1: peer ranks (of MPI_COMM_WORLD) reached by each BTL list ("vader", "tcp", "self";
  /// "sm,tcp" when one peer has several); peers not probed are absent.
  std::map<std::string, std::vector<int>> btl_peers;
  std::vector<int> seen_remote;  ///< peers on this rank's host that the MPI library holds for remote
  std::string pmi;               ///< pmi_text
  std::string launcher;          ///< LauncherGuess::launcher
  std::string source;            ///< how it was read: "Open MPI 4.1.4 internals", or why unknown
};

nlohmann::json to_json(const RankTransport& t);
/// Inverse of to_json (gathered text at rank 0); throws nlohmann's errors on other shapes.
RankTransport rank_transport_from_json(const nlohmann::json& j);

/// The peers a rank probes: every other rank on its host, and the lowest rank of each other
/// host (setting up a BML endpoint costs memory; one per node says which BTL crosses nodes).
std::vector<int> peers_to_probe(int rank, const std::vector<std::string>& host_of_rank);

/// What carries data from `rank` to peers on its host ("intra_node") or on other hosts
/// ("inter_node"): the BTLs (comma-joined, sorted) for ob1, "ucx" for ucx, "mtl:NAME" for cm;
/// null when it has no such peer, "unknown" when not told.
nlohmann::json peer_class_transport(const RankTransport& t, int rank, const std::vector<std::string>& host_of_rank,
                                    bool same_host);

/// One process's facts for the warnings: its first rank, host, CPUs and (mpi backend) transport.
struct ProcessFacts {
  int rank = 0;
  std::string host;
  std::vector<int> cpus;
  std::optional<RankTransport> transport;
};

/// "host H: ranks ... reach each other over tcp, not shared memory ..." for each host whose
/// ranks do not use a shared-memory BTL (vader, sm, smcuda) between them (ob1 only: ucx and
/// cm choose inside), and "host H: ranks ... share CPUs ..." for each host whose ranks have
/// overlapping affinity (unbound ranks: once per host, saying that timings get noisy).
std::vector<std::string> transport_warnings(const std::vector<ProcessFacts>& procs);

/// observed.transport and its note: {pml, intra_node, inter_node, mtl, pmi, launcher} when every
/// rank agrees (a rank without peers of a class does not vote on it) and an empty note;
/// otherwise null and "ranks differ in KEY (VALUE: ranks ...; ...): see observed.ranks[].transport".
/// `procs` in rank order; those without a transport are left out.
struct TransportSummary {
  nlohmann::json summary;
  std::string note;
};
TransportSummary transport_summary(const std::vector<ProcessFacts>& procs, const std::vector<std::string>& host_of_rank);

}  // namespace railkit::bench
