// The comparison (sweep/compare): values per size and group, ratios paired by round with their
// intervals, the winner rule, split groups, metrics, inert configurations and the renderers.
#include "report/compare_render.hpp"
#include "sweep/compare.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <iostream>
#include <random>

#include "core/error.hpp"
#include "results_util.hpp"

namespace railkit::sweep {
namespace {
using report::plot_series;
using report::PlotContext;
using report::render_comparison;

using test::make_doc;

/// The message of the UsageError `f` throws.
template <class F>
std::string test_usage_error(F&& f) {
  try {
    f();
  } catch (const UsageError& e) {
    return e.what();
  }
  return "(no UsageError)";
}

CompareInput input(const std::string& name, const std::vector<test::Rec>& recs) {
  CompareInput in;
  in.name = name;
  in.doc = make_doc(name, recs);
  return in;
}

std::vector<CompareInput> three() {
  return {
      input("a", {{"all_reduce", 1024, false, 1.0}, {"all_reduce", 1048576, false, 10.0}}),
      input("b", {{"all_reduce", 1024, false, 2.0}, {"all_reduce", 1048576, false, 5.0}}),
      input("c", {{"all_reduce", 1024, false, 4.0}, {"all_reduce", 1048576, false, 20.0}}),
  };
}

/// A configuration of a sweep: one document per round, busbw per round at each size.
CompareInput rounds_input(const std::string& name, const std::vector<std::uint64_t>& sizes,
                          const std::vector<std::vector<double>>& busbw_per_round, const std::string& series = "sweep") {
  CompareInput in;
  in.name = name;
  in.series = series;
  in.env = std::map<std::string, std::string>{};
  for (std::size_t r = 0; r < busbw_per_round.size(); ++r) {
    std::vector<test::Rec> recs;
    for (std::size_t k = 0; k < sizes.size(); ++k) recs.push_back({"all_reduce", sizes[k], false, busbw_per_round[r][k]});
    in.rounds.push_back(RoundDoc{static_cast<int>(r) + 1, make_doc(name, recs)});
  }
  return in;
}

TEST(Compare, SingleDocumentsGiveRatiosButNoInterval) {
  const Comparison c = compare(three(), "");
  ASSERT_EQ(c.baseline, 0u);
  ASSERT_EQ(c.tables.size(), 1u);
  const auto& rows = c.tables[0].rows;
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].bytes, 1024u);
  EXPECT_DOUBLE_EQ(*rows[0].cells[1].value, 2.0);
  EXPECT_DOUBLE_EQ(*rows[0].cells[2].ratio, 4.0);
  EXPECT_FALSE(rows[0].cells[2].interval.has_value());
  // One measurement each: c is ahead, but nothing says it is more than noise.
  for (const auto& row : rows) {
    EXPECT_FALSE(row.winner.has_value());
    EXPECT_EQ(row.verdict, RowVerdict::NoInterval);
  }
  EXPECT_EQ(c.intervals, 0);
  EXPECT_DOUBLE_EQ(*c.geomean_ratio[0], 1.0);
  EXPECT_NEAR(*c.geomean_ratio[1], std::sqrt(2.0 * 0.5), 1e-12);  // 2x, then 0.5x
  EXPECT_NEAR(*c.geomean_ratio[2], std::sqrt(4.0 * 2.0), 1e-12);
  EXPECT_EQ(c.geomean_sizes[2], 2);
  ASSERT_EQ(c.winners.size(), 1u);
  EXPECT_EQ(c.winners[0].verdict, RowVerdict::NoInterval);
  EXPECT_FALSE(c.winners[0].config.has_value());
  EXPECT_NE(render_comparison(c, "table").find("no interval: no winner can be named"), std::string::npos);
}

TEST(Compare, RoundsGiveAPairedIntervalAndAWinnerWhenItClears) {
  const std::vector<std::uint64_t> sizes = {1024, 65536};
  const Comparison c = compare({rounds_input("base", sizes, {{1.0, 10}, {1.1, 11}, {0.9, 9}}),
                                rounds_input("fast", sizes, {{2.0, 10.2}, {2.3, 10.8}, {1.9, 9.1}})},
                               "");
  ASSERT_EQ(c.tables.size(), 1u);
  EXPECT_EQ(c.max_rounds, 3);
  EXPECT_EQ(c.intervals, 2);  // one per size
  EXPECT_NEAR(c.confidence, 0.975, 1e-12);
  const auto& small = c.tables[0].rows[0];
  ASSERT_TRUE(small.cells[1].interval.has_value());
  const PairedRatio expected = paired_ratio({1.0, 1.1, 0.9}, {2.0, 2.3, 1.9}, 0.975);
  EXPECT_DOUBLE_EQ(small.cells[1].interval->lo, expected.lo);
  EXPECT_DOUBLE_EQ(*small.cells[1].ratio, expected.ratio);
  EXPECT_GT(small.cells[1].interval->lo, 1.0);
  EXPECT_EQ(small.verdict, RowVerdict::Winner);
  EXPECT_EQ(small.winner, 1u);
  EXPECT_DOUBLE_EQ(*small.cells[0].value, 1.0);  // the median of the rounds
  const auto& large = c.tables[0].rows[1];
  EXPECT_LT(large.cells[1].interval->lo, 1.0);
  EXPECT_EQ(large.verdict, RowVerdict::NoSignificantDifference);
  EXPECT_FALSE(large.winner.has_value());
  ASSERT_EQ(c.winners.size(), 2u);
  EXPECT_EQ(c.winners[0].config, 1u);
  EXPECT_EQ(c.winners[1].verdict, RowVerdict::NoSignificantDifference);
  const std::string t = render_comparison(c, "table");
  EXPECT_NE(t.find("the 2 intervals hold together at 95% (each at 97.50%)"), std::string::npos) << t;
  EXPECT_NE(t.find(fmt::format("{:.3f} [{:.3g}, {:.3g}]  [2]", expected.ratio, expected.lo, expected.hi)), std::string::npos) << t;
  EXPECT_NE(t.find("no significant difference (the baseline [1] stands)"), std::string::npos) << t;
}

