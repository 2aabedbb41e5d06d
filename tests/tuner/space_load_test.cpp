// Spaces from files and built-ins (tuner/space_load): validity, errors naming the source, round trips.
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
#include "core/yaml.hpp"
#include "test_util.hpp"
#include "tuner_test_util.hpp"
#include "tuner/space.hpp"

namespace railkit::tuner {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;
using ScratchDir = railkit::test::TempDir;
using railkit::test::usage_error_of;

// ---------------------------------------------------------------- spaces

const Knob& knob_named(const Space& s, const std::string& name) {
  for (const auto& k : s.knobs)
    if (k.name == name) return k;
  throw std::runtime_error("no knob " + name);
}

std::vector<std::string> knob_names(const Space& s) {
  std::vector<std::string> v;
  for (const auto& k : s.knobs) v.push_back(k.name);
  return v;
}

TEST(SpaceLoad, BuiltinSpacesAreValid) {
  for (auto name : kBuiltinSpaces) {
    const Space s = builtin_space(name);
    SCOPED_TRACE(std::string(name));
    EXPECT_EQ(s.name, name);
    EXPECT_EQ(s.source, "built-in");
    EXPECT_FALSE(s.doc.empty());
    ASSERT_FALSE(s.knobs.empty());
    std::set<std::string> names;
    for (std::size_t i = 0; i < s.knobs.size(); ++i) {
      const Knob& k = s.knobs[i];
      SCOPED_TRACE(k.name);
      ASSERT_NE(k.tunable, nullptr);
      EXPECT_EQ(k.tunable->name, k.name);
      EXPECT_TRUE(names.insert(k.name).second);
      ASSERT_LT(k.baseline, k.values.size());
      for (const auto& v : k.values)
        if (!v.empty()) {
          EXPECT_EQ(tunable_value_problem(*k.tunable, v), "") << v;
        }
      if (k.when) {  // on an earlier knob
        const auto end = s.knobs.begin() + static_cast<std::ptrdiff_t>(i);
        EXPECT_NE(std::find_if(s.knobs.begin(), end, [&](const Knob& e) { return e.name == k.when->knob; }), end);
      }
    }
    for (const auto& [k, v] : s.fixed_env) {
      const Tunable* t = find_tunable(k);
      ASSERT_NE(t, nullptr) << k;
      EXPECT_EQ(tunable_value_problem(*t, v), "") << k;
    }
    EXPECT_NO_THROW(all_configs(s));
  }
}

TEST(SpaceLoad, BuiltinSpaceDetails) {
  const Space o = builtin_space("ompi-coll");
  const std::string p = "OMPI_MCA_coll_tuned_";
  for (const char* c : {"allreduce", "allgather", "reduce_scatter", "alltoall"}) {
    const Knob& k = knob_named(o, p + c + "_algorithm");
    EXPECT_FALSE(k.numeric) << c;  // algorithm ids are categories, not amounts
    EXPECT_EQ(k.values.front(), "0") << c;
    EXPECT_EQ(k.values[k.baseline], "0") << c;
    EXPECT_EQ(k.collectives.size(), 1u) << c;
  }
  const Knob& seg = knob_named(o, p + "allreduce_algorithm_segmentsize");
  ASSERT_TRUE(seg.when);
  EXPECT_EQ(*seg.when, (Condition{p + "allreduce_algorithm", "==", {"5"}}));
  EXPECT_EQ(o.fixed_env.at(p + "use_dynamic_rules"), "1");

  const Space dc = builtin_space("dcqcn");
  for (const auto& k : dc.knobs) EXPECT_EQ(k.tunable->scope, TunableScope::Dcqcn) << k.name;
  const Space net = builtin_space("nccl-net");
  for (const auto& k : net.knobs) EXPECT_EQ(k.values[k.baseline], "") << k.name;  // unset = NCCL's default
  EXPECT_NE(usage_error_of([] { builtin_space("nope"); }).find("ompi-coll, nccl-proto, nccl-net, dcqcn, switch-ecn"),
            std::string::npos);
  // switch-ecn: the three ECN thresholds of the switches, numeric, no "unset" (the simulator takes
  // them together), the DCQCN paper's as the baseline.
  const Space ecn = builtin_space("switch-ecn");
  EXPECT_EQ(knob_names(ecn), (std::vector<std::string>{"switch.ecn.kmin_bytes", "switch.ecn.kmax_bytes", "switch.ecn.pmax"}));
  for (const auto& k : ecn.knobs) {
    EXPECT_EQ(k.tunable->scope, TunableScope::Switch) << k.name;
    EXPECT_TRUE(k.numeric) << k.name;
    EXPECT_EQ(std::count(k.values.begin(), k.values.end(), ""), 0) << k.name;
  }
  EXPECT_EQ(knob_named(ecn, "switch.ecn.kmin_bytes").values[0], "5000");
  EXPECT_EQ(knob_named(ecn, "switch.ecn.pmax").values, (std::vector<std::string>{"0.01", "0.05", "0.1", "0.2", "0.5", "1"}));
}

/// A minimal valid space document with one knob `knob`, for error cases to spoil.
json one_knob_doc(json knob) {
  return json{{"schema", "railkit.space/1"}, {"name", "t"}, {"knobs", json::array({std::move(knob)})}};
}

TEST(SpaceLoad, DecimalKnobsAreNumbersInYamlAndJson) {
  // pmax: 0.2 unquoted is a YAML float; it reads back as the text "0.2", sorted as a number.
  const Space s = parse_space(parse_yaml("schema: railkit.space/1\nname: ecn\nknobs:\n"
                                         "  - {name: switch.ecn.pmax, values: [0.5, 0.05, 1, \"0.2\"]}\n",
                                         "ecn.yaml"),
                              "ecn.yaml");
  EXPECT_EQ(s.knobs[0].values, (std::vector<std::string>{"0.05", "0.2", "0.5", "1"}));
  EXPECT_TRUE(s.knobs[0].numeric);
  EXPECT_NE(usage_error_of([] { (void)parse_space(one_knob_doc({{"name", "switch.ecn.pmax"}, {"values", json::array({1.5})}}), "x"); })
                .find("switch.ecn.pmax=1.5: above the maximum 1"),
            std::string::npos);
}

TEST(SpaceLoad, ParseErrorsNameSourceAndProblem) {
  const json qps = {{"name", "NCCL_IB_QPS_PER_CONNECTION"}, {"values", {1, 2, 4}}};
  json wrong_schema = one_knob_doc(qps);
  wrong_schema["schema"] = "railkit.space/2";
  json unknown_key = one_knob_doc(qps);
  unknown_key["extra"] = 1;
  json knob_key = qps;
  knob_key["step"] = 2;
  json cond_later = json{{"schema", "railkit.space/1"},
                         {"knobs",
                          {{{"name", "NCCL_IB_SPLIT_DATA_ON_QPS"},
                            {"values", {0, 1}},
                            {"when", {{"knob", "NCCL_IB_QPS_PER_CONNECTION"}, {"op", ">"}, {"value", 1}}}},
                           qps}}};
  json twice = json{{"schema", "railkit.space/1"}, {"knobs", {qps, qps}}};
  const struct {
    const char* what;
    json doc;
    const char* problem;
  } cases[] = {
      {"schema", wrong_schema, "schema must be \"railkit.space/1\""},
      {"top-level key", unknown_key, "unknown key 'extra'"},
      {"knob key", one_knob_doc(knob_key), "unknown key 'step'"},
      {"unknown tunable", one_knob_doc({{"name", "NCCL_NOPE"}, {"values", json::array({1})}}), "unknown tunable 'NCCL_NOPE'"},
      {"out of range", one_knob_doc({{"name", "NCCL_IB_TC"}, {"values", {106, 300}}}), "NCCL_IB_TC=300: above the maximum 255"},
      {"bad enum", one_knob_doc({{"name", "NCCL_PROTO"}, {"values", {"LL", "LL64"}}}), "NCCL_PROTO=LL64"},
      {"duplicate", one_knob_doc({{"name", "NCCL_IB_TC"}, {"values", {"106", 106}}}), "value '106' listed twice"},
      {"baseline", one_knob_doc({{"name", "NCCL_IB_TC"}, {"values", {98, 106}}, {"baseline", 138}}),
       "baseline '138' is not one of its values"},
      {"later knob", cond_later, "condition on 'NCCL_IB_QPS_PER_CONNECTION', which is not an earlier knob"},
      {"unknown knob in condition",
       one_knob_doc({{"name", "NCCL_IB_TC"}, {"values", json::array({98})}, {"when", {{"knob", "NCCL_ALGO"}, {"op", "=="}, {"value", "Ring"}}}}),
       "condition on 'NCCL_ALGO'"},
      {"operator",
       json{{"schema", "railkit.space/1"},
            {"knobs",
             {qps,
              {{"name", "NCCL_IB_SPLIT_DATA_ON_QPS"},
               {"values", {0, 1}},
               {"when", {{"knob", "NCCL_IB_QPS_PER_CONNECTION"}, {"op", "=~"}, {"value", 1}}}}}}},
       "condition operator '=~'"},
      {"two values for ==",
       json{{"schema", "railkit.space/1"},
            {"knobs",
             {qps,
              {{"name", "NCCL_IB_SPLIT_DATA_ON_QPS"},
               {"values", {0, 1}},
               {"when", {{"knob", "NCCL_IB_QPS_PER_CONNECTION"}, {"op", "=="}, {"values", {1, 2}}}}}}}},
       "operator '==' takes one value"},
      {"knob twice", twice, "listed twice"},
      {"no knobs", json{{"schema", "railkit.space/1"}, {"knobs", json::array()}}, "knobs must be a non-empty list"},
      {"no values", one_knob_doc({{"name", "NCCL_IB_TC"}, {"values", json::array()}}), "no values"},
      {"numeric enum", one_knob_doc({{"name", "NCCL_PROTO"}, {"values", json::array({"LL"})}, {"numeric", true}}), "numeric knobs must be numbers"},
      {"collective", one_knob_doc({{"name", "NCCL_IB_TC"}, {"values", json::array({98})}, {"collectives", json::array({"allreduce"})}}),
       "unknown collective 'allreduce'"},
      {"fixed dcqcn",
       json{{"schema", "railkit.space/1"}, {"fixed", {{"roce_np.cnp_dscp", 48}}}, {"knobs", json::array({qps})}},
       "only environment tunables"},
      {"not an object", json::array(), "must be a JSON object"},
  };
  for (const auto& c : cases) {
    const std::string m = usage_error_of([&] { parse_space(c.doc, "my-space.json"); });
    EXPECT_EQ(m.rfind("my-space.json", 0), 0u) << c.what << ": " << m;
    EXPECT_NE(m.find(c.problem), std::string::npos) << c.what << ": " << m;
  }
}

const char* const kCustomSpace = R"({
  "schema": "railkit.space/1",
  "name": "custom",
  "doc": "a hand-written space",
  "fixed": {"NCCL_IB_TC": 106, "NCCL_PXN_DISABLE": true},
  "knobs": [
    {"name": "NCCL_MIN_NCHANNELS", "values": [null, 8, "2", 4], "numeric": true},
    {"name": "NCCL_PROTO", "values": [null, "LL", "Simple"], "baseline": "Simple",
     "when": {"knob": "NCCL_MIN_NCHANNELS", "op": "in", "values": [2, "4"]}},
    {"name": "OMPI_MCA_coll_tuned_allreduce_algorithm", "values": [4, 5], "baseline": 5, "numeric": false,
     "collectives": ["all_reduce"]},
    {"name": "OMPI_MCA_coll_tuned_allreduce_algorithm_segmentsize", "values": [0, 8192],
     "when": {"knob": "OMPI_MCA_coll_tuned_allreduce_algorithm", "op": "==", "value": 5}}
  ]
})";

