// `railkit nccl-log FILE...`: reads NCCL debug logs (one file per rank, or a directory of them)
// and prints what NCCL did: a short text summary on a terminal, one JSON object otherwise (or as
// --format says); --env checks it against the run's environment.
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "apps/railkit/subcommands.hpp"
#include "core/error.hpp"
#include "core/json_text.hpp"
#include "core/nccl_log.hpp"

namespace railkit::app {
namespace {

struct NcclLogOptions {
  std::vector<std::string> inputs;   ///< files, or directories whose files are read
  std::vector<std::string> env;      ///< KEY=VALUE of the run's environment
  bool check = false;                ///< exit 10 when a contradiction is found
  std::string format;                ///< "text" or "json"; empty: text when stdout is a terminal, else JSON
};

std::vector<std::filesystem::path> expand_inputs(const std::vector<std::string>& inputs) {
  std::vector<std::filesystem::path> files;
  for (const auto& in : inputs) {
    std::error_code ec;
    if (!std::filesystem::is_directory(in, ec)) {
      files.emplace_back(in);  // missing or unreadable: read_nccl_logs names it
      continue;
    }
    std::vector<std::filesystem::path> inside;
    for (const auto& e : std::filesystem::directory_iterator(in, ec))
      if (e.is_regular_file()) inside.push_back(e.path());
    if (ec) throw UsageError("cannot list directory '" + in + "': " + ec.message());
    if (inside.empty()) throw UsageError("directory '" + in + "' holds no log files");
    std::sort(inside.begin(), inside.end());
    files.insert(files.end(), inside.begin(), inside.end());
  }
  return files;
}

int run_nccl_log(const NcclLogOptions& o, std::ostream& out, bool out_is_terminal) {
  auto summary = read_nccl_logs(expand_inputs(o.inputs));
  // What the log itself echoes (`NCCL_X set by environment to V`), overridden by --env.
  std::map<std::string, std::string> env = summary.env_from_log;
  for (const auto& kv : o.env) {
    auto eq = kv.find('=');
    if (eq == std::string::npos || eq == 0) throw UsageError("--env expects KEY=VALUE, got '" + kv + "'");
    env[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  auto contradictions = nccl_log_contradictions(summary, env);
  summary.warnings.insert(summary.warnings.end(), contradictions.begin(), contradictions.end());
  const std::string format = o.format.empty() ? (out_is_terminal ? "text" : "json") : o.format;
  if (format == "text") {
    out << to_text(summary, contradictions);
  } else {
    auto j = to_json(summary);
    j["contradictions"] = contradictions;
    out << json_dump(j, 2) << "\n";
  }
  return o.check && !contradictions.empty() ? exit_code(ErrorCode::CheckFailed) : 0;
}

}  // namespace

std::function<int()> setup_nccl_log(CLI::App& app) {
  auto o = std::make_shared<NcclLogOptions>();
  app.add_option("files", o->inputs,
                 "NCCL_DEBUG=INFO logs (NCCL_DEBUG_SUBSYS=INIT,NET,GRAPH; with BOOTSTRAP for the bootstrap interface): "
                 "one file per rank, or directories of them")
      ->required();
  app.add_option("--env", o->env,
                 "KEY=VALUE of the environment the run had (repeatable); contradictions with the log become warnings")
      ->allow_extra_args(false);
  app.add_flag("--check", o->check, "exit 10 when the log contradicts --env");
  app.add_option("--format", o->format,
                 "text | json (default: text when stdout is a terminal, JSON when it is not, e.g. a pipe or file)")
      ->check(CLI::IsMember({"text", "json"}));
  return [o] { return run_nccl_log(*o, std::cout, ::isatty(STDOUT_FILENO) == 1); };
}

}  // namespace railkit::app
