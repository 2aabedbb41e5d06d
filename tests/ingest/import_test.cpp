// railkit import: nccl-tests (text and -J JSON), IMB-MPI1 and OSU fixtures (tests/fixtures/import,
// see its README for their provenance) as railkit.results/1 documents.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "core/json_text.hpp"
#include "core/results.hpp"
#include "core/strings.hpp"
#include "ingest/import.hpp"

namespace railkit::ingest {
namespace {

namespace fs = std::filesystem;
const fs::path kDir = fs::path(RAILKIT_TESTS_DIR) / "fixtures" / "import";

std::string slurp(const fs::path& p) { return read_file(p); }

ImportResult import_fixture(const std::string& name, const ImportOptions& o = {}) {
  const std::string text = slurp(kDir / name);
  return import_log(detect_import_source(text, name), text, name, o);
}

/// `v` printed the way `printed` was: same decimals, or the same %.Ne form.
std::string format_like(double v, const std::string& printed) {
  char buf[64];
  const auto e = printed.find_first_of("eE");
  const auto dot = printed.find('.');
  if (e != std::string::npos) {
    const int decimals = dot == std::string::npos ? 0 : static_cast<int>(e - dot - 1);
    std::snprintf(buf, sizeof buf, "%.*e", decimals, v);
  } else {
    const int decimals = dot == std::string::npos ? 0 : static_cast<int>(printed.size() - dot - 1);
    std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  }
  return buf;
}

/// The table rows of a nccl-tests text log as the test sees them, independently of the parser:
/// lines not starting with '#' whose first field is a number, after the "#  size" header.
std::vector<std::vector<std::string>> nccl_rows(const std::string& text) {
  std::vector<std::vector<std::string>> rows;
  bool table = false;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("#", 0) == 0) {
      const auto t = split_ws(line);
      if (t.size() > 2 && t[1] == "size" && t[2] == "count") table = true;
      if (line.rfind("# Avg bus bandwidth", 0) == 0) table = false;
      continue;
    }
    const auto t = split_ws(line);
    if (table && !t.empty() && to_int(t[0])) rows.push_back(t);
  }
  return rows;
}

/// Round trip through JSON: what report and compare read back.
ResultsDocument reread(const ResultsDocument& d) {
  ResultsDocument back;
  from_json(parse_json(dump_results(d)), back);
  return back;
}

class NcclTextFixture : public ::testing::TestWithParam<std::string> {};

