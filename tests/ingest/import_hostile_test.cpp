// railkit import on hostile input (issue 32): a document larger than railkit reads back, figures
// that would not be finite or do not fit their integers, sizes past 64 bits, several tools' output
// in one file. Each is refused with one line naming the file and line, or noted; never stored
// wrong and never dropped in silence.
#include <gtest/gtest.h>

#include <string>

#include "core/error.hpp"
#include "core/json_text.hpp"
#include "core/results.hpp"
#include "ingest/import.hpp"

namespace railkit::ingest {
namespace {

/// An nccl-tests 2.19 all_reduce log of `rows` rows; `row(i)` may replace a row's text.
std::string nccl_log(int rows, const std::string& wrong = "0", const std::string& first_size = "") {
  std::string t =
      "# nccl-tests version 2.19.6 nccl-headers=22809 nccl-library=22809\n"
      "# Collective test starting: all_reduce_perf\n"
      "# nThread 1 nGpus 1 minBytes 8 maxBytes 8000 step: 8(bytes) warmup iters: 1 iters: 20 agg iters: 1 "
      "validation: 1 graph: 0\n"
      "#  Rank  0 Group  0 Pid   5101 on      node1 device  0 [0000:18:00] NVIDIA H100\n"
      "#  Rank  1 Group  0 Pid   5102 on      node1 device  1 [0000:2a:00] NVIDIA H100\n"
      "#       size  count  type redop root  time  algbw  busbw #wrong  time  algbw  busbw #wrong\n";
  for (int i = 0; i < rows; ++i) {
    const std::string size = i == 0 && !first_size.empty() ? first_size : std::to_string(8 * (i + 1));
    t += size + " " + std::to_string(2 * (i + 1)) + " float sum -1 9.01 0.11 0.11 " + (i == 0 ? wrong : "0") +
         " 9.28 0.11 0.11 0\n";
  }
  return t + "# Out of bounds values : 0 OK\n# Avg bus bandwidth    : 0.11\n";
}

/// The one-line refusal of import_input(text), with its exit code checked.
std::string refusal(const std::string& text, const std::string& file, std::optional<ImportSource> from = std::nullopt,
                    const ImportOptions& o = {}) {
  try {
    (void)import_input(text, file, from, o);
  } catch (const UsageError& e) {
    EXPECT_EQ(exit_code(e.code()), 6);
    const std::string msg = e.what();
    EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
    return msg;
  }
  ADD_FAILURE() << file << " was imported";
  return "";
}

TEST(ImportHostile, EachDocumentIsTheTextWrittenAndReadsBack) {
  const ImportResult r = import_input(nccl_log(40), "all_reduce_perf.log", std::nullopt, {});
  ASSERT_EQ(r.docs.size(), 1u);
  EXPECT_EQ(r.docs[0].records, 80u);
  EXPECT_EQ(r.docs[0].op, "all_reduce");
  EXPECT_TRUE(r.docs[0].doc.results.empty());  // held once: as text
  ResultsDocument back;
  from_json(parse_json(r.docs[0].text), back);
  EXPECT_EQ(back.results.size(), 80u);
  EXPECT_EQ(back.run.label, "all_reduce_perf");
  EXPECT_EQ(dump_results(back), r.docs[0].text);  // the records dumped one at a time: the whole tree's text
}

/// A run whose document would pass the size railkit reads back is refused at the row that crosses
/// it, before the rest of the log is held, naming the limit; one under it imports.
TEST(ImportHostile, ADocumentOverTheReadLimitIsRefusedAtTheRowThatCrossesIt) {
  ImportOptions o;
  o.max_document_bytes = 20000;
  const std::string msg = refusal(nccl_log(400), "big.log", std::nullopt, o);
  EXPECT_NE(msg.find("the document of this run would be over"), std::string::npos) << msg;
  EXPECT_NE(msg.find("more than the 20000 bytes railkit reads back (report, compare, history): nothing written"),
            std::string::npos) << msg;
  const auto line = std::stoul(msg.substr(msg.find(':') + 1));
  EXPECT_GT(line, 6u);
  EXPECT_LT(line, 100u);  // early: a few dozen rows, not the 400
  EXPECT_EQ(kMaxImportedDocumentBytes, kMaxInputBytes);  // what report and history read
  const ImportResult ok = import_input(nccl_log(20), "small.log", ImportSource::NcclTests, o);
  EXPECT_LE(ok.docs.at(0).text.size(), 20000u);
}

TEST(ImportHostile, AnImbTimeOfDenormalSizeIsRefusedNotStoredAsNull) {
  const std::string imb =
      "#    Intel(R) MPI Benchmarks 2021.3, MPI-1 part\n"
      "# MPI_Datatype                   :   MPI_BYTE\n"
      "# Benchmarking Allreduce\n"
      "# #processes = 4\n"
      "       #bytes #repetitions  t_min[usec]  t_max[usec]  t_avg[usec]\n"
      "            8         1000         1.00         1.00         1.00\n"
      "         1024         1000       1e-320       1e-320       1e-320\n";
  const std::string msg = refusal(imb, "imb.log");
  EXPECT_EQ(msg.rfind("imb.log:7: algbw_GBps would be infinite", 0), 0u) << msg;
}

/// #wrong too large for the document's integer (1e30, JSON's 1e300 or 2^64) or negative: refused
/// with the line, never wrapped to INT64_MIN (which history read as a clean run).
TEST(ImportHostile, AWrongCountPastInt64OrNegativeIsRefused) {
  EXPECT_EQ(refusal(nccl_log(3, "1e30"), "w.log").rfind("w.log:7: #wrong '1e30' is more wrong elements than railkit can store", 0),
            0u);
  EXPECT_EQ(refusal(nccl_log(3, "9223372036854775808"), "w.log").rfind("w.log:7: #wrong", 0), 0u);
  const ImportResult ok = import_input(nccl_log(3, "9223372036854775807"), "w.log", std::nullopt, {});
  EXPECT_NE(ok.docs.at(0).text.find("\"wrong\": 9223372036854775807"), std::string::npos);
  const auto json_with = [](const std::string& nwrong) {
    return R"({"version": 1, "nccl_version": 22809, "args": ["./all_reduce_perf"], "config": {}, "results": [)"
           R"({"size": 8, "count": 2, "type": "float", "redop": "sum", "root": "-1",)"
           R"( "out_of_place": {"time": 9.0, "alg_bw": 0.1, "bus_bw": 0.1, "nwrong": )" +
           nwrong + "}}]}\n";
  };
  for (const char* bad : {"1e300", "18446744073709551616", "-3", "1.5"}) {
    const std::string msg = refusal(json_with(bad), "w.json");
    EXPECT_EQ(msg.rfind("w.json:1: ", 0), 0u) << bad << ": " << msg;
    EXPECT_NE(msg.find("nwrong"), std::string::npos) << bad << ": " << msg;
  }
  EXPECT_NE(import_input(json_with("7"), "w.json", std::nullopt, {}).docs.at(0).text.find("\"wrong\": 7"), std::string::npos);
}

TEST(ImportHostile, SizesPast64BitsAreRefusedNotSkipped) {
  EXPECT_EQ(refusal(nccl_log(3, "0", "99999999999999999999"), "s.log")
                .rfind("s.log:7: size '99999999999999999999' is past 2^63 - 1", 0),
            0u);
  const std::string osu =
      "# OSU MPI Allreduce Latency Test v7.3\n# Size       Avg Latency(us)\n4                       1.50\n"
      "184467440737095516160   2.00\n";
  EXPECT_EQ(refusal(osu, "o.log").rfind("o.log:4: Size '184467440737095516160' is past 2^63 - 1", 0), 0u);
  // IMB's Allgather #bytes is one rank's block: x #processes past 64 bits is refused, not wrapped to 0.
  const std::string imb =
      "# Benchmarking Allgather\n# #processes = 8\n"
      "       #bytes #repetitions  t_min[usec]  t_max[usec]  t_avg[usec]\n"
      "            8         1000         1.00         1.00         1.00\n"
      "  4611686018427387904   10         9.00         9.00         9.00\n";
  EXPECT_EQ(refusal(imb, "i.log").rfind("i.log:5: IMB Allgather's #bytes 4611686018427387904 x 8 ranks does not fit in 64 bits", 0),
            0u);
  ImportOptions o;
  o.nranks = 4;
  const std::string osu_ag =
      "# OSU MPI Allgather Latency Test v7.3\n# Size       Avg Latency(us)\n4611686018427387904   2.00\n";
  EXPECT_EQ(refusal(osu_ag, "g.log", std::nullopt, o).rfind("g.log:3: OSU Size 4611686018427387904 x 4 ranks", 0), 0u);
}

/// A file holding several tools' output imports the first and names the others with their lines.
TEST(ImportHostile, AnotherToolsOutputInTheFileIsNamedInANote) {
  const std::string text = nccl_log(2) + "#    Intel(R) MPI Benchmarks 2021.3, MPI-1 part\n# Benchmarking Allreduce\n" +
                           "# OSU MPI Allreduce Latency Test v7.3\n";
  const ImportResult r = import_input(text, "mixed.log", std::nullopt, {});
  ASSERT_EQ(r.docs.size(), 1u);
  ASSERT_EQ(r.notes.size(), 2u);
  EXPECT_EQ(r.notes[0].rfind("mixed.log:11: imb output from this line on was not imported (this file was read as "
                             "nccl-tests output; railkit import --from imb reads the other)", 0),
            0u) << r.notes[0];
  EXPECT_EQ(r.notes[1].rfind("mixed.log:13: osu output", 0), 0u) << r.notes[1];
  EXPECT_TRUE(import_input(nccl_log(2), "one.log", std::nullopt, {}).notes.empty());
}

}  // namespace
}  // namespace railkit::ingest
