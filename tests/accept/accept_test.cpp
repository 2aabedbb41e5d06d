// The whole run over a fake railkit-bench (topo and rdma skipped): the stages in order, each
// given what the earlier ones found; the reports written; the peer fraction chosen; an
// interruption writes no report.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
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
  ASSERT_EQ(st.size(), 8u);
  EXPECT_EQ(st[0].dump(), R"({"stage":"topo","status":"skipped","reason":"skipped by the suite"})");
  EXPECT_EQ(st[2]["stage"], "rdma-pair");
  EXPECT_EQ(st[2]["status"], "skipped");  // emulated nodes: no link between them
  EXPECT_EQ(st[3]["launches"], 2);
  EXPECT_EQ(st[5]["launches"], 6);
  EXPECT_EQ(st[7]["stage"], "isolate");
  EXPECT_EQ(st[7]["status"], "ran");
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
  EXPECT_EQ(r.stages[7]["status"], "skipped");
  EXPECT_EQ(r.stages[7]["reason"], "nothing to isolate");
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
  o.force = true;                    // the same --out again
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
  o = options(dir.path);
  o.suite.rdma_addresses["other:0"] = "10.0.0.9";
  EXPECT_NE(railkit::test::usage_error_of([&] { run_accept(o, bench, nullptr, out, progress); })
                .find("rdma_addresses names node 'other:0'"),
            std::string::npos);
  EXPECT_TRUE(bench.calls.empty());
}

// ---------------------------------------------------------------------------- honest acceptance (issue 13)

TEST(AcceptHonesty, ARuleLessWholeSetIsReportedAndNeverSaidToHavePassed) {
  TempDir dir("railkit-accept");
  const AcceptOptions o = options(dir.path);  // no profile, no threshold: the whole set has no rule
  FakeBench bench(4, 2);
  std::ostringstream progress;
  const AcceptReport r = run_stages(o, "default", bench, nullptr, progress);
  const auto all = std::find_if(r.cluster.begin(), r.cluster.end(), [](const AcceptEntity& e) { return e.name == "all"; });
  ASSERT_NE(all, r.cluster.end());
  ASSERT_EQ(all->checks.size(), 2u);
  for (const AcceptCheck& c : all->checks) {
    EXPECT_EQ(c.verdict, Verdict::Reported) << c.check;
    EXPECT_NE(c.verdict, Verdict::Pass) << c.check;
  }
  EXPECT_NE(all->verdict(), Verdict::Pass);
  const std::string doc = to_json(r).dump();
  EXPECT_EQ(doc.find("whole set passed"), std::string::npos) << r.isolation.dump();
  EXPECT_EQ(render_accept_table(r).find("| pass    | none"), std::string::npos) << render_accept_table(r);
}

TEST(AcceptHonesty, TwoNodesSayThePairStageCannotIsolate) {
  TempDir dir("railkit-accept");
  AcceptOptions o = options(dir.path);
  o.nodes = emulated_nodes("h", 4, 2);
  o.launcher.np = 4;
  FakeBench bench(2, 2);
  std::ostringstream progress;
  const AcceptReport r = run_stages(o, "default", bench, nullptr, progress);
  const auto names = bench.names();
  EXPECT_TRUE(std::none_of(names.begin(), names.end(), [](const std::string& n) { return n.starts_with("pair"); }))
      << "the only pair was measured against itself";
  const auto& pair = r.stages[5];
  EXPECT_EQ(pair["stage"], "pair");
  EXPECT_EQ(pair["status"], "skipped");
  EXPECT_NE(pair.value("reason", "").find("at least 3 nodes"), std::string::npos) << pair.dump();
  for (const AcceptEntity& n : r.nodes) {
    const AcceptCheck* c = find_check(n, "pair.all_reduce");
    ASSERT_TRUE(c) << n.name;
    EXPECT_EQ(c->verdict, Verdict::Skipped);
    EXPECT_NE(c->evidence.find("at least 3 nodes"), std::string::npos) << c->evidence;
  }
  EXPECT_NE(render_accept_table(r).find("at least 3 nodes"), std::string::npos);
  EXPECT_NE(render_junit(r).find("<skipped message=\"2 nodes"), std::string::npos) << render_junit(r);
  EXPECT_NE(to_json(r).dump().find("at least 3 nodes"), std::string::npos);
}