TEST_P(NcclTextFixture, BusbwTimeAndAlgbwRowsEqualTheLogToThePrintedPrecision) {
  const std::string text = slurp(kDir / GetParam());
  const ImportResult r = import_fixture(GetParam());
  ASSERT_EQ(r.docs.size(), 1u);
  const ResultsDocument d = reread(r.docs[0].doc);
  const auto rows = nccl_rows(text);
  ASSERT_FALSE(rows.empty());
  ASSERT_EQ(d.results.size(), 2 * rows.size());
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const auto& t = rows[i];
    for (int k = 0; k < 2; ++k) {
      const ResultRecord& rec = d.results[2 * i + k];
      const std::size_t at = 5 + 4 * k;
      EXPECT_EQ(rec.in_place, k == 1);
      EXPECT_EQ(std::to_string(rec.bytes), t[0]);
      EXPECT_EQ(std::to_string(rec.count), t[1]);
      EXPECT_EQ(rec.dtype, t[2]);
      EXPECT_EQ(rec.redop, t[3]);
      EXPECT_EQ(std::to_string(rec.root), t[4]);
      EXPECT_EQ(format_like(rec.time_us.avg, t[at]), t[at]) << GetParam() << " row " << i;
      EXPECT_EQ(format_like(rec.algbw_GBps, t[at + 1]), t[at + 1]) << GetParam() << " row " << i;
      EXPECT_EQ(format_like(rec.busbw_GBps, t[at + 2]), t[at + 2]) << GetParam() << " row " << i;
      if (t[at + 3] == "N/A") {
        EXPECT_FALSE(rec.has("wrong"));
        EXPECT_FALSE(rec.wrong.has_value());
      } else {
        ASSERT_TRUE(rec.wrong.has_value());
        EXPECT_EQ(std::to_string(*rec.wrong), t[at + 3]);
      }
      // What nccl-tests does not print is left out, not invented.
      for (const char* k2 : {"time_us.min", "time_us.p50", "time_us.p99", "time_us.cv", "ranks", "group", "cycle"})
        EXPECT_FALSE(rec.has(k2)) << k2;
    }
  }
  const std::string dumped = dump_results(d);
  const auto j = parse_json(dumped);
  for (const char* k : {"command", "env", "start_time", "railkit_version", "average", "split"})
    EXPECT_FALSE(j["run"].contains(k)) << k;
  EXPECT_FALSE(j["results"][0]["time_us"].contains("p99"));
  EXPECT_FALSE(j["results"][0].contains("ranks"));
  EXPECT_EQ(j["run"]["backend"], "nccl-tests");
  EXPECT_EQ(j["run"]["timing_method"], "back_to_back");
  EXPECT_EQ(j["run"]["imported"]["tool"], "nccl-tests");
  EXPECT_EQ(j["run"]["imported"]["file"], GetParam());
  // The "# Avg bus bandwidth" line, verbatim (%g).
  const auto avg_at = text.find("# Avg bus bandwidth    : ");
  ASSERT_NE(avg_at, std::string::npos);
  const std::string printed = split_ws(std::string_view(text).substr(avg_at + 25))[0];
  EXPECT_EQ(j["run"]["imported"]["avg_busbw_printed"], printed);
  EXPECT_DOUBLE_EQ(d.summary.avg_busbw_GBps, *to_double(printed));
  EXPECT_EQ(d.summary.errors, 0);
}

INSTANTIATE_TEST_SUITE_P(Import, NcclTextFixture,
                         ::testing::Values("nccl-2.18_all_reduce_perf.log", "nccl-2.19_all_gather_perf.log",
                                           "nccl-2.20-h100-2node.log", "nccl-2.23_broadcast_perf.log",
                                           "nccl-2.28_all_reduce_perf.log", "nccl-2.28_alltoall_perf.log"));

TEST(Import, NcclTestsRunFacts) {
  auto d = import_fixture("nccl-2.19_all_gather_perf.log").docs.at(0).doc;
  EXPECT_EQ(d.results[0].op, "all_gather");  // from the file name: 2.13 prints no program name
  EXPECT_EQ(d.run.nranks, 16);
  EXPECT_EQ(d.run.nnodes, 2);
  EXPECT_EQ(d.run.hosts, (std::vector<std::string>{"dgx-b07", "dgx-b08"}));
  EXPECT_EQ(d.results[0].iters, 20);
  EXPECT_TRUE(d.run.absent.count("backend_version"));  // 2.13 prints no NCCL version
  EXPECT_EQ(d.observed["devices"].size(), 16u);
  EXPECT_EQ(d.observed["devices"][0]["pci"], "[0x18]");

  d = import_fixture("nccl-2.20-h100-2node.log").docs.at(0).doc;  // no program in the name: the table's shape
  EXPECT_EQ(d.results[0].op, "all_reduce");
  EXPECT_FALSE(d.results[0].has("wrong"));  // -c 0: N/A

  d = import_fixture("nccl-2.28_alltoall_perf.log").docs.at(0).doc;
  EXPECT_EQ(d.results[0].op, "alltoall");  // "# Collective test starting: alltoall_perf"
  EXPECT_EQ(d.run.backend_version, "NCCL 2.28.9");
  EXPECT_EQ(d.run.imported["tool_version"], "2.17.6");
  EXPECT_EQ(d.run.imported["nccl_headers"], "22807");

  // --coll names the collective of a log that does not; where the log names another, it is refused.
  ImportOptions o;
  o.op = "all_gather";
  d = import_fixture("nccl-2.19_all_gather_perf.log", o).docs.at(0).doc;
  EXPECT_EQ(d.run.imported["op_from"], "--coll");
  try {
    import_fixture("nccl-2.28_alltoall_perf.log", o);
    ADD_FAILURE() << "--coll all_gather over a log that names alltoall_perf was taken";
  } catch (const UsageError& e) {
    EXPECT_EQ(std::string(e.what()), "nccl-2.28_alltoall_perf.log:2: --coll all_gather but this line names alltoall_perf (alltoall)");
  }
}

