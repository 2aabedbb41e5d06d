#pragma once
// Reporters format measurements; measurement code never prints (nvbench's rule).
#include <memory>
#include <optional>
#include <ostream>
#include <span>
#include <string>
#include <vector>

#include "bench/options.hpp"
#include "bench/types.hpp"
#include "core/results.hpp"

namespace railkit::bench {

/// One table row: one size of one collective, out-of-place and/or in-place.
struct Row {
  Coll coll;
  CollSizes sizes;
  std::optional<ResultRecord> out;
  std::optional<ResultRecord> in;
  std::string group;  ///< --split group name, empty without a split
};

struct RankLine {
  int rank;
  int pid;
  std::string host;
  std::string device;  ///< "host" or the rank's GPU
};

/// What the header shows before any measurement.
struct RunHeader {
  RunInfo run;
  BenchOptions options;
  std::vector<RankLine> ranks;
  std::vector<std::string> notes;  ///< "# note: ..." lines (rounding, skipped sizes)
  std::vector<std::string> lines;  ///< "# ..." lines after the first (the sim backend's -c line)
  std::vector<std::string> warnings;  ///< "# warning: ..." lines after the ranks (transport, affinity), as summarize_warnings
};

class Reporter {
 public:
  virtual ~Reporter() = default;
  virtual void run_start(const RunHeader& h) = 0;
  virtual void coll_start(Coll c, int cycle) = 0;
  virtual void row(const Row& r) = 0;
  /// `doc` holds every result and the summary; `error` is set when the run ends early.
  virtual void run_end(const ResultsDocument& doc) = 0;
};

/// nccl-tests' table, columns in its order, railkit's extra columns at the end of each row.
class TableReporter final : public Reporter {
 public:
  explicit TableReporter(std::ostream& os) : os_(os) {}
  void run_start(const RunHeader& h) override;
  void coll_start(Coll c, int cycle) override;
  void row(const Row& r) override;
  void run_end(const ResultsDocument& doc) override;

 private:
  std::ostream& os_;
  bool multi_cycle_ = false;
  bool split_ = false;
};

/// Formats a value the way nccl-tests does in a column of `width`: 2 decimals, fewer when wide.
std::string format_column(double value, int width);

/// The header line of a simulated run (run.timing "simulated"), from run.sim: "SIMULATED: cluster
/// NAME (FILE): N nodes x G GPUs, R Gb/s NICs, S spines, oversubscription O:1, NVLink V Gb/s;
/// fidelity F, seed S ...; every figure below is simulated, not measured". Empty for real runs.
std::string simulated_banner(const RunInfo& run);

/// What follows "# Timing: " in the table's header: how iterations were timed, from
/// run.timing_method ("back-to-back: ...", "barrier-separated (--sync): ...") or, on a simulated
/// run, "simulated: ...".
std::string timing_line(const RunInfo& run);

}  // namespace railkit::bench
