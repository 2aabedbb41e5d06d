#include "sweep/sweep.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "core/error.hpp"
#include "topology/analyze.hpp"
#include "topology/probe.hpp"

namespace railkit::sweep {
namespace {

using Env = std::map<std::string, std::string>;
using Args = std::vector<std::string>;

TEST(Axis, Parses) {
  const Factor f = parse_axis("NCCL_ALGO=Ring,Tree");
  EXPECT_EQ(f.source, "--axis NCCL_ALGO");
  ASSERT_EQ(f.choices.size(), 2u);
  EXPECT_EQ(f.choices[0].label, "NCCL_ALGO=Ring");
  EXPECT_EQ(f.choices[1].env, (Env{{"NCCL_ALGO", "Tree"}}));
  EXPECT_EQ(parse_axis("X=a=b").choices[0].env.at("X"), "a=b");
}

TEST(Axis, RejectsBadSpecs) {
  for (const char* bad : {"NCCL_ALGO", "=1", "1X=2", "NCCL ALGO=1", "A=", "A=1,,2", "A=1,1"})
    EXPECT_THROW(parse_axis(bad), UsageError) << bad;
}

TEST(Matrix, ParsesNamedConfigurations) {
  const auto doc = nlohmann::json::parse(R"({
    "schema": "railkit.sweep-matrix/1",
    "env": {"NCCL_DEBUG": "WARN"},
    "args": ["-n", "50"],
    "configs": [
      {"name": "ring", "env": {"NCCL_ALGO": "Ring", "NCCL_NTHREADS": 256}},
      {"name": "tree", "env": {"NCCL_ALGO": "Tree", "NCCL_DEBUG": "INFO"}, "args": ["-w", "10"]},
      {"name": "plain"}
    ]})");
  const Factor f = parse_matrix(doc, "m.json");
  ASSERT_EQ(f.choices.size(), 3u);
  EXPECT_EQ(f.choices[0].env, (Env{{"NCCL_ALGO", "Ring"}, {"NCCL_DEBUG", "WARN"}, {"NCCL_NTHREADS", "256"}}));
  EXPECT_EQ(f.choices[1].env.at("NCCL_DEBUG"), "INFO");
  EXPECT_EQ(f.choices[1].args, (Args{"-n", "50", "-w", "10"}));
  EXPECT_EQ(f.choices[2].env, (Env{{"NCCL_DEBUG", "WARN"}}));
  // A bare array of configurations is accepted too.
  EXPECT_EQ(parse_matrix(nlohmann::json::parse(R"([{"name": "x"}])"), "m").choices.size(), 1u);
}

TEST(Matrix, RejectsBadDocuments) {
  for (const char* bad : {
           R"({"configs": []})",
           R"({"configs": [{"env": {}}]})",
           R"({"configs": [{"name": "a"}, {"name": "a"}]})",
           R"({"configs": [{"name": "a", "env": {"X": 1.5}}]})",
           R"({"configs": [{"name": "a", "env": {"bad name": "1"}}]})",
           R"({"configs": [{"name": "a", "envs": {}}]})",
           R"({"configs": [{"name": "a", "args": "-n 5"}]})",
           R"({"schema": "other/1", "configs": [{"name": "a"}]})",
           R"({"confs": []})",
           R"(42)",
       })
    EXPECT_THROW(parse_matrix(nlohmann::json::parse(bad), "m.json"), UsageError) << bad;
  EXPECT_THROW(load_matrix("/nonexistent/m.json"), UsageError);
}

TEST(Matrix, ChecksArgsAndEnvAsStrictlyAsBenchArgumentsAndProfiles) {
  // The sweep writes -J itself, as for `--` bench arguments; env only from the profiles' allowlist.
  const std::vector<std::pair<std::string, std::string>> bad{
      {R"({"configs": [{"name": "a", "args": ["-J", "x.json"]}]})", "configs[0]: `args`: bench arguments: -J"},
      {R"({"configs": [{"name": "a", "args": ["-Jx.json"]}]})", "configs[0]: `args`"},
      {R"({"args": ["--output_file=x.json"], "configs": [{"name": "a"}]})", "m.json: `args`: bench arguments"},
      {R"({"configs": [{"name": "a", "env": {"LD_PRELOAD": "/tmp/x.so"}}]})", "configs[0]: env LD_PRELOAD: not an allowed"},
      {R"({"env": {"PATH": "/tmp"}, "configs": [{"name": "a"}]})", "m.json: env PATH: not an allowed"},
      {R"({"configs": [{"name": "a"}, {"name": "b", "env": {"NCCL_": "1"}}]})", "configs[1]: env NCCL_: not an allowed"},
  };
  for (const auto& [doc, message] : bad) {
    try {
      parse_matrix(nlohmann::json::parse(doc), "m.json");
      ADD_FAILURE() << doc << " was accepted";
    } catch (const UsageError& e) {
      EXPECT_NE(std::string(e.what()).find(message), std::string::npos) << e.what();
    }
  }
  const auto ok = parse_matrix(nlohmann::json::parse(R"({"configs": [{"name": "a", "args": ["--label", "J"],
      "env": {"NCCL_ALGO": "Ring", "OMPI_MCA_coll_tuned_use_dynamic_rules": 1, "CUDA_DEVICE_MAX_CONNECTIONS": 1,
              "RAILKIT_X": "1", "UCX_TLS": "rc"}}]})"), "m.json");
  EXPECT_EQ(ok.choices.at(0).env.size(), 5u);
}

