#include "sweep/prom.hpp"

#include <cmath>

#include <fmt/format.h>

#include "core/prom.hpp"

namespace railkit::sweep {

std::string render_sweep_prometheus(const std::vector<CompareInput>& inputs, double end_unix_s) {
  std::string busbw = prom_help_type("railkit_sweep_busbw_gbps",
                                     "Bus bandwidth of a railkit sweep configuration and round, GB/s (1e9 B/s), as "
                                     "nccl-tests' busbw.");
  std::string time = prom_help_type("railkit_sweep_time_us",
                                    "Time per collective of a railkit sweep configuration and round, microseconds (the "
                                    "results document's time_us.avg).");
  const auto add = [&](const std::string& config, int round, const ResultsDocument& doc) {
    PromSampleOptions o;
    o.leading = {{"config", config}, {"round", std::to_string(round)}};
    o.run_label = false;  // the configuration's name is the label railkit sweep gives the bench
    o.timing_method = true;
    for (const PromResultSample& s : prom_result_samples(doc, o)) {
      const std::string labels = prom_labels(s.labels);
      if (std::isfinite(s.busbw_GBps)) busbw += fmt::format("railkit_sweep_busbw_gbps{{{}}} {}\n", labels, s.busbw_GBps);
      if (std::isfinite(s.time_us)) time += fmt::format("railkit_sweep_time_us{{{}}} {}\n", labels, s.time_us);
    }
  };
  for (const CompareInput& in : inputs) {
    if (!in.rounds.empty()) {
      for (const RoundDoc& r : in.rounds) add(in.name, r.round, r.doc);
    } else if (in.doc) {
      add(in.name, 1, *in.doc);
    }
  }
  return busbw + time +
         prom_help_type("railkit_sweep_last_run_timestamp_seconds",
                        "When the railkit sweep run that wrote this file ended (Unix time).") +
         fmt::format("railkit_sweep_last_run_timestamp_seconds {:.3f}\n", end_unix_s);
}

}  // namespace railkit::sweep
