// The report printers: table, accept.json, JUnit, Prometheus, good-hosts; verdicts are written
// by their names (pass, fail, skipped, explained).
#include <gtest/gtest.h>

#include <sys/wait.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <map>
#include <sstream>

#include "accept/reports.hpp"
#include "test_util.hpp"

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
  // White space never reaches a label value: the newline becomes '_'.
  EXPECT_NE(prom.find("railkit_accept_check_pass{node=\"we\\\"ird<&>'\\\\_node\",check=\"node.all_reduce\"} 0"),
            std::string::npos)
      << prom;
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
  EXPECT_EQ(j["nodes"][0]["verdict"], "skipped");  // its only check was skipped: it did not pass
  EXPECT_EQ(j["nodes"][0]["checks"][0]["verdict"], "skipped");
  EXPECT_TRUE(j["nodes"][0]["checks"][0]["busbw_GBps"].is_null());
  EXPECT_EQ(j["cluster"][0]["checks"][0]["verdict"], "explained");
  const std::string junit = render_junit(r);
  EXPECT_NE(junit.find("tests=\"2\" failures=\"0\" skipped=\"1\""), std::string::npos);
  EXPECT_NE(junit.find("<skipped message=\"no RDMA device\"/>"), std::string::npos);
  EXPECT_NE(junit.find("<system-out>rail.all_reduce: measured 1.000 GB/s, expected &gt;= 9 (rule: peers); explained"),
            std::string::npos);
  const std::string prom = render_prometheus(r);
  // Skipped and explained checks are not passes: only their verdict is exported; a rail is a rail, not a node.
  EXPECT_EQ(prom.find("railkit_accept_check_pass{"), std::string::npos) << prom;
  EXPECT_NE(prom.find("railkit_accept_check_verdict{node=\"n\",check=\"rdma.loopback\",verdict=\"skipped\"} 1"),
            std::string::npos);
  EXPECT_NE(prom.find("railkit_accept_check_verdict{rail=\"rail1\",check=\"rail.all_reduce\",verdict=\"explained\"} 1"),
            std::string::npos)
      << prom;
  EXPECT_EQ(prom.find("node=\"rail1\""), std::string::npos);
  EXPECT_EQ(prom.find("railkit_accept_busbw_gbps{node=\"n\""), std::string::npos);  // nothing measured
  const std::string table = render_accept_table(r);
  EXPECT_NE(table.find("| skipped   |"), std::string::npos);
  EXPECT_NE(table.find("| explained |"), std::string::npos);
  EXPECT_NE(table.find("\nn: SKIPPED (no check of its own ran)\n"), std::string::npos) << table;
  EXPECT_EQ(render_good_hosts(r), "");  // a node that was not judged is not a good host
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

namespace {

AcceptCheck chk(const std::string& name, Verdict v, std::optional<double> bw = std::nullopt) {
  return AcceptCheck{name, bw ? "1.000 GB/s" : "-", bw, "-", v == Verdict::Reported ? "none" : "peers", v, ""};
}

Verdict overall(const std::vector<AcceptCheck>& cs) {
  std::vector<const AcceptCheck*> p;
  for (const auto& c : cs) p.push_back(&c);
  return overall_verdict(p);
}

}  // namespace

TEST(AcceptReports, OverallVerdictNeverPassesWhatNoRuleJudged) {
  EXPECT_EQ(overall({}), Verdict::Skipped);
  EXPECT_EQ(overall({chk("rdma.loopback", Verdict::Skipped)}), Verdict::Skipped);
  EXPECT_EQ(overall({chk("all.all_reduce@16 KiB", Verdict::Reported, 1.0)}), Verdict::Reported);
  EXPECT_EQ(overall({chk("node.all_reduce", Verdict::Pass, 1.0), chk("all.all_reduce@16 KiB", Verdict::Reported, 1.0)}),
            Verdict::Pass);
  EXPECT_EQ(overall({chk("node.all_reduce", Verdict::Fail, 1.0), chk("all.all_reduce@16 KiB", Verdict::Reported, 1.0)}),
            Verdict::Fail);
  EXPECT_EQ(overall({chk("rail.all_reduce", Verdict::Explained, 1.0)}), Verdict::Pass);
  // The topology checks judge configuration: alone they pass a node, but they do not make
  // bandwidth that no rule judged a pass (`railkit accept --np 4`: lint passes, nothing else judged).
  EXPECT_EQ(overall({chk("topo.lint", Verdict::Pass)}), Verdict::Pass);
  EXPECT_EQ(overall({chk("topo.lint", Verdict::Pass), chk("rdma.loopback", Verdict::Skipped),
                     chk("node.all_reduce", Verdict::Reported, 1.0)}),
            Verdict::Reported);
  EXPECT_EQ(overall({chk("topo.lint", Verdict::Fail), chk("node.all_reduce", Verdict::Reported, 1.0)}), Verdict::Fail);
}

