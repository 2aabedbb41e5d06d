// The tuning journal (tuner/journal): append, read back, torn and broken lines; every typed
// record written and read back unchanged, and what a line that lacks something gives.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "core/results.hpp"
#include "core/tunables.hpp"
#include "test_util.hpp"
#include "tuner_test_util.hpp"
#include "tuner/journal.hpp"

namespace railkit::tuner {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;
using ScratchDir = railkit::test::TempDir;
using railkit::test::usage_error_of;

// ---------------------------------------------------------------- journal

nlohmann::ordered_json session_line() {
  nlohmann::ordered_json j;
  j["type"] = "session";
  j["schema"] = kJournalSchema;
  j["space"] = "ompi-coll";
  return j;
}

nlohmann::ordered_json trial_line(int i) {
  nlohmann::ordered_json j;
  j["type"] = "trial";
  j["trial"] = i;
  j["objective_GBps"] = 1.5 * i;
  return j;
}

TEST(Journal, AppendReadRoundTrip) {
  ScratchDir d;
  const fs::path p = d.path / "journal.jsonl";
  append_journal(p, session_line());
  append_journal(p, trial_line(1));
  append_journal(p, trial_line(2));
  const auto lines = read_journal(p);
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[0], json(session_line()));
  EXPECT_EQ(lines[1], json(trial_line(1)));
  EXPECT_EQ(lines[2]["trial"], 2);
  // One compact line each, keys in the order given.
  const std::string text = read_file(p);
  EXPECT_EQ(text.rfind(session_line().dump() + "\n", 0), 0u);
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 3);
}

TEST(Journal, TornLastLineDroppedAndTruncated) {
  const std::string tails[] = {
      R"({"type": "trial", "tri)",          // half JSON, no newline
      "{\"type\": \"trial\", \"tri\n",      // half JSON with a newline
      R"({"type": "trial", "trial": 9})",   // complete JSON but no newline
  };
  for (const auto& tail : tails) {
    ScratchDir d;
    const fs::path p = d.path / "journal.jsonl";
    append_journal(p, session_line());
    append_journal(p, trial_line(1));
    const auto good_size = fs::file_size(p);
    std::ofstream(p, std::ios::app | std::ios::binary) << tail;
    const auto lines = read_journal(p);
    ASSERT_EQ(lines.size(), 2u) << tail;
    EXPECT_EQ(fs::file_size(p), good_size) << tail;
    append_journal(p, trial_line(2));
    const auto again = read_journal(p);
    ASSERT_EQ(again.size(), 3u) << tail;
    EXPECT_EQ(again[2]["trial"], 2);
  }
}

TEST(Journal, BrokenMiddleLineNamesFileAndLine) {
  ScratchDir d;
  const fs::path p = d.path / "journal.jsonl";
  append_journal(p, session_line());
  std::ofstream(p, std::ios::app | std::ios::binary) << "{\"type\": \"tri\n";
  append_journal(p, trial_line(2));
  const auto size = fs::file_size(p);
  const std::string m = usage_error_of([&] { read_journal(p); });
  EXPECT_NE(m.find(p.string() + ":2:"), std::string::npos) << m;
  EXPECT_EQ(fs::file_size(p), size);  // not truncated

  // A complete last line that is JSON but not an object is broken too, not torn.
  ScratchDir d2;
  const fs::path p2 = d2.path / "journal.jsonl";
  append_journal(p2, session_line());
  std::ofstream(p2, std::ios::app | std::ios::binary) << "[1, 2]\n";
  const std::string m2 = usage_error_of([&] { read_journal(p2); });
  EXPECT_NE(m2.find(p2.string() + ":2:"), std::string::npos) << m2;
}

