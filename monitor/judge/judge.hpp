#pragma once
// The judge of `railkit monitor judge` (monitor/README.md section 2): from the windows of every
// rank, names the rank that starts late, the NIC whose proxy traffic lags and the communicator
// that stopped progressing; each finding with its evidence and the rule that judged it.
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/enums.hpp"
#include "monitor/judge/window.hpp"

namespace railkit::monitor {

inline constexpr const char* kVerdictSchema = "railkit.monitor.verdict/1";

/// The thresholds (the flags of `railkit monitor judge`).
struct JudgeOptions {
  double late_us = 500;          ///< late-start: a start later than the peers' median by more than this (us) ...
  double late_time_share = 0.2;  ///< ... and than this share of the collective's median time
  double late_fraction = 0.5;    ///< ... in at least this share of the aligned collectives
  int min_aligned = 8;           ///< aligned collectives needed to judge late-start and waits-least
  int min_ranks = 3;             ///< ranks with samples needed (a median of at least 2 peers)
  double least_fraction = 0.5;   ///< waits-least: shortest time in at least this share
  double nic_fraction = 0.5;     ///< nic-lag: bytes per busy second below this x the job's NIC median
  int min_nics = 3;              ///< NICs with traffic needed to judge nic-lag
  double nic_min_busy_s = 0.01;  ///< a NIC busy for less is not judged (its rate is noise)
  double hang_factor = 10;       ///< hang: oldest in-flight older than this x the usual time ...
  double hang_min_s = 5;         ///< ... and at least this many seconds
  double silent_windows = 3;     ///< a rank whose last window ended more windows ago than this is silent
  std::optional<double> now_unix_s;  ///< "now" (Unix seconds); the clock when absent
};

/// One row of the verdict: a check of one subject (a rank, a NIC, a communicator).
struct Finding {
  std::string check;  ///< "late-start" | "waits-least" | "nic-lag" | "hang"
  std::string job, comm;
  std::optional<int> rank;
  std::string host, gpu, nic;  ///< empty when the subject is not one host (a communicator, a job)
  Verdict verdict = Verdict::Skipped;
  std::string measured;   ///< short text for the table
  std::string expected;   ///< short text for the table
  std::string rule;       ///< short name of the rule ("peers' median start")
  std::string rule_text;  ///< the rule with its thresholds, as it judged
  std::string reason;     ///< why skipped or reported; what failed
  nlohmann::ordered_json evidence = nlohmann::ordered_json::object();
};

/// A Prometheus series of the verdict: 1 flagged, 0 judged clean (absent when not judged).
struct VerdictSeries {
  std::string metric;  ///< railkit_monitor_straggler | railkit_monitor_nic_lag | railkit_monitor_hang
  std::vector<std::pair<std::string, std::string>> labels;
  int value = 0;
};

/// What the judge concluded.
struct MonitorVerdict {
  std::vector<Finding> findings;
  std::vector<VerdictSeries> series;
  std::string source = "nccl";  ///< "nccl", "simulated", or "nccl+simulated" (mixed jobs)
  double now_unix_s = 0;
  JudgeOptions options;
  nlohmann::ordered_json inputs = nlohmann::ordered_json::object();  ///< dirs, files, lines, windows, problems
  nlohmann::ordered_json groups = nlohmann::ordered_json::array();   ///< per job and comm: ranks, hosts, source
  std::vector<std::string> notes;  ///< what a reader must know (simulated source, skipped inputs)
  /// A simulated window was among the inputs: never a measured verdict.
  bool simulated() const { return source != "nccl"; }
  /// fail when a finding failed; else pass when one passed; else reported when one was
  /// reported; else skipped.
  Verdict overall() const;
  /// Findings per verdict name (pass, fail, skipped, explained, reported), every name present.
  std::map<std::string, int> counts() const;
  /// One line: "2 checks failed: late-start (node07 rank 3) ...", "5 checks judged, all passed".
  std::string reason() const;
};

/// Judges every job and communicator of the corpus. Pure: the same corpus, options and now
/// give the same verdict.
MonitorVerdict judge(const Corpus& corpus, const JudgeOptions& opts);

/// verdict.json (`railkit.monitor.verdict/1`).
nlohmann::ordered_json to_json(const MonitorVerdict& v);
/// verdict.prom: the series with # HELP/# TYPE, simulated="true" on every series of a simulated
/// verdict, and railkit_monitor_verdict_timestamp_seconds.
std::string render_prometheus(const MonitorVerdict& v);

// The rules, one per check (each in its own source); exposed for the tests.
/// late-start and waits-least of one communicator (its ranks' streams).
void judge_stragglers(const std::string& job, const std::string& comm, const std::vector<const RankStream*>& ranks,
                      const JudgeOptions& opts, MonitorVerdict& out);
/// hang of one communicator at `now_unix_s`.
void judge_hang(const std::string& job, const std::string& comm, const std::vector<const RankStream*>& ranks,
                const JudgeOptions& opts, double now_unix_s, MonitorVerdict& out);
/// nic-lag over every NIC of one job.
void judge_nics(const std::string& job, const std::vector<const RankStream*>& streams, const JudgeOptions& opts,
                MonitorVerdict& out);

}  // namespace railkit::monitor
