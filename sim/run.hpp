#pragma once
// `railkit-sim SCENARIO [--out DIR] [--set key=value]...`: load, run, write, summarise.
#include <ostream>
#include <string>
#include <vector>

namespace railkit::sim {

/// Options of railkit-sim, as parsed by its main.
struct SimOptions {
  std::string scenario;              ///< YAML or JSON scenario file
  std::string out_dir;               ///< "": ./railkit-sim-<scenario name>
  std::vector<std::string> set;      ///< overrides key.path=value, applied in order
  bool quiet = false;                ///< no summary on `out`
};

/// Runs the scenario and writes DIR/sim.json (railkit.sim/1), DIR/flows.csv and DIR/ports.csv,
/// each atomically. Returns 0. Throws UsageError for a bad scenario (exit 6) and IoError when the
/// output cannot be written (exit 9).
int run_sim(const SimOptions& o, std::ostream& out);

}  // namespace railkit::sim