TEST(Import, NcclTestsJsonEqualsItsTextLog) {
  const auto js = reread(import_fixture("nccl-2.28_all_reduce_perf.json").docs.at(0).doc);
  const auto tx = import_fixture("nccl-2.28_all_reduce_perf.log").docs.at(0).doc;
  EXPECT_EQ(import_fixture("nccl-2.28_all_reduce_perf.json").docs.at(0).name, "nccl-2.28_all_reduce_perf-json");
  EXPECT_EQ(js.run.imported["format"], "nccl-tests json");
  ASSERT_EQ(js.results.size(), tx.results.size());
  const auto rows = nccl_rows(slurp(kDir / "nccl-2.28_all_reduce_perf.log"));
  for (std::size_t i = 0; i < js.results.size(); ++i) {
    EXPECT_EQ(js.results[i].bytes, tx.results[i].bytes);
    EXPECT_EQ(js.results[i].in_place, tx.results[i].in_place);
    EXPECT_EQ(js.results[i].iters, 20);
    // The JSON holds 6 decimals: printed like the text, it gives the text's figure.
    const auto& printed = rows[i / 2][5 + 4 * (i % 2) + 2];
    EXPECT_EQ(format_like(js.results[i].busbw_GBps, printed), printed) << i;
  }
  EXPECT_EQ(js.run.backend_version, "NCCL 2.28.9");
  EXPECT_EQ(js.run.env.at("NCCL_IB_HCA"), "mlx5_0,mlx5_1");
  EXPECT_FALSE(js.run.env.count("PATH"));
  EXPECT_NE(js.run.command.find("all_reduce_perf"), std::string::npos);
  EXPECT_EQ(js.run.nranks, 16);
  EXPECT_EQ(js.run.imported["start_time_local"], "2026-10-14 09:12:33");
  EXPECT_TRUE(js.run.absent.count("start_time"));  // local time without a zone: not run.start_time
}

TEST(Import, ImbOneDocumentPerBenchmarkWithDerivedBandwidth) {
  const ImportResult r = import_fixture("imb-2021.3-collectives.log");
  ASSERT_EQ(r.docs.size(), 3u);  // Allreduce, Allgather, Bcast; Barrier skipped with a note
  ASSERT_EQ(r.notes.size(), 1u);
  EXPECT_NE(r.notes[0].find("Barrier"), std::string::npos);
  EXPECT_EQ(r.docs[0].name, "imb-2021.3-collectives.Allreduce.np4");
  const ResultsDocument ar = reread(r.docs[0].doc);
  EXPECT_EQ(ar.run.backend, "imb");
  EXPECT_EQ(ar.run.timing_method, "barrier_separated");
  EXPECT_EQ(ar.run.nranks, 4);
  EXPECT_EQ(ar.run.command, "./IMB-MPI1 Allreduce Allgather Bcast Barrier -npmin 4");
  EXPECT_TRUE(ar.run.absent.count("hosts"));
  const ResultRecord& x = ar.results[3];  // "#bytes 64"
  EXPECT_EQ(x.op, "all_reduce");
  EXPECT_EQ(x.dtype, "float");
  EXPECT_EQ(x.redop, "sum");
  EXPECT_EQ(x.bytes, 64u);
  EXPECT_EQ(x.iters, 1000);
  EXPECT_FALSE(x.has("count"));
  EXPECT_FALSE(x.has("wrong"));
  EXPECT_FALSE(x.has("ranks.slowest_rank"));
  EXPECT_TRUE(x.has("ranks.time_us_min"));
  EXPECT_DOUBLE_EQ(x.algbw_GBps, 64 / (x.time_us.avg * 1e-6) / 1e9);
  EXPECT_DOUBLE_EQ(x.busbw_GBps, x.algbw_GBps * 2 * 3 / 4.0);
  EXPECT_EQ(ar.run.imported["derived"][0], "algbw_GBps");
  // Allgather: IMB's #bytes is one rank's block; railkit's bytes are nranks x that.
  const ResultsDocument ag = reread(r.docs[1].doc);
  EXPECT_EQ(ag.results[3].bytes, 256u);
  EXPECT_EQ(ag.results[3].observed["source_bytes"], 64);
  EXPECT_EQ(ag.results[3].dtype, "uint8");  // MPI_BYTE
  const ResultsDocument pp = reread(import_fixture("imb-2021.3-pingpong.log").docs.at(0).doc);
  EXPECT_EQ(pp.results[0].op, "sendrecv");
  EXPECT_FALSE(pp.results[0].has("ranks"));
}

