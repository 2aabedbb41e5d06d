// railkit import on the formats of issue 28 that need more than the real logs show: launcher and
// log-collector prefixes (strip_line_prefixes), nccl-tests -N cycles with -G, -I per-iteration
// columns with -Z timestamps, rows split by NCCL's INFO lines (tests/fixtures/import/format, made
// from nccl-tests' source formats, numbers made up), and the refusals that name the real cause.
#include <gtest/gtest.h>

#include <filesystem>

#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "core/json_text.hpp"
#include "core/results.hpp"
#include "core/strings.hpp"
#include "ingest/import.hpp"

namespace railkit::ingest::formats_test {
namespace {

namespace fs = std::filesystem;
const fs::path kDir = fs::path(RAILKIT_TESTS_DIR) / "fixtures" / "import";

ImportResult import_file(const fs::path& p, const ImportOptions& o = {}) {
  const std::string text = read_file(p);
  return import_log(detect_import_source(text, p.filename().string()), text, p.filename().string(), o);
}

std::string refusal(const std::string& text, const std::string& name, const ImportOptions& o = {}) {
  try {
    (void)import_log(detect_import_source(text, name), text, name, o);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "(accepted)";
}

TEST(ImportFormats, EachLauncherPrefixIsStrippedAndNamed) {
  // Lines as the real logs in tests/fixtures/import/real carry them, and kubectl's and ISO times'
  // forms from their documentation.
  const std::pair<std::string, std::string> cases[] = {
      {"[1,0]<stdout>:# nThread 1\n[1,1]<stdout>:#\n", "mpirun --tag-output"},
      {" 0: # nThread 1\n 0:         8    2\n", "srun --label"},
      {"0: # nThread 1\n0: #\n", "srun --label"},
      {"[0] # nThread 1\n[0] #\n", "-prepend-rank"},
      {"[pod/launcher-x/mpi] # nThread 1\n[pod/launcher-x/mpi] #\n", "kubectl logs --prefix"},
      {"00:55:22  # Benchmarking Allreduce\n00:55:22  #bytes\n", "time of day"},
      {"2024-05-01T12:00:00.1234567Z # nThread 1\n2024-05-01T12:00:01.0000000Z #\n", "ISO 8601 time"},
      {"    # Benchmarking PingPong\n\n           #bytes\n", "indented block"},
  };
  for (const auto& [text, kind] : cases) {
    const Unprefixed u = strip_line_prefixes(text);
    ASSERT_EQ(u.kinds.size(), 1u) << text;
    EXPECT_EQ(u.kinds[0], kind) << text;
    EXPECT_EQ(u.text.rfind("#", 0), 0u) << kind << ": " << u.text;
    EXPECT_EQ(std::count(u.text.begin(), u.text.end(), '\n'), std::count(text.begin(), text.end(), '\n')) << kind;
  }
  // A tool's own output has '#' lines in column 1 and no label: nothing is stripped.
  EXPECT_TRUE(strip_line_prefixes(read_file(kDir / "nccl-2.18_all_reduce_perf.log")).kinds.empty());
  EXPECT_TRUE(strip_line_prefixes(read_file(kDir / "osu-7.3_bw.log")).kinds.empty());
  // Two layers: a time, then a rank label.
  const Unprefixed two = strip_line_prefixes("10:00:01 [1,0]<stdout>:# nThread 1\n10:00:01 [1,0]<stdout>:#\n");
  EXPECT_EQ(two.kinds, (std::vector<std::string>{"time of day", "mpirun --tag-output"}));
}

TEST(ImportFormats, RunCyclesAreNumberedAndTheGraphOptionKept) {
  const auto d = import_file(kDir / "format" / "nccl-2.19.6-N2-G1_all_reduce_perf.log").docs.at(0).doc;
  ASSERT_EQ(d.results.size(), 16u);  // 4 sizes x 2 placements x 2 cycles
  for (std::size_t k = 0; k < d.results.size(); ++k) {
    EXPECT_EQ(d.results[k].cycle, k < 8 ? 0 : 1) << k;
    EXPECT_TRUE(d.results[k].has("cycle"));
  }
  EXPECT_EQ(d.results[8].bytes, 1024u);
  EXPECT_EQ(d.run.options["cudagraph"], 1);
  EXPECT_EQ(d.run.imported["op_from"], "program line 2");
  // One cycle: no cycle key at all, as nccl-tests prints none.
  EXPECT_FALSE(import_file(kDir / "nccl-2.18_all_reduce_perf.log").docs.at(0).doc.results[0].has("cycle"));
}

TEST(ImportFormats, PerIterationColumnsAndTimestampsAreKept) {
  const auto d = import_file(kDir / "format" / "nccl-2.19.6-I1-Z_sendrecv_perf.log").docs.at(0).doc;
  ASSERT_EQ(d.results.size(), 6u);
  const auto& r = d.results[0];  // "  12.03 ... 0  10.82  16.84  15.63  6.50" then in-place, then the time
  EXPECT_DOUBLE_EQ(r.time_us.avg, 12.03);
  EXPECT_DOUBLE_EQ(r.time_us.min, 10.82);
  EXPECT_DOUBLE_EQ(r.time_us.max, 16.84);
  EXPECT_DOUBLE_EQ(r.time_us.p99, 15.63);
  EXPECT_DOUBLE_EQ(r.time_us.cv, 0.065);  // i_cv% 6.50
  EXPECT_FALSE(r.has("time_us.p50"));      // not printed
  EXPECT_EQ(r.observed["timestamp"], "2026-11-30 10:15:01");
  EXPECT_EQ(d.results[1].observed["timestamp"], "2026-11-30 10:15:01");
}

TEST(ImportFormats, RowsSplitByNcclInfoLinesAreJoinedAgain) {
  const auto d = import_file(kDir / "format" / "nccl-2.19.6-info-split-rows_all_reduce_perf.log").docs.at(0).doc;
  ASSERT_EQ(d.results.size(), 6u);
  EXPECT_EQ(d.run.imported["rows_joined"], (nlohmann::json{14, 20, 26}));
  EXPECT_EQ(d.run.imported["line_prefix"], (nlohmann::json{"-prepend-rank"}));
  EXPECT_DOUBLE_EQ(d.results[0].time_us.avg, 9.01);  // the out-of-place columns on line 17
  EXPECT_DOUBLE_EQ(d.results[1].time_us.avg, 9.28);  // the in-place columns on line 19
  EXPECT_EQ(d.results[1].observed["source_line"], 14);
  // The real fragment of NVIDIA/nccl issue 1453 (a row's first columns, then NCCL's lines, and no
  // table header): refused as what it is.
  EXPECT_NE(refusal(read_file(kDir / "real" / "nccl-srun-label-info-split-row-i1453.log"), "i1453.log")
                .find("i1453.log:1: cannot tell which tool wrote this"),
            std::string::npos);
}

TEST(ImportFormats, RefusalsNameTheRealCause) {
  const std::string header =
      "#  Rank  0 Group  0 Pid 1 on a device  0 [0x31] X\n#  Rank  1 Group  0 Pid 2 on b device  0 [0x31] X\n"
      "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n";
  const std::string row = "        1024           256     float     sum      -1    10.00    0.10    0.10      0    10.00    0.10    0.10      0\n";
  const std::string footer = "# Out of bounds values : 0 OK\n# Avg bus bandwidth    : 0.1\n";
  // Two ranks, sum, count x 4 = size: all_reduce and sendrecv print the same row.
  EXPECT_EQ(refusal(header + row + footer, "x.log").rfind("x.log:3: the log does not name the collective of this table and its shape "
                                                          "fits all_reduce and sendrecv", 0),
            0u);
  // A program line before the run names it; --coll against it is refused.
  ImportOptions o;
  o.op = "all_reduce";
  EXPECT_EQ(refusal("$ mpirun -np 2 ./build/sendrecv_perf -b 1K\n" + header + row + footer, "x.log", o),
            "x.log:1: --coll all_reduce but this line names ./build/sendrecv_perf (sendrecv)");
  const auto d = import_log(ImportSource::NcclTests, "$ mpirun -np 2 ./build/sendrecv_perf -b 1K\n" + header + row + footer, "x.log", {});
  EXPECT_EQ(d.docs.at(0).doc.results[0].op, "sendrecv");
  // A column nccl-tests never printed.
  EXPECT_NE(refusal("# nThread 1 nGpus 1 minBytes 8 maxBytes 8 step: 2(factor) warmup iters: 1 iters: 1 validation: 1\n"
                    "#  size  count  type  redop  time  algbw  busbw  bogus\n",
                    "y.log")
                .find("y.log:2: table header column 'bogus' is not one of nccl-tests'"),
            std::string::npos);
}

}  // namespace
}  // namespace railkit::ingest::formats_test
