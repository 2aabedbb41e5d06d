#include "core/profile.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <set>
#include <sstream>
#include <string>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "test_util.hpp"

namespace fs = std::filesystem;
using nlohmann::json;
using railkit::ProfileDocument;
using railkit::UsageError;

namespace {

const fs::path kFixtures = fs::path(__FILE__).parent_path().parent_path() / "fixtures" / "profiles";

/// A full document; every number is a placeholder.
ProfileDocument sample() {
  ProfileDocument p;
  p.name = "unit";
  p.created = "2000-01-01T00:00:00Z";
  p.cluster.fingerprint = "fp";
  p.cluster.nodes = 2;
  p.cluster.ranks = 16;
  p.cluster.ranks_per_node = 8;
  p.cluster.backend = "nccl";
  p.cluster.backend_version = "example";
  p.cluster.hosts = {"node-a", "node-b"};
  p.cluster.gpu_models = {"gpu-x"};
  p.cluster.nic_models = {"nic-y"};
  p.cluster.extra = {{"cuda_runtime", "example"}, {"n", 3}};
  p.env = {{"NCCL_IB_TC", "106"}, {"NCCL_IB_QPS_PER_CONNECTION", "4"}};
  p.dcqcn = {{"3", {{"roce_rp.rpg_time_reset", "100"}, {"roce_np.cnp_dscp", "48"}}}};
  railkit::ProfileDecision d;
  d.coll = "all_reduce";
  d.min_bytes = 0;
  d.max_bytes = 1023;
  d.config = "baseline";
  p.decisions.push_back(d);
  d.min_bytes = 1024;
  d.max_bytes = std::numeric_limits<std::uint64_t>::max();
  d.env = {{"NCCL_ALGO", "Ring"}, {"NCCL_PROTO", "^LL128"}};
  d.config = "algo=Ring";
  d.busbw_GBps = 2.5;
  d.baseline_busbw_GBps = 2.0;
  d.ratio = 1.25;
  d.ratio_lo = 1.125;
  d.ratio_hi = 1.375;
  d.significant = true;
  p.decisions.push_back(d);
  d.coll = "all_gather";
  d.min_bytes = 0;
  p.decisions.push_back(d);
  p.expectations.push_back({"all_reduce", 1 << 20, 2.5, 0.05});
  p.evidence.validated = true;
  p.evidence.validated_at = "2000-01-01T01:00:00Z";
  p.evidence.railkit_version = "0.0.0";
  p.evidence.strategy = "grid";
  p.evidence.space = "nccl-proto";
  p.evidence.trials = 12;
  p.evidence.pairs = 2;
  p.evidence.max_regression = 0.02;
  p.evidence.baseline_env = {{"NCCL_IB_TC", "106"}};
  p.evidence.rows.push_back({"all_reduce", 1024, {2.0, 2.0}, {2.5, 2.5}, 1.25, 1.125, 1.375});
  p.evidence.tune_dir = "tune/unit";
  p.evidence.extra = {{"note", "x"}};
  return p;
}

json sample_json() { return json::parse(railkit::to_json(sample()).dump()); }

std::string error_of(const json& j) {
  try {
    railkit::profile_from_json(j, "p.json");
  } catch (const UsageError& e) {
    return e.what();
  }
  return "(no error)";
}

/// The message when `change` is applied to the sample document.
std::string error_after(const std::function<void(json&)>& change) {
  json j = sample_json();
  change(j);
  return error_of(j);
}

using railkit::test::TempDir;

void expect_same(const ProfileDocument& a, const ProfileDocument& b) {
  EXPECT_EQ(railkit::to_json(a).dump(), railkit::to_json(b).dump());
}

}  // namespace

TEST(Profile, RoundTripsAFullDocument) {
  const ProfileDocument p = sample();
  const ProfileDocument back = railkit::profile_from_json(sample_json(), "p.json");
  expect_same(p, back);
  EXPECT_EQ(back.cluster.hosts, p.cluster.hosts);
  EXPECT_EQ(back.cluster.extra, p.cluster.extra);
  EXPECT_EQ(back.env, p.env);
  EXPECT_EQ(back.dcqcn, p.dcqcn);
  ASSERT_EQ(back.decisions.size(), 3u);
  EXPECT_EQ(back.decisions[1].max_bytes, std::numeric_limits<std::uint64_t>::max());
  EXPECT_EQ(back.decisions[1].env, p.decisions[1].env);
  EXPECT_DOUBLE_EQ(back.decisions[1].ratio_lo, 1.125);
  EXPECT_TRUE(back.decisions[1].significant);
  ASSERT_EQ(back.expectations.size(), 1u);
  EXPECT_DOUBLE_EQ(back.expectations[0].tolerance, 0.05);
  ASSERT_EQ(back.evidence.rows.size(), 1u);
  EXPECT_EQ(back.evidence.rows[0].tuned_busbw_GBps, (std::vector<double>{2.5, 2.5}));
  EXPECT_TRUE(back.evidence.validated);
  EXPECT_EQ(back.evidence.baseline_env, p.evidence.baseline_env);
  EXPECT_TRUE(back.warnings.empty());
}