TEST(SpaceLoad, MistypedTopLevelFieldsAreUsageErrors) {
  // Issue 14: "name": null read as a raw type_error (internal error, exit 1).
  const json qps = {{"name", "NCCL_IB_QPS_PER_CONNECTION"}, {"values", {1, 2}}};
  json null_name = one_knob_doc(qps);
  null_name["name"] = nullptr;
  EXPECT_EQ(usage_error_of([&] { parse_space(null_name, "my-space.json"); }), "my-space.json: name must be a string, not null");
  json number_schema = one_knob_doc(qps);
  number_schema["schema"] = 5;
  EXPECT_EQ(usage_error_of([&] { parse_space(number_schema, "my-space.json"); }),
            "my-space.json: schema must be a string, not number");
}

TEST(SpaceLoad, ValidSpaceFile) {
  ScratchDir d;
  const auto p = d.write("custom.json", kCustomSpace);
  const Space s = load_space(p);
  EXPECT_EQ(s.name, "custom");
  EXPECT_EQ(s.source, p.string());
  EXPECT_EQ(s.doc, "a hand-written space");
  EXPECT_EQ(s.fixed_env, (std::map<std::string, std::string>{{"NCCL_IB_TC", "106"}, {"NCCL_PXN_DISABLE", "1"}}));
  ASSERT_EQ(s.knobs.size(), 4u);
  const Knob& ch = s.knobs[0];
  EXPECT_TRUE(ch.numeric);
  EXPECT_EQ(ch.values, (std::vector<std::string>{"", "2", "4", "8"}));  // unset first, then ascending
  EXPECT_EQ(ch.baseline, 0u);
  const Knob& proto = s.knobs[1];
  EXPECT_FALSE(proto.numeric);
  EXPECT_EQ(proto.values, (std::vector<std::string>{"", "LL", "Simple"}));
  EXPECT_EQ(proto.baseline, 2u);
  ASSERT_TRUE(proto.when);
  EXPECT_EQ(*proto.when, (Condition{"NCCL_MIN_NCHANNELS", "in", {"2", "4"}}));
  const Knob& alg = s.knobs[2];
  EXPECT_FALSE(alg.numeric);
  EXPECT_EQ(alg.baseline, 1u);
  EXPECT_EQ(alg.collectives, (std::vector<std::string>{"all_reduce"}));
  EXPECT_TRUE(s.knobs[3].numeric);  // integers default to numeric
  EXPECT_EQ(*s.knobs[3].when, (Condition{"OMPI_MCA_coll_tuned_allreduce_algorithm", "==", {"5"}}));

  // The name defaults to the file's stem; resolve_space takes a path too.
  json j = json::parse(kCustomSpace);
  j.erase("name");
  const auto p2 = d.write("stem-name.json", j.dump());
  EXPECT_EQ(resolve_space(p2.string()).name, "stem-name");
  EXPECT_EQ(resolve_space("nccl-proto").source, "built-in");

  const auto bad = d.write("bad.json", "{\"schema\":");
  const std::string m = usage_error_of([&] { load_space(bad); });
  EXPECT_NE(m.find(bad.string() + ": not JSON"), std::string::npos) << m;
}

