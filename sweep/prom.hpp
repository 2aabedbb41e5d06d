#pragma once
// `railkit sweep --prom FILE`: the results of a whole sweep as one node_exporter textfile.
#include <string>
#include <vector>

#include "sweep/compare.hpp"

namespace railkit::sweep {

/// The textfile of a sweep (README.md, "Metrics and history"): per record of every round
/// that finished ok, railkit_sweep_busbw_gbps (GB/s, 1e9 B/s) and railkit_sweep_time_us (the
/// record's time_us.avg), labels config, round, then prom_result_samples' op, bytes, size,
/// placement, group, cycle, backend, timing_method and simulated="true" (simulated rounds only);
/// then railkit_sweep_last_run_timestamp_seconds = `end_unix_s` (Unix time, s). `inputs` as
/// sweep_inputs gives them (a configuration's rounds); a loose document (no rounds) counts as
/// round 1. Values that are not finite are left out. Each metric's # HELP / # TYPE once.
std::string render_sweep_prometheus(const std::vector<CompareInput>& inputs, double end_unix_s);

}  // namespace railkit::sweep