TEST(Presets, Pxn) {
  const auto fs = preset_factors("pxn", nullptr);
  ASSERT_EQ(fs.size(), 1u);
  const auto configs = expand(fs);
  ASSERT_EQ(configs.size(), 4u);
  EXPECT_EQ(configs[0].name, "pxn-off");
  EXPECT_EQ(configs[0].env, (Env{{"NCCL_PXN_DISABLE", "1"}}));
  EXPECT_EQ(configs[3].name, "pxn-level2");
  EXPECT_EQ(configs[3].env, (Env{{"NCCL_PXN_DISABLE", "0"}, {"NCCL_P2P_PXN_LEVEL", "2"}}));
}

TEST(Presets, Algo) {
  const auto configs = expand(preset_factors("algo", nullptr));
  ASSERT_EQ(configs.size(), 7u);
  EXPECT_EQ(configs[0].name, "algo-default");
  EXPECT_TRUE(configs[0].env.empty());
  EXPECT_EQ(configs[1].env, (Env{{"NCCL_ALGO", "Ring"}, {"NCCL_PROTO", "LL"}}));
  EXPECT_EQ(configs[6].name, "Tree-Simple");
}

TEST(Presets, RailsFromAHandBuiltNode) {
  topo::Topology t;
  t.root = "/fixture";
  for (int g = 0; g < 4; ++g) {
    topo::Rail r;
    r.gpu = "GPU" + std::to_string(g);
    r.nic = "mlx5_" + std::to_string(g / 2);  // two GPUs per NIC
    t.rails.push_back(r);
  }
  t.nccl_ib_hca = "=mlx5_0:1,mlx5_1:1";
  const auto configs = expand(preset_factors("rails", &t));
  ASSERT_EQ(configs.size(), 6u);  // (all, mlx5_0, mlx5_1) x cross-nic 0/1
  EXPECT_EQ(configs[0].name, "rails-all,cross-nic-0");
  EXPECT_EQ(configs[0].env, (Env{{"NCCL_CROSS_NIC", "0"}, {"NCCL_IB_HCA", "=mlx5_0:1,mlx5_1:1"}}));
  EXPECT_EQ(configs[3].name, "rail-mlx5_0,cross-nic-1");
  EXPECT_EQ(configs[5].env, (Env{{"NCCL_CROSS_NIC", "1"}, {"NCCL_IB_HCA", "=mlx5_1:1"}}));
}

TEST(Presets, RailsWithoutRailsIsUnavailable) {
  topo::Topology t;
  EXPECT_THROW(preset_factors("rails", &t), UnavailableError);
  EXPECT_THROW(preset_factors("rails", nullptr), UnavailableError);
  EXPECT_THROW(preset_factors("nope", nullptr), UsageError);
}

