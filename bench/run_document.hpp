#pragma once
// The results document of a railkit-bench run, apart from the measurements: what the run was
// (run info, options), what the backend did (NCCL's log, per-rank facts) and how a timeout ended
// it. Used by app.cpp only.
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench/bootstrap.hpp"
#include "bench/communicator.hpp"
#include "bench/harness.hpp"
#include "bench/options.hpp"
#include "bench/report.hpp"
#include "bench/split.hpp"
#include "bench/transport.hpp"
#include "bench/watchdog.hpp"
#include "core/results.hpp"

namespace railkit::bench {

/// The options that shape results, under nccl-tests' long flag names (run.options).
nlohmann::json options_json(const BenchOptions& o);

/// --observe on the nccl backend: NCCL logs INIT,BOOTSTRAP,NET,GRAPH at INFO into a file of this rank's,
/// unless the user chose NCCL_DEBUG* themselves. Returns the file NCCL will write. Must run
/// before NCCL reads its environment (communicator creation).
std::string arrange_nccl_log(char** envp);

/// What NCCL did, from every rank's log (gathered to rank 0), with contradictions against the
/// environment as warnings. Collective; returns null JSON on ranks other than 0.
nlohmann::json observe_nccl(Bootstrap& boot, const std::string& log_file, const std::map<std::string, std::string>& env,
                            bool several_gpus);

/// The run's description for the results document, known before any communicator exists.
/// `backend`: "mpi", "nccl" or "sim" (the caller adds what only the sim backend knows).
RunInfo make_run_info(const BenchOptions& o, const Bootstrap& boot, const std::string& backend,
                      const std::string& backend_version, int data_ranks, const std::vector<Group>& groups);

/// The error record of a watchdog timeout.
ErrorRecord timeout_record(const TimeoutReport& rep);

/// Every data rank's pid, host and device, gathered to rank 0 (one entry per GPU rank with -g).
struct RankFacts {
  std::vector<double> pids;            ///< per process
  std::vector<std::string> devices;    ///< per data rank
  std::vector<std::string> hosts;      ///< per data rank: the process's host, or the backend's (Communicator::host)
  std::vector<std::string> cpus;       ///< per process: its CPU affinity ("0-1"); empty when not recorded
  std::vector<std::optional<RankTransport>> transports;  ///< per process (mpi backend); nullopt elsewhere
  std::vector<std::string> warnings;   ///< transport_warnings over the processes
  TransportSummary transport;          ///< transport_summary over the processes
};

/// Collective: every process's pid, its slots' devices and hosts, and with `record_cpus` its CPU
/// affinity and `transport` (the mpi backend's), at rank 0, with the warnings drawn from them.
RankFacts gather_rank_facts(Bootstrap& boot, const Communicator& comm, int slots, bool record_cpus,
                            const std::optional<RankTransport>& transport);

/// The run's end on rank 0: observed facts, the footer and the final document.
void finish_document(ResultsSink& sink, Reporter& reporter, const Bootstrap& boot, const RankFacts& facts,
                     const std::vector<double>& rss, int slots, const Plan& plan, const nlohmann::json& backend_facts,
                     const nlohmann::json& observed_nccl);

}  // namespace railkit::bench