TEST(Journal, FirstLineMustBeSession) {
  ScratchDir d;
  const std::string cases[] = {
      trial_line(1).dump() + "\n" + trial_line(2).dump() + "\n",
      R"({"type": "session", "schema": "railkit.tune-journal/2"})" "\n",
      R"({"type": "session"})" "\n",
      "",
      R"({"type": "sess)",  // only a torn session line
  };
  int i = 0;
  for (const auto& text : cases) {
    const auto p = d.write("j" + std::to_string(i++) + ".jsonl", text);
    const std::string m = usage_error_of([&] { read_journal(p); });
    EXPECT_NE(m.find(p.string()), std::string::npos) << m;
    EXPECT_NE(m.find("railkit.tune-journal/1"), std::string::npos) << m;
  }
  EXPECT_THROW(read_journal(d.path / "missing.jsonl"), Error);
}

// ---------------------------------------------------------------- typed records

using test::make_knob;
using ojson = nlohmann::ordered_json;

Space two_knob_space() {
  Space s;
  s.name = "two";
  s.source = "built-in";
  s.knobs.push_back(make_knob("NCCL_ALGO", {"", "Ring", "Tree"}, 0, false));
  s.knobs.push_back(make_knob("NCCL_NTHREADS", {"", "128", "256"}, 0, true));
  s.fixed_env = {{"NCCL_IB_TC", "106"}};
  return s;
}

/// The line as read_journal returns it (parsed from its text).
json reread(const ojson& line) { return json::parse(line.dump()); }

TEST(JournalRecords, SessionRoundTrip) {
  SessionRecord r;
  TuneOptions& o = r.options;
  o.space = two_knob_space();
  o.strategy = "random";
  o.budget = 7;
  o.seed = 42;
  o.launcher.kind = launch::LauncherKind::Srun;
  o.launcher.np = 16;
  o.launcher.ppn = 8;
  o.launcher.hostfile = "hosts";
  o.launcher.args = {"--mpi=pmix"};
  o.bench = "/opt/railkit/bin/railkit-bench";
  o.bench_args = {"--backend", "nccl", "-b", "1M"};
  o.iters = 9;
  o.timeout_s = 30;
  o.kill_grace_s = 2;
  o.weights_path = "w.json";
  r.weights = {{{"all_reduce", 4096}, 0.25}, {{"all_reduce", 16384}, 0.75}};
  o.pairs = 3;
  o.validate_iters = 40;
  o.max_regression = 0.05;
  o.validate = false;
  o.baseline_env = {{"NCCL_ALGO", "Ring"}};
  o.dcqcn = DcqcnOnNodes{"/opt/railkit/bin/railkit", "/fixture", {"eth0"}, 5};
  o.topo = TopoSource{"/captures/node1", "/opt/railkit/bin/railkit"};
  o.emit_ompi_rules = "rules.conf";
  o.profile_name = "p";
  r.created = "2025-01-02T03:04:05Z";
  r.railkit_version = "9.9";
  const ojson line = to_json(r);
  EXPECT_EQ(line["type"], "session");
  EXPECT_EQ(line["schema"], kJournalSchema);
  const SessionRecord back = session_from_json(reread(line), "/tmp/session-dir");
  EXPECT_EQ(back.options.out_dir, fs::path("/tmp/session-dir"));
  EXPECT_EQ(space_to_json(back.options.space), space_to_json(o.space));
  EXPECT_EQ(back.weights, r.weights);
  EXPECT_EQ(back.created, r.created);
  EXPECT_EQ(back.railkit_version, r.railkit_version);
  const TuneOptions& b = back.options;
  EXPECT_EQ(b.strategy, o.strategy);
  EXPECT_EQ(b.budget, o.budget);
  EXPECT_EQ(b.seed, o.seed);
  EXPECT_EQ(b.launcher.kind, o.launcher.kind);
  EXPECT_EQ(b.launcher.np, 16);
  EXPECT_EQ(b.launcher.ppn, 8);
  EXPECT_EQ(b.launcher.hostfile, "hosts");
  EXPECT_EQ(b.launcher.args, o.launcher.args);
  EXPECT_EQ(b.bench, o.bench);
  EXPECT_EQ(b.bench_args, o.bench_args);
  EXPECT_EQ(b.iters, 9);
  EXPECT_EQ(b.timeout_s, 30);
  EXPECT_EQ(b.kill_grace_s, 2);
  EXPECT_EQ(b.weights_path, o.weights_path);
  EXPECT_EQ(b.pairs, 3);
  EXPECT_EQ(b.validate_iters, 40);
  EXPECT_EQ(b.max_regression, 0.05);
  EXPECT_FALSE(b.validate);
  EXPECT_EQ(b.baseline_env, o.baseline_env);
  ASSERT_TRUE(b.dcqcn);
  EXPECT_EQ(b.dcqcn->railkit, o.dcqcn->railkit);
  EXPECT_EQ(b.dcqcn->root, "/fixture");
  EXPECT_EQ(b.dcqcn->netdevs, o.dcqcn->netdevs);
  EXPECT_EQ(b.dcqcn->priority, 5);
  EXPECT_EQ(b.topo.root, "/captures/node1");
  EXPECT_EQ(b.topo.railkit, "/opt/railkit/bin/railkit");
  EXPECT_EQ(b.emit_ompi_rules, o.emit_ompi_rules);
  EXPECT_EQ(b.profile_name, "p");
}

