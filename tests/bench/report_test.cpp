// Golden-output test of the table: header, rows and footer must match golden/table.txt line by
// line, so parsers written for nccl-tests keep working. RAILKIT_UPDATE_GOLDEN=1 rewrites the file.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "bench/report.hpp"

using namespace railkit::bench;

namespace {

railkit::ResultRecord rec(const char* op, const char* redop, std::uint64_t bytes, std::uint64_t count, bool in_place,
                          double t, double algbw, double busbw, std::optional<std::int64_t> wrong) {
  railkit::ResultRecord r;
  r.op = op;
  r.dtype = "float";
  r.redop = redop;
  r.root = -1;
  r.bytes = bytes;
  r.count = count;
  r.in_place = in_place;
  r.time_us = {t, t * 0.9, t * 1.5, t, t * 1.4, 0.1};
  r.algbw_GBps = algbw;
  r.busbw_GBps = busbw;
  r.wrong = wrong;
  r.ranks = {t * 0.95, t * 1.05, in_place ? 3 : 1, "node-a"};
  return r;
}

std::string render() {
  std::ostringstream os;
  TableReporter t(os);
  RunHeader h;
  h.run.railkit_version = "0.1.0";
  h.run.backend = "mpi";
  h.run.backend_version = "Open MPI v4.1.4";
  h.run.nranks = 4;
  h.run.nnodes = 1;
  h.options.min_bytes = 8;
  h.options.max_bytes = 1 << 20;
  h.options.step_factor = 2;
  h.options.colls = {Coll::AllReduce, Coll::AllGather};
  h.ranks = {{0, 100, "node-a", "host"}, {1, 101, "node-a", "host"}, {2, 102, "node-a", "host"}, {3, 103, "node-a", "host"}};
  h.notes = {"all_gather: 1 size below 16 B skipped: less than one float element per rank"};
  h.warnings = {"host node-a: ranks 0-3 reach each other over tcp, not shared memory"};
  t.run_start(h);
  t.coll_start(Coll::AllReduce, 0);
  t.row(Row{Coll::AllReduce, coll_sizes(Coll::AllReduce, 8, 4, 4), rec("all_reduce", "sum", 8, 2, false, 8.23, 0.00097, 0.00146, 0),
            rec("all_reduce", "sum", 8, 2, true, 6.18, 0.0013, 0.0019, 0), ""});
  t.row(Row{Coll::AllReduce, coll_sizes(Coll::AllReduce, 1 << 20, 4, 4),
            rec("all_reduce", "sum", 1 << 20, 262144, false, 1234567.891, 1234.5678, 12345.678, 0), std::nullopt, ""});
  t.coll_start(Coll::AllGather, 0);
  t.row(Row{Coll::AllGather, coll_sizes(Coll::AllGather, 32, 4, 4), std::nullopt,
            rec("all_gather", "none", 32, 2, true, 6.29, 0.01, 0.0, std::nullopt), ""});
  railkit::ResultsDocument doc;
  doc.summary.errors = 0;
  doc.summary.avg_busbw_GBps = 0.343671;
  t.run_end(doc);
  return os.str();
}

}  // namespace

TEST(TableReporter, MatchesGolden) {
  const std::string got = render();
  const std::string path = std::string(RAILKIT_GOLDEN_DIR) + "/table.txt";
  if (const char* u = std::getenv("RAILKIT_UPDATE_GOLDEN"); u && std::string(u) == "1") {
    std::ofstream(path) << got;
  }
  std::ifstream in(path);
  ASSERT_TRUE(in) << "missing " << path;
  std::stringstream want;
  want << in.rdbuf();
  std::istringstream g(got), w(want.str());
  std::string gl, wl;
  int line = 0;
  while (std::getline(w, wl)) {
    ++line;
    ASSERT_TRUE(std::getline(g, gl)) << "output ends before golden line " << line << ": " << wl;
    EXPECT_EQ(gl, wl) << "line " << line;
  }
  EXPECT_FALSE(std::getline(g, gl)) << "extra output line: " << gl;
}

TEST(TableReporter, ColumnsOfDataRowsAlignWithNcclTests) {
  // nccl-tests: "%12li  %12li  %8s  %6s  %6s" then per placement "  %7s  %6s  %6s  %6g"
  const std::string out = render();
  std::istringstream s(out);
  std::string l;
  while (std::getline(s, l)) {
    if (l.empty() || l[0] == '#') continue;
    EXPECT_EQ(l.substr(0, 12).find_first_not_of(' ') != std::string::npos, true);
    EXPECT_EQ(l[12], ' ');
    EXPECT_EQ(l[13], ' ');
    EXPECT_EQ(l.substr(26, 2), "  ");
    EXPECT_EQ(l.substr(36, 2), "  ");
  }
}

TEST(TableReporter, FormatColumnShrinksDecimals) {
  EXPECT_EQ(format_column(8.234, 7), "8.23");
  EXPECT_EQ(format_column(12345.678, 7), "12345.7");
  EXPECT_EQ(format_column(1234567.891, 7), "1234568");
  EXPECT_EQ(format_column(123456789.0, 6), "1e+08");
}

TEST(TableReporter, HeaderCountsProcessesAndGpusWithSeveralGpusPerProcess) {
  std::ostringstream os;
  TableReporter t(os);
  RunHeader h;
  h.run.railkit_version = "0.1.0";
  h.run.backend = "nccl";
  h.run.backend_version = "NCCL 2.28.9";
  h.run.nranks = 8;  // 2 processes x 4 GPUs
  h.run.nnodes = 1;
  h.options.gpus_per_process = 4;
  for (int r = 0; r < 8; ++r) h.ranks.push_back({r, 100 + r / 4, "node-a", "GPU " + std::to_string(r)});
  t.run_start(h);
  const std::string out = os.str();
  EXPECT_NE(out.find("8 ranks (2 processes x 4 GPUs) on 1 node\n"), std::string::npos) << out;
  EXPECT_NE(out.find("#  Rank  7 Pid    101 on     node-a"), std::string::npos) << out;
}

