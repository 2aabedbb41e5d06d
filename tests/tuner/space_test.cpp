// Configuration math of search spaces: conditions, canonical configurations, counting and
// enumeration, settings and labels. Spaces are built by hand (the loader is tested elsewhere).
#include "tuner/space.hpp"

#include <algorithm>
#include <limits>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "core/error.hpp"
#include "tuner_test_util.hpp"

namespace railkit::tuner {
namespace {

using test::make_knob;

/// NCCL_IB_SPLIT_DATA_ON_QPS only matters with more than one QP per connection.
Space qps_space() {
  Space s;
  s.name = "qps";
  s.knobs.push_back(make_knob("NCCL_IB_QPS_PER_CONNECTION", {"", "1", "2", "4"}, 0, true));
  s.knobs.push_back(make_knob("NCCL_IB_SPLIT_DATA_ON_QPS", {"0", "1"}, 0, false,
                              Condition{"NCCL_IB_QPS_PER_CONNECTION", ">", {"1"}}));
  return s;
}

/// Every index vector of the space (the full product), for brute-force checks.
std::vector<Config> product(const Space& s) {
  std::vector<Config> out{Config(s.knobs.size(), 0)};
  for (std::size_t k = 0; k < s.knobs.size(); ++k) {
    std::vector<Config> next;
    for (const auto& c : out)
      for (std::size_t v = 0; v < s.knobs[k].values.size(); ++v) {
        Config d = c;
        d[k] = v;
        next.push_back(d);
      }
    out = std::move(next);
  }
  return out;
}

/// all_configs, config_count and canonical() of the full product must agree.
void expect_consistent(const Space& s) {
  std::set<Config> distinct;
  for (const auto& c : product(s)) {
    const Config k = canonical(s, c);
    EXPECT_EQ(canonical(s, k), k) << "canonical is idempotent";
    distinct.insert(k);
  }
  const auto all = all_configs(s);
  EXPECT_EQ(config_count(s), distinct.size());
  ASSERT_EQ(all.size(), distinct.size());
  EXPECT_EQ(std::set<Config>(all.begin(), all.end()), distinct);
  EXPECT_EQ(all.front(), baseline_config(s));
  EXPECT_TRUE(std::is_sorted(all.begin() + 1, all.end()));
}

TEST(SpaceConfig, BaselineIsEveryKnobAtItsDefault) {
  Space s = qps_space();
  s.knobs[0].baseline = 2;
  EXPECT_EQ(baseline_config(s), (Config{2, 0}));
  EXPECT_EQ(baseline_config(Space{}), Config{});
  EXPECT_EQ(config_count(Space{}), 1u);
  EXPECT_EQ(all_configs(Space{}), std::vector<Config>{Config{}});
}

TEST(SpaceConfig, SplitDataOnlyWithSeveralQps) {
  const Space s = qps_space();
  EXPECT_TRUE(knob_active(s, {0, 0}, 0));
  EXPECT_FALSE(knob_active(s, {0, 1}, 1)) << "unset QPS compares as nothing";
  EXPECT_FALSE(knob_active(s, {1, 1}, 1)) << "QPS 1";
  EXPECT_TRUE(knob_active(s, {2, 1}, 1));
  EXPECT_TRUE(knob_active(s, {3, 0}, 1));
  EXPECT_EQ(canonical(s, {1, 1}), (Config{1, 0}));
  EXPECT_EQ(canonical(s, {3, 1}), (Config{3, 1}));
  EXPECT_EQ(config_count(s), 6u);
  EXPECT_EQ(all_configs(s), (std::vector<Config>{{0, 0}, {1, 0}, {2, 0}, {2, 1}, {3, 0}, {3, 1}}));
  expect_consistent(s);
}

TEST(SpaceConfig, BaselineFirstThenLexicographic) {
  Space s = qps_space();
  s.knobs[0].baseline = 2;  // QPS 2, so SPLIT is active in the baseline
  s.knobs[1].baseline = 1;
  EXPECT_EQ(all_configs(s), (std::vector<Config>{{2, 1}, {0, 1}, {1, 1}, {2, 0}, {3, 0}, {3, 1}}))
      << "inactive SPLIT sits at its baseline 1";
  expect_consistent(s);
}

TEST(SpaceConfig, ConditionOnAnInactiveKnobIsFalse) {
  Space s = qps_space();
  // Active only while SPLIT is 0, but SPLIT itself is inactive (held at 0) without several QPs.
  s.knobs.push_back(make_knob("NCCL_NCHANNELS_PER_NET_PEER", {"", "4"}, 0, true,
                              Condition{"NCCL_IB_SPLIT_DATA_ON_QPS", "==", {"0"}}));
  s.knobs.push_back(make_knob("NCCL_ALGO", {"", "Ring", "Tree"}, 0, false));
  EXPECT_FALSE(knob_active(s, {0, 0, 1, 0}, 2));
  EXPECT_FALSE(knob_active(s, {1, 0, 1, 0}, 2));
  EXPECT_TRUE(knob_active(s, {2, 0, 1, 0}, 2));
  EXPECT_FALSE(knob_active(s, {2, 1, 1, 0}, 2));
  // (""/1: 1 each) + (2/4: SPLIT 0 x 2 channels + SPLIT 1) = 2 + 2 * 3 = 8, times 3 algorithms.
  EXPECT_EQ(config_count(s), 24u);
  expect_consistent(s);
}

TEST(SpaceConfig, ConditionOperators) {
  Space s;
  s.name = "ops";
  s.knobs.push_back(make_knob("NCCL_IB_QPS_PER_CONNECTION", {"", "1", "2", "8"}, 0, true));
  s.knobs.push_back(make_knob("NCCL_IB_SPLIT_DATA_ON_QPS", {"0", "1"}, 0, false));
  const auto active_for = [&](const std::string& op, std::vector<std::string> values) {
    s.knobs[1].when = Condition{"NCCL_IB_QPS_PER_CONNECTION", op, std::move(values)};
    std::vector<bool> out;
    for (std::size_t v = 0; v < 4; ++v) out.push_back(knob_active(s, {v, 0}, 1));
    return out;
  };
  using B = std::vector<bool>;  // for "", 1, 2, 8
  EXPECT_EQ(active_for("==", {"2"}), (B{false, false, true, false}));
  EXPECT_EQ(active_for("==", {"02"}), (B{false, false, true, false})) << "numbers compare as numbers";
  EXPECT_EQ(active_for("==", {""}), (B{true, false, false, false})) << "\"\" matches the unset value";
  EXPECT_EQ(active_for("!=", {"2"}), (B{true, true, false, true}));
  EXPECT_EQ(active_for(">", {"1"}), (B{false, false, true, true}));
  EXPECT_EQ(active_for(">=", {"2"}), (B{false, false, true, true}));
  EXPECT_EQ(active_for("<", {"8"}), (B{false, true, true, false})) << "unset is not less than anything";
  EXPECT_EQ(active_for("<=", {"2"}), (B{false, true, true, false}));
  EXPECT_EQ(active_for(">", {""}), (B{false, false, false, false}));
  EXPECT_EQ(active_for("in", {"1", "8"}), (B{false, true, false, true}));
  EXPECT_EQ(active_for("in", {"", "8"}), (B{true, false, false, true}));
  EXPECT_EQ(active_for("not-in", {"1", "8"}), (B{true, false, true, false}));

  s.knobs[0] = make_knob("NCCL_ALGO", {"", "Ring", "Tree"}, 0, false);
  s.knobs[1].when = Condition{"NCCL_ALGO", "==", {"ring"}};
  EXPECT_TRUE(knob_active(s, {1, 0}, 1)) << "enum values match case-insensitively";
  EXPECT_FALSE(knob_active(s, {2, 0}, 1));
  s.knobs[1].when = Condition{"NCCL_ALGO", ">", {"1"}};
  EXPECT_THROW(knob_active(s, {1, 0}, 1), UsageError) << "Ring > 1 is no comparison";
  EXPECT_FALSE(knob_active(s, {0, 0}, 1)) << "but unset compares as false before anything else";
}

TEST(SpaceConfig, BadConditionsAreUsageErrors) {
  Space s = qps_space();
  s.knobs[1].when->knob = "NCCL_NOPE";
  EXPECT_THROW(knob_active(s, {2, 0}, 1), UsageError);
  s.knobs[1].when->knob = "NCCL_IB_SPLIT_DATA_ON_QPS";  // itself
  EXPECT_THROW(knob_active(s, {2, 0}, 1), UsageError);
  s = qps_space();
  s.knobs[1].when->op = "~=";
  EXPECT_THROW(knob_active(s, {2, 0}, 1), UsageError);
  s = qps_space();
  EXPECT_THROW(canonical(s, {4, 0}), UsageError) << "index out of range";
  EXPECT_THROW(canonical(s, {0}), UsageError) << "wrong size";
}

TEST(SpaceConfig, AllConfigsRefusesMoreThanTheLimit) {
  const Space s = qps_space();
  EXPECT_EQ(all_configs(s, 6).size(), 6u);
  try {
    all_configs(s, 5);
    FAIL() << "no UsageError";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("6 configurations"), std::string::npos) << e.what();
  }
}

TEST(SpaceConfig, CountsWithoutEnumerating) {
  Space s;
  s.name = "wide";
  s.knobs.push_back(make_knob("NCCL_IB_QPS_PER_CONNECTION", {"1", "2", "4", "8"}, 0, true));
  // 40 knobs of 3 values each active only with more than one QP: 1 + 3 * 3^40 overflows.
  for (int i = 0; i < 40; ++i)
    s.knobs.push_back(make_knob("K" + std::to_string(i), {"a", "b", "c"}, 0, false,
                                Condition{"NCCL_IB_QPS_PER_CONNECTION", ">", {"1"}}));
  EXPECT_EQ(config_count(s), std::numeric_limits<std::size_t>::max());
  s.knobs.resize(1 + 20);  // 1 + 3 * 3^20 = 10460353204
  EXPECT_EQ(config_count(s), std::size_t{1} + 3 * std::size_t{3486784401});
  EXPECT_THROW(all_configs(s), UsageError);
}

TEST(SpaceSettings, EnvAndDcqcnOfActiveNonEmptyKnobs) {
  Space s = qps_space();
  s.fixed_env = {{"NCCL_DEBUG", "WARN"}, {"NCCL_IB_TC", "106"}};
  s.knobs.push_back(make_knob("roce_rp.rpg_time_reset", {"", "300", "600"}, 0, true));
  s.knobs.push_back(make_knob("OMPI_MCA_coll_tuned_allreduce_algorithm", {"0", "4"}, 0, false));
  s.knobs.back().tunable = nullptr;  // found by its name

  const Settings base = settings_of(s, baseline_config(s));
  EXPECT_EQ(base.env, (std::map<std::string, std::string>{
                          {"NCCL_DEBUG", "WARN"}, {"NCCL_IB_TC", "106"}, {"OMPI_MCA_coll_tuned_allreduce_algorithm", "0"}}));
  EXPECT_TRUE(base.dcqcn.empty());

  const Settings x = settings_of(s, {3, 1, 2, 1});
  EXPECT_EQ(x.env, (std::map<std::string, std::string>{{"NCCL_DEBUG", "WARN"},
                                                       {"NCCL_IB_TC", "106"},
                                                       {"NCCL_IB_QPS_PER_CONNECTION", "4"},
                                                       {"NCCL_IB_SPLIT_DATA_ON_QPS", "1"},
                                                       {"OMPI_MCA_coll_tuned_allreduce_algorithm", "4"}}));
  EXPECT_EQ(x.dcqcn, (std::map<std::string, std::string>{{"roce_rp.rpg_time_reset", "600"}}));

  EXPECT_EQ(settings_of(s, {1, 1, 0, 0}).env.count("NCCL_IB_SPLIT_DATA_ON_QPS"), 0u) << "inactive: not set";

  s.knobs.push_back(make_knob("NOT_A_TUNABLE", {"x"}, 0, false));
  EXPECT_THROW(settings_of(s, {0, 0, 0, 0, 0}), UsageError);
}

TEST(SpaceSettings, SwitchKnobsAreTheirOwnSettings) {
  const Space s = builtin_space("switch-ecn");
  const Settings base = settings_of(s, baseline_config(s));
  EXPECT_TRUE(base.env.empty());
  EXPECT_TRUE(base.dcqcn.empty());
  EXPECT_EQ(base.switch_settings, (std::map<std::string, std::string>{
                                      {"switch.ecn.kmin_bytes", "5000"}, {"switch.ecn.kmax_bytes", "200000"}, {"switch.ecn.pmax", "0.01"}}));
  EXPECT_EQ(infeasible_reason(base), "");
  EXPECT_EQ(config_label(s, {3, 3, 3}), "kmin_bytes=100000,kmax_bytes=1600000,pmax=0.2");
}

TEST(SpaceSettings, InfeasibleSwitchSettings) {
  Settings s;
  EXPECT_EQ(infeasible_reason(s), "") << "nothing set: the cluster's own";
  s.switch_settings = {{"switch.ecn.kmin_bytes", "200000"}, {"switch.ecn.kmax_bytes", "200000"}, {"switch.ecn.pmax", "0.1"}};
  EXPECT_EQ(infeasible_reason(s), "switch.ecn.kmin_bytes=200000 is not below switch.ecn.kmax_bytes=200000");
  s.switch_settings["switch.ecn.kmin_bytes"] = "400000";
  EXPECT_EQ(infeasible_reason(s), "switch.ecn.kmin_bytes=400000 is not below switch.ecn.kmax_bytes=200000");
  s.switch_settings["switch.ecn.kmin_bytes"] = "100000";
  EXPECT_EQ(infeasible_reason(s), "");
  s.switch_settings.erase("switch.ecn.pmax");
  EXPECT_EQ(infeasible_reason(s), "the simulator takes switch ECN Kmin, Kmax and Pmax together: switch.ecn.kmin_bytes, "
                                  "switch.ecn.kmax_bytes set, switch.ecn.pmax unset");
  // Environment and DCQCN settings are always feasible.
  Settings e;
  e.env = {{"NCCL_PXN_DISABLE", "1"}};
  e.dcqcn = {{"roce_rp.rpg_ai_rate", "20"}};
  EXPECT_EQ(infeasible_reason(e), "");
  // In the built-in space: the configurations whose Kmin is not below Kmax.
  const Space sp = builtin_space("switch-ecn");
  std::size_t infeasible = 0;
  for (const auto& c : all_configs(sp)) infeasible += !infeasible_reason(settings_of(sp, c)).empty();
  EXPECT_EQ(infeasible, 3u * 6u);  // (200000, 200000), (400000, 200000), (400000, 400000) x every Pmax
}

TEST(SpaceSettings, Labels) {
  Space s = qps_space();
  s.knobs.push_back(make_knob("OMPI_MCA_coll_tuned_allreduce_algorithm", {"0", "4"}, 0, false));
  s.knobs.push_back(make_knob("roce_np.cnp_dscp", {"26", ""}, 0, true));
  EXPECT_EQ(config_label(s, baseline_config(s)), "defaults");
  EXPECT_EQ(config_label(s, {3, 1, 0, 0}), "IB_QPS_PER_CONNECTION=4,IB_SPLIT_DATA_ON_QPS=1");
  EXPECT_EQ(config_label(s, {1, 1, 1, 1}), "IB_QPS_PER_CONNECTION=1,allreduce_algorithm=4,roce_np.cnp_dscp=unset")
      << "inactive SPLIT left out";

  Space q = qps_space();
  q.knobs[0].baseline = 3;
  EXPECT_EQ(config_label(q, {0, 0}), "IB_QPS_PER_CONNECTION=unset");
}

}  // namespace
}  // namespace railkit::tuner