TEST(JournalRecords, SessionDefaultsAndOlderLines) {
  SessionRecord r;
  r.options.space = two_knob_space();
  r.options.topo.railkit = "/bin/railkit";
  json line = reread(to_json(r));
  EXPECT_TRUE(line["weights"].is_null());
  EXPECT_TRUE(line["dcqcn"].is_null());
  EXPECT_TRUE(line["topo"]["root"].is_null());  // probe the measured nodes
  SessionRecord back = session_from_json(line, "/d");
  EXPECT_FALSE(back.options.weights_path);
  EXPECT_FALSE(back.options.dcqcn);
  EXPECT_EQ(back.options.topo.root, "");
  EXPECT_EQ(back.options.topo.railkit, "/bin/railkit");
  // A session line from before the fingerprint source was journaled: the measured nodes.
  line.erase("topo");
  back = session_from_json(line, "/d");
  EXPECT_EQ(back.options.topo.root, "");
  EXPECT_EQ(back.options.topo.railkit, "");
  // A missing field names the journal.
  line.erase("seed");
  const std::string m = usage_error_of([&] { session_from_json(line, "/d"); });
  EXPECT_NE(m.find("/d/journal.jsonl"), std::string::npos) << m;
  EXPECT_NE(m.find("seed"), std::string::npos) << m;
}

TrialRecord sample_trial(const Space& s) {
  TrialRecord t;
  t.id = 3;
  t.proposal = {{2, 2}, 3};
  t.label = config_label(s, t.proposal.config);
  t.iters = 60;
  t.settings = settings_of(s, t.proposal.config);
  t.status = TrialStatus::Ok;
  t.results = "trials/t0003.json";
  t.objective = 12.5;
  t.buckets = {{{"all_reduce", 4096}, 10.0}, {{"all_reduce", 16384}, 15.0}};
  t.elapsed_s = 4.25;
  t.started = "2025-01-02T03:04:05Z";
  return t;
}

void expect_same(const TrialRecord& a, const TrialRecord& b) {
  EXPECT_EQ(a.id, b.id);
  EXPECT_EQ(a.proposal, b.proposal);
  EXPECT_EQ(a.label, b.label);
  EXPECT_EQ(a.iters, b.iters);
  EXPECT_EQ(a.settings, b.settings);
  EXPECT_EQ(a.status, b.status);
  EXPECT_EQ(a.results, b.results);
  EXPECT_EQ(a.objective, b.objective);
  EXPECT_EQ(a.buckets, b.buckets);
  EXPECT_EQ(a.elapsed_s, b.elapsed_s);
  EXPECT_EQ(a.started, b.started);
  EXPECT_EQ(a.error, b.error);
  EXPECT_EQ(a.infeasible, b.infeasible);
}