TEST(AcceptReports, ARunThatJudgedNothingSaysSoEverywhere) {
  AcceptReport r;
  r.nodes.push_back(AcceptEntity{"vm:0", {chk("topo.lint", Verdict::Pass), chk("node.all_reduce", Verdict::Reported, 0.2)}});
  r.cluster.push_back(AcceptEntity{"all", {chk("all.all_reduce@16 KiB", Verdict::Reported, 0.3)}});
  EXPECT_EQ(r.verdict(), Verdict::Reported);
  EXPECT_FALSE(r.passed());
  EXPECT_EQ(r.counts(), (std::map<std::string, int>{{"explained", 0}, {"fail", 0}, {"pass", 1}, {"reported", 2},
                                                    {"skipped", 0}}));
  EXPECT_EQ(r.verdict_reason(),
            "nothing judged: 2 checks were measured but no rule judged them (only the topology checks were judged): "
            "give --profile (expectations at this scale) or thresholds in --suite; the peers rule needs 2 or more "
            "nodes (or ranks per node) to compare");
  const std::string table = render_accept_table(r);
  EXPECT_NE(table.find("vm:0: REPORTED (measured; no rule judged it)\n"), std::string::npos) << table;
  EXPECT_EQ(table.find("PASS"), std::string::npos) << table;
  EXPECT_NE(table.find("| reported | none"), std::string::npos) << table;
  EXPECT_NE(table.find("\nverdict: REPORTED (nothing judged: "), std::string::npos) << table;
  const auto j = to_json(r);
  EXPECT_EQ(j["verdict"], "reported");
  EXPECT_EQ(j["verdict_reason"], r.verdict_reason());
  EXPECT_EQ(j["nodes"][0]["verdict"], "reported");
  EXPECT_EQ(j["cluster"][0]["verdict"], "reported");
  EXPECT_EQ(j["counts"]["reported"], 2);
  EXPECT_EQ(render_good_hosts(r), "");
  // JUnit has no "measured, not judged": a reported check is a skip with the reason, never a pass.
  const std::string junit = render_junit(r);
  EXPECT_NE(junit.find("tests=\"3\" failures=\"0\" skipped=\"2\""), std::string::npos) << junit;
  EXPECT_NE(junit.find("<skipped message=\"reported (measured; no rule judged it): all.all_reduce@16 KiB: measured"),
            std::string::npos)
      << junit;
  const std::string prom = render_prometheus(r);
  EXPECT_NE(prom.find("railkit_accept_check_pass{node=\"vm:0\",check=\"topo.lint\"} 1"), std::string::npos);
  EXPECT_EQ(prom.find("railkit_accept_check_pass{node=\"vm:0\",check=\"node.all_reduce\""), std::string::npos) << prom;
  EXPECT_NE(prom.find("railkit_accept_check_verdict{node=\"vm:0\",check=\"node.all_reduce\",verdict=\"reported\"} 1"),
            std::string::npos);
  EXPECT_NE(prom.find("railkit_accept_check_verdict{check=\"all.all_reduce@16KiB\",verdict=\"reported\"} 1"),
            std::string::npos)
      << prom;
  EXPECT_NE(prom.find("railkit_accept_busbw_gbps{check=\"all.all_reduce@16KiB\"} 0.3"), std::string::npos);
}

TEST(AcceptReports, VerdictReasonCountsWhatWasJudged) {
  AcceptReport r;
  r.nodes.push_back(AcceptEntity{"a", {chk("node.all_reduce", Verdict::Pass, 1.0), chk("rdma.loopback", Verdict::Skipped)}});
  r.cluster.push_back(AcceptEntity{"all", {chk("all.all_reduce@16 KiB", Verdict::Reported, 1.0)}});
  EXPECT_EQ(r.verdict_reason(), "1 check judged, all passed; 1 reported without a rule; 1 skipped");
  r.nodes[0].checks[0].verdict = Verdict::Fail;
  EXPECT_EQ(r.verdict_reason(), "1 check failed; 1 reported without a rule; 1 skipped");
  EXPECT_EQ(AcceptReport{}.verdict_reason(), "nothing judged: no check ran");
  AcceptReport skipped;
  skipped.nodes.push_back(AcceptEntity{"a", {chk("rdma.loopback", Verdict::Skipped)}});
  EXPECT_EQ(skipped.verdict(), Verdict::Skipped);
  EXPECT_EQ(skipped.verdict_reason(), "nothing judged: every check was skipped");
}