TEST(Profile, WritesAndLoadsAFile) {
  TempDir dir;
  const fs::path file = dir.path / "p.json";
  railkit::write_profile(file, sample());
  expect_same(railkit::load_profile(file), sample());
  std::ifstream in(file);
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_EQ(text.str().back(), '\n');
  EXPECT_EQ(text.str().rfind("{\n  \"schema\": \"railkit.profile/1\",\n  \"name\"", 0), 0u);
}

TEST(Profile, WritesKeysInDocumentOrder) {
  const auto j = railkit::to_json(sample());
  auto keys = [](const nlohmann::ordered_json& o) {
    std::vector<std::string> k;
    for (const auto& [name, _] : o.items()) k.push_back(name);
    return k;
  };
  EXPECT_EQ(keys(j), (std::vector<std::string>{"schema", "name", "created", "cluster", "settings", "decisions",
                                               "expectations", "evidence"}));
  EXPECT_EQ(keys(j["cluster"]),
            (std::vector<std::string>{"fingerprint", "nodes", "ranks", "ranks_per_node", "backend", "backend_version",
                                      "hosts", "gpu_models", "nic_models", "extra"}));
  EXPECT_EQ(keys(j["settings"]), (std::vector<std::string>{"env", "dcqcn"}));
  EXPECT_EQ(keys(j["decisions"][0]),
            (std::vector<std::string>{"coll", "min_bytes", "max_bytes", "env", "config", "busbw_GBps",
                                      "baseline_busbw_GBps", "ratio", "ratio_lo", "ratio_hi", "significant"}));
  EXPECT_EQ(keys(j["expectations"][0]), (std::vector<std::string>{"coll", "bytes", "busbw_GBps", "tolerance"}));
  EXPECT_EQ(keys(j["evidence"]),
            (std::vector<std::string>{"validated", "validated_at", "railkit_version", "strategy", "space", "trials",
                                      "pairs", "max_regression", "baseline_env", "rows", "tune_dir", "extra"}));
  EXPECT_EQ(keys(j["evidence"]["rows"][0]),
            (std::vector<std::string>{"coll", "bytes", "baseline_busbw_GBps", "tuned_busbw_GBps", "ratio", "ratio_lo",
                                      "ratio_hi"}));
  EXPECT_FALSE(j.contains("warnings"));
}

TEST(Profile, FingerprintFactsAreOptionalAndRoundTrip) {
  // Without facts (a profile that stores only the hash) the key is not written, and loads.
  EXPECT_FALSE(railkit::to_json(sample())["cluster"].contains("fingerprint_facts"));
  EXPECT_TRUE(railkit::profile_from_json(sample_json(), "p.json").cluster.fingerprint_facts.empty());
  ProfileDocument p = sample();
  p.cluster.fingerprint_facts = {{"gpu.count", "8"}, {"nic.models", "8x ConnectX-7@400Gbps"}, {"GPU0.link", "x16@32GT/s"}};
  const auto j = railkit::to_json(p);
  std::vector<std::string> keys;
  for (const auto& [name, _] : j["cluster"].items()) keys.push_back(name);
  EXPECT_EQ(keys, (std::vector<std::string>{"fingerprint", "fingerprint_facts", "nodes", "ranks", "ranks_per_node",
                                            "backend", "backend_version", "hosts", "gpu_models", "nic_models", "extra"}));
  EXPECT_EQ(j["cluster"]["fingerprint_facts"]["nic.models"], "8x ConnectX-7@400Gbps");
  const ProfileDocument back = railkit::profile_from_json(json::parse(j.dump()), "p.json");
  EXPECT_EQ(back.cluster.fingerprint_facts, p.cluster.fingerprint_facts);
  expect_same(back, p);
  TempDir dir;
  railkit::write_profile(dir.path / "f.json", p);
  EXPECT_EQ(railkit::load_profile(dir.path / "f.json").cluster.fingerprint_facts, p.cluster.fingerprint_facts);
}

