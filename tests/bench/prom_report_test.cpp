// railkit-bench --prom: the textfile rendered from a results document, line by line.
#include <gtest/gtest.h>

#include <limits>

#include "bench/prom_report.hpp"

using namespace railkit;
using railkit::bench::render_bench_prometheus;

namespace {

ResultRecord record(std::uint64_t bytes, bool in_place, const char* group, double busbw, double time_us) {
  ResultRecord r;
  r.op = "all_reduce";
  r.dtype = "float";
  r.redop = "sum";
  r.bytes = bytes;
  r.in_place = in_place;
  r.busbw_GBps = busbw;
  r.time_us.avg = time_us;
  if (group) r.group = group;
  return r;
}

}  // namespace

TEST(BenchProm, SplitGroupsAndEscapedLabelInStableOrder) {
  ResultsDocument d;
  d.run.backend = "mpi";
  d.run.label = "night \"a\\b\"\nrun 2";
  // Out of order on purpose: the file sorts by op, group, bytes, placement.
  d.results.push_back(record(1048576, true, "rail1", 3.25, 500));
  d.results.push_back(record(1048576, false, "rail0", 12.5, 125.75));
  d.results.push_back(record(1024, false, "rail0", 0.1, 10));
  d.results.push_back(record(1048576, true, "rail0", std::numeric_limits<double>::quiet_NaN(), 130));
  const std::string l0 = "op=\"all_reduce\",bytes=\"1024\",size=\"1KiB\",placement=\"out_of_place\",group=\"rail0\","
                         "backend=\"mpi\",label=\"night_\\\"a\\\\b\\\"_run_2\"";
  const std::string l1 = "op=\"all_reduce\",bytes=\"1048576\",size=\"1MiB\",placement=\"out_of_place\",group=\"rail0\","
                         "backend=\"mpi\",label=\"night_\\\"a\\\\b\\\"_run_2\"";
  const std::string l2 = "op=\"all_reduce\",bytes=\"1048576\",size=\"1MiB\",placement=\"in_place\",group=\"rail0\","
                         "backend=\"mpi\",label=\"night_\\\"a\\\\b\\\"_run_2\"";
  const std::string l3 = "op=\"all_reduce\",bytes=\"1048576\",size=\"1MiB\",placement=\"in_place\",group=\"rail1\","
                         "backend=\"mpi\",label=\"night_\\\"a\\\\b\\\"_run_2\"";
  const std::string want =
      "# HELP railkit_bench_busbw_gbps Bus bandwidth measured by railkit-bench, GB/s (1e9 B/s), as nccl-tests' busbw.\n"
      "# TYPE railkit_bench_busbw_gbps gauge\n"
      "railkit_bench_busbw_gbps{" + l0 + "} 0.1\n"
      "railkit_bench_busbw_gbps{" + l1 + "} 12.5\n"
      // the NaN busbw of rail0 in-place is left out; its time is kept
      "railkit_bench_busbw_gbps{" + l3 + "} 3.25\n"
      "# HELP railkit_bench_time_us Time per collective measured by railkit-bench, microseconds (the results "
      "document's time_us.avg).\n"
      "# TYPE railkit_bench_time_us gauge\n"
      "railkit_bench_time_us{" + l0 + "} 10\n"
      "railkit_bench_time_us{" + l1 + "} 125.75\n"
      "railkit_bench_time_us{" + l2 + "} 130\n"
      "railkit_bench_time_us{" + l3 + "} 500\n"
      "# HELP railkit_bench_last_run_timestamp_seconds When the railkit-bench run of this file ended (Unix time).\n"
      "# TYPE railkit_bench_last_run_timestamp_seconds gauge\n"
      "railkit_bench_last_run_timestamp_seconds 1764612000.250\n";
  EXPECT_EQ(render_bench_prometheus(d, 1764612000.25), want);
}

TEST(BenchProm, NoGroupLabelWithoutSplitAndCycleOnlyWithSeveral) {
  ResultsDocument d;
  d.run.backend = "mpi";
  d.results.push_back(record(8, false, nullptr, 0.5, 2));
  std::string out = render_bench_prometheus(d, 0);
  EXPECT_NE(out.find("railkit_bench_busbw_gbps{op=\"all_reduce\",bytes=\"8\",size=\"8B\",placement=\"out_of_place\","
                     "backend=\"mpi\",label=\"\"} 0.5\n"),
            std::string::npos)
      << out;
  EXPECT_EQ(out.find("group="), std::string::npos);
  EXPECT_EQ(out.find("cycle="), std::string::npos);
  d.results.push_back(d.results.front());
  d.results.back().cycle = 1;
  out = render_bench_prometheus(d, 0);
  EXPECT_NE(out.find("placement=\"out_of_place\",cycle=\"0\",backend"), std::string::npos) << out;
  EXPECT_NE(out.find("placement=\"out_of_place\",cycle=\"1\",backend"), std::string::npos) << out;
}

TEST(BenchProm, EmptyDocumentHasHeadersAndTimestampOnly) {
  const std::string out = render_bench_prometheus(ResultsDocument{}, 12);
  EXPECT_EQ(out.find("railkit_bench_busbw_gbps{"), std::string::npos);
  EXPECT_NE(out.find("# TYPE railkit_bench_busbw_gbps gauge\n"), std::string::npos);
  EXPECT_NE(out.find("\nrailkit_bench_last_run_timestamp_seconds 12.000\n"), std::string::npos);
}

TEST(BenchProm, SimulatedRunsCarryTheSimulatedLabel) {
  ResultsDocument d;
  d.run.backend = "sim";
  d.simulated = true;
  d.results.push_back(record(1024, false, nullptr, 1.5, 10));
  const std::string text = render_bench_prometheus(d, 0);
  EXPECT_NE(text.find("railkit_bench_busbw_gbps{op=\"all_reduce\",bytes=\"1024\",size=\"1KiB\",placement=\"out_of_place\","
                      "backend=\"sim\",label=\"\",simulated=\"true\"} 1.5\n"),
            std::string::npos)
      << text;
  d.simulated = false;
  d.run.backend = "mpi";
  EXPECT_EQ(render_bench_prometheus(d, 0).find("simulated"), std::string::npos);
}

TEST(BenchProm, BarrierSeparatedRunsCarryTheTimingMethodLabel) {
  ResultsDocument d;
  d.run.backend = "mpi";
  d.run.timing_method = "barrier_separated";
  d.results.push_back(record(1024, false, nullptr, 1.5, 10));
  const std::string text = render_bench_prometheus(d, 0);
  EXPECT_NE(text.find("railkit_bench_time_us{op=\"all_reduce\",bytes=\"1024\",size=\"1KiB\",placement=\"out_of_place\","
                      "backend=\"mpi\",label=\"\",timing_method=\"barrier_separated\"} 10\n"),
            std::string::npos)
      << text;
  d.run.timing_method = "back_to_back";  // the default keeps the labels series always had
  EXPECT_EQ(render_bench_prometheus(d, 0).find("timing_method"), std::string::npos);
}
