// The whole run over a fake railkit-bench (topo and rdma skipped): the stages in order, each
// given what the earlier ones found; the reports written; the peer fraction chosen; an
// interruption writes no report.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "accept/accept.hpp"
#include "fake_bench.hpp"
#include "test_util.hpp"

using namespace railkit::accept;
using railkit::Verdict;
using railkit::test::FakeBench;
using railkit::test::TempDir;

namespace {

/// 4 emulated nodes of 2 ranks ("h:0" ...) on a 2-CPU machine; topo and rdma skipped.
AcceptOptions options(const std::filesystem::path& out) {
  AcceptOptions o;
  o.nodes = emulated_nodes("h", 8, 2);
  o.emulated_rpn = 2;
  o.launcher.np = 8;
  o.launcher.cpus = 2;
  o.out_dir = out;
  o.suite.skip = {"topo", "rdma"};
  return o;
}

std::vector<std::string> failed_nodes(const AcceptReport& r) {
  std::vector<std::string> out;
  for (const auto& e : r.nodes)
    if (e.verdict() == Verdict::Fail) out.push_back(e.name);
  return out;
}

const AcceptCheck* find_check(const AcceptEntity& e, const std::string& name) {
  for (const auto& c : e.checks)
    if (c.check == name) return &c;
  return nullptr;
}

std::string read(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

TEST(AcceptRun, StagesInOrderEachGivenWhatTheEarlierFound) {
  TempDir dir("railkit-accept");
  const AcceptOptions o = options(dir.path);
  FakeBench bench(4, 2);
  bench.slow_ranks = {5};  // node h:2, rail 1
  std::ostringstream progress;
  const AcceptReport r = run_stages(o, "default", bench, nullptr, progress);
  EXPECT_EQ(bench.names(), (std::vector<std::string>{"node", "node-confirm", "rail", "rail-confirm", "pair-round0",
                                                     "pair-round1", "pair-round2", "pair-round0-confirm",
                                                     "pair-round1-confirm", "pair-round2-confirm", "all"}));
  EXPECT_EQ(failed_nodes(r), (std::vector<std::string>{"h:2"}));
  const AcceptEntity& slow = r.nodes[2];
  ASSERT_TRUE(find_check(slow, "node.all_reduce") && find_check(slow, "pair.all_reduce"));
  EXPECT_EQ(find_check(slow, "node.all_reduce")->verdict, Verdict::Fail);
  EXPECT_EQ(find_check(slow, "pair.all_reduce")->evidence.rfind("guilty: ", 0), 0u);
  // The pair stage's results reached isolation; the node failure explains rail 1.
  EXPECT_EQ(r.isolation["method"], "pairs");
  EXPECT_EQ(r.isolation["guilty_nodes"][0]["node"], "h:2");
  EXPECT_EQ(r.pairs.size(), 6u);
  ASSERT_EQ(r.cluster.size(), 3u);  // rail0, rail1, all
  EXPECT_EQ(r.cluster[1].name, "rail1");
  for (const auto& c : r.cluster[1].checks) EXPECT_EQ(c.verdict, Verdict::Explained);
  // Stages: status, reason and launches; every launch a command.
  const auto& st = r.stages;
  ASSERT_EQ(st.size(), 7u);
  EXPECT_EQ(st[0].dump(), R"({"stage":"topo","status":"skipped","reason":"skipped by the suite"})");
  EXPECT_EQ(st[2]["launches"], 2);
  EXPECT_EQ(st[4]["launches"], 6);
  EXPECT_EQ(st[6]["stage"], "isolate");
  EXPECT_EQ(st[6]["status"], "ran");
  EXPECT_EQ(r.commands.size(), 11u);
  EXPECT_EQ(r.commands[4].stage, "pair");
  // The estimate uses the launches before the pair stage: 4 launches of 0.5 s, 3 rounds.
  EXPECT_NE(progress.str().find("3 rounds of 2 concurrent pairs (circle method), estimated 1.5 s"), std::string::npos)
      << progress.str();
  EXPECT_EQ(r.rules["peer_fraction_why"], "default");
}

TEST(AcceptRun, TheWholeSetFailingWithoutPairsBisects) {
  TempDir dir("railkit-accept");
  AcceptOptions o = options(dir.path);
  o.suite.skip = {"topo", "rdma", "node", "rail", "pair"};
  o.suite.thresholds = {{"all", "all_reduce", 16384, 1000}};
  FakeBench bench(4, 2);
  bench.slow_ranks = {5};
  std::ostringstream progress;
  const AcceptReport r = run_stages(o, "default", bench, nullptr, progress);
  EXPECT_EQ(bench.names(), (std::vector<std::string>{"all", "bisect-0", "bisect-1"}));
  EXPECT_EQ(r.isolation["method"], "bisection");
  EXPECT_EQ(r.isolation["steps"].size(), 2u);
  EXPECT_EQ(failed_nodes(r), (std::vector<std::string>{"h:2"}));
  EXPECT_TRUE(r.pairs.empty());
  ASSERT_EQ(r.cluster.size(), 1u);
  EXPECT_EQ(r.cluster[0].checks[0].rule, "suite");
  EXPECT_EQ(r.cluster[0].checks[0].verdict, Verdict::Fail);
}

TEST(AcceptRun, ACleanRunPassesWithNothingToIsolate) {
  TempDir dir("railkit-accept");
  const AcceptOptions o = options(dir.path);
  FakeBench bench(4, 2);
  std::ostringstream progress;
  const AcceptReport r = run_stages(o, "default", bench, nullptr, progress);
  EXPECT_TRUE(r.passed());
  EXPECT_EQ(bench.names(), (std::vector<std::string>{"node", "rail", "pair-round0", "pair-round1", "pair-round2", "all"}));
  EXPECT_EQ(r.isolation["method"], "none");
  EXPECT_EQ(r.stages[6]["status"], "skipped");
  EXPECT_EQ(r.stages[6]["reason"], "nothing to isolate");
  for (const auto& n : r.nodes) EXPECT_TRUE(find_check(n, "pair.all_reduce")) << n.name;
}

TEST(AcceptRun, SkippingIsolationLeavesNoPairChecks) {
  TempDir dir("railkit-accept");
  AcceptOptions o = options(dir.path);
  o.suite.skip = {"topo", "rdma", "isolate"};
  FakeBench bench(4, 2);
  bench.slow_ranks = {5};
  std::ostringstream progress;
  const AcceptReport r = run_stages(o, "default", bench, nullptr, progress);
  for (const auto& n : r.nodes) EXPECT_FALSE(find_check(n, "pair.all_reduce")) << n.name;
  EXPECT_EQ(r.isolation, nlohmann::ordered_json::object());
  EXPECT_EQ(r.pairs.size(), 6u);
}

TEST(AcceptRun, WritesTheReportsAndExitsTen) {
  TempDir dir("railkit-accept");
  AcceptOptions o = options(dir.path / "out");
  o.junit = (dir.path / "accept.xml").string();
  FakeBench bench(4, 2);
  bench.slow_ranks = {5};
  std::ostringstream out, progress;
  EXPECT_EQ(run_accept(o, bench, nullptr, out, progress), 10);
  const auto doc = nlohmann::json::parse(read(dir.path / "out" / "accept.json"));
  EXPECT_EQ(doc["verdict"], "fail");
  EXPECT_EQ(doc["nodes"][2]["verdict"], "fail");
  EXPECT_EQ(read(dir.path / "out" / "good-hosts"), "h:0\nh:1\nh:3\n");
  EXPECT_NE(read(dir.path / "out" / "accept.prom").find("railkit_accept_check_pass{node=\"h:2\",check=\"node.all_reduce\"} 0"),
            std::string::npos);
  EXPECT_NE(read(dir.path / "accept.xml").find("<failure message="), std::string::npos);
  EXPECT_NE(out.str().find("h:2: FAIL\n"), std::string::npos);
  EXPECT_TRUE(std::filesystem::is_directory(dir.path / "out" / "bench"));
  // 8 ranks on 2 CPUs, no peer_fraction in the suite: the oversubscribed fraction, said on stderr and in rules.
  EXPECT_EQ(doc["rules"]["peer_fraction"], 0.25);
  EXPECT_NE(progress.str().find("railkit accept: note: 8 ranks on 2 CPUs"), std::string::npos);

  FakeBench clean(4, 2);
  o.suite.peer_fraction = 0.8;
  o.suite.peer_fraction_set = true;  // the suite's peer_fraction wins
  EXPECT_EQ(run_accept(o, clean, nullptr, out, progress), 0);
  const auto again = nlohmann::json::parse(read(dir.path / "out" / "accept.json"));
  EXPECT_EQ(again["rules"]["peer_fraction"], 0.8);
  EXPECT_EQ(again["rules"]["peer_fraction_why"], "the suite's peer_fraction");
}

TEST(AcceptRun, AnInterruptionWritesNoReport) {
  TempDir dir("railkit-accept");
  const AcceptOptions o = options(dir.path);
  FakeBench bench(4, 2);
  bench.interrupt_at = "pair-round1";
  std::ostringstream out, progress;
  try {
    run_accept(o, bench, nullptr, out, progress);
    ADD_FAILURE() << "no InterruptedError";
  } catch (const railkit::InterruptedError& e) {
    EXPECT_EQ(e.signal(), 2);
    EXPECT_EQ(e.exit_status(), 130);
    EXPECT_NE(std::string(e.what()).find("accept interrupted by signal 2; no report written"), std::string::npos);
  }
  EXPECT_EQ(bench.names().back(), "pair-round1");  // nothing ran after it
  EXPECT_FALSE(std::filesystem::exists(dir.path / "accept.json"));
  EXPECT_FALSE(std::filesystem::exists(dir.path / "good-hosts"));
  EXPECT_TRUE(out.str().empty());
}

TEST(AcceptRun, OptionsAreCheckedBeforeAnythingRuns) {
  TempDir dir("railkit-accept");
  FakeBench bench(4, 2);
  std::ostringstream out, progress;
  AcceptOptions o = options(dir.path);
  o.nodes.clear();
  EXPECT_NE(railkit::test::usage_error_of([&] { run_accept(o, bench, nullptr, out, progress); }).find("no node"),
            std::string::npos);
  o = options(dir.path);
  o.nodes[1].ranks.pop_back();
  EXPECT_NE(railkit::test::usage_error_of([&] { run_accept(o, bench, nullptr, out, progress); }).find("as many ranks"),
            std::string::npos);
  o = options(dir.path);
  o.suite.topo_roots["other:0"] = "/fx";
  EXPECT_NE(railkit::test::usage_error_of([&] { run_accept(o, bench, nullptr, out, progress); })
                .find("topo_roots names node 'other:0'"),
            std::string::npos);
  EXPECT_TRUE(bench.calls.empty());
}
