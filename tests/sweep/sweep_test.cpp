#include "sweep/sweep.hpp"

#include <gtest/gtest.h>

#include <algorithm>

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

TEST(SweepJson, RoundTrip) {
  SweepDocument d;
  d.railkit_version = "0.1.0";
  d.created = d.updated = "2026-11-29T17:00:00Z";
  d.bench = "/b/railkit-bench";
  d.bench_args = {"-b", "8"};
  d.launcher = {{"kind", "mpirun"}, {"np", 4}};
  d.timeout_s = 30;
  d.baseline = "a";
  d.planned = {BenchConfig{"a", {{"X", "1"}}, {}}, BenchConfig{"b", {{"X", "2"}}, {"-n", "5"}}};
  ConfigRecord r;
  r.name = "a";
  r.env = {{"X", "1"}};
  r.status = TrialStatus::Failed;
  r.exit_code = 6;
  r.error = "exit code 6: bad";
  r.stderr_tail = "line\nbad";
  r.command = {"mpirun", "x"};
  d.configs.push_back(r);
  const auto j = to_json(d);
  EXPECT_EQ(j.begin().key(), "schema");
  const SweepDocument back = sweep_from_json(nlohmann::json::parse(j.dump()), "s.json");
  EXPECT_EQ(back.planned, d.planned);
  ASSERT_EQ(back.configs.size(), 1u);
  EXPECT_EQ(back.configs[0].status, TrialStatus::Failed);
  EXPECT_EQ(back.configs[0].exit_code, 6);
  EXPECT_EQ(back.configs[0].error, "exit code 6: bad");
  EXPECT_TRUE(back.configs[0].results.empty());
  EXPECT_EQ(back.find("a")->command, (Args{"mpirun", "x"}));
  EXPECT_EQ(back.find("b"), nullptr);
  EXPECT_EQ(j["configs"][0]["results"], nullptr);
  EXPECT_THROW(sweep_from_json(nlohmann::json::parse(R"({"schema": "x"})"), "s.json"), UsageError);
  EXPECT_THROW(sweep_from_json(nlohmann::json::parse(R"({"schema": "railkit.sweep/1", "configs": [{"name": "a",
                 "status": "weird"}]})"), "s.json"),
               UsageError);
}

}  // namespace
}  // namespace railkit::sweep