TEST(Profile, SwitchEcnAdviceIsOptionalAndRoundTrips) {
  // Without it the key is not written (profiles of real backends are unchanged), and they load.
  EXPECT_FALSE(railkit::to_json(sample())["settings"].contains("switch_ecn"));
  EXPECT_TRUE(railkit::profile_from_json(sample_json(), "p.json").switch_ecn.empty());
  ProfileDocument p = sample();
  p.cluster.backend = "sim";
  p.evidence.validated = false;
  p.evidence.validated_at.clear();
  p.switch_ecn = {{"switch.ecn.kmin_bytes", "100000"}, {"switch.ecn.kmax_bytes", "1600000"}, {"switch.ecn.pmax", "0.2"}};
  const auto j = railkit::to_json(p);
  std::vector<std::string> keys;
  for (const auto& [name, _] : j["settings"].items()) keys.push_back(name);
  EXPECT_EQ(keys, (std::vector<std::string>{"env", "dcqcn", "switch_ecn"}));
  EXPECT_EQ(j["settings"]["switch_ecn"]["switch.ecn.pmax"], "0.2");
  const ProfileDocument back = railkit::profile_from_json(json::parse(j.dump()), "p.json");
  EXPECT_EQ(back.switch_ecn, p.switch_ecn);
  EXPECT_EQ(railkit::to_json(back).dump(), j.dump());
  TempDir dir;
  railkit::write_profile(dir.path / "s.json", p);
  EXPECT_EQ(railkit::load_profile(dir.path / "s.json").switch_ecn, p.switch_ecn);
}

TEST(Profile, ChecksSwitchEcnSettings) {
  EXPECT_EQ(error_after([](json& j) { j["settings"]["switch_ecn"] = "5000"; }),
            "p.json: settings.switch_ecn: expected an object of setting: \"value\", got string");
  EXPECT_EQ(error_after([](json& j) { j["settings"]["switch_ecn"]["NCCL_IB_TC"] = "106"; }),
            "p.json: settings.switch_ecn.NCCL_IB_TC: not a switch setting of the tunables table (switch.ecn.kmin_bytes, "
            "switch.ecn.kmax_bytes, switch.ecn.pmax)");
  EXPECT_EQ(error_after([](json& j) { j["settings"]["switch_ecn"]["switch.ecn.pmax"] = "2"; }),
            "p.json: settings.switch_ecn.switch.ecn.pmax=2: above the maximum 1");
  EXPECT_EQ(error_after([](json& j) { j["settings"]["switch_ecn"]["switch.ecn.kmin_bytes"] = 5000; }),
            "p.json: settings.switch_ecn.switch.ecn.kmin_bytes: expected a string (values are text, as the environment "
            "holds them), got number");
  EXPECT_EQ(error_after([](json& j) { j["settings"]["switch_ecn"]["switch.ecn.pmax"] = "0.01"; }), "(no error)");
}

TEST(Profile, AnExpectationMayNameTheSettingsItWasMeasuredWith) {
  ProfileDocument p = sample();
  p.expectations[0].env = std::map<std::string, std::string>{{"NCCL_ALGO", "Tree"}};
  p.expectations[0].config = "ALGO=Tree";
  const auto j = railkit::to_json(p);
  std::vector<std::string> names;
  for (const auto& [name, _] : j["expectations"][0].items()) names.push_back(name);
  EXPECT_EQ(names, (std::vector<std::string>{"coll", "bytes", "busbw_GBps", "tolerance", "config", "env"}));
  const ProfileDocument back = railkit::profile_from_json(json::parse(j.dump()), "p.json");
  ASSERT_TRUE(back.expectations[0].env.has_value());
  EXPECT_EQ(*back.expectations[0].env, *p.expectations[0].env);
  EXPECT_EQ(back.expectations[0].config, "ALGO=Tree");
  // Its settings pass the same allowlist as settings.env.
  EXPECT_EQ(error_after([](json& doc) { doc["expectations"][0]["env"] = {{"LD_PRELOAD", "x.so"}}; }).find("(no error)"),
            std::string::npos);
  EXPECT_FALSE(railkit::profile_from_json(sample_json(), "p.json").expectations[0].env.has_value());
}

