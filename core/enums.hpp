#pragma once
// Enumerations the control plane records in documents, with one name table each (the names are
// what the documents and the console show).
#include <optional>
#include <string>
#include <string_view>

namespace railkit {

/// What became of one launch of railkit-bench (a sweep configuration, a tuning trial, an
/// acceptance stage). Interrupted launches are not recorded.
enum class TrialStatus { Ok, Failed, Timeout, Interrupted };

/// How a check of `railkit accept` was judged. Reported: measured, but no rule judged it (never
/// counted as a pass).
enum class Verdict { Pass, Fail, Skipped, Explained, Reported };

/// "ok", "failed", "timeout", "interrupted".
std::string_view name(TrialStatus s) noexcept;
/// "pass", "fail", "skipped", "explained", "reported".
std::string_view name(Verdict v) noexcept;

std::optional<TrialStatus> parse_trial_status(std::string_view s) noexcept;
std::optional<Verdict> parse_verdict(std::string_view s) noexcept;
/// Every verdict's name, for messages: "pass, fail, skipped, explained or reported".
std::string verdict_names();

}  // namespace railkit