TEST(JournalRecords, SimulatedSessionRoundTrip) {
  SessionRecord r;
  r.options.space = two_knob_space();
  r.options.bench = "/bin/railkit-bench";
  r.options.bench_args = {"--backend", "sim", "--sim-cluster", "/c/x.yaml"};
  r.options.launcher.kind = launch::LauncherKind::Local;
  EXPECT_TRUE(to_json(r)["sim"].is_null());  // a real backend's session
  EXPECT_FALSE(session_from_json(reread(to_json(r)), "/d").options.sim);
  r.options.sim = launch::SimEvidence{"/c/x.yaml", "fnv1a64:00000000000000ff", "flow", 9, 5, {"seed=9"}};
  const ojson line = to_json(r);
  EXPECT_EQ(line["sim"]["simulated"], true);
  EXPECT_EQ(line["sim"]["cluster_hash"], "fnv1a64:00000000000000ff");
  const SessionRecord back = session_from_json(reread(line), "/d");
  ASSERT_TRUE(back.options.sim);
  EXPECT_EQ(*back.options.sim, *r.options.sim);
  EXPECT_EQ(back.options.launcher.kind, launch::LauncherKind::Local);
  json older = reread(line);  // a session line from before simulated sessions: no sim key
  older.erase("sim");
  EXPECT_FALSE(session_from_json(older, "/d").options.sim);
}

TEST(JournalRecords, SwitchSettingsAndInfeasibleTrialsRoundTrip) {
  Space s;
  s.name = "ecn";
  s.knobs.push_back(make_knob("switch.ecn.kmin_bytes", {"5000", "400000"}, 0, true));
  s.knobs.push_back(make_knob("switch.ecn.kmax_bytes", {"200000", "1600000"}, 0, true));
  s.knobs.push_back(make_knob("switch.ecn.pmax", {"0.01", "0.2"}, 0, true));
  TrialRecord t;
  t.id = 2;
  t.proposal = {{1, 0, 1}, 1};
  t.label = config_label(s, t.proposal.config);
  t.settings = settings_of(s, t.proposal.config);
  t.status = TrialStatus::Failed;
  t.infeasible = true;
  t.error = "infeasible: " + infeasible_reason(t.settings) + "; not run";
  const ojson line = to_json(s, t);
  EXPECT_EQ(line["switch"], (ojson{{"switch.ecn.kmax_bytes", "200000"}, {"switch.ecn.kmin_bytes", "400000"},
                                   {"switch.ecn.pmax", "0.2"}}));
  EXPECT_EQ(line["infeasible"], true);
  EXPECT_EQ(line["status"], "failed");
  EXPECT_TRUE(line["objective"].is_null());
  expect_same(trial_from_json(s, reread(line), "j"), t);
  // A trial of a real backend keeps its old shape: no switch, no infeasible key.
  const Space two = two_knob_space();
  const ojson plain = to_json(two, sample_trial(two));
  EXPECT_FALSE(plain.contains("switch"));
  EXPECT_FALSE(plain.contains("infeasible"));
}

TEST(JournalRecords, TrialRoundTripAndFormat) {
  const Space s = two_knob_space();
  const TrialRecord t = sample_trial(s);
  const ojson line = to_json(s, t);
  // The documented keys, in the documented order (tuner/README.md); no error when ok.
  std::vector<std::string> keys;
  for (const auto& [k, v] : line.items()) keys.push_back(k);
  EXPECT_EQ(keys, (std::vector<std::string>{"type", "trial", "config", "label", "fidelity", "iters", "env", "dcqcn",
                                            "status", "results", "objective", "buckets", "elapsed_s", "started"}));
  EXPECT_EQ(line["status"], "ok");
  EXPECT_EQ(line["config"], (ojson{{"NCCL_ALGO", "Tree"}, {"NCCL_NTHREADS", "256"}}));
  expect_same(trial_from_json(s, reread(line), "j"), t);

  TrialRecord f = t;  // a failed trial: no objective, its error kept
  f.status = TrialStatus::Timeout;
  f.objective.reset();
  f.error = "timed out (limit 8 s)";
  const ojson fl = to_json(s, f);
  EXPECT_TRUE(fl["objective"].is_null());
  EXPECT_EQ(fl["status"], "timeout");
  EXPECT_EQ(fl["error"], f.error);
  expect_same(trial_from_json(s, reread(fl), "j"), f);
}

