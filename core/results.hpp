#pragma once
// The results document, schema "railkit.results/1" (documented in results/README.md,
// JSON Schema in results/railkit.results.schema.json). Types here, JSON in results.cpp.
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/stats.hpp"

namespace railkit {

inline constexpr const char* kResultsSchema = "railkit.results/1";

/// Where a run happened and how it was asked for.
struct RunInfo {
  std::string label;
  std::string backend;           ///< "mpi", "nccl" or "sim"
  std::string backend_version;   ///< e.g. "Open MPI v4.1.4"
  std::string railkit_version;
  int nranks = 0;
  int nnodes = 0;
  std::vector<std::string> hosts;  ///< distinct host names in rank order of first appearance
  std::string command;             ///< the command line of rank 0
  std::map<std::string, std::string> env;  ///< NCCL_*, OMPI_MCA_*, UCX_*, RAILKIT_* at start
  std::string start_time;          ///< UTC, ISO 8601
  std::string average;             ///< how per-op times were reduced across ranks: rank0|avg|min|max
  nlohmann::json options = nlohmann::json::object();  ///< the bench options that shape results
  /// --split: null, or {mode, ranks_per_node, groups: [{name, ranks, hosts}]}
  nlohmann::json split = nullptr;
  /// How time_us was measured: "host_clock" (mpi, nccl: the host clock around the loop) or
  /// "simulated" (sim: simulated completion times, not measured on any hardware).
  std::string timing = "host_clock";
  /// How iterations were timed: "back_to_back" (issued one after another, the loop's time /
  /// iterations: railkit-bench's default, as nccl-tests) or "barrier_separated" (a barrier
  /// between iterations, only the operation timed: railkit-bench --sync, IMB-MPI1, OSU).
  /// Documents written before the key read as "back_to_back".
  std::string timing_method = "back_to_back";
  /// --backend sim: the simulated cluster, fidelity, seed and NCCL settings (results/README.md);
  /// null for the other backends.
  nlohmann::json sim = nullptr;
  /// `railkit import`: {tool, tool_version?, file, sha256, lines, format, derived?, ...} of the log
  /// this document was made from (results/README.md "Imported documents"); null for railkit-bench.
  nlohmann::json imported = nullptr;
  /// Imported documents only: the run keys the source did not print ("command", "hosts" ...) and
  /// the summary keys it did not ("summary.errors"), left out of the JSON rather than invented.
  /// Always empty when `imported` is null.
  std::set<std::string> absent;
};

/// Per-rank spread of the per-op average time (each rank's own loop time / iters).
struct RankSpread {
  double time_us_min = 0;
  double time_us_max = 0;
  int slowest_rank = 0;
  std::string slowest_host;
};

/// One collective at one size and placement.
struct ResultRecord {
  std::string op;     ///< collective as --coll spells it: all_reduce, all_gather, ...
  std::string dtype;  ///< int8 ... double
  std::string redop;  ///< sum|prod|min|max|avg, or "none" for collectives without a reduction
  int root = -1;      ///< root rank, -1 when the collective has none
  std::uint64_t bytes = 0;  ///< nccl-tests' size column: max(send, recv) bytes per rank
  std::uint64_t count = 0;  ///< nccl-tests' count column: elements per rank passed to the collective
  bool in_place = false;
  int cycle = 0;      ///< run cycle (-N), from 0
  int iters = 0;      ///< timed iterations
  Summary time_us;    ///< avg = reduced loop time / iters; min..cv over per-iteration times
  double algbw_GBps = 0;
  double busbw_GBps = 0;
  std::optional<std::int64_t> wrong;  ///< wrong elements summed over ranks; nullopt when not checked
  RankSpread ranks;   ///< slowest_rank is a world rank
  std::optional<std::string> group;   ///< --split group ("rail0"); nullopt without a split
  /// What the backend saw of this measurement (sim: the simulated algorithm, protocol, channels,
  /// fabric counters); null when the backend reports nothing per record.
  nlohmann::json observed = nullptr;
  /// Imported documents only: the record keys the source did not print, left out of the JSON
  /// ("count", "wrong", "time_us.p50", "ranks.slowest_rank", ...). Empty otherwise.
  std::set<std::string> absent;
  bool has(const std::string& key) const { return absent.count(key) == 0; }
};

/// What ended a run early (timeout, MPI error ...).
struct ErrorRecord {
  std::string code;   ///< error_code_name()
  int exit_code = 0;
  std::string message;
  nlohmann::json detail = nlohmann::json::object();
};

struct ResultsSummary {
  double avg_busbw_GBps = 0;  ///< plain mean of busbw over all results, as nccl-tests' "Avg bus bandwidth"
  std::int64_t errors = 0;    ///< wrong elements over all results ("Out of bounds values")
  bool complete = true;       ///< false when the run ended early (see `error`)
};

struct ResultsDocument {
  std::string schema = kResultsSchema;
  /// Every figure was simulated (run.backend "sim"): never a measurement, never validates a profile.
  bool simulated = false;
  RunInfo run;
  std::vector<ResultRecord> results;
  nlohmann::json observed = nlohmann::json::object();
  ResultsSummary summary;
  std::optional<ErrorRecord> error;
};

/// True when the document was made by `railkit import` from another tool's log (run.imported).
inline bool is_imported(const ResultsDocument& d) { return !d.run.imported.is_null(); }

/// Throws UsageError "WHAT: PATH was imported from TOOL's log (railkit import), not measured by
/// railkit-bench: ..." for readers that need railkit-bench's own measurements (profiles, tuner,
/// accept, sweep rounds).
void refuse_imported(const ResultsDocument& d, const std::string& path, const std::string& what);

/// Recomputes summary.avg_busbw_GBps and summary.errors from results.
void update_summary(ResultsDocument& doc);

/// The document as JSON text, keys in schema order. With indent >= 0 the records are dumped one
/// at a time (memory: the text and one record's tree, not a tree of the whole document).
std::string dump_results(const ResultsDocument& d, int indent = 2);
/// One record as dump_results writes it inside `results` (at the top level: not indented further).
std::string dump_record(const ResultRecord& r, int indent = 2);
/// Throws UsageError when the document is not railkit.results/1, a field has the wrong type, or
/// a run.backend "sim" document does not say simulated: true.
void from_json(const nlohmann::json& j, ResultsDocument& d);

/// Loads and validates a results document from a file. Throws IoError / UsageError naming the file.
ResultsDocument load_results(const std::string& path);

}  // namespace railkit