void expect_same_space(const Space& a, const Space& b) {
  EXPECT_EQ(a.name, b.name);
  EXPECT_EQ(a.doc, b.doc);
  EXPECT_EQ(a.fixed_env, b.fixed_env);
  ASSERT_EQ(a.knobs.size(), b.knobs.size());
  for (std::size_t i = 0; i < a.knobs.size(); ++i) {
    SCOPED_TRACE(a.knobs[i].name);
    EXPECT_EQ(a.knobs[i].name, b.knobs[i].name);
    EXPECT_EQ(a.knobs[i].tunable, b.knobs[i].tunable);
    EXPECT_EQ(a.knobs[i].values, b.knobs[i].values);
    EXPECT_EQ(a.knobs[i].baseline, b.knobs[i].baseline);
    EXPECT_EQ(a.knobs[i].numeric, b.knobs[i].numeric);
    EXPECT_EQ(a.knobs[i].collectives, b.knobs[i].collectives);
    EXPECT_EQ(a.knobs[i].when, b.knobs[i].when);
  }
}

TEST(SpaceLoad, SpaceToJsonRoundTrip) {
  std::vector<Space> spaces;
  for (auto name : kBuiltinSpaces) spaces.push_back(builtin_space(name));
  spaces.push_back(parse_space(json::parse(kCustomSpace), "custom.json"));
  for (const Space& s : spaces) {
    SCOPED_TRACE(s.name);
    const std::string text = space_to_json(s).dump();
    const Space back = parse_space(json::parse(text), "journal");
    expect_same_space(s, back);
    EXPECT_EQ(space_to_json(back).dump(), text);  // a fixed point
  }
}

