// Search strategies on synthetic objectives with a known optimum and seeded noise.
#include "tuner/strategy.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "core/error.hpp"
#include "tuner_test_util.hpp"

namespace railkit::tuner {
namespace {

using test::make_knob;

/// 3 x 4 x 8 x 7 = 672 configurations: two categorical knobs, then two numeric ones (the first
/// starting unset, the second at its largest value).
Space synthetic_space() {
  Space s;
  s.name = "synthetic";
  s.knobs.push_back(make_knob("NCCL_ALGO", {"", "Ring", "Tree"}, 0, false));
  s.knobs.push_back(make_knob("NCCL_PROTO", {"", "LL", "LL128", "Simple"}, 0, false));
  s.knobs.push_back(make_knob("NCCL_NTHREADS", {"", "64", "128", "192", "256", "320", "384", "512"}, 0, true));
  s.knobs.push_back(make_knob("NCCL_BUFFSIZE", {"65536", "131072", "262144", "524288", "1048576", "2097152", "4194304"},
                              6, true));
  return s;
}

/// A space with a condition, for canonical-only checks.
Space conditional_space() {
  Space s;
  s.name = "conditional";
  s.knobs.push_back(make_knob("NCCL_ALGO", {"", "Ring", "Tree"}, 0, false));
  s.knobs.push_back(make_knob("NCCL_IB_QPS_PER_CONNECTION", {"", "1", "2", "4", "8"}, 0, true));
  s.knobs.push_back(make_knob("NCCL_IB_SPLIT_DATA_ON_QPS", {"0", "1"}, 0, false,
                              Condition{"NCCL_IB_QPS_PER_CONNECTION", ">", {"1"}}));
  return s;
}

/// The noise-free objective (GB/s) of the synthetic space: nearly separable, one optimum at
/// (Tree, LL128, 192 threads, 256 KiB); neighbours of the optimum are at least 5% lower.
double true_objective(const Config& c) {
  static constexpr double kAlgo[] = {0.85, 0.9, 1.0};
  static constexpr double kProto[] = {0.8, 0.7, 1.0, 0.9};
  const double threads = c[2] == 0 ? 0.8 : 1.0 - 0.08 * std::abs(static_cast<double>(c[2]) - 3.0);
  const double buff = 1.0 - 0.06 * std::abs(static_cast<double>(c[3]) - 2.0);
  const double coupling = c[0] == 2 && c[3] < 2 ? 0.95 : 1.0;
  return 100.0 * kAlgo[c[0]] * kProto[c[1]] * threads * buff * coupling;
}

const Config kOptimum{2, 2, 3, 2};

/// A fixed pseudo-random number in [-1, 1) for a trial (config, fidelity, seed).
double unit_noise(const Proposal& p, std::uint64_t seed) {
  std::uint64_t h = seed * 0x9E3779B97F4A7C15ull + static_cast<std::uint64_t>(p.fidelity);
  for (const auto v : p.config) {
    h ^= v + 0x9E3779B97F4A7C15ull + (h << 6) + (h >> 2);
    h = (h ^ (h >> 30)) * 0xBF58476D1CE4E5B9ull;
    h = (h ^ (h >> 27)) * 0x94D049BB133111EBull;
    h ^= h >> 31;
  }
  return static_cast<double>(h >> 11) / static_cast<double>(1ull << 52) - 1.0;
}

/// The measured objective: the true one with multiplicative noise of up to 2% (less at higher
/// fidelity, as a longer measurement is steadier).
std::optional<double> noisy(const Proposal& p, std::uint64_t seed) {
  return true_objective(p.config) * (1.0 + 0.02 * unit_noise(p, seed) / std::sqrt(static_cast<double>(p.fidelity)));
}

struct Trial {
  Proposal proposal;
  std::optional<double> objective;
};

using Objective = std::function<std::optional<double>(const Proposal&)>;

/// Runs a strategy to its end, checking what every strategy promises on the way.
std::vector<Trial> run(Strategy& st, const Space& s, const Objective& f, std::size_t most = 100000) {
  std::vector<Trial> trials;
  std::set<std::pair<Config, int>> seen;
  while (auto p = st.propose()) {
    EXPECT_EQ(p->config, canonical(s, p->config)) << st.name() << ": canonical configurations only";
    EXPECT_TRUE(seen.emplace(p->config, p->fidelity).second) << st.name() << ": proposed twice";
    const auto o = f(*p);
    st.observe(*p, o);
    trials.push_back({*p, o});
    if (trials.size() > most) {
      ADD_FAILURE() << st.name() << ": more than " << most << " proposals";
      break;
    }
  }
  EXPECT_FALSE(st.propose()) << st.name() << ": over means over";
  if (!trials.empty()) {
    EXPECT_EQ(trials.front().proposal, (Proposal{baseline_config(s), 1})) << st.name() << ": the baseline first";
  }
  return trials;
}

/// The trial with the highest objective at the highest fidelity reached (ties: the earlier).
const Trial* best_of(const std::vector<Trial>& trials) {
  int top = 0;
  for (const auto& t : trials)
    if (t.objective) top = std::max(top, t.proposal.fidelity);
  const Trial* best = nullptr;
  for (const auto& t : trials)
    if (t.objective && t.proposal.fidelity == top && (!best || *t.objective > *best->objective)) best = &t;
  return best;
}

std::size_t grid_size() { return all_configs(synthetic_space()).size(); }

TEST(StrategyMake, NamesAndBudgets) {
  const Space s = synthetic_space();
  for (const auto name : kStrategies) {
    const auto st = make_strategy(name, s, 5, 1);
    EXPECT_EQ(st->name(), name);
  }
  EXPECT_NO_THROW(make_strategy("grid", s, 0, 1));
  for (const std::string name : {"random", "coordinate", "halving"}) {
    try {
      make_strategy(name, s, 0, 1);
      ADD_FAILURE() << name << ": budget 0 accepted";
    } catch (const UsageError& e) {
      EXPECT_EQ(std::string(e.what()), "--budget must be > 0 for " + name);
    }
  }
  EXPECT_THROW(make_strategy("grid", s, -1, 1), UsageError);
  EXPECT_THROW(make_strategy("annealing", s, 10, 1), UsageError);
}

TEST(StrategyGrid, VisitsEveryConfigurationInOrder) {
  const Space s = conditional_space();
  const auto all = all_configs(s);
  const auto st = make_strategy("grid", s, 0, 1);
  const auto trials = run(*st, s, [](const Proposal&) { return 1.0; });
  ASSERT_EQ(trials.size(), all.size());
  for (std::size_t i = 0; i < all.size(); ++i) EXPECT_EQ(trials[i].proposal, (Proposal{all[i], 1}));

  Space moved = s;  // a baseline in the middle of the order is not visited twice
  moved.knobs[1].baseline = 3;
  moved.knobs[2].baseline = 1;
  const auto all2 = all_configs(moved);
  const auto st2 = make_strategy("grid", moved, 0, 1);
  const auto trials2 = run(*st2, moved, [](const Proposal&) { return 1.0; });
  ASSERT_EQ(trials2.size(), all2.size());
  for (std::size_t i = 0; i < all2.size(); ++i) EXPECT_EQ(trials2[i].proposal.config, all2[i]);

  const auto st3 = make_strategy("grid", s, 7, 1);
  const auto trials3 = run(*st3, s, [](const Proposal&) { return 1.0; });
  ASSERT_EQ(trials3.size(), 7u);
  for (std::size_t i = 0; i < 7; ++i) EXPECT_EQ(trials3[i].proposal.config, all[i]);
}

TEST(StrategyRandom, ReproducibleBySeedAndNeverRepeats) {
  const Space s = synthetic_space();
  const auto sequence = [&](std::uint64_t seed, int budget) {
    const auto st = make_strategy("random", s, budget, seed);
    std::vector<Config> out;
    for (const auto& t : run(*st, s, [](const Proposal&) { return 1.0; })) out.push_back(t.proposal.config);
    return out;
  };
  const auto a = sequence(42, 50);
  EXPECT_EQ(a.size(), 50u);
  EXPECT_EQ(a, sequence(42, 50));
  EXPECT_NE(a, sequence(43, 50));
  const auto shorter = sequence(42, 20);
  EXPECT_TRUE(std::equal(shorter.begin(), shorter.end(), a.begin())) << "the budget only cuts the sequence";

  // Until the space is exhausted: every configuration once (run() checks the repeats).
  const auto everything = sequence(7, 100000);
  EXPECT_EQ(everything.size(), grid_size());

  const Space c = conditional_space();
  const auto st = make_strategy("random", c, 1000, 3);
  EXPECT_EQ(run(*st, c, [](const Proposal&) { return 1.0; }).size(), config_count(c));
}

TEST(StrategyCoordinate, ClimbsFromTheMiddleOfAnUnsetNumericKnob) {
  Space s;
  s.name = "one";
  s.knobs.push_back(make_knob("NCCL_NTHREADS", {"", "64", "128", "192", "256", "320"}, 0, true));
  const auto st = make_strategy("coordinate", s, 100, 1);
  const auto trials = run(*st, s, [](const Proposal& p) -> std::optional<double> {
    static constexpr double kGBps[] = {50, 60, 80, 70, 60, 55};  // peak at 128
    return kGBps[p.config[0]];
  });
  std::vector<std::size_t> order;
  for (const auto& t : trials) order.push_back(t.proposal.config[0]);
  // unset, the middle (192), its neighbours (128 better, 256), on down (64 worse), then a second
  // pass that finds both neighbours of 128 measured already.
  EXPECT_EQ(order, (std::vector<std::size_t>{0, 3, 2, 4, 1}));
}

TEST(StrategyCoordinate, FindsTheOptimumWithAQuarterOfTheGrid) {
  const Space s = synthetic_space();
  const std::size_t quarter = grid_size() / 4;
  for (const std::uint64_t seed : {1u, 2u, 3u, 4u, 5u}) {
    const auto st = make_strategy("coordinate", s, static_cast<int>(grid_size()), seed);
    const auto trials = run(*st, s, [&](const Proposal& p) { return noisy(p, seed); });
    EXPECT_LE(trials.size(), quarter) << "seed " << seed;
    const Trial* best = best_of(trials);
    ASSERT_NE(best, nullptr);
    EXPECT_GE(true_objective(best->proposal.config), 0.98 * true_objective(kOptimum)) << "seed " << seed;
    EXPECT_EQ(best->proposal.config, kOptimum) << "seed " << seed;
  }
}

TEST(StrategyCoordinate, RespectsTheBudget) {
  const Space s = synthetic_space();
  const auto st = make_strategy("coordinate", s, 6, 1);
  EXPECT_EQ(run(*st, s, [](const Proposal& p) { return noisy(p, 1); }).size(), 6u);
}

TEST(StrategyHalving, RungsFitTheBudgetAndKeepTheBest) {
  const Space s = synthetic_space();
  const int budget = static_cast<int>(grid_size() / 4);  // 168: rungs 110, 37, 13, 5, 2, 1
  int optimum_drawn = 0;
  for (std::uint64_t seed = 1; seed <= 30; ++seed) {
    const auto st = make_strategy("halving", s, budget, seed);
    const auto trials = run(*st, s, [&](const Proposal& p) { return noisy(p, seed); });
    EXPECT_EQ(trials.size(), 168u) << "seed " << seed;

    std::map<int, std::vector<const Trial*>> rungs;
    for (const auto& t : trials) rungs[t.proposal.fidelity].push_back(&t);
    std::vector<std::size_t> sizes;
    int fidelity = 1;
    for (const auto& [f, r] : rungs) {
      EXPECT_EQ(f, fidelity);
      fidelity *= 3;
      sizes.push_back(r.size());
    }
    EXPECT_EQ(sizes, (std::vector<std::size_t>{110, 37, 13, 5, 2, 1})) << "seed " << seed;

    double best_drawn = 0;
    for (const auto* t : rungs[1]) best_drawn = std::max(best_drawn, true_objective(t->proposal.config));
    const Config& last = rungs.rbegin()->second.front()->proposal.config;
    EXPECT_GE(true_objective(last), 0.97 * best_drawn) << "seed " << seed << ": the final survivor is the best drawn";
    if (best_drawn == true_objective(kOptimum)) {
      ++optimum_drawn;
      EXPECT_EQ(last, kOptimum) << "seed " << seed << ": the optimum was drawn and must survive";
    }
  }
  EXPECT_GT(optimum_drawn, 0) << "no seed drew the optimum; the test proves little";
}

TEST(StrategyHalving, SmallSpaceAndTinyBudgets) {
  const Space s = conditional_space();  // 3 x (2 + 3 x 2) = 24 configurations
  const auto st = make_strategy("halving", s, 1000, 5);
  const auto trials = run(*st, s, [](const Proposal& p) { return 1.0 + static_cast<double>(p.config[1]); });
  std::set<Config> first;
  for (const auto& t : trials)
    if (t.proposal.fidelity == 1) first.insert(t.proposal.config);
  EXPECT_EQ(first.size(), config_count(s)) << "the first rung is capped by the space";
  EXPECT_EQ(trials.size(), 24u + 8u + 3u + 1u);

  for (const int budget : {1, 2, 3, 4, 5}) {
    const auto small = make_strategy("halving", s, budget, 5);
    const auto t = run(*small, s, [](const Proposal&) { return 1.0; });
    EXPECT_LE(t.size(), static_cast<std::size_t>(budget));
    EXPECT_GE(t.size(), budget >= 4 ? 4u : 1u) << "budget " << budget;  // 3 + 1 fits in 4
  }
}

/// Every strategy survives failed trials, a failing baseline included, and never calls one best.
TEST(StrategyAll, ToleratesFailedTrials) {
  const Space s = synthetic_space();
  const Config base = baseline_config(s);
  const auto f = [&](const Proposal& p) -> std::optional<double> {
    if (p.config == base || p.config[1] == 1) return std::nullopt;  // the baseline and every LL run fail
    return noisy(p, 9);
  };
  for (const auto name : kStrategies) {
    const auto st = make_strategy(name, s, 150, 9);
    const auto trials = run(*st, s, f);
    EXPECT_LE(trials.size(), 150u) << name;
    EXPECT_FALSE(trials.front().objective) << name;
    const Trial* best = best_of(trials);
    ASSERT_NE(best, nullptr) << name;
    EXPECT_NE(best->proposal.config[1], 1u) << name;
    if (name == "coordinate") {
      EXPECT_EQ(best->proposal.config, kOptimum);
    }
    if (name == "halving") {
      // A configuration goes on to fidelity 3f only after succeeding at f.
      std::set<std::pair<Config, int>> ok;
      for (const auto& t : trials) {
        if (t.proposal.fidelity > 1) {
          EXPECT_TRUE(ok.contains({t.proposal.config, t.proposal.fidelity / 3})) << "a failed trial survived";
        }
        if (t.objective) ok.emplace(t.proposal.config, t.proposal.fidelity);
      }
    }
  }
  for (const auto name : kStrategies) {  // nothing ever succeeds
    const auto st = make_strategy(name, s, 40, 9);
    const auto trials = run(*st, s, [](const Proposal&) { return std::nullopt; });
    EXPECT_GE(trials.size(), 1u) << name;
    EXPECT_LE(trials.size(), 40u) << name;
    EXPECT_EQ(best_of(trials), nullptr) << name;
  }
}

TEST(StrategyAll, BaselineFirstAndCanonicalOnConditionalSpaces) {
  Space s = conditional_space();
  s.knobs[1].baseline = 3;  // QPS 4: SPLIT active in the baseline
  for (const auto name : kStrategies) {
    const auto st = make_strategy(name, s, 12, 11);
    const auto trials = run(*st, s, [](const Proposal& p) { return 10.0 + static_cast<double>(p.config[2]); });
    EXPECT_LE(trials.size(), 12u) << name;
    ASSERT_FALSE(trials.empty());
    EXPECT_EQ(trials.front().proposal, (Proposal{baseline_config(s), 1})) << name;
  }
}

/// `railkit tune --resume`: a fresh strategy fed the journal's objectives proposes the same.
TEST(StrategyAll, ReplayGivesTheSameProposals) {
  const Space s = synthetic_space();
  const auto f = [](const Proposal& p) -> std::optional<double> {
    if (p.config[1] == 1 && p.config[3] == 0) return std::nullopt;
    return noisy(p, 21);
  };
  for (const auto name : kStrategies) {
    const auto first = make_strategy(name, s, 120, 77);
    const auto journal = run(*first, s, f);
    ASSERT_FALSE(journal.empty());
    const auto fresh = make_strategy(name, s, 120, 77);
    for (const auto& t : journal) {
      const auto p = fresh->propose();
      ASSERT_TRUE(p) << name;
      ASSERT_EQ(*p, t.proposal) << name;
      fresh->observe(*p, t.objective);
    }
    EXPECT_FALSE(fresh->propose()) << name;
  }
}

TEST(StrategyAll, ObserveMustMatchTheProposal) {
  const Space s = synthetic_space();
  const auto st = make_strategy("coordinate", s, 10, 1);
  const auto p = st->propose();
  ASSERT_TRUE(p);
  EXPECT_THROW(st->propose(), Error);
  EXPECT_THROW(st->observe(Proposal{p->config, 3}, 1.0), Error);
  EXPECT_NO_THROW(st->observe(*p, 1.0));
}

}  // namespace
}  // namespace railkit::tuner
