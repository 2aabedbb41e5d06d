#pragma once
// Setup functions of the `railkit` subcommands defined outside main.cpp. Each registers its
// flags on the subcommand's CLI::App into a plain options struct and returns the action to run.
#include <CLI/CLI.hpp>

#include <functional>

namespace railkit::app {

/// `railkit nccl-log`: summarises NCCL debug logs as JSON (apps/railkit/cmd_nccl_log.cpp).
std::function<int()> setup_nccl_log(CLI::App& app);

}  // namespace railkit::app