TEST(Import, OsuLatencyAndBandwidth) {
  const ResultsDocument full = reread(import_fixture("osu-7.3_allreduce.log").docs.at(0).doc);
  EXPECT_EQ(full.run.backend, "osu");
  EXPECT_EQ(full.run.imported["tool_version"], "7.3");
  EXPECT_TRUE(full.run.absent.count("nranks"));  // OSU prints none
  EXPECT_EQ(full.results[0].dtype, "int8");      // "# Datatype: MPI_CHAR."
  EXPECT_EQ(full.results[0].iters, 1000);
  EXPECT_FALSE(full.results[0].has("busbw_GBps"));  // 2(n-1)/n needs n
  EXPECT_TRUE(full.results[0].has("algbw_GBps"));
  ImportOptions o;
  o.nranks = 8;
  const ResultsDocument with_n = reread(import_fixture("osu-7.3_allreduce.log", o).docs.at(0).doc);
  EXPECT_TRUE(with_n.results[0].has("busbw_GBps"));
  EXPECT_EQ(with_n.run.imported["nranks_from"], "--nranks");
  const ResultsDocument old = reread(import_fixture("osu-5.6.3_allreduce.log").docs.at(0).doc);
  EXPECT_FALSE(old.results[0].has("dtype"));  // 5.6.3 prints no datatype
  EXPECT_FALSE(old.results[0].has("ranks"));
  EXPECT_EQ(old.results[0].bytes, 4u);
  const ResultsDocument bw = reread(import_fixture("osu-7.3_bw.log").docs.at(0).doc);
  EXPECT_EQ(bw.run.nranks, 2);
  // MB/s as printed is the algbw; the time is derived from it.
  std::istringstream in(slurp(kDir / "osu-7.3_bw.log"));
  std::size_t i = 0;
  for (std::string line; std::getline(in, line);) {
    const auto t = split_ws(line);
    if (t.size() != 2 || !to_int(t[0])) continue;
    ASSERT_LT(i, bw.results.size());
    EXPECT_EQ(format_like(bw.results[i].algbw_GBps * 1000, t[1]), t[1]);
    EXPECT_EQ(std::to_string(bw.results[i].bytes), t[0]);
    ++i;
  }
  EXPECT_EQ(i, bw.results.size());
  EXPECT_EQ(bw.run.imported["derived"][0], "time_us.avg");
}

TEST(Import, DetectsTheSourceOrSaysItCannot) {
  EXPECT_EQ(detect_import_source(slurp(kDir / "nccl-2.18_all_reduce_perf.log"), "a"), ImportSource::NcclTests);
  EXPECT_EQ(detect_import_source(slurp(kDir / "nccl-2.28_all_reduce_perf.json"), "a"), ImportSource::NcclTests);
  EXPECT_EQ(detect_import_source(slurp(kDir / "imb-2021.3-pingpong.log"), "a"), ImportSource::Imb);
  EXPECT_EQ(detect_import_source(slurp(kDir / "osu-5.6.3_allreduce.log"), "a"), ImportSource::Osu);
  try {
    detect_import_source("hello\nworld\n", "notes.txt");
    FAIL();
  } catch (const UsageError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("notes.txt:1: cannot tell which tool wrote this", 0), 0u) << e.what();
  }
}

