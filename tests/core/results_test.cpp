#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "core/results.hpp"

namespace {

railkit::ResultsDocument sample() {
  railkit::ResultsDocument d;
  d.run.label = "lab";
  d.run.backend = "mpi";
  d.run.backend_version = "Open MPI v4.1.4";
  d.run.railkit_version = "0.1.0";
  d.run.nranks = 4;
  d.run.nnodes = 1;
  d.run.hosts = {"h0"};
  d.run.command = "railkit-bench -b 8";
  d.run.env = {{"NCCL_DEBUG", "INFO"}};
  d.run.start_time = "2026-11-29T00:00:00Z";
  d.run.average = "avg";
  railkit::ResultRecord r;
  r.op = "all_reduce";
  r.dtype = "float";
  r.redop = "sum";
  r.bytes = 1024;
  r.count = 256;
  r.iters = 20;
  r.time_us = {10, 9, 12, 10, 11.5, 0.1};
  r.algbw_GBps = 0.1024;
  r.busbw_GBps = 0.1536;
  r.wrong = 0;
  r.ranks = {9.5, 10.5, 3, "h0"};
  d.results.push_back(r);
  r.in_place = true;
  r.wrong.reset();
  r.busbw_GBps = 0.2;
  d.results.push_back(r);
  d.observed = {{"x", 1}};
  railkit::update_summary(d);
  return d;
}

}  // namespace

TEST(Results, RoundTripKeepsEveryField) {
  const railkit::ResultsDocument d = sample();
  const std::string text = railkit::dump_results(d);
  railkit::ResultsDocument back;
  railkit::from_json(nlohmann::json::parse(text), back);
  EXPECT_EQ(railkit::dump_results(back), text);
  EXPECT_FALSE(back.results[1].wrong.has_value());
  EXPECT_EQ(back.results[0].ranks.slowest_rank, 3);
  EXPECT_EQ(back.run.env.at("NCCL_DEBUG"), "INFO");
}

/// dump_results dumps the records one at a time into the document's text (no tree of a whole
/// document of 10^5 records): the text is the whole tree's, at every indentation, with nested
/// objects and a "results" key deeper in the document.
TEST(Results, RecordsDumpedOneAtATimeGiveTheWholeTreesText) {
  railkit::ResultsDocument d = sample();
  d.results[0].observed = {{"algo", "Ring"}, {"counters", {{"a", 1}, {"b", nlohmann::json::array({1, 2})}}}, {"e", nlohmann::json::object()}};
  d.results[1].group = "rail0\n\"x\"";
  d.run.options = {{"results", nlohmann::json::array()}, {"colls", {"all_reduce"}}};
  d.observed = {{"results", nlohmann::json::array()}};
  for (const int indent : {1, 2, 4}) {
    const auto tree = nlohmann::ordered_json::parse(railkit::dump_results(d, -1));
    EXPECT_EQ(railkit::dump_results(d, indent), tree.dump(indent) + "\n") << indent;
  }
  d.results.clear();
  EXPECT_EQ(railkit::dump_results(d, 2), nlohmann::ordered_json::parse(railkit::dump_results(d, -1)).dump(2) + "\n");
}

TEST(Results, SummaryIsPlainMeanAndWrongTotal) {
  railkit::ResultsDocument d = sample();
  d.results[0].wrong = 5;
  railkit::update_summary(d);
  EXPECT_DOUBLE_EQ(d.summary.avg_busbw_GBps, (0.1536 + 0.2) / 2);
  EXPECT_EQ(d.summary.errors, 5);
}

TEST(Results, SchemaKeyOrderStartsWithSchema) {
  const std::string text = railkit::dump_results(sample());
  EXPECT_EQ(text.find("\"schema\": \"railkit.results/1\""), 4u);
}

TEST(Results, RejectsOtherSchemasAndTypeErrors) {
  nlohmann::json j = nlohmann::json::parse(railkit::dump_results(sample()));
  railkit::ResultsDocument d;
  j["schema"] = "railkit.results/2";
  EXPECT_THROW(railkit::from_json(j, d), railkit::UsageError);
  j["schema"] = "railkit.results/1";
  j["results"][0]["bytes"] = "many";
  EXPECT_THROW(railkit::from_json(j, d), railkit::UsageError);
}