TEST(AcceptHonesty, ARunThatJudgedNothingExitsElevenUnlessReportOnly) {
  TempDir dir("railkit-accept");
  AcceptOptions o = options(dir.path / "out");
  o.nodes = emulated_nodes("h", 4, 4);  // `--np 4` without --ranks-per-node: one node, no peers
  o.launcher.np = 4;
  o.junit = (dir.path / "accept.xml").string();
  FakeBench bench(1, 4);
  std::ostringstream out, progress;
  EXPECT_EQ(run_accept(o, bench, nullptr, out, progress), kExitNothingJudged);
  EXPECT_EQ(kExitNothingJudged, 11);
  EXPECT_EQ(bench.names(), (std::vector<std::string>{"node", "all"}));
  EXPECT_NE(out.str().find("h:0: REPORTED (measured; no rule judged it)\n"), std::string::npos) << out.str();
  EXPECT_EQ(out.str().find("h:0: PASS"), std::string::npos);
  EXPECT_NE(progress.str().find("railkit accept: nothing judged: 4 checks were measured but no rule judged them"),
            std::string::npos)
      << progress.str();
  EXPECT_NE(progress.str().find("; exit 11 (--report-only accepts a run that judges nothing)\n"), std::string::npos);
  const auto doc = nlohmann::json::parse(read(dir.path / "out" / "accept.json"));
  EXPECT_EQ(doc["verdict"], "reported");
  EXPECT_EQ(doc["nodes"][0]["verdict"], "reported");
  EXPECT_EQ(std::string(doc["verdict_reason"]).rfind("nothing judged: ", 0), 0u);
  EXPECT_EQ(read(dir.path / "out" / "good-hosts"), "");
  EXPECT_EQ(read(dir.path / "accept.xml").find("<failure"), std::string::npos);

  o.report_only = true;
  o.force = true;
  FakeBench again(1, 4);
  std::ostringstream out2, progress2;
  EXPECT_EQ(run_accept(o, again, nullptr, out2, progress2), 0);
  EXPECT_NE(progress2.str().find("nothing judged: "), std::string::npos);
  EXPECT_NE(progress2.str().find("(--report-only: exit 0)"), std::string::npos);
  EXPECT_EQ(nlohmann::json::parse(read(dir.path / "out" / "accept.json"))["verdict"], "reported");  // still not a pass

  // --report-only does not hide a failure.
  FakeBench slow(4, 2);
  slow.slow_ranks = {5};
  AcceptOptions f = options(dir.path / "out");
  f.report_only = true;
  f.force = true;
  EXPECT_EQ(run_accept(f, slow, nullptr, out2, progress2), 10);
}

TEST(AcceptHonesty, ANonEmptyOutIsRefusedUnlessForced) {
  TempDir dir("railkit-accept");
  AcceptOptions o = options(dir.path / "out");
  std::filesystem::create_directories(dir.path / "out" / "bench");
  dir.write("out/accept.json", "{\"old\": true}");
  dir.write("out/bench/old-launch.json", "{}");
  dir.write("out/mine.txt", "not accept's");
  FakeBench bench(4, 2);
  std::ostringstream out, progress;
  const std::string msg = railkit::test::usage_error_of([&] { run_accept(o, bench, nullptr, out, progress); });
  EXPECT_EQ(msg, "--out " + (dir.path / "out").string() +
                     " is not empty (accept.json, bench, mine.txt): pass --force to replace railkit accept's outputs "
                     "there, or choose another directory");
  EXPECT_TRUE(bench.calls.empty());
  EXPECT_EQ(read(dir.path / "out" / "accept.json"), "{\"old\": true}");  // untouched
  dir.write("file", "x");
  o.out_dir = dir.path / "file";
  EXPECT_NE(railkit::test::usage_error_of([&] { run_accept(o, bench, nullptr, out, progress); }).find("not a directory"),
            std::string::npos);

  // --force: accept's own outputs of the earlier run are replaced (none outlives it); the rest stays.
  o.out_dir = dir.path / "out";
  o.force = true;
  EXPECT_EQ(run_accept(o, bench, nullptr, out, progress), 0);
  EXPECT_FALSE(std::filesystem::exists(dir.path / "out" / "bench" / "old-launch.json"));
  EXPECT_EQ(nlohmann::json::parse(read(dir.path / "out" / "accept.json"))["verdict"], "pass");
  EXPECT_EQ(read(dir.path / "out" / "mine.txt"), "not accept's");
  // An empty directory needs no --force.
  std::filesystem::create_directories(dir.path / "empty");
  o.out_dir = dir.path / "empty";
  o.force = false;
  FakeBench clean(4, 2);
  EXPECT_EQ(run_accept(o, clean, nullptr, out, progress), 0);
}

