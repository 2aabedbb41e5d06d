// Reading the windows: a torn last line, another schema, a bad field and an over-long line are
// reported with file:line and skipped; a directory without a window is refused (UsageError).
#include <gtest/gtest.h>

#include "core/error.hpp"
#include "judge_gen.hpp"
#include "monitor/judge/judge.hpp"

namespace railkit::monitor {
namespace {

using test::GenJob;
using test::TempDir;

bool has_problem(const Corpus& c, const std::string& text) {
  for (const std::string& p : c.problems)
    if (p.find(text) != std::string::npos) return true;
  return false;
}

std::string all_problems(const Corpus& c) {
  std::string out;
  for (const std::string& p : c.problems) out += p + "\n";
  return out;
}

TEST(MonitorJudgeRead, TornLastLineTolerated) {
  GenJob g;
  TempDir dir("railkit-judge");
  test::gen_write(g, dir);
  const auto lines = test::gen_rank_lines(g, 0);
  const std::string torn = lines[0] + "\n" + lines[1] + "\n" + lines[2].substr(0, lines[2].size() / 2);
  const auto file = dir.write("railkit-nccl-node1-4000.jsonl", torn);
  const Corpus c = read_windows({dir.path});
  EXPECT_TRUE(has_problem(c, file.string() + ":3: torn last line")) << all_problems(c);
  EXPECT_EQ(c.problems.size(), 1u);
  EXPECT_EQ(c.windows, 8u * 3 - 1);
  EXPECT_EQ(c.streams.at(StreamKey{g.job, g.comm, 0}).windows.size(), 2u);
}

TEST(MonitorJudgeRead, OtherSchemaAndBadFieldsReportedWithFileAndLine) {
  GenJob g;
  TempDir dir("railkit-judge");
  test::gen_write(g, dir);
  const auto other = dir.write("other.jsonl", "{\"schema\":\"railkit.results/1\"}\n\n[1,2]\nnot json\n");
  std::string bad = test::gen_rank_lines(g, 0)[0];
  bad.replace(bad.find("\"rank\":0"), 8, "\"rank\":9");
  const auto badf = dir.write("bad.jsonl", bad + "\n");
  dir.write("ignored.json", "{\"schema\":\"railkit.monitor.window/1\"}\n");  // not *.jsonl
  const Corpus c = read_windows({dir.path});
  EXPECT_TRUE(has_problem(c, other.string() + ":1: schema \"railkit.results/1\", not railkit.monitor.window/1")) << all_problems(c);
  EXPECT_TRUE(has_problem(c, other.string() + ":3: not a JSON object")) << all_problems(c);
  EXPECT_TRUE(has_problem(c, other.string() + ":4: not a JSON object")) << all_problems(c);
  EXPECT_TRUE(has_problem(c, badf.string() + ":1: rank 9 is not in [0, nranks 8)")) << all_problems(c);
  EXPECT_EQ(c.problems.size(), 4u) << all_problems(c);
  EXPECT_EQ(c.windows, 8u * 3);
}

TEST(MonitorJudgeRead, NullsAsThePluginWritesThemAreAbsentValues) {
  GenJob g;
  TempDir dir("railkit-judge");
  auto j = nlohmann::json::parse(test::gen_rank_lines(g, 0)[0]);
  j["local_rank"] = nullptr;
  j["inflight"] = {{"count", 0}, {"oldest_seq", nullptr}, {"oldest_op", nullptr}, {"oldest_age_s", 0}};
  j["last_completion_unix_s"] = nullptr;
  j["colls"][0]["busbw_GBps"]["p50"] = nullptr;
  j["nics"][0]["name"] = nullptr;
  dir.write("a.jsonl", j.dump() + "\n");
  const Corpus c = read_windows({dir.path});
  EXPECT_TRUE(c.problems.empty()) << all_problems(c);
  const Window& w = c.streams.at(StreamKey{g.job, g.comm, 0}).windows.at(0);
  EXPECT_EQ(w.local_rank, -1);
  EXPECT_FALSE(w.last_completion_unix_s.has_value());
  EXPECT_EQ(w.nics.at(0).name, "dev0");
  EXPECT_EQ(w.colls.at(0).time_p50_us, 1000);
}

TEST(MonitorJudgeRead, MissingFieldNamesIt) {
  GenJob g;
  TempDir dir("railkit-judge");
  std::string line = test::gen_rank_lines(g, 0)[0];
  line.replace(line.find("\"host\":"), 7, "\"hast\":");
  const auto f = dir.write("a.jsonl", line + "\n" + test::gen_rank_lines(g, 0)[1] + "\n");
  const Corpus c = read_windows({dir.path});
  EXPECT_TRUE(has_problem(c, f.string() + ":1: host is missing")) << all_problems(c);
  EXPECT_EQ(c.windows, 1u);
}

TEST(MonitorJudgeRead, OverlongLineSkippedAndTheNextOneRead) {
  GenJob g;
  TempDir dir("railkit-judge");
  const auto lines = test::gen_rank_lines(g, 0);
  const auto f = dir.write("a.jsonl", std::string(3 << 20, 'x') + "\n" + lines[0] + "\n" + lines[1] + "\n");
  ReadOptions o;
  o.max_line_bytes = 1 << 20;  // the reader's block is 1 MiB: the long line spans blocks
  const Corpus c = read_windows({dir.path}, o);
  EXPECT_TRUE(has_problem(c, f.string() + ":1: longer than 1048576 bytes")) << all_problems(c);
  EXPECT_EQ(c.windows, 2u);
  EXPECT_EQ(c.lines, 3u);
}

TEST(MonitorJudgeRead, LargeFileReadFromItsTail) {
  GenJob g;
  g.windows = 40;
  TempDir dir("railkit-judge");
  const auto lines = test::gen_rank_lines(g, 0);
  std::string text;
  for (const auto& l : lines) text += l + "\n";
  const auto f = dir.write("a.jsonl", text + lines[0].substr(0, 100));  // and a torn last line
  ReadOptions o;
  o.tail_bytes = 100 + 50;  // the torn line, 5 whole ones, the end of a 6th
  for (std::size_t i = lines.size() - 5; i < lines.size(); ++i) o.tail_bytes += lines[i].size() + 1;
  const Corpus c = read_windows({dir.path}, o);
  EXPECT_TRUE(has_problem(c, f.string() + ":1-35: before the file's last")) << all_problems(c);
  EXPECT_TRUE(has_problem(c, f.string() + ":41: torn last line")) << all_problems(c);
  EXPECT_EQ(c.windows, 5u);
  EXPECT_EQ(c.streams.at(StreamKey{g.job, g.comm, 0}).windows.front().index, 35);
}

TEST(MonitorJudgeRead, KeepsOnlyTheLastWindows) {
  GenJob g;
  g.windows = 12;
  TempDir dir("railkit-judge");
  test::gen_write(g, dir);
  ReadOptions o;
  o.keep_windows = 5;
  const Corpus c = read_windows({dir.path}, o);
  const RankStream& s = c.streams.at(StreamKey{g.job, g.comm, 3});
  EXPECT_EQ(s.seen, 12u);
  ASSERT_EQ(s.windows.size(), 5u);
  EXPECT_EQ(s.windows.front().index, 7);
  EXPECT_EQ(s.windows.back().index, 11);
}

TEST(MonitorJudgeRead, SeveralDirectoriesAreOneJob) {
  GenJob g;
  TempDir a("railkit-judge"), b("railkit-judge");
  for (int r = 0; r < g.nranks; ++r) {
    std::string text;
    for (const auto& l : test::gen_rank_lines(g, r)) text += l + "\n";
    (r < 4 ? a : b).write("r" + std::to_string(r) + ".jsonl", text);
  }
  const Corpus c = read_windows({a.path, b.path});
  EXPECT_EQ(c.streams.size(), 8u);
  EXPECT_EQ(c.files, 8u);
}

TEST(MonitorJudgeRead, NoWindowIsAUsageErrorOfOneLine) {
  TempDir dir("railkit-judge");
  dir.write("x.jsonl", "{\"schema\":\"other/1\"}\n");
  try {
    read_windows({dir.path});
    FAIL() << "no error";
  } catch (const UsageError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("no railkit.monitor.window/1 window in 1 .jsonl file (1 line)"), std::string::npos) << m;
    EXPECT_EQ(m.find('\n'), std::string::npos);
  }
  EXPECT_THROW(read_windows({dir.path / "absent"}), UsageError);
}

TEST(MonitorJudgeRead, UnknownSourceIsReportedNotMeasured) {
  GenJob g;
  g.source = "replayed";
  TempDir dir("railkit-judge");
  test::gen_write(g, dir);
  dir.write("ok.jsonl", [] {
    GenJob n;
    n.job = "other";
    return test::gen_rank_lines(n, 0)[0] + "\n";
  }());
  const Corpus c = read_windows({dir.path});
  EXPECT_TRUE(has_problem(c, "source 'replayed' is not nccl or simulated")) << all_problems(c);
  EXPECT_EQ(c.windows, 1u);
}

}  // namespace
}  // namespace railkit::monitor
