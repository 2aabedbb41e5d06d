#pragma once
// railkit-bench --prom: the results document as a node_exporter textfile-collector file.
#include <string>

#include "core/results.hpp"

namespace railkit::bench {

/// The textfile of a run (results/README.md#prometheus-textfile---prom): per record
/// railkit_bench_busbw_gbps (GB/s, 1e9 B/s) and railkit_bench_time_us (the record's time_us.avg),
/// labels op, bytes, size ("1MiB"), placement (out_of_place | in_place), group (--split runs
/// only), cycle (only when the document holds more than one -N cycle), backend and label,
/// timing_method (only when not back_to_back: barrier_separated for --sync), and
/// simulated="true" on a simulated run (--backend sim; absent otherwise); then
/// railkit_bench_last_run_timestamp_seconds = `end_unix_s` (Unix time, s). Samples are ordered
/// by op, group, bytes, placement (out first) and cycle; a value that is not finite is left out.
std::string render_bench_prometheus(const ResultsDocument& doc, double end_unix_s);

}  // namespace railkit::bench