TEST(Results, MistypedFieldsNameTheirPath) {
  // Issue 14: the message names the record and the key, not a raw type_error.
  struct Case {
    const char* path;
    nlohmann::json value;
    const char* expected;
  };
  for (const Case& c : {Case{"/results/0/busbw_GBps", "x", "results[0]: busbw_GBps must be a number, not string"},
                        Case{"/results/0/bytes", -4, "results[0]: bytes must be an integer from 0 to"},
                        Case{"/results/0/ranks/slowest_host", 3, "results[0].ranks: slowest_host must be a string, not number"},
                        Case{"/results/0/group", true, "results[0]: group must be a string, not boolean"},
                        Case{"/run/railkit_version", nullptr, "run: railkit_version must be a string, not null"},
                        Case{"/run/hosts", nlohmann::json::array({1}), "run: hosts[0] must be a string, not number"},
                        Case{"/summary/complete", "yes", "summary: complete must be a boolean, not string"}}) {
    nlohmann::json j = nlohmann::json::parse(railkit::dump_results(sample()));
    j[nlohmann::json::json_pointer(c.path)] = c.value;
    railkit::ResultsDocument d;
    try {
      railkit::from_json(j, d);
      ADD_FAILURE() << c.path << " was read";
    } catch (const railkit::UsageError& e) {
      EXPECT_NE(std::string(e.what()).find(c.expected), std::string::npos) << c.path << ": " << e.what();
    }
  }
}

TEST(Results, ErrorRecordRoundTrips) {
  railkit::ResultsDocument d = sample();
  d.summary.complete = false;
  d.error = railkit::ErrorRecord{"timeout", 4, "stuck", {{"not_arrived", {2}}}};
  railkit::ResultsDocument back;
  railkit::from_json(nlohmann::json::parse(railkit::dump_results(d)), back);
  ASSERT_TRUE(back.error.has_value());
  EXPECT_EQ(back.error->exit_code, 4);
  EXPECT_EQ(back.error->detail["not_arrived"][0], 2);
  EXPECT_FALSE(back.summary.complete);
}

TEST(Results, SimulatedRunRoundTrips) {
  // Issue 16: a --backend sim document says simulated: true, how it was timed, the cluster, and
  // per record what the simulator saw.
  railkit::ResultsDocument d = sample();
  d.simulated = true;
  d.run.backend = "sim";
  d.run.timing = "simulated";
  d.run.sim = {{"fidelity", "flow"}, {"seed", 7}, {"cluster", {{"name", "c"}, {"nodes", 4}}}};
  d.results[0].wrong.reset();
  d.results[0].observed = {{"algo", "Ring"}, {"counters", {{"spine_bytes", 0}}}};
  const std::string text = railkit::dump_results(d);
  railkit::ResultsDocument back;
  railkit::from_json(nlohmann::json::parse(text), back);
  EXPECT_EQ(railkit::dump_results(back), text);
  EXPECT_TRUE(back.simulated);
  EXPECT_EQ(back.run.timing, "simulated");
  EXPECT_EQ(back.run.sim["seed"], 7);
  EXPECT_EQ(back.results[0].observed["algo"], "Ring");
  EXPECT_TRUE(back.results[1].observed.is_null());
  EXPECT_FALSE(back.results[0].wrong.has_value());
  EXPECT_EQ(text.find("\"simulated\": true"), text.find("\"schema\"") + 33) << text.substr(0, 80);
}

TEST(Results, RealRunsSayHostClockAndNotSimulated) {
  const nlohmann::json j = nlohmann::json::parse(railkit::dump_results(sample()));
  EXPECT_EQ(j["simulated"], false);
  EXPECT_EQ(j["run"]["timing"], "host_clock");
  EXPECT_TRUE(j["run"]["sim"].is_null());
  EXPECT_TRUE(j["results"][0]["observed"].is_null());
}

TEST(Results, DocumentsWithoutTheSimKeysStillRead) {
  // Written before issue 16: no simulated, run.timing, run.sim, results[].observed.
  nlohmann::json j = nlohmann::json::parse(railkit::dump_results(sample()));
  j.erase("simulated");
  j["run"].erase("timing");
  j["run"].erase("sim");
  for (auto& r : j["results"]) r.erase("observed");
  railkit::ResultsDocument d;
  railkit::from_json(j, d);
  EXPECT_FALSE(d.simulated);
  EXPECT_EQ(d.run.timing, "host_clock");
  EXPECT_TRUE(d.results[0].observed.is_null());
}

TEST(Results, SimBackendMustSaySimulated) {
  nlohmann::json j = nlohmann::json::parse(railkit::dump_results(sample()));
  j["run"]["backend"] = "sim";
  railkit::ResultsDocument d;
  try {
    railkit::from_json(j, d);
    ADD_FAILURE() << "a sim document without simulated: true was read";
  } catch (const railkit::UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("run.backend is sim but simulated is not true"), std::string::npos) << e.what();
  }
  j["simulated"] = true;
  EXPECT_NO_THROW(railkit::from_json(j, d));
  j["simulated"] = "yes";
  EXPECT_THROW(railkit::from_json(j, d), railkit::UsageError);
  j["simulated"] = true;
  j["results"][0]["observed"] = 3;
  EXPECT_THROW(railkit::from_json(j, d), railkit::UsageError);
}
