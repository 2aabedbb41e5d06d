#include "sweep/compare.hpp"

#include <gtest/gtest.h>

#include "core/error.hpp"
#include "results_util.hpp"

namespace railkit::sweep {
namespace {

using test::make_doc;

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

TEST(Compare, RatiosGeomeanAndWinners) {
  const Comparison c = compare(three(), "");
  ASSERT_EQ(c.baseline, 0u);
  ASSERT_EQ(c.tables.size(), 1u);
  const auto& rows = c.tables[0].rows;
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].bytes, 1024u);
  EXPECT_DOUBLE_EQ(*rows[0].busbw_GBps[1], 2.0);
  EXPECT_EQ(*rows[0].winner, 2u);
  EXPECT_EQ(*rows[1].winner, 2u);
  EXPECT_DOUBLE_EQ(*c.geomean_ratio[0], 1.0);
  EXPECT_NEAR(*c.geomean_ratio[1], std::sqrt(2.0 * 0.5), 1e-12);  // 2x, then 0.5x
  EXPECT_NEAR(*c.geomean_ratio[2], std::sqrt(4.0 * 2.0), 1e-12);
  EXPECT_EQ(c.geomean_sizes[2], 2);
  ASSERT_EQ(c.winners.size(), 1u);  // c wins both sizes: one range
  EXPECT_EQ(c.winners[0].from_bytes, 1024u);
  EXPECT_EQ(c.winners[0].to_bytes, 1048576u);
  EXPECT_EQ(c.winners[0].config, 2u);
  EXPECT_NEAR(*c.winners[0].ratio, std::sqrt(8.0), 1e-12);
}

TEST(Compare, NamedBaseline) {
  const Comparison c = compare(three(), "b");
  EXPECT_EQ(c.baseline, 1u);
  EXPECT_NEAR(*c.geomean_ratio[0], std::sqrt(0.5 * 2.0), 1e-12);
  EXPECT_THROW(compare(three(), "nope"), UsageError);
}

TEST(Compare, WinnerRangesSplitWhereTheWinnerChanges) {
  std::vector<CompareInput> in = {
      input("a", {{"all_reduce", 1, false, 5}, {"all_reduce", 2, false, 5}, {"all_reduce", 4, false, 1}}),
      input("b", {{"all_reduce", 1, false, 1}, {"all_reduce", 2, false, 1}, {"all_reduce", 4, false, 3}}),
  };
  const Comparison c = compare(in, "");
  ASSERT_EQ(c.winners.size(), 2u);
  EXPECT_EQ(c.winners[0].config, 0u);
  EXPECT_EQ(c.winners[0].from_bytes, 1u);
  EXPECT_EQ(c.winners[0].to_bytes, 2u);
  EXPECT_EQ(c.winners[1].config, 1u);
  EXPECT_EQ(c.winners[1].from_bytes, 4u);
  EXPECT_DOUBLE_EQ(*c.winners[1].ratio, 3.0);
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
  EXPECT_DOUBLE_EQ(*c.tables[2].rows[0].busbw_GBps[0], 4.0);  // mean of the two cycles
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
  EXPECT_FALSE(c.tables[0].rows[1].busbw_GBps[1].has_value());
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
  EXPECT_NE(t.find("      size       [1]       [2]       [3]   [2]/[1]   [3]/[1]  best\n"), std::string::npos) << t;
  EXPECT_NE(t.find("     1 KiB     1.000     2.000     4.000     2.000     4.000   [3]\n"), std::string::npos) << t;
  EXPECT_NE(t.find("geometric mean"), std::string::npos);
  EXPECT_NE(t.find("1 KiB .. 1 MiB"), std::string::npos) << t;
}

TEST(Compare, RenderCsvQuotesNames) {
  std::vector<CompareInput> in = three();
  in[1].name = "A=1,B=2";
  const std::string csv = render_comparison(compare(in, ""), "csv");
  EXPECT_EQ(csv.substr(0, csv.find('\n')),
            "op,dtype,redop,placement,bytes,config,status,baseline,busbw_GBps,ratio_to_baseline,winner");
  EXPECT_NE(csv.find("all_reduce,float,sum,out,1024,a,ok,1,1,1,0\n"), std::string::npos) << csv;
  EXPECT_NE(csv.find("all_reduce,float,sum,out,1024,\"A=1,B=2\",ok,0,2,2,0\n"), std::string::npos) << csv;
  EXPECT_NE(csv.find("all_reduce,float,sum,out,1048576,c,ok,0,20,2,1\n"), std::string::npos) << csv;
}

TEST(Compare, RenderMarkdown) {
  const std::string md = render_comparison(compare(three(), ""), "markdown");
  EXPECT_NE(md.find("### all_reduce float sum, out-of-place"), std::string::npos);
  EXPECT_NE(md.find("| size | [1] | [2] | [3] | [2]/[1] | [3]/[1] | best |\n|---:|---:|---:|---:|---:|---:|---|\n"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("| 1 KiB | 1.000 | 2.000 | 4.000 | 2.000 | 4.000 | [3] |"), std::string::npos) << md;
  EXPECT_THROW(render_comparison(compare(three(), ""), "yaml"), UsageError);
}

TEST(Compare, PlotSeries) {
  const auto j = plot_series(compare(three(), ""));
  ASSERT_EQ(j["panels"].size(), 1u);
  const auto& s = j["panels"][0]["series"];
  ASSERT_EQ(s.size(), 3u);
  EXPECT_EQ(s[0]["name"], "[1] a");
  EXPECT_EQ(s[0]["baseline"], true);
  EXPECT_EQ(s[2]["bytes"], nlohmann::json::parse("[1024, 1048576]"));
  EXPECT_EQ(s[2]["busbw_GBps"], nlohmann::json::parse("[4.0, 20.0]"));
}

TEST(Compare, Geomean) {
  EXPECT_FALSE(geomean({}).has_value());
  EXPECT_NEAR(*geomean({1, 4, 16}), 4.0, 1e-12);
  EXPECT_FALSE(ratio(1.0, 0.0).has_value());
  EXPECT_FALSE(ratio(std::nullopt, 1.0).has_value());
}

}  // namespace
}  // namespace railkit::sweep
