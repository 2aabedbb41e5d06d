#include "tuner/strategy.hpp"

#include <algorithm>
#include <climits>
#include <cmath>
#include <limits>
#include <map>
#include <random>
#include <set>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/strings.hpp"

namespace railkit::tuner {
namespace {

/// Configurations larger than this are refused by grid without a budget (as all_configs does).
constexpr std::size_t kGridLimit = 100000;
/// Random draws tried for an unseen configuration before walking to the next unseen one.
constexpr int kDrawTries = 256;
/// An objective must beat the current best by this fraction to be adopted (coordinate).
constexpr double kMinGain = 0.01;

/// A uniform draw in [0, n) from a 64-bit generator, by rejection: the same on every standard
/// library, unlike std::uniform_int_distribution.
std::uint64_t draw_below(std::mt19937_64& rng, std::uint64_t n) {
  const std::uint64_t rem = (std::numeric_limits<std::uint64_t>::max() % n + 1) % n;  // 2^64 mod n
  for (;;) {
    const std::uint64_t x = rng();
    if (rem == 0 || x < 0 - rem) return x % n;  // 0 - rem = 2^64 - rem: the largest multiple of n
  }
}

/// The canonical configuration after `c` in lexicographic order (the order of all_configs
/// without its baseline first), or nullopt after the last one.
std::optional<Config> next_config(const Space& s, Config c) {
  for (std::size_t k = s.knobs.size(); k-- > 0;) {
    if (!knob_active(s, c, k) || c[k] + 1 >= s.knobs[k].values.size()) continue;
    ++c[k];
    for (std::size_t j = k + 1; j < c.size(); ++j) c[j] = knob_active(s, c, j) ? 0 : s.knobs[j].baseline;
    return c;
  }
  return std::nullopt;
}

/// The lexicographically first canonical configuration.
Config first_config(const Space& s) {
  Config c = baseline_config(s);
  for (std::size_t j = 0; j < c.size(); ++j) c[j] = knob_active(s, c, j) ? 0 : s.knobs[j].baseline;
  return c;
}

/// A canonical configuration not in `seen` (which must not hold them all): random index vectors
/// made canonical, and after kDrawTries misses the next unseen one after the last draw in
/// lexicographic order (wrapping), so a nearly exhausted space still ends.
Config draw_unseen(const Space& s, std::mt19937_64& rng, const std::set<Config>& seen) {
  Config c(s.knobs.size());
  for (int t = 0; t < kDrawTries; ++t) {
    for (std::size_t k = 0; k < c.size(); ++k) c[k] = draw_below(rng, s.knobs[k].values.size());
    c = canonical(s, std::move(c));
    if (!seen.contains(c)) return c;
  }
  for (;;) {
    auto next = next_config(s, c);
    c = next ? std::move(*next) : first_config(s);
    if (!seen.contains(c)) return c;
  }
}

/// Whether objective a is better than b by more than `gain` (a fraction of |b|); a failed trial
/// (nullopt) beats nothing and is beaten by any success.
bool beats(std::optional<double> a, std::optional<double> b, double gain) {
  if (!a) return false;
  if (!b) return true;
  return *a > *b + gain * std::abs(*b);
}

std::string budget_problem(std::string_view name) { return fmt::format("--budget must be > 0 for {}", name); }

/// grid: all_configs() order, lazily, so a budget makes any space usable.
class GridStrategy final : public Strategy {
 public:
  GridStrategy(const Space& s, int budget) : s_(s), budget_(budget), base_(canonical(s, baseline_config(s))) {
    if (budget_ == 0 && config_count(s_) > kGridLimit)
      throw UsageError(fmt::format("space '{}' has {} configurations, more than grid runs without --budget ({})", s_.name,
                                   config_count(s_), kGridLimit));
  }
  std::optional<Proposal> propose() override {
    if (budget_ > 0 && made_ >= budget_) return std::nullopt;
    std::optional<Config> c;
    if (made_ == 0) {
      c = base_;
    } else {
      c = cursor_ ? next_config(s_, *cursor_) : first_config(s_);
      if (c && *c == base_) c = next_config(s_, *c);
      if (c) cursor_ = c;
    }
    if (!c) return std::nullopt;
    ++made_;
    return Proposal{*c, 1};
  }
  void observe(const Proposal&, std::optional<double>) override {}
  std::string_view name() const override { return "grid"; }

 private:
  Space s_;
  int budget_;
  Config base_;
  std::optional<Config> cursor_;  ///< the last non-baseline configuration proposed
  int made_ = 0;
};

/// random: the baseline, then distinct random canonical configurations.
class RandomStrategy final : public Strategy {
 public:
  RandomStrategy(const Space& s, int budget, std::uint64_t seed)
      : s_(s), budget_(budget), rng_(seed), count_(config_count(s)) {}
  std::optional<Proposal> propose() override {
    if (made_ >= budget_ || seen_.size() >= count_) return std::nullopt;
    Config c = seen_.empty() ? canonical(s_, baseline_config(s_)) : draw_unseen(s_, rng_, seen_);
    seen_.insert(c);
    ++made_;
    return Proposal{std::move(c), 1};
  }
  void observe(const Proposal&, std::optional<double>) override {}
  std::string_view name() const override { return "random"; }