TEST(SpaceLoad, RestrictTo) {
  const Space o = builtin_space("ompi-coll");
  const std::string p = "OMPI_MCA_coll_tuned_";
  const Space ar = restrict_to(o, {"all_reduce"});
  EXPECT_EQ(knob_names(ar), (std::vector<std::string>{p + "allreduce_algorithm", p + "allreduce_algorithm_segmentsize"}));
  EXPECT_TRUE(ar.knobs[1].when);
  EXPECT_EQ(ar.fixed_env, o.fixed_env);
  // The segment size depends on the all-reduce algorithm, which all-gather drops: at its baseline
  // (0) the condition fails, so the segment size goes too.
  EXPECT_EQ(knob_names(restrict_to(o, {"all_gather"})), (std::vector<std::string>{p + "allgather_algorithm"}));
  EXPECT_EQ(knob_names(restrict_to(o, {"all_gather", "alltoall", "sendrecv"})),
            (std::vector<std::string>{p + "allgather_algorithm", p + "alltoall_algorithm"}));
  EXPECT_EQ(restrict_to(o, {"all_reduce", "all_gather", "reduce_scatter", "alltoall"}).knobs.size(), o.knobs.size());

  // Collective-agnostic knobs stay for any collective.
  const Space np = builtin_space("nccl-proto");
  EXPECT_EQ(knob_names(restrict_to(np, {"sendrecv"})), knob_names(np));

  // A condition on a dropped knob that holds at its baseline is decided once: the knob stays,
  // unconditional.
  const Space c = parse_space(json::parse(kCustomSpace), "custom.json");
  const Space cg = restrict_to(c, {"all_gather"});
  EXPECT_EQ(knob_names(cg), (std::vector<std::string>{"NCCL_MIN_NCHANNELS", "NCCL_PROTO", p + "allreduce_algorithm_segmentsize"}));
  EXPECT_FALSE(cg.knobs[2].when);
  EXPECT_TRUE(cg.knobs[1].when);

  const std::string m = usage_error_of([&] { restrict_to(o, {"broadcast", "reduce"}); });
  EXPECT_NE(m.find("ompi-coll"), std::string::npos) << m;
  EXPECT_NE(m.find("broadcast,reduce"), std::string::npos) << m;
}

