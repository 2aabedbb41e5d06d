#pragma once
// The tuning session: replays a journal into a fresh strategy, runs the search (one journaled
// railkit-bench launch per trial), validates the candidates against the baseline interleaved,
// takes the fingerprint facts (journaled once) and writes the profile. Used by run_tune and
// resume_tune (tuner/tune.hpp).
#include <filesystem>
#include <iosfwd>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/results.hpp"
#include "launch/bench_run.hpp"
#include "tuner/journal.hpp"
#include "tuner/strategy.hpp"
#include "tuner/tune.hpp"

namespace railkit::tuner {

/// Where a session reports progress.
struct Progress {
  std::ostream& out;
  bool tty = false;    ///< rewrite the running line in place
  bool quiet = false;  ///< no progress at all
};

class Session {
 public:
  /// `o.out_dir` holds the journal (its session line already written); `shown_dir` is the
  /// directory as the user named it, for the resume hint.
  Session(TuneOptions o, BucketWeights weights, std::string shown_dir, char* const* envp, Progress progress);

  /// Runs what the journal lacks: the rest of the search, the validation runs not yet done, the
  /// fingerprint facts, then writes DIR/profile.json and a done line. Throws UsageError when the
  /// journal's trials do not replay, CheckFailed when no trial succeeded, IoError when DCQCN
  /// values cannot be restored first, InterruptedError when a signal stops a launch.
  TuneOutcome run(const JournalRecords& earlier);

 private:
  /// One launch of railkit-bench and what it left.
  struct Launched {
    TrialStatus status = TrialStatus::Interrupted;  ///< Interrupted: not recorded
    std::string results_rel;
    std::optional<ResultsDocument> doc;
    std::string error;
    double elapsed_s = 0;
    int signal = 0;
  };

  void replay(const std::vector<TrialRecord>& trials);
  void search();
  TrialRecord run_trial(const Proposal& p, const std::string& head);
  void report_trial(const TrialRecord& t, const std::string& head);
  void validate(const std::vector<Config>& candidates);
  ValidationRecord run_validation(int round, std::size_t ci, const std::vector<Config>& candidates, int iters,
                                  const std::string& head);
  /// The journaled facts, or (none yet, or a probe failed) the facts of a probe from the
  /// session's source, journaled.
  FingerprintFacts fingerprint(const std::optional<FingerprintFacts>& journaled);
  std::optional<ResultsDocument> cluster_doc();
  TuneOutcome finish(const std::vector<Config>& candidates, const std::optional<FingerprintFacts>& journaled);

  /// `sim_seed`: --backend sim, the seed to simulate with (validation rounds); nullopt: the bench
  /// arguments' own.
  Launched launch(const std::string& base, const std::string& label, const Settings& s, int iters, bool validation,
                  const std::string& head, std::optional<std::uint64_t> sim_seed = std::nullopt);
  /// Runs `railkit dcqcn VERB` once per node through the launcher.
  bool run_dcqcn(const std::string& verb, const std::map<std::string, std::string>& values, std::string& error);
  bool restore_dcqcn(std::string& error);
  bool set_dcqcn(const std::map<std::string, std::string>& values, std::string& error);
  /// Restores DCQCN values at the end; a failure is a warning.
  void finish_dcqcn();
  /// Once, on the first results document of the session: refuses (UsageError, after restoring
  /// DCQCN values) knobs that cannot reach the backend it ran on, unless allow_inert.
  void check_reach(const ResultsDocument& doc, const std::string& what);
  /// Restores DCQCN values and throws InterruptedError with the resume hint.
  [[noreturn]] void interrupted(int signal, const std::string& head);
  void say(const std::string& line);

  TuneOptions o_;
  BucketWeights weights_;
  std::string shown_dir_;
  char* const* envp_;
  Progress progress_;
  std::filesystem::path dir_, journal_;
  launch::LaunchContext ctx_;
  bool has_dcqcn_ = false;  ///< DCQCN knobs applied on the nodes (`railkit dcqcn`); false with --backend sim
  bool reach_checked_ = false;
  std::unique_ptr<Strategy> strategy_;
  std::vector<TrialRecord> trials_;
  std::vector<ValidationRecord> runs_;
  std::optional<ResultsDocument> first_doc_;  ///< a results document of this session, for the cluster facts
};

}  // namespace railkit::tuner