TEST(Profile, RejectsBadFingerprintFactsNamingTheField) {
  auto with_facts = [](json facts) {
    return error_after([&](json& j) { j["cluster"]["fingerprint_facts"] = facts; });
  };
  EXPECT_EQ(with_facts({{"gpu.count", "8"}}), "(no error)");
  EXPECT_EQ(with_facts(json::object()), "(no error)");
  EXPECT_EQ(with_facts({{"gpu.count", 8}}),
            "p.json: cluster.fingerprint_facts.gpu.count: expected a string (fact values are text, as `railkit topo` "
            "gives them), got number");
  EXPECT_EQ(with_facts({{"GPU0.link", nullptr}}),
            "p.json: cluster.fingerprint_facts.GPU0.link: expected a string (fact values are text, as `railkit topo` "
            "gives them), got null");
  EXPECT_EQ(with_facts(json::array({"gpu.count=8"})),
            "p.json: cluster.fingerprint_facts: expected an object of fact: \"value\", got array");
  EXPECT_EQ(error_after([](json& j) { j["cluster"]["fingerprint_facts"] = "gpu.count=8"; }),
            "p.json: cluster.fingerprint_facts: expected an object of fact: \"value\", got string");
  EXPECT_EQ(with_facts({{"", "8"}}),
            "p.json: cluster.fingerprint_facts.\"\": not a fact name (empty or holding a control character)");
  EXPECT_EQ(with_facts({{"gpu\ncount", "8"}}),
            "p.json: cluster.fingerprint_facts.\"gpu\\ncount\": not a fact name (empty or holding a control character)");
  EXPECT_EQ(with_facts({{"gpu.count", std::string("8\0", 2)}}),
            "p.json: cluster.fingerprint_facts.gpu.count: contains a NUL character");
}

TEST(Profile, RejectsOtherSchemaVersions) {
  EXPECT_EQ(error_after([](json& j) { j["schema"] = "railkit.profile/2"; }),
            "p.json: unsupported schema 'railkit.profile/2' (this railkit reads railkit.profile/1)");
  EXPECT_EQ(error_after([](json& j) { j.erase("schema"); }), "p.json: schema: missing");
  EXPECT_EQ(error_after([](json& j) { j["schema"] = 1; }), "p.json: schema: expected a string, got number");
  EXPECT_EQ(error_of(json::array()), "p.json: not a profile document (expected a JSON object, got array)");
}

TEST(Profile, RejectsWrongTypesNamingTheField) {
  EXPECT_EQ(error_after([](json& j) { j["cluster"]["nodes"] = "2"; }),
            "p.json: cluster.nodes: expected an integer, got string");
  EXPECT_EQ(error_after([](json& j) { j["cluster"]["ranks"] = -1; }), "p.json: cluster.ranks: -1 is negative");
  EXPECT_EQ(error_after([](json& j) { j["cluster"]["hosts"][1] = 7; }),
            "p.json: cluster.hosts[1]: expected a string, got number");
  EXPECT_EQ(error_after([](json& j) { j["cluster"]["extra"] = json::array(); }),
            "p.json: cluster.extra: expected an object, got array");
  EXPECT_EQ(error_after([](json& j) { j["cluster"]["backend"] = "gloo"; }),
            "p.json: cluster.backend: unknown backend 'gloo' (one of mpi, nccl, sim)");
  EXPECT_EQ(error_after([](json& j) { j["decisions"][1]["significant"] = 1; }),
            "p.json: decisions[1].significant: expected true or false, got number");
  EXPECT_EQ(error_after([](json& j) { j["decisions"] = json::object(); }),
            "p.json: decisions: expected an array, got object");
  EXPECT_EQ(error_after([](json& j) { j["expectations"][0]["bytes"] = 1.5; }),
            "p.json: expectations[0].bytes: expected an integer, got 1.5");
  EXPECT_EQ(error_after([](json& j) { j["evidence"]["rows"][0]["tuned_busbw_GBps"][1] = nullptr; }),
            "p.json: evidence.rows[0].tuned_busbw_GBps[1]: expected a number, got null");
  EXPECT_EQ(error_after([](json& j) { j["evidence"]["trials"] = true; }),
            "p.json: evidence.trials: expected an integer, got boolean");
  EXPECT_EQ(error_after([](json& j) { j["evidence"].erase("pairs"); }), "p.json: evidence.pairs: missing");
  EXPECT_EQ(error_after([](json& j) { j["settings"]["extra"] = 1; }), "p.json: settings.extra: unknown field");
  EXPECT_EQ(error_after([](json& j) { j["warnings"] = json::array(); }), "p.json: warnings: unknown field");
  // An integral float is an integer.
  EXPECT_EQ(error_after([](json& j) { j["expectations"][0]["bytes"] = 1024.0; }), "(no error)");
}