TEST(SpaceLoad, ConfigJsonRoundTrip) {
  const Space s = builtin_space("nccl-net");
  for (const Config& c : all_configs(s)) {
    const auto j = config_to_json(s, c);
    EXPECT_EQ(config_from_json(s, json::parse(j.dump()), "w"), c) << j.dump();
  }
  // Inactive knobs are left out, "" is null.
  Config c = baseline_config(s);
  c[0] = 1;  // NCCL_PXN_DISABLE=1 turns NCCL_P2P_PXN_LEVEL off
  c[1] = 2;
  const auto j = config_to_json(s, c);
  EXPECT_EQ(j["NCCL_PXN_DISABLE"], "1");
  EXPECT_FALSE(j.contains("NCCL_P2P_PXN_LEVEL"));
  EXPECT_TRUE(j["NCCL_CROSS_NIC"].is_null());
  EXPECT_EQ(config_from_json(s, json::parse(j.dump()), "w"), canonical(s, c));
  // Integers are taken as their text; missing knobs stay at the baseline.
  const Config from_int = config_from_json(s, json{{"NCCL_IB_TC", 106}}, "w");
  Config want = baseline_config(s);
  want[8] = 2;
  EXPECT_EQ(from_int, want);
  EXPECT_EQ(config_from_json(s, json::object(), "w"), baseline_config(s));
}

