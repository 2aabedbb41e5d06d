#pragma once
// The journal of a tuning session, DIR/journal.jsonl: one JSON object per line, appended and
// flushed (fsync) as each event happens, so a crash, Ctrl-C or kill -9 loses nothing finished.
// Line types: "session" (first line: everything needed to continue), "trial", "validation",
// "topology" (the fingerprint facts), "done". Each line type is a record below, written by its
// to_json and read back by its *_from_json, here and nowhere else. Format in tuner/README.md.
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/enums.hpp"
#include "tuner/fingerprint.hpp"
#include "tuner/space.hpp"
#include "tuner/strategy.hpp"
#include "tuner/tune.hpp"
#include "tuner/validate.hpp"

namespace railkit::tuner {

inline constexpr const char* kJournalSchema = "railkit.tune-journal/1";

/// Reads every complete line of a journal. A last line cut short by a crash (no newline, or not
/// JSON) is dropped and the file truncated to the last complete line, so appends stay valid.
/// Throws UsageError naming the file for a journal that is not a railkit tuning journal (first
/// line not a session of kJournalSchema) or has a broken line before the last; IoError when
/// unreadable.
std::vector<nlohmann::json> read_journal(const std::filesystem::path& path);

/// Appends one line (compact JSON + '\n') and fsyncs the file. Throws IoError.
void append_journal(const std::filesystem::path& path, const nlohmann::ordered_json& line);

/// The launcher options as the session line and the profile's evidence record them.
nlohmann::json launcher_to_json(const launch::LauncherOptions& l);

/// Per-size busbw: (collective, bytes) -> GB/s.
using SizeValues = std::map<std::pair<std::string, std::uint64_t>, double>;

/// The "session" line: the options of the session (out_dir is not journaled: the journal's
/// directory is), its weights, when and by which railkit it was created.
struct SessionRecord {
  TuneOptions options;
  BucketWeights weights;
  std::string created;          ///< UTC ISO 8601
  std::string railkit_version;
};

/// One finished search trial (a "trial" line).
struct TrialRecord {
  int id = 0;                   ///< from 1
  Proposal proposal;
  std::string label;
  int iters = 0;
  Settings settings;            ///< what the trial set (env, DCQCN attributes)
  TrialStatus status = TrialStatus::Failed;  ///< ok, failed or timeout
  std::string results;          ///< results document, relative to the session directory; "" when none
  std::optional<double> objective;  ///< GB/s; nullopt unless ok
  std::map<BucketKey, double> buckets;
  double elapsed_s = 0;
  std::string started;          ///< UTC ISO 8601
  std::string error;            ///< why it failed; "" when ok
  bool infeasible = false;      ///< its settings cannot run (infeasible_reason); nothing was launched
};

/// The role of a validation run: "baseline" for 0, else "candidate-N" (N from 1, best first).
std::string validation_role(std::size_t candidate);

/// One finished validation run (a "validation" line).
struct ValidationRecord {
  int round = 0;                ///< from 1
  std::string role;             ///< validation_role(): "baseline" | "candidate-1" ...
  std::optional<Config> config; ///< none for the baseline
  Settings settings;
  int iters = 0;
  TrialStatus status = TrialStatus::Failed;
  std::string results;
  std::string backend;          ///< the results document's backend ("" when none)
  std::map<BucketKey, double> buckets;
  SizeValues sizes;
  double elapsed_s = 0;
  std::string error;
  std::optional<std::uint64_t> sim_seed = std::nullopt;  ///< --backend sim: the seed this round simulated
};

/// The end of a session (a "done" line).
struct DoneRecord {
  std::string profile = "profile.json";  ///< relative to the session directory
  bool validated = false;
  std::string finished;                  ///< UTC ISO 8601
};

nlohmann::ordered_json to_json(const SessionRecord& r);
nlohmann::ordered_json to_json(const Space& space, const TrialRecord& r);
nlohmann::ordered_json to_json(const Space& space, const ValidationRecord& r);
nlohmann::ordered_json to_json(const FingerprintFacts& r);  ///< the "topology" line
nlohmann::ordered_json to_json(const DoneRecord& r);

/// The lines read back. `source` names the journal in errors; each throws UsageError for a
/// line that lacks a field or holds a value the space or the status table does not know.
/// session_from_json sets options.out_dir to `dir`; a session line written before the
/// fingerprint source was journaled (no "topo") gives the default source, the measured nodes.
SessionRecord session_from_json(const nlohmann::json& line, const std::filesystem::path& dir);
TrialRecord trial_from_json(const Space& space, const nlohmann::json& line, const std::string& source);
ValidationRecord validation_from_json(const Space& space, const nlohmann::json& line, const std::string& source);
FingerprintFacts topology_from_json(const nlohmann::json& line, const std::string& source);
DoneRecord done_from_json(const nlohmann::json& line, const std::string& source);

/// A journal read back, line by line typed. Lines of an unknown type are skipped.
struct JournalRecords {
  SessionRecord session;
  std::vector<TrialRecord> trials;
  std::vector<ValidationRecord> validations;
  std::optional<FingerprintFacts> topology;
  std::optional<DoneRecord> done;   ///< the last done line
};

/// Types the lines read_journal returned (the first is the session); `dir` is the session
/// directory. Throws UsageError naming the journal.
JournalRecords parse_journal(const std::vector<nlohmann::json>& lines, const std::filesystem::path& dir);

}  // namespace railkit::tuner