TEST(Profile, RejectsNumbersThatAreNotFinite) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  EXPECT_EQ(error_after([&](json& j) { j["decisions"][0]["busbw_GBps"] = nan; }),
            "p.json: decisions[0].busbw_GBps: not a finite number");
  EXPECT_EQ(error_after([&](json& j) { j["evidence"]["rows"][0]["baseline_busbw_GBps"][0] = inf; }),
            "p.json: evidence.rows[0].baseline_busbw_GBps[0]: not a finite number");
  EXPECT_EQ(error_after([&](json& j) { j["expectations"][0]["busbw_GBps"] = -1.0; }),
            "p.json: expectations[0].busbw_GBps: -1 is negative");
}

TEST(Profile, RejectsInconsistentRanges) {
  EXPECT_EQ(error_after([](json& j) { j["decisions"][0]["min_bytes"] = 2048; }),
            "p.json: decisions[0].min_bytes: 2048 is above max_bytes 1023");
  EXPECT_EQ(error_after([](json& j) { j["decisions"][0]["max_bytes"] = 1024; }),
            "p.json: decisions[1]: all_reduce bytes 1024..18446744073709551615 overlap decisions[0] (0..1024)");
  EXPECT_EQ(error_after([](json& j) { j["decisions"][1]["ratio_lo"] = 2.0; }),
            "p.json: decisions[1].ratio_lo: ratio_lo 2 is above ratio_hi 1.375");
  EXPECT_EQ(error_after([](json& j) { j["evidence"]["rows"][0]["ratio_hi"] = 1.0; }),
            "p.json: evidence.rows[0].ratio_lo: ratio_lo 1.125 is above ratio_hi 1");
  EXPECT_EQ(error_after([](json& j) { j["evidence"]["rows"][0]["tuned_busbw_GBps"].push_back(1.0); }),
            "p.json: evidence.rows[0].tuned_busbw_GBps: 3 values for 2 baseline values (one of each per A/B pair)");
}

TEST(Profile, ChecksTolerancesAndRegressionsAreFractions) {
  EXPECT_EQ(error_after([](json& j) { j["expectations"][0]["tolerance"] = 1.0; }),
            "p.json: expectations[0].tolerance: 1 is not below 1 (a fraction: 0.05 = 5%)");
  EXPECT_EQ(error_after([](json& j) { j["expectations"][0]["tolerance"] = -0.1; }),
            "p.json: expectations[0].tolerance: -0.1 is negative");
  EXPECT_EQ(error_after([](json& j) { j["expectations"][0]["tolerance"] = 0; }), "(no error)");
  EXPECT_EQ(error_after([](json& j) { j["evidence"]["max_regression"] = 2; }),
            "p.json: evidence.max_regression: 2 is not below 1 (a fraction: 0.05 = 5%)");
}

TEST(Profile, AcceptsExactlyTheBenchCollectives) {
  // The names of bench/types.cpp (kColls), which railkit-bench --coll accepts.
  for (const char* c : {"all_reduce", "all_gather", "reduce_scatter", "broadcast", "reduce", "alltoall", "sendrecv"})
    EXPECT_EQ(error_after([&](json& j) { j["expectations"][0]["coll"] = c; }), "(no error)") << c;
  EXPECT_EQ(error_after([](json& j) { j["expectations"][0]["coll"] = "allreduce"; }),
            "p.json: expectations[0].coll: unknown collective 'allreduce' (one of all_reduce, all_gather, "
            "reduce_scatter, broadcast, reduce, alltoall, sendrecv)");
  EXPECT_NE(error_after([](json& j) { j["decisions"][0]["coll"] = "all_to_all"; }).find("decisions[0].coll"),
            std::string::npos);
  EXPECT_NE(error_after([](json& j) { j["evidence"]["rows"][0]["coll"] = ""; }).find("evidence.rows[0].coll"),
            std::string::npos);
}

