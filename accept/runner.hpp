#pragma once
// The seam between `railkit accept`'s stages and railkit-bench: a stage asks a BenchRunner for one
// launch and gets the results document back (or why there is none). LaunchBenchRunner launches
// for real (launch::run_config); the tests give the stages a fake that answers with synthetic documents.
#include <filesystem>
#include <iosfwd>
#include <optional>
#include <string>

#include "accept/reports.hpp"
#include "core/error.hpp"
#include "core/results.hpp"
#include "launch/bench_run.hpp"

namespace railkit::accept {

/// One launch of railkit-bench for a stage and what came of it.
struct BenchOutcome {
  std::optional<ResultsDocument> doc;  ///< the results document; nullopt when the launch failed
  std::string why;                     ///< why it failed (the end and its telling stderr line)
  CommandRecord command;               ///< what ran, for accept.json's `commands`
};

/// Runs railkit-bench once per call.
class BenchRunner {
 public:
  virtual ~BenchRunner() = default;
  /// One launch for `stage` ("node", "pair" ...) of configuration `c` (c.name: a name unique in the
  /// run, e.g. "pair-round1-confirm"; c.args: the stage's own arguments, e.g. --split, after the
  /// common ones; sizes and collectives there replace the common ones). Throws InterruptedError
  /// when a signal interrupted the launch.
  virtual BenchOutcome run(const std::string& stage, const launch::BenchConfig& c) = 0;
};

/// The InterruptedError of an acceptance run stopped by `signal`: nothing reported, the
/// documents and logs of the launches so far kept in `out_dir`.
InterruptedError accept_interrupted(int signal, const std::filesystem::path& out_dir);

/// The real runner: railkit-bench under the launcher (launch::run_config), results and logs in
/// ctx.out_dir/bench/, progress lines on `progress`. Emulated nodes (emulated_rpn > 0) get
/// `--ranks-per-node emulated_rpn` after the stage's arguments. A launch whose arguments set sizes
/// or collectives (-b, -e, -f, -i, --coll) replaces those of the common arguments (without_overridden).
class LaunchBenchRunner final : public BenchRunner {
 public:
  LaunchBenchRunner(launch::LaunchContext ctx, int emulated_rpn, char* const* envp, std::ostream& progress);
  BenchOutcome run(const std::string& stage, const launch::BenchConfig& c) override;

 private:
  launch::LaunchContext ctx_;
  int emulated_rpn_;
  char* const* envp_;
  std::ostream& progress_;
};

}  // namespace railkit::accept
