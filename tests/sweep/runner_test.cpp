// The sweep runner with a stand-in bench (fake_bench.py, launcher `local`): statuses, sweep.json
// after each configuration, resume, retry, refusals; and the report's input loading.
#include <unistd.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "sweep/report.hpp"
#include "sweep/sweep.hpp"
#include "results_util.hpp"
#include "test_util.hpp"

extern char** environ;

namespace railkit::sweep {
namespace {
namespace fs = std::filesystem;

using test::TempDir;

class Runner : public ::testing::Test {
 protected:
  TempDir tmp;
  fs::path out = tmp.path / "out";
  fs::path templ = tmp.path / "template.json";
  fs::path counter = tmp.path / "count.txt";

  void SetUp() override {
    write_file_atomic(templ, dump_results(test::make_doc("t", {{"all_reduce", 1024, false, 1.0},
                                                                  {"all_reduce", 1048576, false, 10.0}})));
  }

  BenchConfig cfg(const std::string& name, std::map<std::string, std::string> env) {
    env["FAKE_TEMPLATE"] = templ.string();
    env["FAKE_COUNTER"] = counter.string();
    return BenchConfig{name, env, {}};
  }

  SweepOptions opts(std::vector<BenchConfig> configs) {
    SweepOptions o;
    o.configs = std::move(configs);
    o.launcher.kind = launch::LauncherKind::Local;
    o.bench = std::string(RAILKIT_TESTS_DIR) + "/lib/fake_bench.py";
    o.bench_args = {"-b", "1K"};
    o.out_dir = out;
    o.kill_grace_s = 0.5;
    return o;
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
  ASSERT_EQ(d.configs.size(), 4u);
  EXPECT_EQ(d.configs[0].status, TrialStatus::Ok);
  EXPECT_EQ(d.configs[0].results, "001-good.json");
  EXPECT_TRUE(fs::exists(out / "001-good.json"));
  EXPECT_TRUE(fs::exists(out / "001-good.stdout.txt"));
  EXPECT_EQ(d.configs[1].status, TrialStatus::Failed);
  EXPECT_EQ(d.configs[1].exit_code, 6);
  EXPECT_EQ(d.configs[1].error, "exit code 6: fake-bench: error: failing on purpose (bad)");
  EXPECT_NE(d.configs[1].stderr_tail.find("more noise"), std::string::npos);
  EXPECT_TRUE(d.configs[1].results.empty());
  EXPECT_EQ(d.configs[2].status, TrialStatus::Timeout);
  EXPECT_FALSE(d.configs[2].exit_code.has_value());
  EXPECT_LT(d.configs[2].elapsed_s, 10);
  EXPECT_EQ(d.configs[3].status, TrialStatus::Ok);
  EXPECT_EQ(d.baseline, "good");
  EXPECT_EQ(d.planned.size(), 4u);
  EXPECT_NE(last_progress.find("[2/4] bad: failed"), std::string::npos) << last_progress;
  EXPECT_NE(last_progress.find("[4/4] better: ok"), std::string::npos) << last_progress;

  // The report reads the sweep directory: only "ok" configurations carry documents.
  std::string baseline;
  auto inputs = load_report_inputs({out.string()}, &baseline);
  EXPECT_EQ(baseline, "good");
  ASSERT_EQ(inputs.size(), 4u);
  EXPECT_TRUE(inputs[0].doc.has_value());
  EXPECT_FALSE(inputs[1].doc.has_value());
  EXPECT_EQ(inputs[2].status, "timeout");
  const Comparison c = compare(inputs, baseline);
  EXPECT_DOUBLE_EQ(*c.geomean_ratio[3], 2.0);
}

TEST_F(Runner, ResumeSkipsFinishedConfigurationsAndRetriesFailedOnRequest) {
  auto o = opts({cfg("a", {}), cfg("b", {{"FAKE_EXIT", "1"}})});
  run(o);
  EXPECT_EQ(launches(), 2);
  const auto stamp = fs::last_write_time(out / "001-a.json");

  EXPECT_THROW(run(o), UsageError);  // an existing sweep needs --resume

  o.resume = true;
  o.configs.push_back(cfg("c", {}));  // the matrix grew
  SweepOutcome r = run(o);
  EXPECT_EQ(r.skipped, 2);
  EXPECT_EQ(r.ran, 1);
  EXPECT_EQ(launches(), 3);
  EXPECT_EQ(fs::last_write_time(out / "001-a.json"), stamp);
  EXPECT_NE(last_progress.find("[1/3] a: ok earlier, skipped (--resume)"), std::string::npos) << last_progress;

  o.retry_failed = true;
  o.configs[1] = cfg("b", {{"FAKE_EXIT", "1"}});
  r = run(o);
  EXPECT_EQ(r.ran, 1);  // only b
  EXPECT_EQ(launches(), 4);
  const SweepDocument d = load_sweep(out);
  ASSERT_EQ(d.configs.size(), 3u);
  EXPECT_EQ(d.configs[2].name, "c");
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
  fs::copy_file(templ, out / "001-a.json");
  run(o);
  const SweepDocument d = load_sweep(out);
  EXPECT_EQ(d.configs[0].status, TrialStatus::Failed);
  EXPECT_EQ(d.configs[0].error.rfind("exit code 0 but no results document was written", 0), 0u) << d.configs[0].error;
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

TEST_F(Runner, PlotRefusesOtherExtensionsAndReportsMissingMatplotlib) {
  const Comparison c = compare({CompareInput{"a", "ok", "", "", test::make_doc("a", {{"all_reduce", 8, false, 1}})}}, "");
  PlotTool tool{"/bin/sh", std::string(RAILKIT_TESTS_DIR) + "/lib/exit5.sh"};
  EXPECT_THROW(write_plot(c, tmp.path / "p.gif", tool, environ), UsageError);
  try {
    write_plot(c, tmp.path / "p.png", tool, environ);
    FAIL() << "expected UnavailableError";
  } catch (const UnavailableError& e) {
    EXPECT_NE(std::string(e.what()).find("python3-matplotlib"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace railkit::sweep