 private:
  Space s_;
  int budget_;
  std::mt19937_64 rng_;
  std::size_t count_;
  std::set<Config> seen_;
  int made_ = 0;
};

/// Base of the adaptive strategies. The search is written as straight-line code over
/// measure(); each propose() replays it from the start against the objectives observed so far,
/// and the first (config, fidelity) not yet observed is the next proposal. The proposals are
/// thus a pure function of the space, budget, seed and observations, which is what resuming
/// from a journal needs, and no pair is ever proposed twice.
class ReplayStrategy : public Strategy {
 public:
  ReplayStrategy(const Space& s, int budget) : s_(s), budget_(budget) {}

  std::optional<Proposal> propose() final {
    if (pending_)
      throw Error(ErrorCode::Internal, fmt::format("{}: propose() before the last proposal was observed", name()));
    if (static_cast<int>(observed_.size()) >= budget_) return std::nullopt;
    try {
      search();
    } catch (const NeedTrial& need) {
      pending_ = need.proposal;
      return pending_;
    }
    return std::nullopt;
  }

  void observe(const Proposal& p, std::optional<double> objective) final {
    if (!pending_ || !(p == *pending_))
      throw Error(ErrorCode::Internal, fmt::format("{}: observe() of a trial that was not the last proposal", name()));
    observed_.emplace(std::make_pair(p.config, p.fidelity), objective);
    pending_.reset();
  }

 protected:
  /// The search; it ends by returning (nothing left to try) or by measure() asking for a trial.
  virtual void search() = 0;

  /// The objective of `c` at `fidelity`, when observed; otherwise it ends this replay with that
  /// trial as the next proposal.
  std::optional<double> measure(const Config& c, int fidelity) {
    const auto it = observed_.find(std::make_pair(c, fidelity));
    if (it == observed_.end()) throw NeedTrial{Proposal{c, fidelity}};
    return it->second;
  }

  const Space s_;
  const int budget_;

 private:
  struct NeedTrial {
    Proposal proposal;
  };
  std::map<std::pair<Config, int>, std::optional<double>> observed_;
  std::optional<Proposal> pending_;
};

/// coordinate: AutoCCL-style descent from the baseline, categorical knobs first, then numeric.
class CoordinateStrategy final : public ReplayStrategy {
 public:
  CoordinateStrategy(const Space& s, int budget) : ReplayStrategy(s, budget) {
    for (const bool numeric : {false, true})
      for (std::size_t k = 0; k < s_.knobs.size(); ++k)
        if (s_.knobs[k].numeric == numeric) knob_order_.push_back(k);
  }
  std::string_view name() const override { return "coordinate"; }

 private:
  struct Point {
    Config config;
    std::optional<double> objective;
  };

  void search() override {
    Point best{canonical(s_, baseline_config(s_)), std::nullopt};
    best.objective = measure(best.config, 1);
    for (bool improved = true; improved;) {
      improved = false;
      for (const std::size_t k : knob_order_) {
        if (!knob_active(s_, best.config, k)) continue;
        const Point found = s_.knobs[k].numeric ? climb(best, k) : try_values(best, k);
        if (beats(found.objective, best.objective, kMinGain)) {
          best = found;
          improved = true;
        }
      }
    }
  }

  Point at(const Config& from, std::size_t k, std::size_t v) {
    Config c = from;
    c[k] = v;
    c = canonical(s_, std::move(c));
    return Point{c, measure(c, 1)};
  }

  /// The best other value of categorical knob k (ties: the earlier value).
  Point try_values(const Point& best, std::size_t k) {
    Point top{best.config, std::nullopt};
    for (std::size_t v = 0; v < s_.knobs[k].values.size(); ++v) {
      if (v == best.config[k]) continue;
      Point p = at(best.config, k, v);
      if (beats(p.objective, top.objective, 0.0)) top = std::move(p);
    }
    return top;
  }

  /// Hill-climbs numeric knob k over its non-empty values: from the current value, or from the
  /// middle one when it is unset; moves while a neighbour beats the position by kMinGain.
  Point climb(const Point& best, std::size_t k) {
    const auto& values = s_.knobs[k].values;
    std::vector<std::size_t> idx;  // the non-empty values, ascending
    for (std::size_t v = 0; v < values.size(); ++v)
      if (!values[v].empty()) idx.push_back(v);
    if (idx.empty()) return Point{best.config, std::nullopt};
    std::size_t pos = 0;
    Point here{best.config, best.objective};
    if (values[best.config[k]].empty()) {
      pos = idx.size() / 2;
      here = at(best.config, k, idx[pos]);
    } else {
      pos = static_cast<std::size_t>(std::find(idx.begin(), idx.end(), best.config[k]) - idx.begin());
    }
    // First step: both neighbours, the better one that improves sets the direction.
    int dir = 0;
    Point next{best.config, std::nullopt};
    for (const int d : {-1, +1}) {
      if ((d < 0 && pos == 0) || (d > 0 && pos + 1 >= idx.size())) continue;
      Point p = at(best.config, k, idx[d < 0 ? pos - 1 : pos + 1]);
      if (beats(p.objective, here.objective, kMinGain) && beats(p.objective, next.objective, 0.0)) {
        next = std::move(p);
        dir = d;
      }
    }
    while (dir != 0) {
      here = std::move(next);
      pos = dir < 0 ? pos - 1 : pos + 1;
      if ((dir < 0 && pos == 0) || (dir > 0 && pos + 1 >= idx.size())) break;
      next = at(best.config, k, idx[dir < 0 ? pos - 1 : pos + 1]);
      if (!beats(next.objective, here.objective, kMinGain)) break;
    }
    return here;
  }