TEST(Compare, EveryOtherConfigurationSignificantlyWorseLeavesTheBaselineBetter) {
  const std::vector<std::uint64_t> sizes = {1024};
  const Comparison c = compare({rounds_input("base", sizes, {{2.0}, {2.2}, {1.9}}),
                                rounds_input("slow", sizes, {{1.0}, {1.1}, {0.95}})},
                               "");
  const auto& row = c.tables[0].rows[0];
  ASSERT_TRUE(row.cells[1].interval.has_value());
  EXPECT_LT(row.cells[1].interval->hi, 1.0);
  EXPECT_EQ(row.verdict, RowVerdict::BaselineBetter);
  EXPECT_FALSE(row.winner.has_value());
  const std::string t = render_comparison(c, "table");
  EXPECT_NE(t.find("baseline better"), std::string::npos) << t;
  EXPECT_NE(t.find("the baseline [1] (every other configuration is significantly worse)"), std::string::npos) << t;
}

TEST(Compare, RoundsOfDifferentSweepsAreNotPaired) {
  const std::vector<std::uint64_t> sizes = {1024};
  const Comparison c = compare({rounds_input("base", sizes, {{1.0}, {1.1}, {0.9}}, "one"),
                                rounds_input("fast", sizes, {{2.0}, {2.3}, {1.9}}, "other")},
                               "");
  EXPECT_FALSE(c.tables[0].rows[0].cells[1].interval.has_value());
  EXPECT_EQ(c.tables[0].rows[0].verdict, RowVerdict::NoInterval);
}

/// A normal deviate from two uniforms of `rng` (Box-Muller), the same on every platform.
double normal(std::mt19937_64& rng) {
  const double u1 = (static_cast<double>(rng() >> 11) + 0.5) / 9007199254740992.0;
  const double u2 = (static_cast<double>(rng() >> 11) + 0.5) / 9007199254740992.0;
  return std::sqrt(-2 * std::log(u1)) * std::cos(2 * M_PI * u2);
}

// The issue's "done when": 20 synthetic sweeps whose configurations all draw from one
// distribution (the baseline and three others, four sizes, the default three rounds, 20% noise)
// name no winner in at least 19 of them.
TEST(Compare, WinnerRuleNamesNoWinnerAmongIdenticalConfigurations) {
  const std::vector<std::uint64_t> sizes = {1024, 16384, 262144, 4194304};
  int sweeps_with_a_winner = 0, argmax_would_name = 0;
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    std::mt19937_64 rng(seed);
    std::vector<CompareInput> in;
    for (const char* name : {"base", "x", "y", "z"}) {
      std::vector<std::vector<double>> per_round;
      for (int r = 0; r < 3; ++r) {
        std::vector<double> v;
        for (std::size_t k = 0; k < sizes.size(); ++k) v.push_back(10.0 * std::exp(0.2 * normal(rng)));
        per_round.push_back(v);
      }
      in.push_back(rounds_input(name, sizes, per_round));
    }
    const Comparison c = compare(in, "");
    bool winner = false, argmax = false;
    for (const auto& row : c.tables[0].rows) {
      winner = winner || row.winner.has_value();
      std::size_t best = 0;
      for (std::size_t i = 1; i < row.cells.size(); ++i)
        if (*row.cells[i].value > *row.cells[best].value) best = i;
      argmax = argmax || best != 0;
    }
    sweeps_with_a_winner += winner;
    argmax_would_name += argmax;
    EXPECT_EQ(c.intervals, 12);
  }
  std::cout << "winner rule: " << sweeps_with_a_winner << " of 20 sweeps of identical configurations name a winner ("
            << "the highest busbw would in " << argmax_would_name << ")\n";
  RecordProperty("sweeps_with_a_winner", sweeps_with_a_winner);
  EXPECT_LE(sweeps_with_a_winner, 1);
  EXPECT_GE(argmax_would_name, 19);  // the rule as it was: the highest busbw wins
}