TEST(JournalRecords, TrialErrorsNameTheLine) {
  const Space s = two_knob_space();
  json line = reread(to_json(s, sample_trial(s)));
  json bad = line;
  bad["status"] = "interrupted";  // interrupted launches are never journaled
  EXPECT_NE(usage_error_of([&] { trial_from_json(s, bad, "J.jsonl"); }).find("J.jsonl: unknown status"), std::string::npos);
  bad = line;
  bad["status"] = "great";
  EXPECT_NE(usage_error_of([&] { trial_from_json(s, bad, "J.jsonl"); }).find("great"), std::string::npos);
  bad = line;
  bad["config"] = {{"NCCL_ALGO", "Nope"}};
  EXPECT_NE(usage_error_of([&] { trial_from_json(s, bad, "J.jsonl"); }).find("J.jsonl: trial 3"), std::string::npos);
  bad = line;
  bad.erase("buckets");
  const std::string m = usage_error_of([&] { trial_from_json(s, bad, "J.jsonl"); });
  EXPECT_NE(m.find("J.jsonl: trial 3"), std::string::npos) << m;
  EXPECT_NE(m.find("buckets"), std::string::npos) << m;
}

TEST(JournalRecords, ValidationRoundTrip) {
  const Space s = two_knob_space();
  ValidationRecord base;
  base.round = 2;
  base.role = "baseline";
  base.settings.env = {{"NCCL_ALGO", "Ring"}};
  base.iters = 40;
  base.status = TrialStatus::Ok;
  base.results = "validation/r02-baseline.json";
  base.backend = "mpi";
  base.buckets = {{{"all_reduce", 4096}, 10.0}};
  base.sizes = {{{"all_reduce", 4096}, 9.5}, {{"all_reduce", 8192}, 10.5}};
  base.elapsed_s = 1.5;
  ValidationRecord cand = base;
  cand.role = "candidate-1";
  cand.config = Config{2, 1};
  cand.settings = settings_of(s, *cand.config);
  cand.status = TrialStatus::Failed;
  cand.error = "3 wrong values in the data check";
  for (const ValidationRecord& r : {base, cand}) {
    const ojson line = to_json(s, r);
    EXPECT_EQ(line["type"], "validation");
    EXPECT_EQ(line["config"].is_null(), !r.config);
    const ValidationRecord b = validation_from_json(s, reread(line), "j");
    EXPECT_EQ(b.round, r.round);
    EXPECT_EQ(b.role, r.role);
    EXPECT_EQ(b.config, r.config);
    EXPECT_EQ(b.settings, r.settings);
    EXPECT_EQ(b.iters, r.iters);
    EXPECT_EQ(b.status, r.status);
    EXPECT_EQ(b.results, r.results);
    EXPECT_EQ(b.backend, r.backend);
    EXPECT_EQ(b.buckets, r.buckets);
    EXPECT_EQ(b.sizes, r.sizes);
    EXPECT_EQ(b.elapsed_s, r.elapsed_s);
    EXPECT_EQ(b.error, r.error);
    EXPECT_EQ(b.sim_seed, r.sim_seed);
  }
  ValidationRecord sim = base;  // a simulated round keeps the seed it simulated with
  sim.backend = "sim";
  sim.sim_seed = 2007;
  const ojson line = to_json(s, sim);
  EXPECT_EQ(line["sim_seed"], 2007);
  EXPECT_EQ(validation_from_json(s, reread(line), "j").sim_seed, 2007u);
  EXPECT_FALSE(to_json(s, base).contains("sim_seed"));
}

