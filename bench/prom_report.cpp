#include "bench/prom_report.hpp"

#include <cmath>

#include <fmt/format.h>

#include "core/prom.hpp"

namespace railkit::bench {

std::string render_bench_prometheus(const ResultsDocument& doc, double end_unix_s) {
  std::string busbw = prom_help_type("railkit_bench_busbw_gbps",
                                     "Bus bandwidth measured by railkit-bench, GB/s (1e9 B/s), as nccl-tests' busbw.");
  std::string time = prom_help_type("railkit_bench_time_us",
                                    "Time per collective measured by railkit-bench, microseconds (the results "
                                    "document's time_us.avg).");
  PromSampleOptions opts;
  opts.timing_method = doc.run.timing_method != "back_to_back";  // the default keeps the labels series always had
  for (const PromResultSample& s : prom_result_samples(doc, opts)) {
    const std::string labels = prom_labels(s.labels);
    // Shortest text that reads back as the same double: the values equal the -J document's.
    if (std::isfinite(s.busbw_GBps)) busbw += fmt::format("railkit_bench_busbw_gbps{{{}}} {}\n", labels, s.busbw_GBps);
    if (std::isfinite(s.time_us)) time += fmt::format("railkit_bench_time_us{{{}}} {}\n", labels, s.time_us);
  }
  return busbw + time +
         prom_help_type("railkit_bench_last_run_timestamp_seconds",
                        "When the railkit-bench run of this file ended (Unix time).") +
         fmt::format("railkit_bench_last_run_timestamp_seconds {:.3f}\n", end_unix_s);
}

}  // namespace railkit::bench