TEST(Compare, SplitGroupsKeepTheirRowsAndTheSlowestIsMarked) {
  // The issue's case: rail0 0.86 and rail1 1.95 GB/s must not become their mean 1.406.
  const std::vector<CompareInput> in = {input("split", {{"all_reduce", 1024, false, 0.86, 0, "rail0"},
                                                        {"all_reduce", 1024, false, 1.95, 0, "rail1"},
                                                        {"all_reduce", 4096, false, 2.10, 0, "rail0"},
                                                        {"all_reduce", 4096, false, 1.20, 0, "rail1"}})};
  const Comparison c = compare(in, "");
  ASSERT_TRUE(c.grouped);
  const auto& rows = c.tables[0].rows;
  ASSERT_EQ(rows.size(), 4u);
  EXPECT_EQ(rows[0].group, "rail0");
  EXPECT_DOUBLE_EQ(*rows[0].cells[0].value, 0.86);
  EXPECT_TRUE(rows[0].cells[0].slowest_group);
  EXPECT_EQ(rows[1].group, "rail1");
  EXPECT_DOUBLE_EQ(*rows[1].cells[0].value, 1.95);
  EXPECT_FALSE(rows[1].cells[0].slowest_group);
  EXPECT_TRUE(rows[3].cells[0].slowest_group);  // at 4 KiB rail1 is the slow one
  const std::string t = render_comparison(c, "table");
  EXPECT_EQ(t.find("1.406"), std::string::npos) << t;
  EXPECT_NE(t.find("     1 KiB  rail0     0.860*\n"), std::string::npos) << t;
  EXPECT_NE(t.find("     1 KiB  rail1     1.950\n"), std::string::npos) << t;
  EXPECT_NE(t.find("*: the slowest --split group"), std::string::npos) << t;
  // A single document: no ratio columns, no verdict, no geometric means, no winners.
  EXPECT_EQ(t.find("ratio to"), std::string::npos) << t;
  EXPECT_EQ(t.find("/[1]"), std::string::npos) << t;
  EXPECT_EQ(t.find("verdict"), std::string::npos) << t;
  EXPECT_EQ(t.find("geometric mean"), std::string::npos) << t;
  EXPECT_EQ(t.find("winner"), std::string::npos) << t;
  const std::string csv = render_comparison(c, "csv");
  EXPECT_NE(csv.find("all_reduce,float,sum,out,1024,rail0,split,ok,1,0.86,,,,1,0,,1,0,0\n"), std::string::npos) << csv;
  EXPECT_NE(csv.find("all_reduce,float,sum,out,1024,rail1,split,ok,1,1.95,,,,1,0,,0,0,0\n"), std::string::npos) << csv;
  const std::string md = render_comparison(c, "markdown");
  EXPECT_NE(md.find("| 1 KiB | rail0 | 0.860\\* |"), std::string::npos) << md;
  // The plot: a line per group, the slowest marked.
  const auto j = plot_series(c);
  const auto& s = j["panels"][0]["series"];
  ASSERT_EQ(s.size(), 2u);
  EXPECT_EQ(s[0]["name"], "[1] split rail0");
  EXPECT_EQ(s[0]["group"], "rail0");
  EXPECT_EQ(s[0]["values"], nlohmann::json::parse("[0.86, 2.1]"));
  EXPECT_EQ(s[1]["values"], nlohmann::json::parse("[1.95, 1.2]"));
  EXPECT_EQ(s[0]["slowest"].get<bool>() + s[1]["slowest"].get<bool>(), 1);  // one each; a tie goes to the first
}

TEST(Compare, GroupsAreComparedGroupByGroup) {
  std::vector<CompareInput> in;
  for (const auto& [name, r1] : std::vector<std::pair<std::string, double>>{{"a", 1.0}, {"b", 3.0}}) {
    CompareInput x;
    x.name = name;
    x.series = "s";
    for (int r = 1; r <= 3; ++r)
      x.rounds.push_back(RoundDoc{r, make_doc(name, {{"all_reduce", 1024, false, 1.0 + 0.01 * r, 0, "rail0"},
                                                     {"all_reduce", 1024, false, r1 + 0.01 * r, 0, "rail1"}})});
    in.push_back(x);
  }
  const Comparison c = compare(in, "");
  const auto& rows = c.tables[0].rows;
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].verdict, RowVerdict::NoSignificantDifference);  // rail0: the same
  EXPECT_EQ(rows[1].verdict, RowVerdict::Winner);                   // rail1: b is 3x
  EXPECT_NEAR(*rows[1].cells[1].ratio, std::cbrt((3.01 / 1.01) * (3.02 / 1.02) * (3.03 / 1.03)), 1e-12);
  ASSERT_EQ(c.winners.size(), 2u);
  EXPECT_EQ(c.winners[0].group, "rail0");
  EXPECT_EQ(c.winners[1].group, "rail1");
  EXPECT_EQ(c.winners[1].config, 1u);
}

