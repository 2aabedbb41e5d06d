// railkit sweep --prom: the sweep's node_exporter textfile, checked against its documents and
// against the rules promtool applies (one # HELP / # TYPE per metric, valid label names, escaped
// values, no duplicate series); and prom_result_samples, shared with railkit-bench --prom.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "core/prom.hpp"
#include "sweep/prom.hpp"
#include "sweep/inputs.hpp"
#include "sweep/sweep.hpp"
#include "fake_sweep.hpp"
#include "results_util.hpp"
#include "test_util.hpp"

extern char** environ;

namespace railkit::sweep {
namespace {
namespace fs = std::filesystem;


/// A parsed textfile: metric -> series (label text) -> value. Fails the test on a line that
/// breaks the exposition rules.
struct Textfile {
  std::map<std::string, std::map<std::string, double>> series;
  std::map<std::string, std::map<std::string, std::string>> labels;  ///< metric{...} -> label -> value
};

Textfile parse_textfile(const std::string& text) {
  Textfile t;
  std::map<std::string, int> help, type;
  const std::regex sample(R"(^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})? (\S+)$)");
  const std::regex label(R"(([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\\n]|\\[\\"n])*)\"(,|$))");
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("# HELP ", 0) == 0) {
      ++help[line.substr(7, line.find(' ', 7) - 7)];
      continue;
    }
    if (line.rfind("# TYPE ", 0) == 0) {
      const std::string name = line.substr(7, line.find(' ', 7) - 7);
      ++type[name];
      EXPECT_EQ(help[name], 1) << "TYPE before HELP or repeated: " << line;
      EXPECT_EQ(t.series.count(name), 0u) << "TYPE after samples: " << line;
      continue;
    }
    std::smatch m;
    if (!std::regex_match(line, m, sample)) {
      ADD_FAILURE() << "not a sample line: " << line;
      continue;
    }
    const std::string name = m[1], body = m[3];
    EXPECT_EQ(type[name], 1) << "sample without one # TYPE: " << line;
    std::map<std::string, std::string> ls;
    std::size_t consumed = 0;
    for (auto it = std::sregex_iterator(body.begin(), body.end(), label); it != std::sregex_iterator(); ++it) {
      EXPECT_EQ(static_cast<std::size_t>(it->position()), consumed) << "junk in labels: " << line;
      consumed = static_cast<std::size_t>(it->position() + it->length());
      EXPECT_TRUE(ls.emplace((*it)[1], (*it)[2]).second) << "repeated label: " << line;
      EXPECT_EQ(std::string((*it)[2]).find(' '), std::string::npos) << "space in a label value: " << line;
    }
    EXPECT_EQ(consumed, body.size()) << "labels not fully parsed: " << line;
    EXPECT_TRUE(t.series[name].emplace(body, std::stod(m[4])).second) << "duplicate series: " << line;
    t.labels[name + "{" + body + "}"] = ls;
  }
  for (const auto& [name, n] : help) EXPECT_EQ(n, 1) << name;
  return t;
}

class SweepProm : public test_sweep::FakeBenchSweep {
 protected:
  fs::path prom = tmp.path / "sweep.prom";

  void SetUp() override {
    ResultsDocument d = test::make_doc("t", {{"all_reduce", 1024, false, 1.0},
                                             {"all_reduce", 1024, true, 1.25},
                                             {"all_reduce", 1048576, false, 10.0, 0, "rail0"}});
    d.run.timing_method = "barrier_separated";
    write_template(d);
  }

  SweepOptions opts(std::vector<BenchConfig> configs) {
    SweepOptions o = fake_opts(std::move(configs), 2, 3);
    o.prom = prom;
    return o;
  }

  SweepOutcome run(const SweepOptions& o) {
    std::ostringstream progress;
    return run_sweep(o, environ, progress, false);
  }
};