TEST(SpaceLoad, ConfigFromJsonErrors) {
  const Space s = builtin_space("nccl-net");
  const struct {
    json j;
    const char* problem;
  } cases[] = {
      {json::array(), "must be an object"},
      {json{{"NCCL_ALGO", "Ring"}}, "'NCCL_ALGO' is not a knob of space nccl-net"},
      {json{{"NCCL_IB_TC", 0}}, "NCCL_IB_TC=0 is not a value of space nccl-net"},
      {json{{"NCCL_IB_TC", 1.5}}, "NCCL_IB_TC=1.5 is not a value of space nccl-net"},
      {json{{"NCCL_IB_TC", json::array()}}, "values must be"},
  };
  for (const auto& c : cases) {
    const std::string m = usage_error_of([&] { config_from_json(s, c.j, "best.json"); });
    EXPECT_EQ(m.rfind("best.json", 0), 0u) << m;
    EXPECT_NE(m.find(c.problem), std::string::npos) << m;
  }
}

TEST(SpaceLoad, ResolveUnknownListsBuiltins) {
  const std::string m = usage_error_of([] { resolve_space("/nonexistent/space.json"); });
  EXPECT_NE(m.find("/nonexistent/space.json"), std::string::npos) << m;
  for (auto n : kBuiltinSpaces) EXPECT_NE(m.find(n), std::string::npos) << m;
}

// ---------------------------------------------------------------- ompi-coll sized by ompi_info

TEST(SpaceLoad, OmpiCollTakesTheAlgorithmCountsOmpiInfoLists) {
  const std::string text =
      "mca:coll:tuned:param:coll_tuned_allreduce_algorithm_count:value:8\n"
      "mca:coll:tuned:param:coll_tuned_allreduce_algorithm_count:source:default\n"
      "mca:coll:tuned:param:coll_tuned_allgather_algorithm_count:value:3\n"
      "mca:coll:tuned:param:coll_tuned_alltoall_algorithm_count:value:junk\n"
      "mca:coll:tuned:param:coll_tuned_bcast_algorithm:value:0\n";
  const OmpiAlgorithmCounts c = parse_ompi_info_counts(text);
  EXPECT_EQ(c, (OmpiAlgorithmCounts{{"allreduce", 8}, {"allgather", 3}}));
  const Space s = builtin_space("ompi-coll", c);
  auto values_of = [&](const std::string& name) {
    for (const auto& k : s.knobs)
      if (k.name == name) return k.values;
    return std::vector<std::string>{};
  };
  EXPECT_EQ(values_of("OMPI_MCA_coll_tuned_allreduce_algorithm").size(), 8u);
  EXPECT_EQ(values_of("OMPI_MCA_coll_tuned_allgather_algorithm"), (std::vector<std::string>{"0", "1", "2"}));
  EXPECT_EQ(values_of("OMPI_MCA_coll_tuned_alltoall_algorithm").size(), 6u);  // Open MPI 4.1's, as without ompi_info
  EXPECT_EQ(values_of("OMPI_MCA_coll_tuned_reduce_scatter_algorithm").size(), 5u);
  // Never beyond the tunables table's range.
  const Space big = builtin_space("ompi-coll", {{"allreduce", 99}});
  EXPECT_EQ(big.knobs.front().values.back(), std::to_string(find_tunable("OMPI_MCA_coll_tuned_allreduce_algorithm")->max));
}

}  // namespace
}  // namespace railkit::tuner