  std::vector<std::size_t> knob_order_;  ///< categorical knobs, then numeric ones
};

/// halving: successive halving with eta = 3 over a first rung drawn with the seed.
class HalvingStrategy final : public ReplayStrategy {
 public:
  static constexpr std::size_t kEta = 3;

  HalvingStrategy(const Space& s, int budget, std::uint64_t seed) : ReplayStrategy(s, budget) {
    const std::size_t count = config_count(s_);
    // The largest first rung whose rungs all fit the budget (total() grows with n).
    std::size_t lo = 1;
    std::size_t hi = std::min<std::size_t>(count, static_cast<std::size_t>(budget));
    while (lo < hi) {
      const std::size_t mid = lo + (hi - lo + 1) / 2;
      if (total(mid) <= static_cast<std::size_t>(budget))
        lo = mid;
      else
        hi = mid - 1;
    }
    std::mt19937_64 rng(seed);
    std::set<Config> seen;
    first_rung_.push_back(canonical(s_, baseline_config(s_)));
    seen.insert(first_rung_.back());
    while (first_rung_.size() < lo) {
      first_rung_.push_back(draw_unseen(s_, rng, seen));
      seen.insert(first_rung_.back());
    }
  }
  std::string_view name() const override { return "halving"; }

  /// The trials of every rung for a first rung of n.
  static std::size_t total(std::size_t n) {
    std::size_t sum = n;
    while (n > 1) {
      n = (n + kEta - 1) / kEta;
      sum += n;
    }
    return sum;
  }

 private:
  void search() override {
    std::vector<Config> rung = first_rung_;
    int fidelity = 1;
    for (;;) {
      std::vector<std::pair<Config, double>> ok;  // in proposal order
      for (const auto& c : rung)
        if (const auto o = measure(c, fidelity)) ok.emplace_back(c, *o);
      if (rung.size() <= 1) return;
      std::stable_sort(ok.begin(), ok.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
      const std::size_t keep = std::min(ok.size(), (rung.size() + kEta - 1) / kEta);
      if (keep == 0) return;
      rung.clear();
      for (std::size_t i = 0; i < keep; ++i) rung.push_back(ok[i].first);
      fidelity = fidelity > INT_MAX / static_cast<int>(kEta) ? INT_MAX : fidelity * static_cast<int>(kEta);
    }
  }

  std::vector<Config> first_rung_;
};

struct Entry {
  std::string_view name;
  std::unique_ptr<Strategy> (*make)(const Space&, int budget, std::uint64_t seed);
};

constexpr Entry kTable[] = {
    {"grid", [](const Space& s, int b, std::uint64_t) -> std::unique_ptr<Strategy> { return std::make_unique<GridStrategy>(s, b); }},
    {"random",
     [](const Space& s, int b, std::uint64_t seed) -> std::unique_ptr<Strategy> {
       if (b <= 0) throw UsageError(budget_problem("random"));
       return std::make_unique<RandomStrategy>(s, b, seed);
     }},
    {"coordinate",
     [](const Space& s, int b, std::uint64_t) -> std::unique_ptr<Strategy> {
       if (b <= 0) throw UsageError(budget_problem("coordinate"));
       return std::make_unique<CoordinateStrategy>(s, b);
     }},
    {"halving",
     [](const Space& s, int b, std::uint64_t seed) -> std::unique_ptr<Strategy> {
       if (b <= 0) throw UsageError(budget_problem("halving"));
       return std::make_unique<HalvingStrategy>(s, b, seed);
     }},
};

static_assert(names_in_order(kTable, kStrategies, &Entry::name), "kStrategies names kTable's strategies, in its order");

}  // namespace

std::string strategy_names(std::string_view sep) {
  return join(kStrategies, sep);
}

std::unique_ptr<Strategy> make_strategy(std::string_view name, const Space& space, int budget, std::uint64_t seed) {
  if (budget < 0) throw UsageError(fmt::format("--budget must be >= 0, not {}", budget));
  for (const auto& e : kTable)
    if (e.name == name) return e.make(space, budget, seed);
  throw UsageError(fmt::format("unknown strategy '{}' ({})", name, strategy_names()));
}

}  // namespace railkit::tuner
