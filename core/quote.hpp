#pragma once
// Quoting of strings for text other programs read back: a POSIX shell word and a YAML
// double-quoted scalar. Shared by the profile exports (profiles/consume) and the job templates
// (launch/job).
#include <string>
#include <string_view>

namespace railkit {

/// `value` in POSIX single quotes: every ' becomes '\'' ; nothing inside is interpreted.
std::string posix_quote(std::string_view value);

/// `value` as a YAML double-quoted scalar: \ " and every control or non-ASCII character escaped
/// (\n, \t, \xNN, \uNNNN, \UNNNNNNNN), so the result is one printable-ASCII line. Throws
/// UsageError naming `where` when `value` is not valid UTF-8 (YAML cannot carry it).
std::string yaml_quote(std::string_view value, std::string_view where);

}  // namespace railkit
