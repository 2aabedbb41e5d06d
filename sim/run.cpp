#include "sim/run.hpp"

#include <filesystem>
#include <system_error>

#include <fmt/format.h>

#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "core/json_text.hpp"
#include "sim/network.hpp"
#include "sim/report.hpp"
#include "sim/scenario.hpp"

namespace railkit::sim {

int run_sim(const SimOptions& o, std::ostream& out, std::ostream& err) {
  const Scenario s = load_scenario(o.scenario, o.set);
  const std::filesystem::path dir = o.out_dir.empty() ? std::filesystem::path("railkit-sim-" + s.name) : std::filesystem::path(o.out_dir);
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw IoError(fmt::format("--out {}: cannot create the directory: {}", dir.string(), ec.message()));
  check_writable(dir / "sim.json", "--out");
  const SimResult r = run_scenario(s, &err);
  write_file_atomic(dir / "sim.json", json_dump(sim_document(s, r), 1) + "\n");
  write_file_atomic(dir / "flows.csv", flows_csv(r));
  write_file_atomic(dir / "ports.csv", ports_csv(r));
  if (!o.quiet) {
    out << summary_text(r);
    out << "# wrote " << (dir / "sim.json").string() << ", flows.csv, ports.csv (simulated)\n";
  }
  if (r.deadlock) {
    out.flush();
    err << "railkit-sim: " << deadlock_text(*r.deadlock) << "; the run stopped there (" << (dir / "sim.json").string()
        << ": deadlock)\n";
    return kExitDeadlock;
  }
  return 0;
}

}  // namespace railkit::sim