TEST(JournalRecords, TopologyAndDoneRoundTrip) {
  FingerprintFacts f;
  f.source = "nodes";
  f.probed = "2025-01-02T03:04:05Z";
  f.nodes.push_back({"n1", "aaaa", {"ConnectX-7"}, "topology/n1.json", ""});
  f.nodes.push_back({"n2", "", {}, "", "railkit topo: exit code 6: no such root"});
  const ojson line = to_json(f);
  EXPECT_EQ(line["type"], "topology");
  EXPECT_TRUE(line["root"].is_null());
  EXPECT_TRUE(line["nodes"][1]["fingerprint"].is_null());
  EXPECT_EQ(topology_from_json(reread(line), "j"), f);

  FingerprintFacts t;
  t.source = "topo-root";
  t.root = "/captures/dgx";
  t.nodes.push_back({"dgx-01", "bbbb", {"ConnectX-7"}, "", ""});
  EXPECT_EQ(topology_from_json(reread(to_json(t)), "j"), t);
  json bad = reread(to_json(t));
  bad["source"] = "guess";
  EXPECT_NE(usage_error_of([&] { topology_from_json(bad, "J.jsonl"); }).find("guess"), std::string::npos);

  const DoneRecord d{"profile.json", true, "2025-01-02T03:04:05Z"};
  const ojson dl = to_json(d);
  EXPECT_EQ(dl.dump(), R"({"type":"done","profile":"profile.json","validated":true,"finished":"2025-01-02T03:04:05Z"})");
  const DoneRecord db = done_from_json(reread(dl), "j");
  EXPECT_EQ(db.profile, d.profile);
  EXPECT_TRUE(db.validated);
  EXPECT_EQ(db.finished, d.finished);
}

TEST(JournalRecords, ParseJournalTypesEveryLine) {
  ScratchDir d;
  const fs::path p = d.path / "journal.jsonl";
  SessionRecord sr;
  sr.options.space = two_knob_space();
  append_journal(p, to_json(sr));
  const TrialRecord t = sample_trial(sr.options.space);
  append_journal(p, to_json(sr.options.space, t));
  ValidationRecord v;
  v.round = 1;
  v.role = "baseline";
  v.status = TrialStatus::Ok;
  append_journal(p, to_json(sr.options.space, v));
  append_journal(p, ojson{{"type", "note"}, {"text", "a line of a later version"}});
  FingerprintFacts first, second;
  first.source = second.source = "nodes";
  first.nodes.push_back({"n1", "", {}, "", "unreachable"});
  second.nodes.push_back({"n1", "cccc", {}, "topology/n1.json", ""});
  append_journal(p, to_json(first));
  append_journal(p, to_json(second));
  append_journal(p, to_json(DoneRecord{"profile.json", false, "x"}));
  const JournalRecords j = parse_journal(read_journal(p), d.path);
  EXPECT_EQ(j.session.options.out_dir, d.path);
  ASSERT_EQ(j.trials.size(), 1u);
  expect_same(j.trials[0], t);
  ASSERT_EQ(j.validations.size(), 1u);
  EXPECT_EQ(j.validations[0].role, "baseline");
  ASSERT_TRUE(j.topology);
  EXPECT_EQ(*j.topology, second);  // the last one counts
  ASSERT_TRUE(j.done);
  EXPECT_FALSE(j.done->validated);

  // A trial line the space does not know names the journal.
  append_journal(p, ojson{{"type", "trial"}, {"trial", 2}, {"config", {{"NCCL_PROTO", "LL"}}}, {"fidelity", 1}});
  const std::string m = usage_error_of([&] { parse_journal(read_journal(p), d.path); });
  EXPECT_NE(m.find(p.string()), std::string::npos) << m;
}

