// `railkit monitor judge` (placeholder until monitor/judge lands).
#include "apps/railkit/subcommands.hpp"
#include "core/error.hpp"

namespace railkit::app {

std::function<int()> setup_monitor_judge(CLI::App&) {
  return []() -> int { throw UsageError("monitor judge: not built yet"); };
}

}  // namespace railkit::app
