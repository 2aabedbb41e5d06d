#include "accept/runner.hpp"

#include <ostream>
#include <utility>

#include <fmt/format.h>

#include "accept/suite.hpp"

namespace railkit::accept {

InterruptedError accept_interrupted(int signal, const std::filesystem::path& out_dir) {
  return InterruptedError(signal, fmt::format("accept interrupted by signal {}; no report written (the documents and "
                                              "logs of the launches so far are in {})",
                                              signal, out_dir.string()));
}

LaunchBenchRunner::LaunchBenchRunner(launch::LaunchContext ctx, int emulated_rpn, char* const* envp,
                                     std::ostream& progress)
    : ctx_(std::move(ctx)), emulated_rpn_(emulated_rpn), envp_(envp), progress_(progress) {}

BenchOutcome LaunchBenchRunner::run(const std::string& stage, const launch::BenchConfig& config) {
  launch::BenchConfig c = config;
  if (emulated_rpn_ > 0) c.args.insert(c.args.end(), {"--ranks-per-node", std::to_string(emulated_rpn_)});
  launch::LaunchContext ctx = ctx_;
  ctx.bench_args = without_overridden(ctx_.bench_args, c.args);
  progress_ << fmt::format("railkit accept: {}: {} ...\n", stage, c.name) << std::flush;
  const launch::TrialRun tr = launch::run_config(ctx, c, "bench/" + c.name, envp_, {});
  BenchOutcome out;
  out.command = CommandRecord{stage, tr.record.command, tr.launch.describe(), tr.launch.elapsed_s};
  if (tr.launch.end == LaunchResult::End::Interrupted) throw accept_interrupted(tr.launch.signal, ctx_.out_dir);
  if (tr.record.status != TrialStatus::Ok) {
    out.why = tr.record.error;
    progress_ << fmt::format("railkit accept: {}: {} failed: {}\n", stage, c.name, out.why) << std::flush;
    return out;
  }
  out.doc = load_results((ctx_.out_dir / tr.record.results).string());
  refuse_imported(*out.doc, (ctx_.out_dir / tr.record.results).string(), "accept stage");
  return out;
}

}  // namespace railkit::accept
