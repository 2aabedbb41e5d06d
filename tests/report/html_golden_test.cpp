// Golden-file test of `railkit report --html`'s pages: each page (comparison, tune session,
// accept run) rendered from fixed inputs must match tests/fixtures/report/golden/html_*.html byte
// for byte. RAILKIT_UPDATE_GOLDEN=1 rewrites the golden files from the current code (then review
// the diff before committing it).
#include "report/html_report.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "golden.hpp"
#include "html_inputs.hpp"
#include "results_util.hpp"

namespace railkit::report::html_golden {  // its own namespace: the tests build as one unity file
namespace {

using json = nlohmann::json;

using html_inputs::kEvil;
using html_inputs::meta;
using html_inputs::two_runs;

/// Compares `got` with golden/NAME (or writes it under RAILKIT_UPDATE_GOLDEN=1); a mismatch names
/// the file and the first line that differs.
void expect_golden(const std::string& name, const std::string& got) {
  const std::string why = test::golden_mismatch(std::string(RAILKIT_TESTS_DIR) + "/fixtures/report/golden/" + name, got);
  EXPECT_TRUE(why.empty()) << why;
}


/// Rounds of one sweep, --split groups: intervals, winners and no-difference ranges (what the tune
/// page's validation section shows).
Comparison rounds_of_a_sweep() {
  std::vector<CompareInput> in(3);
  const char* names[] = {"baseline", "candidate-1", "candidate-2"};
  for (int i = 0; i < 3; ++i) {
    in[i].name = names[i];
    in[i].series = "/s";
    in[i].env = std::map<std::string, std::string>{{"NCCL_ALGO", i == 0 ? "Ring" : "Tree"}};
    for (int r = 1; r <= 4; ++r) {
      const double jitter = 0.01 * ((r * (i + 2)) % 3);
      std::vector<test::Rec> recs;
      for (const std::uint64_t bytes : {1024ull, 4096ull, 1ull << 20})
        for (const char* group : {"rail0", "rail1"}) {
          const double gain = bytes == (1ull << 20) && i == 1 ? 1.4 : (i == 2 ? 0.99 : 1.0);
          recs.push_back({"all_reduce", bytes, false, (1.0 + jitter) * gain * (group[4] == '0' ? 1.0 : 0.9), 0, group});
        }
      ResultsDocument d = test::make_doc(names[i], recs);
      d.run.start_time = "2026-01-01T00:0" + std::to_string(r) + ":00Z";
      in[i].rounds.push_back(sweep::RoundDoc{r, d});
    }
    in[i].doc = in[i].rounds.front().doc;
  }
  sweep::CompareOptions o;
  o.baseline = "baseline";
  return compare(std::move(in), o);
}

std::vector<json> journal(bool simulated) {
  json session = {{"type", "session"}, {"created", "2026-01-01T00:00:00Z"}, {"railkit_version", "0.1.0"},
                  {"space", {{"name", "ompi-coll"}}}, {"strategy", "coordinate"}, {"budget", 3}, {"seed", 1},
                  {"launcher", {{"kind", "mpirun"}, {"np", 4}, {"hostfile", "hosts<1>"}}}, {"bench", "railkit-bench"},
                  {"bench_args", {"--coll", "all_reduce"}}};
  if (simulated) session["sim"] = {{"nodes", 2}};
  return {
      session,
      {{"type", "trial"}, {"trial", 1}, {"label", "defaults"}, {"status", "ok"}, {"objective", 1.0}, {"env", {{"A", kEvil}}},
       {"fidelity", 0.5}, {"iters", 20}, {"elapsed_s", 1.25}},
      {{"type", "trial"}, {"trial", 2}, {"label", "x"}, {"status", "failed"}, {"error", "boom" + kEvil}},
      {{"type", "trial"}, {"trial", 3}, {"label", "y"}, {"status", "failed"}, {"infeasible", true}, {"env", {{"B", 2}}}},
      {{"type", "topology"}, {"nodes", json::array({{{"host", "vm<1>"}, {"fingerprint", "abc"}, {"facts", {{"gpus", 0}}}}})}},
      {{"type", "done"}, {"finished", "2026-01-01T00:01:00Z"}},
  };
}

json profile() {
  return {{"name", "p"},
          {"cluster", {{"backend", "mpi"}, {"backend_version", "Open MPI"}, {"hosts", {"vm"}}, {"nodes", 1}, {"ranks", 4},
                       {"fingerprint", "f<1>"}}},
          {"settings", {{"env", {{"A", "1"}}}, {"dcqcn", {{"rp_min_rate", 100}}}}},
          {"decisions", json::array({{{"coll", "all_reduce"}, {"min_bytes", 4096}, {"max_bytes", 16383}, {"config", "c"},
                                      {"ratio", 1.2}, {"ratio_lo", 1.1}, {"ratio_hi", 1.3}, {"significant", true},
                                      {"busbw_GBps", 2.5}, {"baseline_busbw_GBps", 2.0}},
                                     {{"coll", "all_gather"}, {"config", "d"}, {"ratio", 1.01}, {"significant", false}}})},
          {"expectations", json::array({{{"coll", "all_reduce"}, {"bytes", 4096}, {"busbw_GBps", 2.5}, {"tolerance", 0.1},
                                         {"config", "c"}}})},
          {"evidence", {{"validated", true}, {"pairs", 5}, {"max_regression", 0.02}}}};
}

json accept_doc() {
  auto check = [](const std::string& name, const std::string& verdict, const std::string& rule, json busbw) {
    return json{{"check", name}, {"measured", "m"}, {"busbw_GBps", busbw}, {"expected", ">= 1"}, {"rule", rule},
                {"verdict", verdict}, {"evidence", "e" + kEvil}};
  };
  json a = {{"schema", "railkit.accept/1"}, {"railkit_version", "0.1.0"}, {"created", "2026-01-01T00:00:00Z"},
            {"verdict", "fail"}, {"verdict_reason", "1 check failed; 1 reported without a rule; 1 skipped"},
            {"counts", {{"explained", 0}, {"fail", 1}, {"pass", 2}, {"reported", 1}, {"skipped", 1}}},
            {"notes", json::array({"n" + kEvil})}, {"rules", {{"peer_fraction", 0.25}, {"profile", nullptr}}},
            {"stages", json::array({{{"stage", "node"}, {"status", "ran"}, {"launches", 1}, {"seconds", 1.5}},
                                    {{"stage", "rdma"}, {"status", "skipped"}, {"reason", "no <rdma>"}}})}};
  a["nodes"] = json::array({
      {{"name", "good-a"}, {"verdict", "pass"}, {"checks", json::array({check("node.all_reduce", "pass", "peers", 2.0)})}},
      {{"name", "quiet"}, {"verdict", "reported"}, {"checks", json::array({check("node.all_reduce", "reported", "none", 1.0)})}},
      {{"name", "bad<host>"}, {"verdict", "fail"},
       {"checks", json::array({check("node.all_reduce", "fail", "peers", 0.1), check("node.rdma", "skipped", "none", nullptr)})}},
  });
  for (const char* list : {"pairs", "rdma_pairs", "commands"}) a[list] = json::array();
  for (const char* object : {"isolation", "rdma_isolation"}) a[object] = json::object();
  a["cluster"] = json::array({{{"name", "all"}, {"verdict", "pass"}, {"checks", json::array({check("all.all_reduce", "pass", "profile", nullptr)})}}});
  return a;
}

/// accept_doc() as report --html reads it.
accept::AcceptDocument accept_run() { return accept::accept_from_json(accept_doc(), "accept.json"); }

TEST(HtmlGolden, Comparison) {
  expect_golden("html_comparison.html",
                render_html_comparison(two_runs(false), {HtmlPlot{"p<1>", "<svg xmlns=\"http://www.w3.org/2000/svg\"/>", ""}}, meta()));
}

TEST(HtmlGolden, ComparisonSimulatedPlotMissing) {
  expect_golden("html_comparison_sim.html",
                render_html_comparison(two_runs(true), {HtmlPlot{"p", "", "no <matplotlib>"}}, meta()));
}

TEST(HtmlGolden, ComparisonOfRounds) {
  expect_golden("html_comparison_rounds.html", render_html_comparison(rounds_of_a_sweep(), {}, meta()));
}

TEST(HtmlGolden, Tune) {
  expect_golden("html_tune.html", render_html_tune(journal(false), profile(), rounds_of_a_sweep(),
                                                   {HtmlPlot{"validation", "<svg/>", ""}}, meta()));
}

TEST(HtmlGolden, TuneSimulatedNoProfile) {
  std::vector<json> j = journal(true);
  j.pop_back();  // no done line: not finished
  expect_golden("html_tune_unfinished.html", render_html_tune(j, json(), std::nullopt, {}, meta()));
}

TEST(HtmlGolden, Accept) {
  expect_golden("html_accept.html", render_html_accept(accept_run(), std::nullopt, meta()));
}

TEST(HtmlGolden, AcceptWithRun) {
  ResultsDocument run = test::make_doc("all", {{"all_reduce", 1024, false, 1.0}});
  run.simulated = true;
  run.run.start_time = "2026-01-01T00:00:00Z";
  expect_golden("html_accept_run.html", render_html_accept(accept_run(), run, meta()));
}

}  // namespace
}  // namespace railkit::report::html_golden
