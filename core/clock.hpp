#pragma once
// Wall-clock time for documents (dates of runs, sweeps and profiles).
#include <string>

namespace railkit {

/// Current UTC time as ISO 8601 ("2026-11-29T17:02:17Z").
std::string utc_now_iso();

}  // namespace railkit
