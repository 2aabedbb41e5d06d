#pragma once
// Search strategies of `railkit tune`. A strategy proposes one configuration at a time and is
// told its objective before the next proposal. It is deterministic: the same space, budget,
// seed and sequence of observed objectives give the same proposals. That is how a tuning
// session resumes: it replays the journal's trials into a fresh strategy.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "tuner/space.hpp"

namespace railkit::tuner {

/// One trial to run: a configuration and how long to measure it (a multiple of the base
/// iteration count; successive halving gives survivors more).
struct Proposal {
  Config config;
  int fidelity = 1;
  bool operator==(const Proposal&) const = default;
};

class Strategy {
 public:
  virtual ~Strategy() = default;
  /// The next trial, or nullopt when the search is over (budget spent or nothing left to try).
  virtual std::optional<Proposal> propose() = 0;
  /// The outcome of the proposal just made: objective (higher is better; GB/s), or nullopt when
  /// the trial failed or timed out (never the best; the search goes on).
  virtual void observe(const Proposal& p, std::optional<double> objective) = 0;
  /// "grid" | "random" | "coordinate" | "halving".
  virtual std::string_view name() const = 0;
};

/// Names of the strategies, in the order `--help` lists them.
inline constexpr std::string_view kStrategies[] = {"grid", "random", "coordinate", "halving"};

/// kStrategies joined with `sep`, for help and error texts ("grid, random, coordinate, halving").
std::string strategy_names(std::string_view sep = ", ");

/// Builds a strategy. `budget` = most trials (0 = no limit; only grid allows it). Every strategy
/// proposes the baseline configuration first. Throws UsageError for an unknown name or a budget
/// the strategy cannot use.
///  - grid: every configuration of all_configs(), baseline first, until the budget.
///  - random: the baseline, then distinct configurations drawn with `seed`, until the budget.
///  - coordinate: AutoCCL-style. Categorical knobs are tried value by value, numeric knobs
///    hill-climbed from the current best; passes repeat until one improves nothing by more than
///    1% or the budget is spent.
///  - halving: successive halving, eta = 3. A first rung of distinct configurations (baseline
///    included, drawn with `seed`) at fidelity 1; the best third go on at fidelity 3, then 9 ...
///    until one is left. The rung sizes fit the budget.
std::unique_ptr<Strategy> make_strategy(std::string_view name, const Space& space, int budget, std::uint64_t seed);

}  // namespace railkit::tuner
