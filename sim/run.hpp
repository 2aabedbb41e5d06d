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

/// Exit status of a run that a PFC deadlock stopped (README.md, "Exit codes").
inline constexpr int kExitDeadlock = 12;

/// Runs the scenario and writes DIR/sim.json (railkit.sim/1), DIR/flows.csv and DIR/ports.csv,
/// each atomically. Returns 0, or kExitDeadlock when a PFC deadlock stopped the run (the
/// documents are written, with the finding; one line on `err` names the ports). Throws
/// UsageError for a bad scenario (exit 6) and IoError when the output cannot be written (exit 9).
int run_sim(const SimOptions& o, std::ostream& out, std::ostream& err);

}  // namespace railkit::sim