TEST(Profile, AllowsOnlyListedEnvironmentVariables) {
  using railkit::env_key_allowed;
  for (const char* k : {"NCCL_ALGO", "NCCL_SOCKET_IFNAME", "NVSHMEM_SYMMETRIC_SIZE", "UCX_TLS", "OMPI_MCA_btl",
                        "TORCH_NCCL_BLOCKING_WAIT", "RAILKIT_X", "CUDA_DEVICE_MAX_CONNECTIONS"})
    EXPECT_TRUE(env_key_allowed(k)) << k;
  for (const char* k : {"LD_PRELOAD", "PATH", "LD_LIBRARY_PATH", "CUDA_VISIBLE_DEVICES", "NCCL_", "nccl_algo",
                        "NCCL_A=B", "NCCL_A B", "NCCL_A\nB", "CUDA_DEVICE_MAX_CONNECTIONS_X", "", "XNCCL_ALGO"})
    EXPECT_FALSE(env_key_allowed(k)) << k;

  const std::string why = ": not an allowed environment variable (a profile may set NCCL_*, NVSHMEM_*, UCX_*, "
                          "OMPI_MCA_*, TORCH_NCCL_*, RAILKIT_* and CUDA_DEVICE_MAX_CONNECTIONS)";
  EXPECT_EQ(error_after([](json& j) { j["settings"]["env"]["LD_PRELOAD"] = "/tmp/x.so"; }),
            "p.json: settings.env.LD_PRELOAD" + why);
  EXPECT_EQ(error_after([](json& j) { j["decisions"][1]["env"]["PATH"] = "/tmp"; }),
            "p.json: decisions[1].env.PATH" + why);
  EXPECT_EQ(error_after([](json& j) { j["evidence"]["baseline_env"]["LD_LIBRARY_PATH"] = "/tmp"; }),
            "p.json: evidence.baseline_env.LD_LIBRARY_PATH" + why);
  // A hostile key is quoted, and the message stays on one line.
  const std::string m = error_after([](json& j) { j["settings"]["env"]["NCCL_X\nLD_PRELOAD"] = "y"; });
  EXPECT_EQ(m, "p.json: settings.env.\"NCCL_X\\nLD_PRELOAD\"" + why);
  EXPECT_EQ(m.find('\n'), std::string::npos);
}

TEST(Profile, ChecksEnvironmentValues) {
  EXPECT_EQ(error_after([](json& j) { j["settings"]["env"]["NCCL_IB_TC"] = "300"; }),
            "p.json: settings.env.NCCL_IB_TC=300: above the maximum 255");
  EXPECT_EQ(error_after([](json& j) { j["settings"]["env"]["NCCL_IB_TC"] = 106; }),
            "p.json: settings.env.NCCL_IB_TC: expected a string (values are text, as the environment holds them), "
            "got number");
  EXPECT_EQ(error_after([](json& j) { j["decisions"][1]["env"]["NCCL_ALGO"] = "Ring,Bogus"; }),
            "p.json: decisions[1].env.NCCL_ALGO=Ring,Bogus: 'Bogus' is not one of Ring, Tree, CollNetDirect, "
            "CollNetChain, NVLS, NVLSTree, PAT");
  EXPECT_EQ(error_after([](json& j) { j["evidence"]["baseline_env"]["NCCL_IB_TC"] = "-1"; }),
            "p.json: evidence.baseline_env.NCCL_IB_TC=-1: below the minimum 0");
  EXPECT_EQ(error_after([](json& j) { j["settings"]["env"]["NCCL_IB_TC"] = "1\n2"; }),
            "p.json: settings.env.NCCL_IB_TC=\"1\\n2\": not an integer");
  EXPECT_EQ(error_after([](json& j) { j["settings"]["env"]["NCCL_SOCKET_IFNAME"] = std::string("a\0b", 3); }),
            "p.json: settings.env.NCCL_SOCKET_IFNAME: contains a NUL character");
}

