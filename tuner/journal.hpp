#pragma once
// The journal of a tuning session, DIR/journal.jsonl: one JSON object per line, appended and
// flushed (fsync) as each event happens, so a crash, Ctrl-C or kill -9 loses nothing finished.
// Line types: "session" (first line: everything needed to continue), "trial", "validation",
// "done". Format in tuner/README.md.
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

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

}  // namespace railkit::tuner