TEST(JournalRecords, WrongTypesAreUsageErrorsNamingFileAndLine) {
  // An objective that is a string (or any other wrong type) is a bad journal, exit 6, not an
  // internal error: the message names journal.jsonl and the line.
  for (const json& objective : {json("12.5"), json::array({1}), json::object({{"GBps", 1}}), json(true)}) {
    ScratchDir d;
    const fs::path p = d.path / "journal.jsonl";
    SessionRecord sr;
    sr.options.space = two_knob_space();
    append_journal(p, to_json(sr));
    const TrialRecord t = sample_trial(sr.options.space);
    append_journal(p, to_json(sr.options.space, t));
    json bad = reread(to_json(sr.options.space, t));
    bad["trial"] = 4;
    bad["objective"] = objective;
    append_journal(p, ojson::parse(bad.dump()));
    try {
      parse_journal(read_journal(p), d.path);
      ADD_FAILURE() << objective.dump() << " was read";
    } catch (const UsageError& e) {
      const std::string m = e.what();
      EXPECT_NE(m.find(p.string() + ":3"), std::string::npos) << m;
      EXPECT_NE(m.find("objective"), std::string::npos) << m;
    } catch (const std::exception& e) {
      ADD_FAILURE() << objective.dump() << ": not a UsageError: " << e.what();
    }
  }
}

TEST(JournalRecords, MistypedFieldsNameTheKey) {
  // Issue 14: a field of the wrong type is a UsageError naming journal.jsonl, the line and the key,
  // not "[json.exception.type_error.302] ..." (internal error, exit 1).
  struct Case {
    const char* key;
    json value;
  };
  for (const Case& c : {Case{"fidelity", json("2")}, Case{"iters", json("3")}, Case{"elapsed_s", json("1s")},
                        Case{"label", json(7)}, Case{"env", json({{"NCCL_PROTO", 1}})}, Case{"trial", json(-1.5)}}) {
    ScratchDir d;
    const fs::path p = d.path / "journal.jsonl";
    SessionRecord sr;
    sr.options.space = two_knob_space();
    append_journal(p, to_json(sr));
    json bad = reread(to_json(sr.options.space, sample_trial(sr.options.space)));
    bad[c.key] = c.value;
    append_journal(p, ojson::parse(bad.dump()));
    const std::string m = usage_error_of([&] { parse_journal(read_journal(p), d.path); });
    EXPECT_NE(m.find(p.string() + ":2"), std::string::npos) << c.key << ": " << m;
    EXPECT_NE(m.find(c.key), std::string::npos) << c.key << ": " << m;
  }
}

TEST(JournalRecords, SessionLineWithANumberSchemaIsAUsageError) {
  ScratchDir d;
  const fs::path p = d.path / "journal.jsonl";
  SessionRecord sr;
  sr.options.space = two_knob_space();
  json line = reread(to_json(sr));
  line["schema"] = 5;
  append_journal(p, ojson::parse(line.dump()));
  const std::string m = usage_error_of([&] { read_journal(p); });
  EXPECT_NE(m.find(p.string()), std::string::npos) << m;
  EXPECT_NE(m.find("schema must be a string, not number"), std::string::npos) << m;

  // A session option of the wrong type names the key too.
  for (const char* key : {"budget", "seed", "timeout_s", "bench_args", "profile_name"}) {
    json s = reread(to_json(sr));
    s[key] = json::object({{"x", 1}});
    const std::string k = usage_error_of([&] { session_from_json(s, d.path); });
    EXPECT_NE(k.find(std::string(key) + " must be"), std::string::npos) << key << ": " << k;
  }
  json launcher = reread(to_json(sr));
  launcher["launcher"]["np"] = "4";
  EXPECT_NE(usage_error_of([&] { session_from_json(launcher, d.path); }).find("launcher: np must be an integer, not string"),
            std::string::npos);
}

}  // namespace
}  // namespace railkit::tuner