TEST(Profile, ChecksDcqcnSettings) {
  EXPECT_EQ(error_after([](json& j) { j["settings"]["dcqcn"]["8"] = json::object(); }),
            "p.json: settings.dcqcn.8: not a priority (\"0\" to \"7\")");
  EXPECT_EQ(error_after([](json& j) { j["settings"]["dcqcn"]["03"] = json::object(); }),
            "p.json: settings.dcqcn.03: not a priority (\"0\" to \"7\")");
  EXPECT_EQ(error_after([](json& j) { j["settings"]["dcqcn"]["3"] = "100"; }),
            "p.json: settings.dcqcn.3: expected an object of attribute: \"value\", got string");
  EXPECT_EQ(error_after([](json& j) { j["settings"]["dcqcn"]["3"]["NCCL_IB_TC"] = "1"; }),
            "p.json: settings.dcqcn.3.NCCL_IB_TC: not a DCQCN attribute of the tunables table (roce_rp.* or roce_np.*)");
  EXPECT_EQ(error_after([](json& j) { j["settings"]["dcqcn"]["3"]["roce_rp.bogus"] = "1"; }),
            "p.json: settings.dcqcn.3.roce_rp.bogus: not a DCQCN attribute of the tunables table (roce_rp.* or "
            "roce_np.*)");
  EXPECT_EQ(error_after([](json& j) { j["settings"]["dcqcn"]["3"]["roce_rp.rpg_gd"] = "99"; }),
            "p.json: settings.dcqcn.3.roce_rp.rpg_gd=99: above the maximum 15");
  EXPECT_EQ(error_after([](json& j) { j["settings"]["dcqcn"]["3"]["roce_rp.rpg_gd"] = 9; }),
            "p.json: settings.dcqcn.3.roce_rp.rpg_gd: expected a string (values are text, as the environment holds "
            "them), got number");
  EXPECT_EQ(error_after([](json& j) { j["settings"]["dcqcn"]["0"]["roce_np.cnp_dscp"] = "26"; }), "(no error)");
}

TEST(Profile, ValidatedNeedsEvidence) {
  const std::string why = " (a profile cannot claim validation without evidence)";
  EXPECT_EQ(error_after([](json& j) { j["evidence"]["pairs"] = 0; }),
            "p.json: evidence.validated: true requires evidence.pairs >= 1" + why);
  EXPECT_EQ(error_after([](json& j) { j["evidence"]["rows"] = json::array(); }),
            "p.json: evidence.validated: true requires evidence.rows to be non-empty" + why);
  EXPECT_EQ(error_after([](json& j) { j["evidence"]["validated_at"] = ""; }),
            "p.json: evidence.validated: true requires evidence.validated_at" + why);
  EXPECT_EQ(error_after([](json& j) { j["cluster"]["backend"] = "sim"; }),
            "p.json: evidence.validated: true but cluster.backend is sim (a simulated profile is never validated)");
  // Without the claim, no evidence is needed.
  EXPECT_EQ(error_after([](json& j) {
              j["cluster"]["backend"] = "sim";
              j["evidence"]["validated"] = false;
              j["evidence"]["validated_at"] = "";
              j["evidence"]["pairs"] = 0;
              j["evidence"]["rows"] = json::array();
            }),
            "(no error)");
}

TEST(Profile, WarnsAboutKeysOutsideTheTunablesTable) {
  json j = sample_json();
  j["settings"]["env"]["NCCL_SOCKET_IFNAME"] = "eth0";
  j["decisions"][1]["env"]["UCX_TLS"] = "rc";
  j["evidence"]["baseline_env"]["CUDA_DEVICE_MAX_CONNECTIONS"] = "1";
  const ProfileDocument p = railkit::profile_from_json(j, "p.json");
  EXPECT_EQ(p.warnings, (std::vector<std::string>{
                            "settings.env.NCCL_SOCKET_IFNAME: not in the tunables table; passed through unchanged",
                            "decisions[1].env.UCX_TLS: not in the tunables table; passed through unchanged",
                            "evidence.baseline_env.CUDA_DEVICE_MAX_CONNECTIONS: not in the tunables table; passed "
                            "through unchanged"}));
  EXPECT_EQ(p.env.at("NCCL_SOCKET_IFNAME"), "eth0");
}

TEST(Profile, HostileValuesOfPassThroughKeysSurviveTheRoundTrip) {
  const std::vector<std::string> hostile = {
      "a\"b'c", "$(rm -rf /)", "`id`", "line1\nline2\r\n", "x; echo pwned", "${HOME}\\n", "\t \\\" \x01 \x7f",
      "ünïcødé", ""};
  ProfileDocument p = sample();
  for (std::size_t i = 0; i < hostile.size(); ++i) {
    p.env["RAILKIT_HOSTILE_" + std::to_string(i)] = hostile[i];
    p.decisions[0].env["NCCL_SOCKET_IFNAME"] = hostile[i];
  }
  const ProfileDocument back = railkit::profile_from_json(json::parse(railkit::to_json(p).dump()), "p.json");
  EXPECT_EQ(back.env, p.env);
  EXPECT_EQ(back.decisions[0].env, p.decisions[0].env);
  TempDir dir;
  railkit::write_profile(dir.path / "h.json", p);
  const ProfileDocument loaded = railkit::load_profile(dir.path / "h.json");
  for (std::size_t i = 0; i < hostile.size(); ++i)
    EXPECT_EQ(loaded.env.at("RAILKIT_HOSTILE_" + std::to_string(i)), hostile[i]) << i;
  EXPECT_EQ(loaded.warnings.size(), hostile.size() + 1);
}