TEST(AcceptHonesty, AProfileOfAnotherScaleIsNamedInTheTableAndAcceptJson) {
  TempDir dir("railkit-accept");
  AcceptOptions o = options(dir.path / "out");
  railkit::ProfileDocument p;
  p.name = "one-node";
  p.cluster.nodes = 1;
  p.cluster.ranks = 4;
  p.cluster.ranks_per_node = 4;
  p.expectations = {{"all_reduce", 16384, 1000, 0.1}};
  o.profile = p;
  FakeBench bench(4, 2);
  std::ostringstream out, progress;
  EXPECT_EQ(run_accept(o, bench, nullptr, out, progress), 0);  // not applied: it cannot fail the run
  const std::string note =
      "profile 'one-node' was measured on 1 node x 4 ranks per node (4 ranks); this run is 4 nodes x 2 ranks per node "
      "(8 ranks) (emulated nodes on one machine): a profile measured at another scale is no evidence for this one, so "
      "its expectations are measured and reported at their sizes, not applied";
  EXPECT_NE(out.str().find("note: " + note + "\n"), std::string::npos) << out.str();
  EXPECT_NE(out.str().find("| reported | profile (other scale)"), std::string::npos) << out.str();
  const auto doc = nlohmann::json::parse(read(dir.path / "out" / "accept.json"));
  EXPECT_EQ(doc["notes"][0], note);
  const auto& rules = doc["rules"]["profile"];
  EXPECT_EQ(rules["name"], "one-node");
  EXPECT_EQ(rules["scale"].dump(), R"({"nodes":1,"ranks":4,"ranks_per_node":4})");
  EXPECT_EQ(rules["run_scale"].dump(), R"({"nodes":4,"ranks":8,"ranks_per_node":2})");
  EXPECT_EQ(rules["same_scale"], false);
  EXPECT_EQ(rules["expectations_applied"], false);

  // At the run's scale the expectation is applied (and this one fails).
  p.cluster.nodes = 4;
  p.cluster.ranks = 8;
  p.cluster.ranks_per_node = 2;
  o.profile = p;
  o.force = true;
  FakeBench same(4, 2);
  std::ostringstream out2;
  EXPECT_EQ(run_accept(o, same, nullptr, out2, progress), 10);
  const auto doc2 = nlohmann::json::parse(read(dir.path / "out" / "accept.json"));
  EXPECT_EQ(doc2["rules"]["profile"]["expectations_applied"], true);
  EXPECT_TRUE(doc2["notes"].empty());
}

TEST(AcceptHonesty, ThePrometheusFileCarriesTheRunTime) {
  TempDir dir("railkit-accept");
  const AcceptOptions o = options(dir.path / "out");
  FakeBench bench(4, 2);
  std::ostringstream out, progress;
  const auto before = std::chrono::system_clock::now();
  run_accept(o, bench, nullptr, out, progress);
  const std::string prom = read(dir.path / "out" / "accept.prom");
  const std::string key = "\nrailkit_accept_last_run_timestamp_seconds ";
  const auto at = prom.find(key);
  ASSERT_NE(at, std::string::npos) << prom;
  const double t = std::stod(prom.substr(at + key.size()));
  EXPECT_GE(t, std::chrono::duration<double>(before.time_since_epoch()).count() - 1);
  EXPECT_LE(t, std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count() + 1);
}