#ifdef RAILKIT_TOPO_FIXTURES
TEST(Presets, RailsFromTheDgxFixture) {
  topo::ProbeOptions po;
  po.root = std::string(RAILKIT_TOPO_FIXTURES) + "/dgx-h100";
  topo::Topology t = topo::probe_node(po);
  topo::analyze(t, topo::LintOptions{});
  const auto configs = expand(preset_factors("rails", &t));
  ASSERT_EQ(configs.size(), 18u);  // (all + 8 single rails) x cross-nic 0/1
  EXPECT_EQ(configs[0].env.at("NCCL_IB_HCA"), t.nccl_ib_hca);
  EXPECT_EQ(configs[2].name, "rail-mlx5_0,cross-nic-0");
  EXPECT_EQ(configs[2].env.at("NCCL_IB_HCA"), "=mlx5_0:1");
  EXPECT_EQ(configs.back().name, "rail-mlx5_11,cross-nic-1");
}
#endif

TEST(Expand, CartesianProductFirstFactorSlowest) {
  const auto configs = expand({parse_axis("A=1,2"), parse_axis("B=x,y,z")});
  ASSERT_EQ(configs.size(), 6u);
  EXPECT_EQ(configs[0].name, "A=1,B=x");
  EXPECT_EQ(configs[1].name, "A=1,B=y");
  EXPECT_EQ(configs[5].name, "A=2,B=z");
  EXPECT_EQ(configs[4].env, (Env{{"A", "2"}, {"B", "y"}}));
}

TEST(Expand, SingleChoiceFactorsSetEnvButStayOutOfNames) {
  const auto configs = expand({parse_axis("FIXED=1"), parse_axis("B=x,y")});
  ASSERT_EQ(configs.size(), 2u);
  EXPECT_EQ(configs[0].name, "B=x");
  EXPECT_EQ(configs[0].env, (Env{{"B", "x"}, {"FIXED", "1"}}));
  EXPECT_EQ(expand({parse_axis("A=1"), parse_axis("B=2")})[0].name, "A=1,B=2");
}

TEST(Expand, MatrixTimesAxisKeepsArgs) {
  const Factor m = parse_matrix(nlohmann::json::parse(R"({"configs": [{"name": "m1", "args": ["-n", "5"]},
                                                                       {"name": "m2"}]})"),
                                "m");
  const auto configs = expand({m, parse_axis("NCCL_ALGO=Ring,Tree")});
  ASSERT_EQ(configs.size(), 4u);
  EXPECT_EQ(configs[1].name, "m1,NCCL_ALGO=Tree");
  EXPECT_EQ(configs[1].args, (Args{"-n", "5"}));
  EXPECT_TRUE(configs[3].args.empty());
}

TEST(Expand, Conflicts) {
  EXPECT_THROW(expand({}), UsageError);
  EXPECT_THROW(expand({parse_axis("A=1"), parse_axis("A=2")}), UsageError);
  auto pxn = preset_factors("pxn", nullptr);
  pxn.push_back(parse_axis("NCCL_PXN_DISABLE=0,1"));
  EXPECT_THROW(expand(pxn), UsageError);
}

TEST(Rounds, OrderIsAShuffledPermutationFixedBySeedAndRound) {
  for (std::size_t n : {0u, 1u, 2u, 7u}) {
    auto o = round_order(n, 42, 1);
    std::sort(o.begin(), o.end());
    for (std::size_t i = 0; i < n; ++i) EXPECT_EQ(o[i], i);
  }
  EXPECT_EQ(round_order(7, 42, 2), round_order(7, 42, 2));
  std::set<std::vector<std::size_t>> seen;
  for (int r = 1; r <= 6; ++r) seen.insert(round_order(7, 42, r));
  EXPECT_GT(seen.size(), 1u);  // rounds are shuffled differently
  EXPECT_NE(round_order(7, 42, 1), round_order(7, 43, 1));
  // std::mt19937_64 and std::seed_seq are specified to the bit: the order is the same everywhere.
  EXPECT_EQ(round_order(5, 1, 1), round_order(5, 1, 1));
  std::vector<int> first(7, 0);
  for (std::uint64_t seed = 0; seed < 700; ++seed) ++first[round_order(7, seed, 1)[0]];
  for (int k : first) EXPECT_GT(k, 50);  // every configuration runs first now and then
}

