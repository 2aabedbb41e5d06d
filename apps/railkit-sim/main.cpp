// `railkit-sim`: the RoCE fabric simulator (ns-3). Parses the flags into SimOptions and runs
// sim::run_sim; errors are caught once, in guarded_main (scenario errors: exit 6). A run that a
// PFC deadlock stopped exits sim::kExitDeadlock (12).
#include <CLI/CLI.hpp>

#include <iostream>

#include "core/error.hpp"
#include "core/main_guard.hpp"
#include "core/version.hpp"
#include "sim/run.hpp"

namespace {

int run(int argc, char** argv) {
  CLI::App app{"railkit-sim: simulate a RoCE fabric (DCQCN, ECN, PFC) on ns-3; every figure it writes is simulated"};
  app.set_version_flag("--version", std::string("railkit-sim ") + railkit::kVersion);
  railkit::sim::SimOptions o;
  app.add_option("scenario", o.scenario, "scenario file (YAML or JSON; format: sim/README.md)")->required();
  app.add_option("--out", o.out_dir, "output directory for sim.json, flows.csv, ports.csv (default ./railkit-sim-<name>)");
  app.add_option("--set", o.set, "override a scenario key, e.g. --set nic.cc=none --set duration=2ms (repeatable)")
      ->allow_extra_args(false);
  app.add_flag("-q,--quiet", o.quiet, "no summary on stdout");
  try {
    app.parse(argc, argv);
  } catch (const CLI::Success& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return railkit::exit_code(railkit::ErrorCode::Usage);
  }
  return railkit::sim::run_sim(o, std::cout, std::cerr);
}

}  // namespace

int main(int argc, char** argv) {
  return railkit::guarded_main("railkit-sim", [&] { return run(argc, argv); });
}