TEST(AcceptHonesty, AProfileWhoseKnobsCannotReachTheBackendIsRefusedUnlessAllowed) {
  TempDir dir("railkit-accept");
  AcceptOptions o = options(dir.path / "out");
  railkit::ProfileDocument p;
  p.name = "nccl-tuned";
  p.env = {{"NCCL_ALGO", "Ring"}, {"OMPI_MCA_coll_tuned_use_dynamic_rules", "1"}};
  p.expectations = {{"all_reduce", 16384, 1, 0.1}};
  o.profile = p;
  o.expected_backend = "mpi";
  o.expected_backend_how = "--backend mpi in the bench arguments";
  FakeBench bench(4, 2);
  std::ostringstream out, progress;
  try {
    run_accept(o, bench, nullptr, out, progress);
    ADD_FAILURE() << "an NCCL profile on the mpi backend was accepted";
  } catch (const railkit::UsageError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("'nccl-tuned' sets NCCL_ALGO"), std::string::npos) << msg;
    EXPECT_NE(msg.find("mpi backend"), std::string::npos) << msg;
    EXPECT_NE(msg.find("--allow-inert"), std::string::npos) << msg;
    EXPECT_EQ(msg.find("OMPI_MCA"), std::string::npos) << msg;  // that one reaches mpi
  }
  EXPECT_FALSE(std::filesystem::exists(dir.path / "out" / "accept.json"));
  EXPECT_TRUE(bench.calls.empty());  // nothing ran

  o.allow_inert = true;
  FakeBench allowed(4, 2);
  run_accept(o, allowed, nullptr, out, progress);
  const auto doc = nlohmann::json::parse(read(dir.path / "out" / "accept.json"));
  EXPECT_EQ(doc["rules"]["profile"]["inert"]["knobs"], nlohmann::json::array({"NCCL_ALGO"}));
  EXPECT_NE(out.str().find("note: profile 'nccl-tuned' sets NCCL_ALGO, which cannot reach the mpi backend"),
            std::string::npos)
      << out.str();

  // A mixed profile is refused on nccl too (its OMPI_MCA_* cannot act there); NCCL settings alone
  // are used as they are on nccl, and when the backend cannot be known beforehand.
  o.allow_inert = false;
  o.expected_backend = "nccl";
  FakeBench mixed(4, 2);
  EXPECT_THROW(run_accept(o, mixed, nullptr, out, progress), railkit::UsageError);
  o.profile->env = {{"NCCL_ALGO", "Ring"}};
  for (const char* backend : {"nccl", ""}) {
    o.force = true;
    o.expected_backend = backend;
    FakeBench fine(4, 2);
    std::ostringstream out2;
    run_accept(o, fine, nullptr, out2, progress);
    EXPECT_TRUE(nlohmann::json::parse(read(dir.path / "out" / "accept.json"))["rules"]["profile"]["inert"].is_null());
  }
}

TEST(AcceptHonesty, EveryLaunchRunsWithTheProfileSettingsAndExpectationsWithTheirOwn) {
  TempDir dir("railkit-accept");
  AcceptOptions o = options(dir.path / "out");
  railkit::ProfileDocument p;
  p.name = "decided";
  p.cluster.nodes = 4;
  p.cluster.ranks = 8;
  p.cluster.ranks_per_node = 2;
  p.env = {{"OMPI_MCA_coll_tuned_use_dynamic_rules", "1"}};
  railkit::ProfileExpectation same{"all_reduce", 16384, 0.001, 0.1};
  railkit::ProfileExpectation other{"all_reduce", 65536, 0.001, 0.1};
  other.env = std::map<std::string, std::string>{{"OMPI_MCA_coll_tuned_use_dynamic_rules", "1"},
                                                 {"OMPI_MCA_coll_tuned_allreduce_algorithm", "4"}};
  other.config = "allreduce_algorithm=4";
  p.expectations = {same, other};
  o.profile = p;
  FakeBench bench(4, 2);
  std::ostringstream out, progress;
  EXPECT_EQ(run_accept(o, bench, nullptr, out, progress), 0) << out.str();
  bool saw_other = false;
  for (const auto& c : bench.calls) {
    if (c.config.name == "all-65536@allreduce_algorithm=4") {
      saw_other = true;
      EXPECT_EQ(c.config.env, *other.env);
    } else {
      EXPECT_EQ(c.config.env, p.env) << c.config.name;
    }
  }
  EXPECT_TRUE(saw_other) << testing::PrintToString(bench.names());
  const auto doc = nlohmann::json::parse(read(dir.path / "out" / "accept.json"));
  EXPECT_EQ(doc["rules"]["profile"]["settings_env"]["OMPI_MCA_coll_tuned_use_dynamic_rules"], "1");
}