TEST(Compare, BaselineByNameOrNumber) {
  EXPECT_EQ(compare(three(), "b").baseline, 1u);
  EXPECT_EQ(compare(three(), "[3]").baseline, 2u);
  EXPECT_EQ(compare(three(), "2").baseline, 1u);
  EXPECT_NEAR(*compare(three(), "[2]").geomean_ratio[0], std::sqrt(0.5 * 2.0), 1e-12);
  for (const char* bad : {"nope", "[4]", "[0]", "[]", "[x]"}) {
    try {
      compare(three(), bad);
      ADD_FAILURE() << bad;
    } catch (const UsageError& e) {
      EXPECT_NE(std::string(e.what()).find("(have: [1] a, [2] b, [3] c)"), std::string::npos) << e.what();
    }
  }
  // A configuration named like a number is found by its name first.
  std::vector<CompareInput> in = three();
  in[2].name = "1";
  EXPECT_EQ(compare(in, "1").baseline, 2u);
  EXPECT_EQ(find_config({"a", "b"}, "[2]"), 1u);
  EXPECT_FALSE(find_config({"a", "b"}, "[3]").has_value());
}

TEST(Compare, MetricsChooseTheValueAndTheDirection) {
  EXPECT_EQ(parse_metric("p99"), Metric::P99);
  EXPECT_THROW(parse_metric("bogus"), UsageError);
  std::vector<CompareInput> in;
  for (const auto& [name, us] : std::vector<std::pair<std::string, double>>{{"slow", 100.0}, {"quick", 50.0}}) {
    CompareInput x;
    x.name = name;
    x.series = "s";
    for (int r = 1; r <= 4; ++r) {
      ResultsDocument d = make_doc(name, {{"all_reduce", 1024, false, 1.0}});
      d.results[0].time_us.avg = us * (1 + 0.01 * r);
      d.results[0].time_us.p99 = 3 * us;
      x.rounds.push_back(RoundDoc{r, d});
    }
    in.push_back(x);
  }
  CompareOptions o;
  o.metric = Metric::Time;
  const Comparison c = compare(in, o);
  const auto& row = c.tables[0].rows[0];
  EXPECT_NEAR(*row.cells[0].value, 100 * 1.025, 1e-9);
  EXPECT_LT(row.cells[1].interval->hi, 1.0);
  EXPECT_EQ(row.winner, 1u);  // a lower time wins
  const std::string t = render_comparison(c, "table");
  EXPECT_NE(t.find("time (us)"), std::string::npos) << t;
  EXPECT_NE(t.find("lies below 1"), std::string::npos) << t;
  EXPECT_NE(render_comparison(c, "csv").find(",baseline,time_us,"), std::string::npos);
  o.metric = Metric::P99;
  EXPECT_DOUBLE_EQ(*compare(in, o).tables[0].rows[0].cells[0].value, 300);
  o.metric = Metric::Busbw;  // busbw the same in every round: no difference at all
  EXPECT_EQ(compare(in, o).tables[0].rows[0].verdict, RowVerdict::NoSignificantDifference);
  EXPECT_EQ(plot_series(compare(in, o))["ylabel"], "busbw (GB/s)");
}

TEST(Compare, InertConfigurationsAreNeverWinners) {
  const std::vector<std::uint64_t> sizes = {1024};
  CompareInput base = rounds_input("default", sizes, {{1.0}, {1.1}, {0.9}});
  CompareInput ring = rounds_input("Ring-LL", sizes, {{3.0}, {3.3}, {2.7}});  // "faster", on the mpi backend
  ring.env = std::map<std::string, std::string>{{"NCCL_ALGO", "Ring"}, {"NCCL_PROTO", "LL"}};
  CompareInput ompi = rounds_input("alg4", sizes, {{1.0}, {1.1}, {0.9}});
  ompi.env = std::map<std::string, std::string>{{"OMPI_MCA_coll_tuned_allreduce_algorithm", "4"}};
  Comparison c = compare({base, ring}, "");
  EXPECT_TRUE(c.inert[1]);
  EXPECT_EQ(c.inert_knobs[1], (std::vector<std::string>{"NCCL_ALGO", "NCCL_PROTO"}));
  EXPECT_GT(c.tables[0].rows[0].cells[1].interval->lo, 1.0);
  EXPECT_EQ(c.tables[0].rows[0].verdict, RowVerdict::Inert);
  EXPECT_FALSE(c.tables[0].rows[0].winner.has_value());
  const std::string t = render_comparison(c, "table");
  EXPECT_NE(t.find("inert: NCCL_ALGO, NCCL_PROTO cannot reach the mpi backend"), std::string::npos) << t;
  EXPECT_NE(t.find("  inert\n"), std::string::npos) << t;
  EXPECT_NE(render_comparison(c, "csv").find(",Ring-LL,ok,0,3,"), std::string::npos);
  c = compare({base, ring, ompi}, "");
  EXPECT_FALSE(c.inert[2]);  // an Open MPI knob reaches the mpi backend
  EXPECT_EQ(c.tables[0].rows[0].verdict, RowVerdict::NoSignificantDifference);
  // Loose documents: the knobs are the difference of their run.env.
  std::vector<CompareInput> loose = three();
  loose[1].doc->run.env = {{"NCCL_PROTO", "LL"}};
  c = compare(loose, "");
  EXPECT_TRUE(c.inert[1]);
  EXPECT_FALSE(c.inert[2]);
}

