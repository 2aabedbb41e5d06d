// accept.json read back: accept_from_json reads everything to_json writes (to_json of what it
// read is the document again) and refuses a malformed document with one line naming the field.
#include <gtest/gtest.h>

#include <string>

#include "accept/reports.hpp"
#include "core/error.hpp"
#include "core/json_text.hpp"

using namespace railkit::accept;
using railkit::UsageError;
using railkit::Verdict;
using json = nlohmann::json;
using ojson = nlohmann::ordered_json;

namespace {

AcceptReport full_report() {
  AcceptReport r;
  r.nodes.push_back(AcceptEntity{"h:0", {AcceptCheck{"topo.lint", "0 errors", std::nullopt, "0", "lint", Verdict::Pass, ""},
                                         AcceptCheck{"node.all_reduce", "5.000 GB/s", 5.0, ">= 4", "peers", Verdict::Pass, "e"}}});
  r.nodes.push_back(AcceptEntity{"odd \"<node>\"", {AcceptCheck{"node.all_reduce", "1.250 GB/s", 1.25, ">= 4", "peers",
                                                                 Verdict::Fail, "slow <3 & \"quoted\""}}});
  r.nodes.push_back(AcceptEntity{"h:2", {AcceptCheck{"rdma.loopback", "skipped", std::nullopt, "-", "none", Verdict::Skipped, "no NIC"}}});
  r.cluster.push_back(AcceptEntity{"rail0", {AcceptCheck{"rail.all_reduce", "3 GB/s", 3.0, "-", "none", Verdict::Reported, ""}}});
  r.cluster.push_back(AcceptEntity{"all", {AcceptCheck{"all.all_reduce@16 KiB", "2 GB/s", 2.0, ">= 1", "profile", Verdict::Explained, "x"}}});
  r.stages = ojson::array({{{"stage", "node"}, {"status", "ran"}, {"launches", 1}, {"seconds", 1.5}},
                           {{"stage", "rdma"}, {"status", "skipped"}, {"reason", "no rdma"}}});
  r.commands.push_back(CommandRecord{"node", {"mpirun", "-np", "4", "railkit-bench"}, "exit code 0", 1.25});
  r.commands.push_back(CommandRecord{"pair", {}, "timed out (limit 10 s)", 10});
  r.pairs = ojson::array({{{"a", "h:0"}, {"b", "h:1"}, {"round", 1}, {"busbw_GBps", 4.5}}});
  r.isolation = {{"suspects", {"h:1"}}, {"method", "bisection"}};
  r.rules = {{"peer_fraction", 0.25}, {"statistic", "median"}, {"profile", nullptr}};
  r.notes = {"scale: 3 nodes", "stage rdma: no NIC"};
  r.rdma_pairs = ojson::array({{{"pair", "h:0-h:1"}, {"rail", 0}, {"Gbps", 97.5}}});
  r.rdma_isolation = {{"verdict", "none"}};
  return r;
}

/// accept.json as a file gives it: dumped and parsed again.
json written(const AcceptReport& r) { return railkit::parse_json(railkit::json_dump(to_json(r), 2)); }

std::string refusal(const json& j) {
  try {
    (void)accept_from_json(j, "a/accept.json");
  } catch (const UsageError& e) {
    return e.what();
  }
  return "(accepted)";
}

}  // namespace

TEST(AcceptJson, RoundTrip) {
  for (const AcceptReport& r : {full_report(), AcceptReport{}}) {
    const json doc = written(r);
    const AcceptDocument d = accept_from_json(doc, "accept.json");
    EXPECT_EQ(d.created, doc["created"].get<std::string>());
    EXPECT_EQ(d.railkit_version, doc["railkit_version"].get<std::string>());
    json again = written(d.report);
    again["created"] = doc["created"];  // to_json writes the time it is called
    EXPECT_EQ(again, doc) << again.dump(2) << "\n---\n" << doc.dump(2);
    EXPECT_EQ(d.report.verdict(), r.verdict());
    EXPECT_EQ(d.report.counts(), r.counts());
  }
}

TEST(AcceptJson, MalformedNamesTheField) {
  const json good = written(full_report());
  json j = good;
  j.erase("commands");
  EXPECT_EQ(refusal(j), "a/accept.json: commands is missing");
  j = good;
  j["schema"] = "railkit.results/1";
  EXPECT_EQ(refusal(j), "a/accept.json: schema 'railkit.results/1' is not railkit.accept/1");
  j = good;
  j["nodes"][1]["checks"][0]["verdict"] = "great";
  EXPECT_EQ(refusal(j), "a/accept.json: nodes[1].checks[0]: verdict 'great' is not pass, fail, skipped, explained or reported");
  j = good;
  j["nodes"][0]["checks"][1]["busbw_GBps"] = "fast";
  EXPECT_EQ(refusal(j), "a/accept.json: nodes[0].checks[1]: busbw_GBps must be a number, not string");
  j = good;
  j["cluster"][0].erase("checks");
  EXPECT_EQ(refusal(j), "a/accept.json: cluster[0]: checks is missing");
  j = good;
  j["rules"] = json::array();
  EXPECT_EQ(refusal(j), "a/accept.json: rules must be an object, not array");
  j = good;
  j["commands"][0]["argv"] = "mpirun";
  EXPECT_NE(refusal(j).find("a/accept.json: commands[0]: argv"), std::string::npos) << refusal(j);
  EXPECT_EQ(refusal(json::array()), "a/accept.json must be an object, not array");
}