TEST_F(SweepProm, OneTextfileForTheSweepMatchesItsDocuments) {
  (void)run(opts({cfg("base \"x\"", {{"FAKE_SCALE", "1"}}), cfg("double", {{"FAKE_SCALE", "2"}}),
                  cfg("broken", {{"FAKE_EXIT", "1"}})}));
  const Textfile t = parse_textfile(read_file(prom));
  ASSERT_EQ(t.series.size(), 3u);
  const auto& busbw = t.series.at("railkit_sweep_busbw_gbps");
  const auto& time = t.series.at("railkit_sweep_time_us");
  EXPECT_EQ(busbw.size(), 2u * 2u * 3u);  // 2 configurations that ran ok x 2 rounds x 3 records
  EXPECT_EQ(time.size(), busbw.size());
  ASSERT_EQ(t.series.at("railkit_sweep_last_run_timestamp_seconds").size(), 1u);
  EXPECT_GT(t.series.at("railkit_sweep_last_run_timestamp_seconds").begin()->second, 1.7e9);

  // Every sample equals its round's document.
  const SweepDocument sd = load_sweep(out);
  int checked = 0;
  for (const auto& l : sd.launches) {
    if (l.run.status != TrialStatus::Ok) continue;
    const ResultsDocument d = load_results((out / l.run.results).string());
    for (const auto& r : d.results) {
      std::string labels = fmt::format(
          "config=\"{}\",round=\"{}\",op=\"all_reduce\",bytes=\"{}\",size=\"{}\",placement=\"{}\",{}backend=\"mpi\","
          "timing_method=\"barrier_separated\"",
          prom_label_value(l.run.name), l.round, r.bytes, r.bytes == 1024 ? "1KiB" : "1MiB",
          r.in_place ? "in_place" : "out_of_place", r.group ? "group=\"" + *r.group + "\"," : "");
      ASSERT_EQ(busbw.count(labels), 1u) << labels << "\n" << read_file(prom);
      EXPECT_DOUBLE_EQ(busbw.at(labels), r.busbw_GBps);
      EXPECT_DOUBLE_EQ(time.at(labels), r.time_us.avg);
      ++checked;
    }
  }
  EXPECT_EQ(checked, 12);
  EXPECT_NE(read_file(prom).find("config=\"base_\\\"x\\\"\""), std::string::npos);  // escaped, no space
  EXPECT_EQ(read_file(prom).find("broken"), std::string::npos);  // a failed launch has no samples
}

TEST_F(SweepProm, ResumeRewritesTheTextfileWithEveryRound) {
  auto o = opts({cfg("a", {})});
  o.rounds = 1;
  (void)run(o);
  EXPECT_EQ(parse_textfile(read_file(prom)).series.at("railkit_sweep_busbw_gbps").size(), 3u);
  o.rounds = 2;
  o.resume = true;
  (void)run(o);
  EXPECT_EQ(parse_textfile(read_file(prom)).series.at("railkit_sweep_busbw_gbps").size(), 6u);
}

TEST_F(SweepProm, AnUnwritableTargetIsRefusedBeforeAnythingRuns) {
  auto o = opts({cfg("a", {})});
  o.prom = tmp.path / "no-such-dir" / "x.prom";
  EXPECT_THROW(run(o), UsageError);
  EXPECT_FALSE(fs::exists(counter));
  EXPECT_FALSE(fs::exists(out / "sweep.json"));
}

TEST(PromSamples, LabelsInDocumentedOrderWithSimulatedAndCycles) {
  ResultsDocument d = test::make_doc("lbl", {{"all_gather", 2048, true, 2.0, 1},
                                              {"all_gather", 2048, false, 3.0, 0, "rail1"}});
  d.simulated = true;
  d.run.backend = "sim";
  PromSampleOptions o;
  o.leading = {{"config", "c"}};
  o.timing_method = true;
  const auto s = prom_result_samples(d, o);
  ASSERT_EQ(s.size(), 2u);
  // ordered by op, group ("" first), bytes, placement, cycle
  EXPECT_EQ(prom_labels(s[0].labels),
            "config=\"c\",op=\"all_gather\",bytes=\"2048\",size=\"2KiB\",placement=\"in_place\",cycle=\"1\","
            "backend=\"sim\",label=\"lbl\",timing_method=\"back_to_back\",simulated=\"true\"");
  EXPECT_EQ(prom_labels(s[1].labels),
            "config=\"c\",op=\"all_gather\",bytes=\"2048\",size=\"2KiB\",placement=\"out_of_place\",group=\"rail1\","
            "cycle=\"0\",backend=\"sim\",label=\"lbl\",timing_method=\"back_to_back\",simulated=\"true\"");
  EXPECT_DOUBLE_EQ(s[1].busbw_GBps, 3.0);
  EXPECT_DOUBLE_EQ(s[1].time_us, 10.0);
  EXPECT_TRUE(prom_result_samples(ResultsDocument{}).empty());
}

}  // namespace
}  // namespace railkit::sweep
