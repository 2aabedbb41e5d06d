// Golden-output tests of the comparison's renderers (report::render_comparison), google/benchmark's
// output tests as the model: the whole table, markdown and CSV of a few comparisons built in code
// must equal tests/fixtures/report/golden/NAME.table.txt, NAME.md and NAME.csv byte for byte. A
// mismatch names the golden file and its first differing line, expected and got (tests/lib/golden.hpp).
// RAILKIT_UPDATE_GOLDEN=1 rewrites the golden files from the current renderer (read their diff before
// committing it; tests/fixtures/report/golden/README.md). The inputs carry no dates, paths or
// hosts the renderers could print, so the text is the same on every machine.
#include "report/compare_render.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "golden.hpp"
#include "results_util.hpp"

// A namespace of its own: unity builds put this file in one translation unit with the other report tests.
namespace railkit::report::compare_golden_test {
namespace {

using sweep::CompareInput;
using sweep::CompareOptions;
using sweep::RoundDoc;

/// The formats and the golden file's suffix for each.
struct GoldenFormat {
  std::string_view format;
  std::string_view suffix;
};
constexpr GoldenFormat kGoldenFormats[] = {{"table", ".table.txt"}, {"markdown", ".md"}, {"csv", ".csv"}};

/// Empty when every format of `c` renders as its golden file NAME.SUFFIX says; else one
/// message per differing file (test::golden_mismatch).
std::string golden_mismatches(const std::string& name, const sweep::Comparison& c) {
  std::string out;
  for (const auto& f : kGoldenFormats) {
    const std::string path = std::string(RAILKIT_REPORT_GOLDEN_DIR) + "/" + name + std::string(f.suffix);
    if (const std::string m = test::golden_mismatch(path, render_comparison(c, f.format)); !m.empty()) out += m + "\n";
  }
  return out;
}

/// A configuration of one sweep (`series` "sweep"): one all_reduce document per round, busbw per
/// round at each size, and the same (empty) settings as every other.
CompareInput sweep_config(const std::string& name, const std::vector<std::uint64_t>& sizes,
                          const std::vector<std::vector<double>>& busbw_per_round) {
  CompareInput in;
  in.name = name;
  in.series = "sweep";
  in.env = std::map<std::string, std::string>{};
  for (std::size_t r = 0; r < busbw_per_round.size(); ++r) {
    std::vector<test::Rec> recs;
    for (std::size_t k = 0; k < sizes.size(); ++k) recs.push_back({"all_reduce", sizes[k], false, busbw_per_round[r][k]});
    in.rounds.push_back(RoundDoc{static_cast<int>(r) + 1, test::make_doc(name, recs)});
  }
  return in;
}

/// One document (a file) as a configuration.
CompareInput document(const std::string& name, const std::vector<test::Rec>& recs) {
  CompareInput in;
  in.name = name;
  in.doc = test::make_doc(name, recs);
  return in;
}

TEST(CompareRenderGolden, TwoConfigurationsOfASweepWithRounds) {
  // Three rounds each: a winner at 1 KiB, no significant difference at 64 KiB, the baseline better at 1 MiB.
  const std::vector<std::uint64_t> sizes = {1024, 65536, 1048576};
  const auto c = sweep::compare({sweep_config("base", sizes, {{1.0, 10.0, 40.0}, {1.1, 11.0, 41.0}, {0.9, 9.0, 39.5}}),
                                 sweep_config("fast", sizes, {{2.0, 10.2, 30.0}, {2.3, 10.8, 30.5}, {1.9, 9.1, 29.0}})},
                                "");
  const std::string m = golden_mismatches("two-configs", c);
  EXPECT_TRUE(m.empty()) << m;
}

TEST(CompareRenderGolden, DocumentsWithoutRoundsAMissingSizeAndAFailedConfiguration) {
  std::vector<CompareInput> in = {
      document("a", {{"all_reduce", 1024, false, 1.0}, {"all_reduce", 1048576, false, 10.0}}),
      document("b=1,c=2", {{"all_reduce", 1024, false, 2.0}}),  // lacks 1 MiB; a name CSV quotes
      document("c", {{"all_reduce", 1024, false, 4.0}, {"all_reduce", 1048576, false, 20.0}})};
  CompareInput failed;
  failed.name = "d";
  failed.status = "failed";
  failed.note = "exit code 6";
  in.push_back(failed);
  const std::string m = golden_mismatches("documents", sweep::compare(in, ""));
  EXPECT_TRUE(m.empty()) << m;
}

TEST(CompareRenderGolden, SplitGroupsPlacementsAndCollectivesAgainstANamedBaseline) {
  auto recs = [](double scale) {
    std::vector<test::Rec> r;
    for (const bool in_place : {false, true})
      for (const std::uint64_t bytes : {4096, 4194304}) {
        r.push_back({"all_reduce", bytes, in_place, scale * (bytes > 4096 ? 20.0 : 0.9), 0, "rail0"});
        r.push_back({"all_reduce", bytes, in_place, scale * (bytes > 4096 ? 18.5 : 1.9), 0, "rail1"});
      }
    r.push_back({"reduce_scatter", 4096, false, scale * 0.7, 0, "rail0"});
    r.push_back({"reduce_scatter", 4096, false, scale * 0.8, 0, "rail1"});
    return r;
  };
  CompareOptions o;
  o.baseline = "tuned";
  const auto c = sweep::compare({document("defaults", recs(1.0)), document("tuned", recs(1.25))}, o);
  const std::string m = golden_mismatches("split-groups", c);
  EXPECT_TRUE(m.empty()) << m;
}

TEST(CompareRenderGolden, AMismatchNamesTheFileAndTheFirstDifferingLine) {
  EXPECT_EQ(test::golden_text_mismatch("g.txt", "a\nb\n", "a\nb\n"), "");
  const std::string m = test::golden_text_mismatch("g.txt", "a\nb\nc\n", "a\nB\nc\n");
  EXPECT_NE(m.find("g.txt:2: "), std::string::npos) << m;
  EXPECT_NE(m.find("  expected: 'b'\n  got:      'B'\n"), std::string::npos) << m;
  const std::string shorter = test::golden_text_mismatch("g.txt", "a\nb\n", "a\n");
  EXPECT_NE(shorter.find("g.txt:2: "), std::string::npos) << shorter;
  EXPECT_NE(shorter.find("got:      (end of the rendered text)"), std::string::npos) << shorter;
  const std::string no_newline = test::golden_text_mismatch("g.txt", "a\n", "a");
  EXPECT_NE(no_newline.find("g.txt:1: "), std::string::npos) << no_newline;
  EXPECT_NE(no_newline.find("'a  (no newline at the end)'"), std::string::npos) << no_newline;
}

}  // namespace
}  // namespace railkit::report::compare_golden_test