/// Every malformed fixture: one UsageError (exit 6) "FILE:LINE: ..." with the line its README names.
TEST(Import, MalformedInputIsOneLineNamingFileAndLine) {
  const std::pair<const char*, const char*> cases[] = {
      {"nccl-truncated-row.log", "nccl-truncated-row.log:27: a table row with 6 columns"},
      {"nccl-bad-number.log", "nccl-bad-number.log:20: busbw '3.1O' is not a non-negative number"},
      {"nccl-bad-json.json", "nccl-bad-json.json:3: not valid JSON"},
      {"imb-bad-number.log", "imb-bad-number.log:38: t[usec] '1.2.3' is not a non-negative number"},
      {"osu-truncated.log", "osu-truncated.log:6: an OSU row with 4 columns"},
      {"unknown.log", "unknown.log:1: cannot tell which tool wrote this"},
  };
  for (const auto& [file, want] : cases) {
    const std::string text = slurp(kDir / "malformed" / file);
    try {
      (void)import_log(detect_import_source(text, file), text, file, {});
      ADD_FAILURE() << file << " was accepted";
    } catch (const UsageError& e) {
      const std::string msg = e.what();
      EXPECT_EQ(msg.rfind(want, 0), 0u) << file << ": " << msg;
      EXPECT_EQ(msg.find('\n'), std::string::npos);
      EXPECT_EQ(exit_code(e.code()), 6);
    }
  }
}

/// A table that stops without nccl-tests' footer (a run that died, a log cut at a row's end): its
/// rows import, the document says it is incomplete and where the rows stop, and a note says so.
TEST(Import, NcclTableWithoutItsFooterImportsAsIncomplete) {
  const std::string text = slurp(kDir / "malformed" / "nccl-truncated-table.log");
  const ImportResult r = import_log(ImportSource::NcclTests, text, "t.log", {});
  ASSERT_EQ(r.docs.size(), 1u);
  const ResultsDocument d = reread(r.docs[0].doc);
  EXPECT_FALSE(d.summary.complete);
  ASSERT_TRUE(d.error.has_value());
  EXPECT_EQ(d.error->exit_code, 6);
  EXPECT_EQ(d.error->detail["last_row_line"], 30);
  EXPECT_EQ(d.results.back().bytes, 131072u);
  ASSERT_EQ(r.notes.size(), 1u);
  EXPECT_EQ(r.notes[0].rfind("t.log:30: the table that starts at line 14 stops at line 30", 0), 0u) << r.notes[0];
}

TEST(Import, ReadersTellImportedFromMeasured) {
  const ResultsDocument d = import_fixture("nccl-2.18_all_reduce_perf.log").docs.at(0).doc;
  EXPECT_TRUE(is_imported(d));
  EXPECT_THROW(refuse_imported(d, "x.json", "profile evidence"), UsageError);
  ResultsDocument plain;
  EXPECT_NO_THROW(refuse_imported(plain, "x.json", "profile evidence"));
  // An imported document missing its run.imported is not a railkit-bench document either.
  auto j = parse_json(dump_results(d));
  j["run"].erase("imported");
  ResultsDocument back;
  EXPECT_THROW(from_json(j, back), UsageError);
  // A railkit-bench document still needs every key.
  ResultsDocument bench;
  bench.run.backend = "mpi";
  auto jb = parse_json(dump_results(bench));
  jb["run"].erase("command");
  EXPECT_THROW(from_json(jb, back), UsageError);
  EXPECT_FALSE(parse_json(dump_results(bench))["run"].contains("imported"));
}

}  // namespace
}  // namespace railkit::ingest