TEST(Inert, PresetKnobsOnABackendTheyCannotReach) {
  const auto algo = preset_factors("algo", nullptr);
  const auto configs = expand(algo);
  const auto sources = knob_sources(algo);
  EXPECT_EQ(sources.at("NCCL_ALGO"), "--preset algo");
  auto inert = inert_in(configs, "mpi", sources);
  ASSERT_EQ(inert.size(), 2u);
  EXPECT_EQ(inert[0].name, "NCCL_ALGO");
  EXPECT_EQ(inert[0].reaches, "nccl, sim");
  EXPECT_EQ(inert[0].source, "--preset algo");
  EXPECT_EQ(inert[1].name, "NCCL_PROTO");
  EXPECT_TRUE(inert_in(configs, "nccl", sources).empty());
  EXPECT_TRUE(inert_in(configs, "sim", sources).empty());
  EXPECT_EQ(inert_in(expand(preset_factors("pxn", nullptr)), "mpi", {}).size(), 2u);
  const auto ompi = expand({parse_axis("OMPI_MCA_coll_tuned_allreduce_algorithm=1,4")});
  EXPECT_TRUE(inert_in(ompi, "mpi", {}).empty());
  ASSERT_EQ(inert_in(ompi, "nccl", {}).size(), 1u);
  EXPECT_EQ(inert_in(ompi, "nccl", {})[0].reaches, "mpi");
  EXPECT_TRUE(inert_in(expand({parse_axis("UCX_TLS=rc,tcp")}), "nccl", {}).empty());  // unknown family: not judged
}

TEST(SweepJson, RoundTrip) {
  SweepDocument d;
  d.railkit_version = "0.1.0";
  d.created = d.updated = "2026-11-29T17:00:00Z";
  d.bench = "/b/railkit-bench";
  d.bench_args = {"-b", "8"};
  d.launcher = {{"kind", "mpirun"}, {"np", 4}};
  d.timeout_s = 30;
  d.baseline = "a";
  d.rounds = 2;
  d.seed = 99;
  d.order = {{"a", "b"}, {"b", "a"}};
  d.backend = {{"expected", "mpi"}, {"how", "--backend mpi in the bench arguments"}, {"seen", {"mpi"}}};
  d.allow_inert = true;
  d.inert = {InertKnob{"NCCL_ALGO", "nccl, sim", "--axis NCCL_ALGO"}};
  d.inert_backend = "mpi";
  d.topology = {{"source", "topo-root"}, {"measured_node", false}};
  d.planned = {BenchConfig{"a", {{"X", "1"}}, {}}, BenchConfig{"b", {{"X", "2"}}, {"-n", "5"}}};
  LaunchRecord l;
  l.round = 2;
  l.run.name = "a";
  l.run.env = {{"X", "1"}};
  l.run.status = TrialStatus::Failed;
  l.run.exit_code = 6;
  l.run.error = "exit code 6: bad";
  l.run.stderr_tail = "line\nbad";
  l.run.command = {"mpirun", "x"};
  l.backend = "mpi";
  l.inert = {"NCCL_ALGO"};
  d.launches.push_back(l);
  const auto j = to_json(d);
  EXPECT_EQ(j.begin().key(), "schema");
  EXPECT_EQ(j["schema"], "railkit.sweep/2");
  const SweepDocument back = sweep_from_json(nlohmann::json::parse(j.dump()), "s.json");
  EXPECT_EQ(back.planned, d.planned);
  EXPECT_EQ(back.rounds, 2);
  EXPECT_EQ(back.seed, 99u);
  EXPECT_EQ(back.order, d.order);
  EXPECT_EQ(back.backend, d.backend);
  EXPECT_TRUE(back.allow_inert);
  ASSERT_EQ(back.inert.size(), 1u);
  EXPECT_EQ(back.inert[0].source, "--axis NCCL_ALGO");
  EXPECT_EQ(back.inert_backend, "mpi");
  EXPECT_EQ(back.topology, d.topology);
  ASSERT_EQ(back.launches.size(), 1u);
  EXPECT_EQ(back.launches[0].round, 2);
  EXPECT_EQ(back.launches[0].backend, "mpi");
  EXPECT_EQ(back.launches[0].inert, l.inert);
  EXPECT_EQ(back.launches[0].run.status, TrialStatus::Failed);
  EXPECT_EQ(back.launches[0].run.exit_code, 6);
  EXPECT_EQ(back.launches[0].run.error, "exit code 6: bad");
  EXPECT_TRUE(back.launches[0].run.results.empty());
  EXPECT_EQ(back.find("a", 2)->run.command, (Args{"mpirun", "x"}));
  EXPECT_EQ(back.find("a", 1), nullptr);
  EXPECT_EQ(back.find("b", 2), nullptr);
  EXPECT_EQ(back.of("a").size(), 1u);
  EXPECT_EQ(j["launches"][0]["results"], nullptr);
  EXPECT_THROW(sweep_from_json(nlohmann::json::parse(R"({"schema": "x"})"), "s.json"), UsageError);
  EXPECT_THROW(sweep_from_json(nlohmann::json::parse(R"({"schema": "railkit.sweep/2", "launches": [{"name": "a",
                 "status": "weird"}]})"), "s.json"),
               UsageError);
  EXPECT_THROW(sweep_from_json(nlohmann::json::parse(R"({"schema": "railkit.sweep/2", "launches": [{"name": "a",
                 "status": "ok", "round": 0}]})"), "s.json"),
               UsageError);
}