TEST(AcceptReports, PrometheusLabelsAndTheRunTimestamp) {
  EXPECT_EQ(prom_label_value("all.all_reduce@16 KiB"), "all.all_reduce@16KiB");
  EXPECT_EQ(prom_label_value("odd host\tname"), "odd_host_name");
  EXPECT_EQ(prom_label_value("a\"b"), "a\\\"b");
  AcceptReport r;
  r.finished_unix_s = 1764590000.25;
  r.nodes.push_back(AcceptEntity{"h:0", {chk("node.all_reduce", Verdict::Pass, 5.0)}});
  r.cluster.push_back(AcceptEntity{"rail0", {chk("rail.all_reduce", Verdict::Fail, 1.0)}});
  r.cluster.push_back(AcceptEntity{"all", {chk("all.all_gather@256 MiB", Verdict::Pass, 2.0)}});
  r.cluster.push_back(AcceptEntity{"stage:pair", {chk("pair.launch@round1", Verdict::Fail)}});
  const std::string prom = render_prometheus(r);
  EXPECT_NE(prom.find("railkit_accept_check_pass{node=\"h:0\",check=\"node.all_reduce\"} 1\n"), std::string::npos);
  EXPECT_NE(prom.find("railkit_accept_check_pass{rail=\"rail0\",check=\"rail.all_reduce\"} 0\n"), std::string::npos);
  EXPECT_NE(prom.find("railkit_accept_check_pass{check=\"all.all_gather@256MiB\"} 1\n"), std::string::npos);
  EXPECT_NE(prom.find("railkit_accept_check_pass{check=\"pair.launch@round1\"} 0\n"), std::string::npos);
  EXPECT_NE(prom.find("railkit_accept_busbw_gbps{rail=\"rail0\",check=\"rail.all_reduce\"} 1\n"), std::string::npos);
  EXPECT_NE(prom.find("# TYPE railkit_accept_last_run_timestamp_seconds gauge\n"
                      "railkit_accept_last_run_timestamp_seconds 1764590000.250\n"),
            std::string::npos)
      << prom;
  // Every sample line: a metric, labels without white space, a value.
  std::istringstream lines(prom);
  for (std::string line; std::getline(lines, line);) {
    if (line.starts_with("#")) continue;
    const auto close = line.rfind('}');
    const std::string labels = close == std::string::npos ? "" : line.substr(0, close);
    EXPECT_EQ(labels.find(' '), std::string::npos) << line;
    EXPECT_EQ(std::count(line.begin(), line.end(), ' '), 1) << line;
  }
}

// ---------------------------------------------------------------------------- lists to act on

namespace {

AcceptReport failing_report(bool emulated) {
  AcceptReport r;
  r.emulated = emulated;
  const auto fail = [](const std::string& check) {
    return AcceptCheck{check, "1", std::nullopt, ">= 2", "peers", Verdict::Fail, "slow"};
  };
  const auto pass = [](const std::string& check) {
    return AcceptCheck{check, "5", std::nullopt, ">= 2", "peers", Verdict::Pass, ""};
  };
  r.nodes.push_back(AcceptEntity{emulated ? "vm:0" : "gpu-node-01", {pass("node.all_reduce")}});
  r.nodes.push_back(AcceptEntity{emulated ? "vm:1" : "gpu-node-02",
                                 {fail("topo.lint"), pass("node.all_reduce"), fail("rdma.pair.mlx5_0")}});
  r.nodes.push_back(AcceptEntity{emulated ? "vm:2" : "it's $(touch pwned) `x` \"y\"\n; rm -rf ~",
                                 {fail("pair.all_reduce"), fail("odd,check\twith 'quotes' $(z)")}});
  return r;
}

/// Runs `cmd` with bash; its stdout, and its exit status in `rc`.
std::string sh(const std::string& cmd, int& rc) {
  std::string out;
  FILE* p = ::popen(cmd.c_str(), "r");
  if (!p) return out;
  char buf[4096];
  for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, n);
  const int status = ::pclose(p);
  rc = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return out;
}

}  // namespace

TEST(AcceptLists, BadHostsOneLinePerFailedNodeWithItsChecks) {
  const AcceptReport r = failing_report(false);
  EXPECT_EQ(render_bad_hosts(r),
            "gpu-node-02\ttopo.lint,rdma.pair.mlx5_0\n"
            "it's $(touch pwned) `x` \"y\"_; rm -rf ~\tpair.all_reduce,odd_check_with 'quotes' $(z)\n");
  const AcceptReport e = failing_report(true);
  EXPECT_EQ(render_bad_hosts(e),
            "# emulated nodes (ranks of one machine named <hostname>:<i>): not hosts a scheduler knows\n"
            "vm:1\ttopo.lint,rdma.pair.mlx5_0\temulated\nvm:2\tpair.all_reduce,odd_check_with 'quotes' $(z)\temulated\n");
  AcceptReport clean;
  clean.nodes.push_back(AcceptEntity{"a", {AcceptCheck{"x", "1", std::nullopt, "", "peers", Verdict::Pass, ""}}});
  EXPECT_EQ(render_bad_hosts(clean), "");
}

