// The sweep runner with a stand-in bench (fake_bench.py, launcher `local`): statuses, sweep.json
// after each configuration, resume, retry, refusals; and the report's input loading.
#include <unistd.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "report/report.hpp"
#include "sweep/inputs.hpp"
#include "sweep/sweep.hpp"
#include "fake_sweep.hpp"
#include "results_util.hpp"
#include "test_util.hpp"

extern char** environ;

namespace railkit::sweep {
namespace {
using report::plot_context;  // the plot's parts (report/) read from sweeps
using report::PlotContext;
using report::PlotTool;
using report::write_plot;
namespace fs = std::filesystem;


class Runner : public test_sweep::FakeBenchSweep {
 protected:
  void SetUp() override {
    write_template(test::make_doc("t", {{"all_reduce", 1024, false, 1.0}, {"all_reduce", 1048576, false, 10.0}}));
  }

  SweepOptions opts(std::vector<BenchConfig> configs) { return fake_opts(std::move(configs), 1, 1); }

  /// The launches recorded, one line per launch, in run order.
  std::vector<std::string> launched() {
    std::ifstream in(counter);
    std::vector<std::string> lines;
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    return lines;
  }

  int launches() {
    std::ifstream in(counter);
    int n = 0;
    for (std::string line; std::getline(in, line);) ++n;
    return n;
  }