TEST(Profile, RefusesToWriteTextThatIsNotUtf8) {
  TempDir dir;
  ProfileDocument p = sample();
  p.env["NCCL_SOCKET_IFNAME"] = "\xff";
  EXPECT_THROW(railkit::write_profile(dir.path / "u.json", p), UsageError);
  EXPECT_FALSE(fs::exists(dir.path / "u.json"));
}

TEST(Profile, LoadNamesTheFile) {
  TempDir dir;
  EXPECT_THROW(railkit::load_profile(dir.path / "absent.json"), railkit::IoError);
  const fs::path bad = dir.path / "bad.json";
  std::ofstream(bad) << "{ not json";
  try {
    railkit::load_profile(bad);
    FAIL() << "no error";
  } catch (const UsageError& e) {
    EXPECT_EQ(std::string(e.what()).rfind(bad.string() + ": not valid JSON: parse error at line 1, column 4", 0), 0u)
        << e.what();
  }
  // 200 000 levels under cluster.extra overflowed the stack of every profile command: now one line.
  const auto valid = json::parse(std::ifstream(kFixtures / "valid.json"));
  std::string text = valid.dump();
  const std::string deep = std::string(200000, '[') + std::string(200000, ']');
  text.replace(text.find("\"extra\":{") + 9, 0, "\"deep\":" + deep + ",");
  const fs::path deep_file = dir.path / "deep.json";
  std::ofstream(deep_file) << text;
  try {
    railkit::load_profile(deep_file);
    FAIL() << "no error";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("nested deeper than 128 levels"), std::string::npos) << e.what();
  }
}

TEST(Profile, LoadsTheValidFixture) {
  const ProfileDocument p = railkit::load_profile(kFixtures / "valid.json");
  EXPECT_EQ(p.name, "fixture-two-nodes");
  EXPECT_EQ(p.cluster.backend, "mpi");
  EXPECT_EQ(p.dcqcn.at("3").at("roce_rp.rpg_time_reset"), "100");
  EXPECT_EQ(p.decisions.size(), 2u);
  EXPECT_EQ(p.cluster.fingerprint_facts.size(), 4u);
  EXPECT_EQ(p.cluster.fingerprint_facts.at("nic.count"), "1");
  EXPECT_TRUE(p.evidence.validated);
  EXPECT_EQ(p.warnings,
            (std::vector<std::string>{"settings.env.NCCL_SOCKET_IFNAME: not in the tunables table; passed through unchanged"}));
}

// tests/fixtures/profiles/invalid/expected.tsv: file, where the schema reports it, and what the
// loader's message says; tests/core/profile_schema.py checks the schema side of the same files.
TEST(Profile, RejectsEachInvalidFixtureLikeTheSchema) {
  const fs::path dir = kFixtures / "invalid";
  std::ifstream tsv(dir / "expected.tsv");
  ASSERT_TRUE(tsv) << dir / "expected.tsv";
  std::set<std::string> listed;
  std::string line;
  while (std::getline(tsv, line)) {
    if (line.empty() || line[0] == '#') continue;
    const auto t1 = line.find('\t');
    const auto t2 = line.find('\t', t1 + 1);
    ASSERT_NE(t2, std::string::npos) << line;
    const std::string name = line.substr(0, t1);
    const std::string message = line.substr(t2 + 1);
    listed.insert(name);
    const fs::path file = dir / name;
    try {
      railkit::load_profile(file);
      ADD_FAILURE() << name << ": accepted";
    } catch (const UsageError& e) {
      EXPECT_EQ(std::string(e.what()).rfind(file.string() + ": " + message, 0), 0u) << e.what();
    }
  }
  std::set<std::string> present;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().extension() == ".json") present.insert(e.path().filename().string());
  EXPECT_EQ(listed, present);
}