TEST(Compare, PlacementsAndCollectivesAreSeparateTablesCyclesAveraged) {
  std::vector<CompareInput> in = {
      input("a", {{"all_gather", 8, false, 1}, {"all_gather", 8, true, 2}, {"all_reduce", 8, false, 3},
                  {"all_reduce", 8, false, 5, 1}}),
  };
  const Comparison c = compare(in, "");
  ASSERT_EQ(c.tables.size(), 3u);
  EXPECT_EQ(c.tables[0].title(), "all_gather float sum, out-of-place");
  EXPECT_EQ(c.tables[1].title(), "all_gather float sum, in-place");
  EXPECT_EQ(c.tables[2].op, "all_reduce");
  EXPECT_DOUBLE_EQ(*c.tables[2].rows[0].cells[0].value, 4.0);  // mean of the two cycles
  EXPECT_FALSE(c.grouped);
}

TEST(Compare, MissingSizesAndFailedConfigurations) {
  std::vector<CompareInput> in = three();
  in[1].doc->results.pop_back();  // b lacks 1 MiB
  CompareInput failed;
  failed.name = "d";
  failed.status = "failed";
  failed.note = "exit code 6";
  in.push_back(failed);
  const Comparison c = compare(in, "");
  EXPECT_FALSE(c.tables[0].rows[1].cells[1].value.has_value());
  EXPECT_EQ(c.geomean_sizes[1], 1);
  EXPECT_FALSE(c.has_results[3]);
  const std::string t = render_comparison(c, "table");
  EXPECT_NE(t.find("d  failed: exit code 6"), std::string::npos) << t;
}

TEST(Compare, BaselineWithoutResultsGivesNoRatios) {
  std::vector<CompareInput> in = three();
  in[0].doc.reset();
  in[0].status = "failed";
  const Comparison c = compare(in, "a");
  EXPECT_FALSE(c.baseline.has_value());
  EXPECT_FALSE(c.geomean_ratio[1].has_value());
  EXPECT_NE(render_comparison(c, "table").find("no ratios"), std::string::npos);
}

TEST(Compare, NothingToCompare) {
  CompareInput in;
  in.name = "x";
  in.status = "failed";
  EXPECT_THROW(compare({in}, ""), UsageError);
}

TEST(Compare, RenderTable) {
  const std::string t = render_comparison(compare(three(), ""), "table");
  EXPECT_NE(t.find("# all_reduce float sum, out-of-place: busbw (GB/s), ratio to [1]"), std::string::npos) << t;
  EXPECT_NE(t.find("      size       [1]        [2]        [3]    [2]/[1]   [3]/[1]  verdict\n"), std::string::npos) << t;
  EXPECT_NE(t.find("     1 KiB     1.000      2.000      4.000      2.000     4.000  no interval\n"), std::string::npos) << t;
  EXPECT_NE(t.find("geometric mean"), std::string::npos);
  EXPECT_NE(t.find("1 KiB .. 1 MiB"), std::string::npos) << t;
}

TEST(Compare, RenderCsvQuotesNames) {
  std::vector<CompareInput> in = three();
  in[1].name = "A=1,B=2";
  const std::string csv = render_comparison(compare(in, ""), "csv");
  EXPECT_EQ(csv.substr(0, csv.find('\n')),
            "op,dtype,redop,placement,bytes,group,config,status,baseline,busbw_GBps,ratio_to_baseline,ratio_lo,ratio_hi,"
            "rounds,winner,verdict,slowest_group,inert,simulated");
  EXPECT_NE(csv.find("all_reduce,float,sum,out,1024,,a,ok,1,1,1,,,1,0,no interval,0,0,0\n"), std::string::npos) << csv;
  EXPECT_NE(csv.find("all_reduce,float,sum,out,1024,,\"A=1,B=2\",ok,0,2,2,,,1,0,no interval,0,0,0\n"), std::string::npos) << csv;
  EXPECT_NE(csv.find("all_reduce,float,sum,out,1048576,,c,ok,0,20,2,,,1,0,no interval,0,0,0\n"), std::string::npos) << csv;
}