TEST(AcceptLists, ShellWordsQuoteWhatAShellWouldRead) {
  EXPECT_EQ(shell_word("gpu-node-01.example.com"), "gpu-node-01.example.com");
  EXPECT_EQ(shell_word("10.0.0.1"), "10.0.0.1");
  EXPECT_EQ(shell_word(""), "''");
  EXPECT_EQ(shell_word("a b"), "'a b'");
  EXPECT_EQ(shell_word("it's"), "'it'\\''s'");
  EXPECT_EQ(shell_word("$(x)"), "'$(x)'");
}

TEST(AcceptLists, DrainAndCordonScriptsAreValidBashAndQuoteEveryName) {
  railkit::test::TempDir dir("railkit-lists");
  const AcceptReport r = failing_report(false);
  const std::string drain = render_drain_slurm(r), cordon = render_cordon_k8s(r);
  EXPECT_EQ(drain.rfind("#!/usr/bin/env bash\n", 0), 0u);
  EXPECT_NE(drain.find("\nset -euo pipefail\n"), std::string::npos);
  EXPECT_NE(drain.find("\nscontrol update NodeName=gpu-node-02 State=DRAIN Reason='railkit: topo.lint,rdma.pair.mlx5_0'\n"),
            std::string::npos)
      << drain;
  EXPECT_NE(cordon.find("\nkubectl cordon gpu-node-02\nkubectl taint nodes gpu-node-02 "
                        "railkit.io/accept=failed:NoSchedule --overwrite\n"),
            std::string::npos)
      << cordon;
  EXPECT_EQ(drain.find("gpu-node-01"), std::string::npos);  // it passed
  // Run both with stand-ins for scontrol and kubectl that print their arguments: every name
  // arrives as one argument, nothing in it is run.
  const auto bin = dir.path / "bin";
  std::filesystem::create_directories(bin);
  for (const char* tool : {"scontrol", "kubectl"}) {
    const auto p = dir.write(std::string("bin/") + tool, std::string("#!/bin/sh\nprintf '%s|' ") + tool +
                                                           " \"$@\"\nprintf '\\n'\n");
    std::filesystem::permissions(p, std::filesystem::perms::owner_all);
  }
  for (const auto& [name, text] : {std::pair<std::string, std::string>{"drain-slurm.sh", drain}, {"cordon-k8s.sh", cordon}}) {
    const auto script = dir.write(name, text);
    int rc = -1;
    sh("bash -n " + script.string(), rc);
    EXPECT_EQ(rc, 0) << name << ":\n" << text;
    const std::string out = sh("cd " + dir.path.string() + " && PATH=" + bin.string() + ":/usr/bin:/bin bash " +
                                   script.string(),
                               rc);
    EXPECT_EQ(rc, 0) << text;
    EXPECT_FALSE(std::filesystem::exists(dir.path / "pwned")) << text;
    const std::string weird = "it's $(touch pwned) `x` \"y\"\n; rm -rf ~";  // the name itself, one argument
    if (name == "drain-slurm.sh")
      EXPECT_EQ(out, "scontrol|update|NodeName=gpu-node-02|State=DRAIN|Reason=railkit: topo.lint,rdma.pair.mlx5_0|\n"
                     "scontrol|update|NodeName=" + weird + "|State=DRAIN|Reason=railkit: pair.all_reduce,odd_check_with "
                     "'quotes' $(z)|\n");
    else
      EXPECT_EQ(out, "kubectl|cordon|gpu-node-02|\nkubectl|taint|nodes|gpu-node-02|railkit.io/accept=failed:NoSchedule|"
                     "--overwrite|\nkubectl|cordon|" + weird + "|\nkubectl|taint|nodes|" + weird +
                     "|railkit.io/accept=failed:NoSchedule|--overwrite|\n");
  }
}

TEST(AcceptLists, EmulatedNodesAreNeverWrittenIntoTheScripts) {
  const AcceptReport r = failing_report(true);
  for (const std::string& text : {render_drain_slurm(r), render_cordon_k8s(r)}) {
    EXPECT_EQ(text.find("vm:"), std::string::npos) << text;
    EXPECT_EQ(text.find("scontrol update"), std::string::npos) << text;
    EXPECT_EQ(text.find("kubectl cordon"), std::string::npos) << text;
    EXPECT_NE(text.find("# The nodes were emulated"), std::string::npos) << text;
    EXPECT_NE(text.find("set -euo pipefail"), std::string::npos) << text;
  }
}