TEST(SweepJson, MistypedLaunchFieldsNameTheKey) {
  // Issue 14: a launch field of the wrong type is exit 6 naming sweep.json, the launch and the key.
  struct Case {
    const char* key;
    nlohmann::json value;
    const char* expected;
  };
  for (const Case& c : {Case{"exit_code", "6", "s.json: launches[0]: exit_code must be an integer, not string"},
                        Case{"round", 1.5, "s.json: launches[0]: round must be an integer, not 1.5"},
                        Case{"env", {{"NCCL_ALGO", 1}}, "s.json: launches[0]: env.NCCL_ALGO must be a string, not number"},
                        Case{"args", "-b 8", "s.json: launches[0]: args must be an array of strings, not string"},
                        Case{"elapsed_s", "1s", "s.json: launches[0]: elapsed_s must be a number, not string"},
                        Case{"name", nullptr, "s.json: launches[0]: name must be a string, not null"}}) {
    nlohmann::json j = nlohmann::json::parse(R"({"schema": "railkit.sweep/2", "launches": [{"name": "a", "status": "ok"}]})");
    j["launches"][0][c.key] = c.value;
    std::string m;
    try {
      sweep_from_json(j, "s.json");
    } catch (const UsageError& e) {
      m = e.what();
    }
    EXPECT_EQ(m, c.expected) << c.key;
  }
  nlohmann::json top = nlohmann::json::parse(R"({"schema": "railkit.sweep/2", "rounds": "2", "launches": []})");
  EXPECT_THROW(sweep_from_json(top, "s.json"), UsageError);
  top = nlohmann::json::parse(R"({"schema": "railkit.sweep/2", "topology": {"measured_node": "no"}, "launches": []})");
  EXPECT_THROW(sweep_from_json(top, "s.json"), UsageError);
}

TEST(SweepJson, ReadsTheFirstVersionAsOneRound) {
  const SweepDocument d = sweep_from_json(nlohmann::json::parse(R"({
    "schema": "railkit.sweep/1", "baseline": "a",
    "planned": [{"name": "a", "env": {}, "args": []}],
    "configs": [{"name": "a", "env": {}, "args": [], "status": "ok", "results": "001-a.json"}]})"),
                                          "old.json");
  EXPECT_EQ(d.rounds, 1);
  ASSERT_EQ(d.launches.size(), 1u);
  EXPECT_EQ(d.launches[0].round, 1);
  EXPECT_EQ(d.find("a", 1)->run.results, "001-a.json");
  EXPECT_EQ(to_json(d)["schema"], "railkit.sweep/2");
}

}  // namespace
}  // namespace railkit::sweep