/// `in` as railkit-bench --backend sim writes it.
CompareInput simulated(CompareInput in) {
  for (auto& rd : in.rounds) rd.doc.run.backend = "sim";
  if (in.doc) in.doc->run.backend = "sim";
  return in;
}

TEST(Compare, SimulatedValuesAreLabelledInEveryFormat) {
  // A simulated sweep: pxn off vs on, three rounds (replicas with other seeds).
  const std::vector<CompareInput> in = {
      simulated(rounds_input("pxn-off", {1024, 1048576}, {{10, 20}, {10.2, 20.5}, {9.9, 19.8}})),
      simulated(rounds_input("pxn-level2", {1024, 1048576}, {{10, 40}, {10.1, 41}, {9.8, 39.5}}))};
  const Comparison c = compare(in, "");
  EXPECT_TRUE(c.all_simulated());
  EXPECT_EQ(c.simulated, (std::vector<bool>{true, true}));
  const std::string t = render_comparison(c, "table");
  EXPECT_EQ(t.rfind("SIMULATED: every value below comes from railkit-bench --backend sim, a model of a cluster, not a "
                    "measurement\n",
                    0),
            0u)
      << t;
  EXPECT_NE(t.find("  [1] pxn-off     ok, 3 rounds; SIMULATED"), std::string::npos) << t;
  EXPECT_NE(t.find("# all_reduce float sum, out-of-place: SIMULATED busbw (GB/s), median of the rounds"), std::string::npos) << t;
  EXPECT_NE(t.find("geometric mean of SIMULATED busbw / [1]"), std::string::npos) << t;
  EXPECT_NE(t.find("winner per size range (on the simulator):"), std::string::npos) << t;
  const std::string md = render_comparison(c, "markdown");
  EXPECT_EQ(md.rfind("**SIMULATED: every value below", 0), 0u) << md;
  EXPECT_NE(md.find("### all_reduce float sum, out-of-place (SIMULATED)\n\nSIMULATED busbw (GB/s)"), std::string::npos) << md;
  EXPECT_NE(md.find("ok, 3 rounds; SIMULATED"), std::string::npos) << md;
  const std::string csv = render_comparison(c, "csv");
  std::size_t lines = 0, simulated_lines = 0;
  for (std::size_t p = csv.find('\n') + 1; p < csv.size(); p = csv.find('\n', p) + 1) {
    ++lines;
    const std::string line = csv.substr(p, csv.find('\n', p) - p);
    simulated_lines += line.size() >= 2 && line.substr(line.size() - 2) == ",1";
  }
  EXPECT_EQ(lines, 4u);
  EXPECT_EQ(simulated_lines, lines) << csv;
  const auto series = plot_series(c);
  EXPECT_EQ(series["simulated"], "all");
  for (const auto& sr : series["panels"][0]["series"]) EXPECT_EQ(sr["simulated"], true);
  // Measured ones say nothing of the kind.
  const Comparison m = compare(three(), "");
  EXPECT_FALSE(m.any_simulated());
  EXPECT_EQ(render_comparison(m, "table").find("SIMULATED"), std::string::npos);
  EXPECT_EQ(plot_series(m)["simulated"], "none");
}

TEST(Compare, SimulatedAgainstMeasuredIsRefusedUnlessAllowed) {
  std::vector<CompareInput> in = three();
  in[2] = simulated(in[2]);
  const std::string m = test_usage_error([&] { (void)compare(in, ""); });
  EXPECT_EQ(m, "cannot compare simulated results ([3] c: run.backend sim) with measured ones ([1] a: run.backend mpi): a "
               "ratio between a model and a measurement is no result; compare them apart, or pass "
               "--allow-sim-vs-measured to show them side by side (simulated values marked, no winner named across them)");
  CompareOptions o;
  o.allow_sim_vs_measured = true;
  const Comparison c = compare(in, o);
  EXPECT_TRUE(c.any_simulated());
  EXPECT_FALSE(c.all_simulated());
  const std::string t = render_comparison(c, "table");
  EXPECT_EQ(t.rfind("SIMULATED AND MEASURED side by side (--allow-sim-vs-measured): [3] simulated", 0), 0u) << t;
  EXPECT_NE(t.find("busbw (GB/s; SIMULATED: [3]), ratio to [1]"), std::string::npos) << t;
  EXPECT_EQ(plot_series(c)["simulated"], "some");
  // Rounds of one series that differ in kind are never paired: no interval, so no winner.
  std::vector<CompareInput> r = {rounds_input("real", {1024}, {{10}, {10}, {10}}),
                                 simulated(rounds_input("model", {1024}, {{20}, {20.1}, {19.9}}))};
  const Comparison rc = compare(r, o);
  EXPECT_EQ(rc.intervals, 0);
  EXPECT_FALSE(rc.tables[0].rows[0].winner);
  EXPECT_EQ(rc.tables[0].rows[0].verdict, RowVerdict::NoInterval);
}