  SweepOutcome run(const SweepOptions& o) {
    std::ostringstream progress;
    SweepOutcome r = run_sweep(o, environ, progress, false);
    last_progress = progress.str();
    return r;
  }
  std::string last_progress;
};

TEST_F(Runner, RecordsOkFailedAndTimeoutAndGoesOn) {
  auto o = opts({cfg("good", {{"FAKE_SCALE", "1"}}), cfg("bad", {{"FAKE_EXIT", "6"}}),
                 cfg("slow", {{"FAKE_SLEEP_S", "30"}}), cfg("better", {{"FAKE_SCALE", "2"}})});
  o.timeout_s = 2;
  const SweepOutcome r = run(o);
  EXPECT_EQ(r.ran, 4);
  EXPECT_EQ(r.failed, 2);
  const SweepDocument d = load_sweep(out);
  ASSERT_EQ(d.launches.size(), 4u);
  const ConfigRecord& good = d.find("good", 1)->run;
  EXPECT_EQ(good.status, TrialStatus::Ok);
  EXPECT_EQ(good.results, "r1-001-good.json");
  EXPECT_EQ(d.find("good", 1)->backend, "mpi");
  EXPECT_TRUE(fs::exists(out / "r1-001-good.json"));
  EXPECT_TRUE(fs::exists(out / "r1-001-good.stdout.txt"));
  const ConfigRecord& bad = d.find("bad", 1)->run;
  EXPECT_EQ(bad.status, TrialStatus::Failed);
  EXPECT_EQ(bad.exit_code, 6);
  EXPECT_EQ(bad.error, "exit code 6: fake-bench: error: failing on purpose (bad)");
  EXPECT_NE(bad.stderr_tail.find("more noise"), std::string::npos);
  EXPECT_TRUE(bad.results.empty());
  const ConfigRecord& slow = d.find("slow", 1)->run;
  EXPECT_EQ(slow.status, TrialStatus::Timeout);
  EXPECT_FALSE(slow.exit_code.has_value());
  EXPECT_LT(slow.elapsed_s, 10);
  EXPECT_EQ(d.find("better", 1)->run.status, TrialStatus::Ok);
  EXPECT_EQ(d.baseline, "good");
  EXPECT_EQ(d.planned.size(), 4u);
  EXPECT_EQ(d.backend["expected"], nullptr);  // the stand-in cannot say: the documents did
  EXPECT_EQ(d.backend["seen"], nlohmann::json::parse(R"(["mpi"])"));
  EXPECT_NE(last_progress.find("round 1/1 bad: failed"), std::string::npos) << last_progress;
  EXPECT_NE(last_progress.find("round 1/1 better: ok"), std::string::npos) << last_progress;

  // The report reads the sweep directory: only "ok" launches bring documents.
  std::string baseline;
  auto inputs = load_report_inputs({out.string()}, &baseline);
  EXPECT_EQ(baseline, "good");
  ASSERT_EQ(inputs.size(), 4u);
  EXPECT_EQ(inputs[0].rounds.size(), 1u);
  EXPECT_TRUE(inputs[1].rounds.empty());
  EXPECT_EQ(inputs[1].status, "failed");
  EXPECT_EQ(inputs[1].note, "round 1 failed: exit code 6: fake-bench: error: failing on purpose (bad)");
  EXPECT_EQ(inputs[2].status, "timeout");
  const Comparison c = compare(inputs, baseline);
  EXPECT_DOUBLE_EQ(*c.geomean_ratio[3], 2.0);
}

TEST_F(Runner, RoundsInterleaveEveryConfigurationInARecordedShuffledOrder) {
  auto o = opts({cfg("base", {{"FAKE_SCALE", "1"}}), cfg("same", {{"FAKE_SCALE", "1"}}), cfg("double", {{"FAKE_SCALE", "2"}})});
  o.rounds = 3;
  o.seed = 11;
  const SweepOutcome r = run(o);
  EXPECT_EQ(r.ran, 9);
  const SweepDocument d = load_sweep(out);
  EXPECT_EQ(d.rounds, 3);
  EXPECT_EQ(d.seed, 11u);
  ASSERT_EQ(d.order.size(), 3u);
  std::vector<std::string> expected;
  for (int round = 1; round <= 3; ++round) {
    std::vector<std::string> names;
    for (std::size_t k : round_order(3, 11, round)) names.push_back(o.configs[k].name);
    EXPECT_EQ(d.order[static_cast<std::size_t>(round) - 1], names) << round;
    expected.insert(expected.end(), names.begin(), names.end());
  }
  EXPECT_EQ(launched(), expected);  // round by round, each in its order, the baseline in every round
  ASSERT_EQ(d.launches.size(), 9u);
  for (std::size_t i = 0; i < 9; ++i) {
    EXPECT_EQ(d.launches[i].round, static_cast<int>(i / 3) + 1);
    EXPECT_EQ(d.launches[i].run.name, expected[i]);
  }
  EXPECT_EQ(d.of("base").size(), 3u);
  EXPECT_TRUE(fs::exists(out / "r3-003-double.json"));
  EXPECT_NE(last_progress.find("[9/9] round 3/3"), std::string::npos) << last_progress;

  std::string baseline;
  std::vector<std::string> notes;
  const auto inputs = load_report_inputs({out.string()}, &baseline, &notes);
  ASSERT_EQ(inputs[2].rounds.size(), 3u);
  ASSERT_FALSE(notes.empty());
  EXPECT_NE(notes[0].find("3 rounds"), std::string::npos);
  EXPECT_NE(notes[0].find("seed 11"), std::string::npos);
  const Comparison c = compare(inputs, baseline);
  const CompareRow& row = c.tables[0].rows[0];
  EXPECT_EQ(row.winner, 2u);  // twice the busbw in every round
  EXPECT_DOUBLE_EQ(row.cells[2].interval->lo, 2.0);
  EXPECT_DOUBLE_EQ(*row.cells[1].ratio, 1.0);
}

TEST_F(Runner, ResumeSkipsFinishedConfigurationsAndRetriesFailedOnRequest) {
  auto o = opts({cfg("a", {}), cfg("b", {{"FAKE_EXIT", "1"}})});
  run(o);
  EXPECT_EQ(launches(), 2);
  const auto stamp = fs::last_write_time(out / "r1-001-a.json");

  EXPECT_THROW(run(o), UsageError);  // an existing sweep needs --resume

  o.resume = true;
  o.configs.push_back(cfg("c", {}));  // the matrix grew
  SweepOutcome r = run(o);
  EXPECT_EQ(r.skipped, 2);
  EXPECT_EQ(r.ran, 1);
  EXPECT_EQ(launches(), 3);
  EXPECT_EQ(fs::last_write_time(out / "r1-001-a.json"), stamp);
  EXPECT_NE(last_progress.find("round 1/1 a: ok earlier, skipped (--resume)"), std::string::npos) << last_progress;

  o.retry_failed = true;
  o.configs[1] = cfg("b", {{"FAKE_EXIT", "1"}});
  r = run(o);
  EXPECT_EQ(r.ran, 1);  // only b
  EXPECT_EQ(launches(), 4);
  const SweepDocument d = load_sweep(out);
  ASSERT_EQ(d.launches.size(), 3u);
  EXPECT_NE(d.find("c", 1), nullptr);
}

TEST_F(Runner, ResumeAddsRoundsAndLosesNothing) {
  auto o = opts({cfg("a", {}), cfg("b", {{"FAKE_SCALE", "2"}})});
  o.rounds = 2;
  o.seed = 5;
  run(o);
  EXPECT_EQ(launches(), 4);
  const auto stamp = fs::last_write_time(out / "r2-002-b.json");
  o.resume = true;
  o.rounds = 3;
  o.seed.reset();  // the sweep's own seed is kept
  const SweepOutcome r = run(o);
  EXPECT_EQ(r.skipped, 4);
  EXPECT_EQ(r.ran, 2);
  EXPECT_EQ(launches(), 6);
  EXPECT_EQ(fs::last_write_time(out / "r2-002-b.json"), stamp);
  const SweepDocument d = load_sweep(out);
  EXPECT_EQ(d.seed, 5u);
  EXPECT_EQ(d.launches.size(), 6u);
  EXPECT_EQ(d.of("a").size(), 3u);
  o.seed = 6;
  EXPECT_NE(test::usage_error_of([&] { run(o); }).find("shuffled with seed 5"), std::string::npos);
}

TEST_F(Runner, InertKnobsAreRefusedBeforeAnythingRunsWhenTheBackendIsKnown) {
  auto o = opts({cfg("default", {}), cfg("ring", {{"NCCL_ALGO", "Ring"}})});
  o.bench_args = {"--backend", "mpi", "-b", "1K"};
  o.knob_sources = {{"NCCL_ALGO", "--axis NCCL_ALGO"}};
  const std::string m = test::usage_error_of([&] { run(o); });
  EXPECT_EQ(m.rfind("--axis NCCL_ALGO: NCCL_ALGO cannot reach the mpi backend that runs this sweep (NCCL_ALGO reaches "
                    "nccl, sim; --backend mpi in the bench arguments)", 0),
            0u)
      << m;
  EXPECT_NE(m.find("--allow-inert"), std::string::npos) << m;
  EXPECT_FALSE(fs::exists(out));
  EXPECT_EQ(launches(), 0);

  o.allow_inert = true;  // measured, and said so everywhere
  run(o);
  const SweepDocument d = load_sweep(out);
  ASSERT_EQ(d.inert.size(), 1u);
  EXPECT_EQ(d.inert[0].name, "NCCL_ALGO");
  EXPECT_EQ(d.inert[0].source, "--axis NCCL_ALGO");
  EXPECT_EQ(d.inert_backend, "mpi");
  EXPECT_TRUE(d.allow_inert);
  EXPECT_EQ(d.backend["expected"], "mpi");
  EXPECT_EQ(d.find("ring", 1)->inert, (std::vector<std::string>{"NCCL_ALGO"}));
  EXPECT_TRUE(d.find("default", 1)->inert.empty());
  const auto j = nlohmann::json::parse(read_file(out / "sweep.json"));
  EXPECT_EQ(j["inert"]["allowed"], true);
  std::vector<std::string> notes;
  const auto inputs = load_report_inputs({out.string()}, nullptr, &notes);
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_NE(notes[0].find("INERT: NCCL_ALGO (--axis NCCL_ALGO) cannot reach the mpi backend"), std::string::npos) << notes[0];
  EXPECT_TRUE(compare(inputs, "").inert[1]);
}

TEST_F(Runner, InertKnobsFoundInAResultsDocumentStopTheSweepThere) {
  // The stand-in cannot answer --version: the first results document (backend mpi) decides.
  auto o = opts({cfg("ring", {{"NCCL_ALGO", "Ring"}}), cfg("default", {})});
  o.rounds = 2;
  const std::string m = test::usage_error_of([&] { run(o); });
  EXPECT_NE(m.find("NCCL_ALGO cannot reach the mpi backend"), std::string::npos) << m;
  EXPECT_NE(m.find("its results document says run.backend mpi"), std::string::npos) << m;
  SweepDocument d = load_sweep(out);
  ASSERT_GE(d.launches.size(), 1u);
  ASSERT_LE(d.launches.size(), 2u);
  EXPECT_EQ(d.launches.back().run.name, "ring");  // it stopped right after the inert launch, which is kept
  EXPECT_EQ(d.launches.back().inert, (std::vector<std::string>{"NCCL_ALGO"}));
  EXPECT_FALSE(d.allow_inert);
  const int before = launches();
  o.resume = true;
  o.allow_inert = true;
  const SweepOutcome r = run(o);
  EXPECT_EQ(r.skipped, before);
  EXPECT_EQ(launches(), 4);
  d = load_sweep(out);
  EXPECT_TRUE(d.allow_inert);
  ASSERT_EQ(d.inert.size(), 1u);
  EXPECT_EQ(d.inert_backend, "mpi");
}

TEST_F(Runner, ResumeRefusesAnotherSetup) {
  auto o = opts({cfg("a", {})});
  run(o);
  o.resume = true;
  auto other_args = o;
  other_args.bench_args = {"-b", "2K"};
  EXPECT_THROW(run(other_args), UsageError);
  auto other_env = o;
  other_env.configs[0].env["NCCL_ALGO"] = "Ring";
  EXPECT_THROW(run(other_env), UsageError);
  auto other_launcher = o;
  other_launcher.launcher.np = 1;
  EXPECT_THROW(run(other_launcher), UsageError);
}

TEST_F(Runner, StaleDocumentOfAnInterruptedAttemptIsNotTakenForANewOne) {
  auto o = opts({cfg("a", {{"FAKE_EXIT", "0"}})});  // exits 0 without writing a document
  fs::create_directories(out);
  fs::copy_file(templ, out / "r1-001-a.json");
  run(o);
  const SweepDocument d = load_sweep(out);
  EXPECT_EQ(d.launches[0].run.status, TrialStatus::Failed);
  EXPECT_EQ(d.launches[0].run.error.rfind("exit code 0 but no results document was written", 0), 0u) << d.launches[0].run.error;
}

TEST_F(Runner, RefusesBadOptions) {
  auto o = opts({cfg("a", {})});
  o.bench = "/nonexistent/railkit-bench";
  EXPECT_THROW(run(o), UsageError);
  o = opts({cfg("a", {})});
  o.baseline = "zzz";
  EXPECT_THROW(run(o), UsageError);
  o = opts({cfg("a", {})});
  o.bench_args = {"-J", "x.json"};
  EXPECT_THROW(run(o), UsageError);
  o = opts({cfg("a", {})});
  o.rounds = 0;
  EXPECT_THROW(run(o), UsageError);
  o = opts({cfg("a", {})});
  o.out_dir = "/proc/railkit-cannot-create";
  EXPECT_THROW(run(o), UsageError);
  EXPECT_FALSE(fs::exists(out));
}

TEST_F(Runner, ReportInputsFromFilesNameByLabelAndQualifyCollisions) {
  const fs::path a = tmp.path / "a.json", b = tmp.path / "sub_b.json";
  write_file_atomic(a, dump_results(test::make_doc("same", {{"all_reduce", 8, false, 1}})));
  write_file_atomic(b, dump_results(test::make_doc("", {{"all_reduce", 8, false, 1}})));
  auto in = load_report_inputs({a.string(), b.string()}, nullptr);
  EXPECT_EQ(in[0].name, "same");
  EXPECT_EQ(in[1].name, "sub_b");
  in = load_report_inputs({a.string(), a.string()}, nullptr);
  EXPECT_EQ(in[0].name, a.string());
  EXPECT_THROW(load_report_inputs({(tmp.path / "missing.json").string()}, nullptr), UsageError);
  EXPECT_THROW(load_report_inputs({tmp.path.string()}, nullptr), UsageError);  // no sweep.json
  EXPECT_THROW(load_report_inputs({}, nullptr), UsageError);
}

TEST_F(Runner, ReportKeepsResultsPathsInsideTheSweepDirectory) {
  run(opts({cfg("a", {})}));
  ASSERT_EQ(load_report_inputs({out.string()}, nullptr).at(0).status, "ok");
  const auto original = nlohmann::json::parse(read_file(out / "sweep.json"));
  // A results document outside the sweep directory, readable: it must not be opened.
  const fs::path outside = tmp.path / "outside.json";
  fs::copy_file(templ, outside);
  fs::create_directories(out / "sub");
  fs::create_symlink(outside, out / "link-out.json");
  fs::create_symlink(tmp.path, out / "sub" / "dir-out");
  for (const std::string& bad : std::vector<std::string>{"../outside.json", "sub/../../outside.json", outside.string(),
                                "link-out.json", "sub/dir-out/outside.json", "../../../../../../etc/passwd", "."}) {
    auto j = original;
    j["launches"][0]["results"] = bad;
    write_file_atomic(out / "sweep.json", j.dump(2));
    try {
      load_report_inputs({out.string()}, nullptr);
      ADD_FAILURE() << bad << " was read";
    } catch (const UsageError& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find((out / "sweep.json").string()), std::string::npos) << what;
      EXPECT_NE(what.find("launches[0] (a round 1)"), std::string::npos) << what;
      EXPECT_NE(what.find("'" + bad + "'"), std::string::npos) << what;
      EXPECT_EQ(what.find('\n'), std::string::npos) << what;
    }
    EXPECT_THROW(ok_results_documents(out), UsageError) << bad << ": railkit history add reads the same paths";
  }
  // Inside, also through a symlink that stays inside: read as before.
  fs::create_symlink(out / original["launches"][0]["results"].get<std::string>(), out / "sub" / "link-in.json");
  auto j = original;
  j["launches"][0]["results"] = "sub/link-in.json";
  write_file_atomic(out / "sweep.json", j.dump(2));
  EXPECT_EQ(load_report_inputs({out.string()}, nullptr).at(0).status, "ok");
  EXPECT_EQ(ok_results_documents(out).size(), 1u);
}

TEST_F(Runner, PlotRefusesOtherExtensionsAndReportsMissingMatplotlib) {
  CompareInput in;
  in.name = "a";
  in.doc = test::make_doc("a", {{"all_reduce", 8, false, 1}});
  const Comparison c = compare({in}, "");
  PlotTool tool{"/bin/sh", std::string(RAILKIT_TESTS_DIR) + "/lib/exit5.sh"};
  EXPECT_THROW(write_plot(c, tmp.path / "p.gif", tool, environ), UsageError);
  try {
    write_plot(c, tmp.path / "p.png", tool, environ);
    FAIL() << "expected UnavailableError";
  } catch (const UnavailableError& e) {
    EXPECT_NE(std::string(e.what()).find("python3-matplotlib"), std::string::npos) << e.what();
  }
  EXPECT_THROW(write_plot(c, tmp.path / "p.pdf", tool, environ), UnavailableError);  // .pdf is a plot format
  PlotTool cubic = tool;
  cubic.yscale = "cubic";
  EXPECT_THROW(write_plot(c, tmp.path / "p.png", cubic, environ), UsageError);
}

TEST_F(Runner, PlotLineRateOnlyFromTheMeasuredNode) {
  SweepDocument d;
  d.topology = {{"source", "this-node"}, {"host", "h1"}, {"measured_node", true}, {"nic_rate_Gbps", 400.0},
                {"nic_count", 8}};
  const PlotContext ctx = plot_context(d);
  ASSERT_TRUE(ctx.line_rate_Gbps.has_value());
  EXPECT_EQ(*ctx.line_rate_Gbps, 400.0);
  EXPECT_EQ(ctx.nics_per_node, 8);
  EXPECT_EQ(ctx.line_rate_source, "NIC port rate probed on h1");
  d.topology["measured_node"] = false;  // a --topo-root tree's NICs may not be the measured ones
  EXPECT_FALSE(plot_context(d).line_rate_Gbps.has_value());
  EXPECT_FALSE(plot_context(SweepDocument{}).line_rate_Gbps.has_value());
  // Loose documents know no line rate.
  write_file_atomic(tmp.path / "r.json", "{}");
  EXPECT_FALSE(plot_context(std::vector<std::string>{(tmp.path / "r.json").string()}).line_rate_Gbps.has_value());
}

}  // namespace
}  // namespace railkit::sweep
