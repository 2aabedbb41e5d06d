#include "bench/prom_report.hpp"

#include <algorithm>
#include <cmath>
#include <tuple>
#include <vector>

#include <fmt/format.h>

#include "core/prom.hpp"
#include "core/units.hpp"

namespace railkit::bench {

std::string render_bench_prometheus(const ResultsDocument& doc, double end_unix_s) {
  std::vector<const ResultRecord*> recs;
  for (const ResultRecord& r : doc.results) recs.push_back(&r);
  const auto key = [](const ResultRecord* r) {
    return std::tuple(r->op, r->group.value_or(""), r->bytes, r->in_place, r->cycle);
  };
  std::stable_sort(recs.begin(), recs.end(), [&](const auto* a, const auto* b) { return key(a) < key(b); });
  const bool cycles = std::any_of(recs.begin(), recs.end(), [](const auto* r) { return r->cycle != 0; });

  std::string busbw = prom_help_type("railkit_bench_busbw_gbps",
                                     "Bus bandwidth measured by railkit-bench, GB/s (1e9 B/s), as nccl-tests' busbw.");
  std::string time = prom_help_type("railkit_bench_time_us",
                                    "Time per collective measured by railkit-bench, microseconds (the results "
                                    "document's time_us.avg).");
  for (const ResultRecord* r : recs) {
    std::vector<std::pair<std::string, std::string>> l{{"op", r->op},
                                                       {"bytes", std::to_string(r->bytes)},
                                                       {"size", format_bytes(r->bytes)},
                                                       {"placement", r->in_place ? "in_place" : "out_of_place"}};
    if (r->group) l.emplace_back("group", *r->group);
    if (cycles) l.emplace_back("cycle", std::to_string(r->cycle));
    l.emplace_back("backend", doc.run.backend);
    l.emplace_back("label", doc.run.label);
    if (doc.simulated) l.emplace_back("simulated", "true");  // never mistaken for a measurement
    const std::string labels = prom_labels(l);
    // Shortest text that reads back as the same double: the values equal the -J document's.
    if (std::isfinite(r->busbw_GBps)) busbw += fmt::format("railkit_bench_busbw_gbps{{{}}} {}\n", labels, r->busbw_GBps);
    if (std::isfinite(r->time_us.avg)) time += fmt::format("railkit_bench_time_us{{{}}} {}\n", labels, r->time_us.avg);
  }
  return busbw + time +
         prom_help_type("railkit_bench_last_run_timestamp_seconds",
                        "When the railkit-bench run of this file ended (Unix time).") +
         fmt::format("railkit_bench_last_run_timestamp_seconds {:.3f}\n", end_unix_s);
}

}  // namespace railkit::bench