TEST(Compare, RenderMarkdown) {
  const std::string md = render_comparison(compare(three(), ""), "markdown");
  EXPECT_NE(md.find("### all_reduce float sum, out-of-place"), std::string::npos);
  EXPECT_NE(md.find("| size | [1] | [2] | [3] | [2]/[1] | [3]/[1] | verdict |\n|---:|---:|---:|---:|---:|---:|---|\n"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("| 1 KiB | 1.000 | 2.000 | 4.000 | 2.000 | 4.000 | no interval |"), std::string::npos) << md;
  EXPECT_THROW(render_comparison(compare(three(), ""), "yaml"), UsageError);
}

TEST(Compare, PlotSeries) {
  const auto j = plot_series(compare(three(), ""));
  ASSERT_EQ(j["panels"].size(), 1u);
  EXPECT_EQ(j["ylabel"], "busbw (GB/s)");
  const auto& s = j["panels"][0]["series"];
  ASSERT_EQ(s.size(), 3u);
  EXPECT_EQ(s[0]["name"], "[1] a");
  EXPECT_EQ(s[0]["baseline"], true);
  EXPECT_EQ(s[2]["bytes"], nlohmann::json::parse("[1024, 1048576]"));
  EXPECT_EQ(s[2]["values"], nlohmann::json::parse("[4.0, 20.0]"));
  EXPECT_FALSE(s[2].contains("lo"));  // one round: no spread
}

/// `in` with every document timed barrier-separated (railkit-bench --sync, IMB, OSU).
CompareInput barrier_separated(CompareInput in) {
  for (RoundDoc& rd : in.rounds) rd.doc.run.timing_method = "barrier_separated";
  if (in.doc) in.doc->run.timing_method = "barrier_separated";
  return in;
}

TEST(Compare, TimingMethodsAreNotedAndNoWinnerIsNamedAcrossThem) {
  // "sync" would clear the baseline by far, but it timed each operation alone: not comparable.
  const std::vector<std::uint64_t> sizes = {1024, 65536};
  const Comparison c = compare({rounds_input("base", sizes, {{1.0, 10}, {1.1, 11}, {0.9, 9}}),
                                barrier_separated(rounds_input("sync", sizes, {{2.0, 20}, {2.3, 22}, {1.9, 19}})),
                                rounds_input("fast", sizes, {{2.0, 10.2}, {2.3, 10.8}, {1.9, 9.1}})},
                               "");
  EXPECT_EQ(c.timing_methods, (std::vector<std::string>{"back_to_back", "barrier_separated", "back_to_back"}));
  EXPECT_EQ(c.intervals, 2);  // fast's, one per size; none for sync
  for (const auto& row : c.tables[0].rows) {
    EXPECT_FALSE(row.cells[1].interval.has_value());
    EXPECT_TRUE(row.cells[1].ratio.has_value());  // of the values, for reading only
    EXPECT_NE(row.winner, std::optional<std::size_t>(1u));
  }
  EXPECT_EQ(c.tables[0].rows[0].winner, 2u);  // the same method as the baseline can still win
  const std::string note =
      "TIMING METHODS DIFFER: [1] base, [3] fast back-to-back (as nccl-tests); [2] sync barrier-separated (railkit-bench "
      "--sync, IMB-MPI1, OSU); times of the two methods differ by up to tens of percent whatever the settings, so ratios "
      "across methods are shown without an interval and no winner is named across methods (run.timing_method)";
  EXPECT_NE(std::find(c.notes.begin(), c.notes.end(), note), c.notes.end()) << ::testing::PrintToString(c.notes);
  EXPECT_NE(render_comparison(c, "table").find("note: " + note), std::string::npos) << render_comparison(c, "table");
  // Only the other method against the baseline: no interval and no winner at any size.
  const Comparison two = compare({input("a", {{"all_reduce", 1024, false, 1.0}}),
                                  barrier_separated(input("b", {{"all_reduce", 1024, false, 9.0}}))},
                                 "");
  EXPECT_EQ(two.tables[0].rows[0].verdict, RowVerdict::NoInterval);
  EXPECT_EQ(two.notes.size(), 1u);
  // The reason is the method (more rounds would not help), not "run --rounds 2 or more".
  EXPECT_EQ(two.no_interval_reason, "configurations timed by different methods (run.timing_method) are not paired");
  EXPECT_EQ(render_comparison(two, "table").find("run --rounds 2"), std::string::npos) << render_comparison(two, "table");
  // Same method, loose documents of one round: that reason.
  EXPECT_EQ(compare({input("a", {{"all_reduce", 1024, false, 1.0}}), input("b", {{"all_reduce", 1024, false, 9.0}})}, "")
                .no_interval_reason,
            "documents that are not rounds of one sweep are not paired");
  // One method throughout: no note.
  EXPECT_TRUE(compare(three(), "").notes.empty());
  EXPECT_TRUE(compare({barrier_separated(input("a", {{"all_reduce", 1024, false, 1.0}})),
                       barrier_separated(input("b", {{"all_reduce", 1024, false, 2.0}}))},
                      "")
                  .notes.empty());
}

TEST(Compare, Geomean) {
  EXPECT_FALSE(geomean({}).has_value());
  EXPECT_NEAR(*geomean({1, 4, 16}), 4.0, 1e-12);
  EXPECT_FALSE(ratio(1.0, 0.0).has_value());
  EXPECT_FALSE(ratio(std::nullopt, 1.0).has_value());
}

TEST(Compare, PlotSeriesCarriesLatencyTitleSizesAndLineRate) {
  // Two rounds: time_us p50/p99 per round (the mean over cycles), then the median of the rounds.
  CompareInput in = rounds_input("x", {8, 1024}, {{1, 2}, {1.1, 2.1}, {0.9, 1.9}});
  const double p50[3][2] = {{10, 20}, {12, 22}, {30, 40}}, p99[3][2] = {{15, 25}, {17, 27}, {90, 99}};
  for (int r = 0; r < 3; ++r)
    for (int k = 0; k < 2; ++k) {
      in.rounds[r].doc.results[k].time_us.p50 = p50[r][k];
      in.rounds[r].doc.results[k].time_us.p99 = p99[r][k];
      in.rounds[r].doc.run.start_time = r == 2 ? "2026-12-03T01:00:00Z" : "2026-12-02T23:00:00Z";
    }
  const Comparison c = compare({in}, "");
  const auto j = plot_series(c);
  EXPECT_EQ(j["sizes"], nlohmann::json::parse("[8, 1024]"));
  EXPECT_EQ(j["line_rate"], nullptr);  // never guessed
  const auto& panel = j["panels"][0];
  EXPECT_EQ(panel["placement"], "out-of-place");
  EXPECT_EQ(panel["op"], "all_reduce");
  const auto& s = panel["series"][0];
  EXPECT_EQ(s["tag"], "[1]");
  EXPECT_EQ(s["time_us"]["p50"], nlohmann::json::parse("[12.0, 22.0]"));
  EXPECT_EQ(s["time_us"]["p99"], nlohmann::json::parse("[17.0, 27.0]"));
  const auto& t = j["title"];
  EXPECT_EQ(t["labels"], nlohmann::json::parse(R"(["x"])"));
  EXPECT_EQ(t["backends"], nlohmann::json::parse(R"(["mpi"])"));
  EXPECT_EQ(t["nranks"], nlohmann::json::parse("[4]"));
  EXPECT_EQ(t["nnodes"], nlohmann::json::parse("[1]"));
  EXPECT_EQ(t["hosts"], nlohmann::json::parse(R"(["vm"])"));
  EXPECT_EQ(t["dates"], nlohmann::json::parse(R"(["2026-12-02", "2026-12-03"])"));
  EXPECT_EQ(t["simulated"], "none");
  // A known line rate (a sweep's probed NICs): none for a run on one node (no NIC carries it).
  PlotContext ctx;
  ctx.line_rate_Gbps = 400;
  ctx.nics_per_node = 8;
  ctx.line_rate_source = "NIC port rate probed on h";
  EXPECT_EQ(plot_series(c, ctx)["line_rate"], nullptr);
  // Across nodes: the node's NICs together, Gb/s per NIC and GB/s per node.
  CompareInput two = in;
  for (auto& rd : two.rounds) rd.doc.run.nnodes = 2;
  const auto k = plot_series(compare({two}, ""), ctx);
  EXPECT_EQ(k["line_rate"]["Gbps"], 400.0);
  EXPECT_EQ(k["line_rate"]["nics_per_node"], 8);
  EXPECT_EQ(k["line_rate"]["GBps"], 400.0);
  EXPECT_EQ(k["line_rate"]["source"], "NIC port rate probed on h");
  EXPECT_EQ(k["line_rate"]["label"], "8 NICs x 400 Gb/s per node = 400 GB/s (bound of ring busbw across nodes)");
  ctx.nics_per_node = 0;  // the NIC count unknown: no line
  EXPECT_EQ(plot_series(compare({two}, ""), ctx)["line_rate"], nullptr);
  // A simulated run knows its cluster: rail-optimized, one NIC per GPU.
  CompareInput sim = simulated(input("s", {{"all_reduce", 1024, false, 1.0}}));
  sim.doc->run.nnodes = 4;
  sim.doc->run.sim = nlohmann::json::parse(R"({"cluster": {"name": "c1", "link_rate_Gbps": 200, "gpus_per_node": 8}})");
  const auto js = plot_series(compare({sim}, ""));
  EXPECT_EQ(js["line_rate"]["GBps"], 200.0);
  EXPECT_EQ(js["line_rate"]["source"], "run.sim.cluster of c1");
  sim.doc->run.sim["cluster"].erase("gpus_per_node");  // NICs per node unknown
  EXPECT_EQ(plot_series(compare({sim}, ""))["line_rate"], nullptr);
}

}  // namespace
}  // namespace railkit::sweep
