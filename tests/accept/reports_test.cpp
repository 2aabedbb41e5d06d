// The report printers: table, accept.json, JUnit, Prometheus, good-hosts; verdicts are written
// by their names (pass, fail, skipped, explained).
#include <gtest/gtest.h>

#include "accept/reports.hpp"

using namespace railkit::accept;
using railkit::Verdict;

namespace {

AcceptReport sample_report() {
  AcceptReport r;
  r.nodes.push_back(
      AcceptEntity{"h:0", {AcceptCheck{"node.all_reduce", "5.000 GB/s", 5.0, ">= 4", "peers", Verdict::Pass, ""}}});
  r.nodes.push_back(AcceptEntity{
      "we\"ird<&>'\\\nnode",
      {AcceptCheck{"node.all_reduce", "1.000 GB/s", 1.0, ">= 4", "peers", Verdict::Fail, "slow <3 & \"quoted\""}}});
  return r;
}

}  // namespace

TEST(AcceptReports, EscapingInJunitAndPrometheus) {
  EXPECT_EQ(xml_escape("a<b>&\"c\"'d'\x01"), "a&lt;b&gt;&amp;&quot;c&quot;&apos;d&apos;?");
  EXPECT_EQ(prom_escape("a\\b\"c\nd"), "a\\\\b\\\"c\\nd");
  const AcceptReport r = sample_report();
  EXPECT_FALSE(r.passed());
  const std::string junit = render_junit(r);
  EXPECT_NE(junit.find("tests=\"2\" failures=\"1\""), std::string::npos);
  EXPECT_NE(junit.find("classname=\"we&quot;ird&lt;&amp;&gt;&apos;\\\nnode\""), std::string::npos);
  EXPECT_NE(junit.find("<failure message=\"node.all_reduce: measured 1.000 GB/s"), std::string::npos);
  EXPECT_NE(junit.find("slow &lt;3 &amp; &quot;quoted&quot;"), std::string::npos);
  const std::string prom = render_prometheus(r);
  EXPECT_NE(prom.find("# TYPE railkit_accept_check_pass gauge"), std::string::npos);
  EXPECT_NE(prom.find("railkit_accept_check_pass{node=\"h:0\",check=\"node.all_reduce\"} 1"), std::string::npos);
  EXPECT_NE(prom.find("railkit_accept_check_pass{node=\"we\\\"ird<&>'\\\\\\nnode\",check=\"node.all_reduce\"} 0"),
            std::string::npos);
  EXPECT_NE(prom.find("railkit_accept_busbw_gbps{node=\"h:0\",check=\"node.all_reduce\"} 5"), std::string::npos);
  EXPECT_EQ(render_good_hosts(r), "h:0\n");
  const auto j = to_json(r);
  EXPECT_EQ(j["schema"], "railkit.accept/1");
  EXPECT_EQ(j["verdict"], "fail");
  EXPECT_EQ(j["nodes"][1]["verdict"], "fail");
  EXPECT_EQ(j["nodes"][0]["checks"][0]["rule"], "peers");
}

TEST(AcceptReports, VerdictNamesInEveryReport) {
  AcceptReport r;
  r.nodes.push_back(AcceptEntity{
      "n", {AcceptCheck{"rdma.loopback", "skipped", std::nullopt, "line rate", "none", Verdict::Skipped, "no RDMA device"}}});
  r.cluster.push_back(AcceptEntity{
      "rail1", {AcceptCheck{"rail.all_reduce", "1.000 GB/s", 1.0, ">= 9", "peers", Verdict::Explained, "explained"}}});
  EXPECT_TRUE(r.passed());  // skipped and explained checks do not fail anyone
  const auto j = to_json(r);
  EXPECT_EQ(j["verdict"], "pass");
  EXPECT_EQ(j["nodes"][0]["verdict"], "pass");
  EXPECT_EQ(j["nodes"][0]["checks"][0]["verdict"], "skipped");
  EXPECT_TRUE(j["nodes"][0]["checks"][0]["busbw_GBps"].is_null());
  EXPECT_EQ(j["cluster"][0]["checks"][0]["verdict"], "explained");
  const std::string junit = render_junit(r);
  EXPECT_NE(junit.find("tests=\"2\" failures=\"0\" skipped=\"1\""), std::string::npos);
  EXPECT_NE(junit.find("<skipped message=\"no RDMA device\"/>"), std::string::npos);
  EXPECT_NE(junit.find("<system-out>rail.all_reduce: measured 1.000 GB/s, expected &gt;= 9 (rule: peers); explained"),
            std::string::npos);
  const std::string prom = render_prometheus(r);
  EXPECT_NE(prom.find("railkit_accept_check_pass{node=\"rail1\",check=\"rail.all_reduce\"} 1"), std::string::npos);
  EXPECT_EQ(prom.find("railkit_accept_busbw_gbps{node=\"n\""), std::string::npos);  // nothing measured
  const std::string table = render_accept_table(r);
  EXPECT_NE(table.find("| skipped   |"), std::string::npos);
  EXPECT_NE(table.find("| explained |"), std::string::npos);
  EXPECT_NE(table.find("\nn: PASS\n"), std::string::npos);
}

TEST(AcceptReports, TableColumnsAndCommands) {
  AcceptReport r = sample_report();
  r.commands.push_back(CommandRecord{"node", {"mpirun", "-np", "8"}, "exit code 0", 1.5});
  const std::string table = render_accept_table(r);
  // Columns as wide as their widest cell (the odd node name is 16 characters), the last unpadded.
  EXPECT_EQ(table.substr(0, table.find('\n')), "node             | check           | measured   | expected | verdict | rule");
  EXPECT_NE(table.find("h:0: PASS\n"), std::string::npos);
  EXPECT_NE(table.find("node: FAIL\n"), std::string::npos);
  const auto j = to_json(r);
  ASSERT_EQ(j["commands"].size(), 1u);
  EXPECT_EQ(j["commands"][0].dump(), R"({"stage":"node","argv":["mpirun","-np","8"],"result":"exit code 0","elapsed_s":1.5})");
  EXPECT_EQ(r.cluster_entity("all").name, "all");
  r.cluster_entity("all").checks.push_back(AcceptCheck{});
  EXPECT_EQ(r.cluster.size(), 1u);  // found, not added twice
  EXPECT_EQ(r.cluster_entity("all").checks.size(), 1u);
}