TEST(TableReporter, SimulatedRunSaysSoInHeaderAndFooterAndChecksNothing) {
  // Issue 16: every simulated figure is labelled; "#wrong" is N/A and the footer never says OK.
  std::ostringstream os;
  TableReporter t(os);
  RunHeader h;
  h.run.railkit_version = "0.1.0";
  h.run.backend = "sim";
  h.run.backend_version = "ns-3 3.37, simulated";
  h.run.timing = "simulated";
  h.run.nranks = 32;
  h.run.nnodes = 4;
  h.run.sim = {{"cluster",
                {{"name", "c4x8"}, {"file", "c.yaml"}, {"nodes", 4}, {"gpus_per_node", 8}, {"link_rate_Gbps", 400.0},
                 {"spines", 4}, {"oversubscription", 2.0}, {"nvlink_rate_Gbps", 3600.0}}},
               {"fidelity", "packet"},
               {"seed", 7}};
  h.lines = {"-c: the sim backend moves no data: nothing checked"};
  t.run_start(h);
  t.coll_start(Coll::AllReduce, 0);
  t.row(Row{Coll::AllReduce, coll_sizes(Coll::AllReduce, 1024, 4, 32),
            rec("all_reduce", "sum", 1024, 256, false, 10, 0.1, 0.19, std::nullopt), std::nullopt, ""});
  railkit::ResultsDocument doc;
  doc.simulated = true;
  doc.summary.avg_busbw_GBps = 0.19;
  t.run_end(doc);
  const std::string out = os.str();
  EXPECT_NE(out.find("# railkit-bench 0.1.0: backend sim (ns-3 3.37, simulated), 32 ranks on 4 nodes\n"
                     "# SIMULATED: cluster c4x8 (c.yaml): 4 nodes x 8 GPUs, 400 Gb/s NICs, 4 spines, oversubscription "
                     "2:1, NVLink 3600 Gb/s; fidelity packet, seed 7 (iteration i simulated with seed + i); every figure "
                     "below is simulated, not measured\n"
                     "# -c: the sim backend moves no data: nothing checked\n"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("     N/A"), std::string::npos) << out;
  EXPECT_NE(out.find("# Out of bounds values : N/A (simulated: no data moved, nothing checked)\n"), std::string::npos) << out;
  EXPECT_EQ(out.find(" OK"), std::string::npos) << out;
  EXPECT_NE(out.find("# Avg bus bandwidth    : 0.19 (simulated)\n"), std::string::npos) << out;
}

TEST(TableReporter, NoSlowestRankWhenEveryRankTookTheSameTime) {
  // A simulated run (one clock for every rank) has no slowest rank: "-", not the last rank.
  std::ostringstream os;
  TableReporter t(os);
  t.coll_start(Coll::AllReduce, 0);
  railkit::ResultRecord tie = rec("all_reduce", "sum", 1024, 256, false, 10, 0.1, 0.19, std::nullopt);
  tie.ranks = {10, 10, 31, "n3"};
  t.row(Row{Coll::AllReduce, coll_sizes(Coll::AllReduce, 1024, 4, 32), tie, std::nullopt, ""});
  railkit::ResultRecord spread = rec("all_reduce", "sum", 2048, 512, false, 10, 0.1, 0.19, std::nullopt);
  t.row(Row{Coll::AllReduce, coll_sizes(Coll::AllReduce, 2048, 4, 32), spread, std::nullopt, ""});
  const std::string out = os.str();
  const auto row_of = [&](const std::string& size) {
    const auto at = out.find("\n" + std::string(12 - size.size(), ' ') + size + " ");
    return out.substr(at + 1, out.find('\n', at + 1) - at - 1);
  };
  EXPECT_EQ(row_of("1024").substr(row_of("1024").size() - 3), "  -") << out;
  EXPECT_EQ(row_of("2048").substr(row_of("2048").size() - 3), "  1") << out;
}

TEST(TableReporter, SimulatedBannerOnlyForSimulatedTiming) {
  railkit::RunInfo run;
  EXPECT_EQ(simulated_banner(run), "");
  run.timing = "simulated";
  run.sim = {{"fidelity", "flow"}, {"seed", 1}, {"cluster", {{"name", "x"}}}};
  const std::string b = simulated_banner(run);
  EXPECT_EQ(b.rfind("SIMULATED: cluster x (?): ? nodes", 0), 0u) << b;
  EXPECT_NE(b.find("fidelity flow, seed 1 (flow level is deterministic"), std::string::npos) << b;
}

TEST(TableReporter, TimingLineNamesTheMethod) {
  railkit::RunInfo run;
  EXPECT_EQ(timing_line(run).rfind("back-to-back:", 0), 0u) << timing_line(run);
  run.timing_method = "barrier_separated";
  EXPECT_EQ(timing_line(run).rfind("barrier-separated (--sync):", 0), 0u) << timing_line(run);
  run.timing = "simulated";
  EXPECT_EQ(timing_line(run).rfind("simulated:", 0), 0u) << timing_line(run);
  std::ostringstream os;
  TableReporter t(os);
  RunHeader h;
  h.run.timing_method = "barrier_separated";
  t.run_start(h);
  EXPECT_NE(os.str().find("\n# Timing: barrier-separated (--sync): a barrier before each iteration"), std::string::npos)
      << os.str();
}
