// Built-in spaces, the space file format (railkit.space/1) and the JSON forms of spaces and
// configurations. The configuration math is in tuner/space.cpp.
#include <algorithm>
#include <fstream>
#include <limits>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include "core/collectives.hpp"
#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "core/json_text.hpp"
#include "core/strings.hpp"
#include "core/yaml.hpp"
#include "tuner/space.hpp"

namespace railkit::tuner {
namespace {

using json = nlohmann::json;
using ojson = nlohmann::ordered_json;

/// A knob description for the built-in tables; checked by the same code as a space file.
struct KnobSpec {
  std::string_view name;
  std::vector<std::string> values;
  std::string_view baseline;  ///< "" = the first value
  std::vector<std::string> collectives;
  std::optional<Condition> when;
  std::optional<bool> numeric = std::nullopt;  ///< default: integer types are numeric
};

const Tunable& tunable_or_throw(const std::string& name, const std::string& where) {
  const Tunable* t = find_tunable(name);
  if (!t) throw UsageError(fmt::format("{}: unknown tunable '{}' (see `railkit tune --list-tunables`)", where, printable(name)));
  return *t;
}

bool numeric_type(TunableType t) { return t == TunableType::Int || t == TunableType::Pow2 || t == TunableType::Decimal; }

/// A valid value of a numeric knob as a number (integers exactly; decimals as doubles).
double numeric_value(const Tunable& t, const std::string& v) {
  if (const auto i = tunable_int(t, v)) return static_cast<double>(*i);
  return to_double(v).value_or(0);
}

/// Checks a knob against the table and the knobs before it; fills tunable, baseline, numeric order.
Knob make_knob(const std::string& source, std::string name, std::vector<std::string> values, std::optional<std::string> baseline,
               std::optional<bool> numeric, std::vector<std::string> collectives, std::optional<Condition> when,
               const std::vector<Knob>& earlier) {
  const std::string where = source + ": knob " + name;
  Knob k;
  k.tunable = &tunable_or_throw(name, source);
  k.name = std::move(name);
  if (values.empty()) throw UsageError(where + ": no values");
  std::set<std::string> seen;
  for (const auto& v : values) {
    if (!seen.insert(v).second) throw UsageError(fmt::format("{}: value '{}' listed twice", where, printable(v)));
    if (!v.empty()) validate_tunable_value(*k.tunable, v, source);
  }
  k.numeric = numeric.value_or(numeric_type(k.tunable->type));
  if (k.numeric) {
    if (!numeric_type(k.tunable->type) && k.tunable->type != TunableType::Bool)
      throw UsageError(where + ": numeric knobs must be numbers");
    // Non-empty values ascending; "" (unset) stays first.
    std::stable_sort(values.begin(), values.end(), [&](const std::string& a, const std::string& b) {
      if (a.empty() || b.empty()) return a.empty() && !b.empty();
      return numeric_value(*k.tunable, a) < numeric_value(*k.tunable, b);
    });
  }
  k.values = std::move(values);
  const std::string base = baseline.value_or(k.values.front());
  const auto it = std::find(k.values.begin(), k.values.end(), base);
  if (it == k.values.end()) throw UsageError(fmt::format("{}: baseline '{}' is not one of its values", where, printable(base)));
  k.baseline = static_cast<std::size_t>(it - k.values.begin());
  for (const auto& c : collectives)
    if (!find_collective(c))
      throw UsageError(fmt::format("{}: unknown collective '{}'", where, printable(c)));
  k.collectives = std::move(collectives);
  if (when) {
    static constexpr std::string_view kOps[] = {"==", "!=", ">", ">=", "<", "<=", "in", "not-in"};
    if (std::find(std::begin(kOps), std::end(kOps), when->op) == std::end(kOps))
      throw UsageError(fmt::format("{}: condition operator '{}' is not one of ==, !=, >, >=, <, <=, in, not-in", where, printable(when->op)));
    if (std::none_of(earlier.begin(), earlier.end(), [&](const Knob& e) { return e.name == when->knob; }))
      throw UsageError(fmt::format("{}: condition on '{}', which is not an earlier knob of the space", where, printable(when->knob)));
    if (when->values.empty()) throw UsageError(where + ": condition without a value");
    if (when->op != "in" && when->op != "not-in" && when->values.size() != 1)
      throw UsageError(fmt::format("{}: operator '{}' takes one value", where, printable(when->op)));
  }
  k.when = std::move(when);
  for (const auto& e : earlier)
    if (e.name == k.name) throw UsageError(where + ": listed twice");
  return k;
}

Space from_specs(std::string name, std::string doc, std::map<std::string, std::string> fixed, const std::vector<KnobSpec>& specs) {
  Space s;
  s.name = std::move(name);
  s.source = "built-in";
  s.doc = std::move(doc);
  s.fixed_env = std::move(fixed);
  for (const auto& ks : specs) {
    std::optional<std::string> base;
    if (!ks.baseline.empty()) base = std::string(ks.baseline);
    s.knobs.push_back(make_knob("built-in space " + s.name, std::string(ks.name), ks.values, base, ks.numeric,
                                ks.collectives, ks.when, s.knobs));
  }
  return s;
}

std::vector<std::string> ints(int from, int to) {
  std::vector<std::string> v;
  for (int i = from; i <= to; ++i) v.push_back(std::to_string(i));
  return v;
}

// Open MPI 4.1's tuned collectives (the algorithm ids `ompi_info --param coll tuned --level 9`
// lists). Only the segmented ring (5) of all-reduce uses a forced segment size.
Space ompi_coll(const OmpiAlgorithmCounts& counts) {
  const std::string p = "OMPI_MCA_coll_tuned_";
  // Algorithm ids 0 .. count-1; the count from ompi_info when given, within the tunables table.
  auto ids = [&](const std::string& coll, int count_41) {
    auto it = counts.find(coll);
    int n = it != counts.end() ? it->second : count_41;
    const Tunable* t = find_tunable(p + coll + "_algorithm");
    n = std::clamp(n, 1, static_cast<int>(t->max) + 1);
    return ints(0, n - 1);
  };
  std::string doc = "Open MPI tuned collectives: forced algorithm per collective (0 = Open MPI's own decision); ids ";
  doc += counts.empty() ? "of Open MPI 4.1 (ompi_info not consulted)" : "as ompi_info lists them";
  return from_specs(
      "ompi-coll", doc, {{p + "use_dynamic_rules", "1"}},
      {
          {p + "allreduce_algorithm", ids("allreduce", 7), "", {"all_reduce"}, std::nullopt, false},
          {p + "allreduce_algorithm_segmentsize", {"0", "8192", "32768", "131072", "524288"}, "", {"all_reduce"},
           Condition{p + "allreduce_algorithm", "==", {"5"}}},
          {p + "allgather_algorithm", ids("allgather", 7), "", {"all_gather"}, std::nullopt, false},
          {p + "reduce_scatter_algorithm", ids("reduce_scatter", 5), "", {"reduce_scatter"}, std::nullopt, false},
          {p + "alltoall_algorithm", ids("alltoall", 6), "", {"alltoall"}, std::nullopt, false},
      });
}

Space nccl_proto() {
  return from_specs("nccl-proto", "NCCL implementation choices (algorithm, protocol) and resources (channels, threads, buffer)", {},
                    {
                        {"NCCL_ALGO", {"", "Ring", "Tree", "NVLS", "PAT"}, "", {}, std::nullopt},
                        {"NCCL_PROTO", {"", "LL", "LL128", "Simple"}, "", {}, std::nullopt},
                        {"NCCL_MIN_NCHANNELS", {"", "2", "4", "8", "16", "32"}, "", {}, std::nullopt},
                        {"NCCL_MAX_NCHANNELS", {"", "2", "4", "8", "16", "32"}, "", {}, std::nullopt},
                        {"NCCL_NTHREADS", {"", "128", "256", "512"}, "", {}, std::nullopt},
                        {"NCCL_BUFFSIZE", {"", "1048576", "2097152", "4194304", "8388608", "16777216"}, "", {}, std::nullopt},
                    });
}

Space nccl_net() {
  return from_specs(
      "nccl-net", "NCCL network settings: PXN, rails, queue pairs, GPUDirect RDMA, adaptive routing, ECN-capable traffic classes", {},
      {
          {"NCCL_PXN_DISABLE", {"", "1"}, "", {}, std::nullopt},
          {"NCCL_P2P_PXN_LEVEL", {"", "0", "1"}, "", {}, Condition{"NCCL_PXN_DISABLE", "!=", {"1"}}},
          {"NCCL_CROSS_NIC", {"", "0", "1"}, "", {}, std::nullopt},
          {"NCCL_IB_QPS_PER_CONNECTION", {"", "2", "4", "8"}, "", {}, std::nullopt},
          {"NCCL_IB_SPLIT_DATA_ON_QPS", {"", "1"}, "", {}, Condition{"NCCL_IB_QPS_PER_CONNECTION", ">", {"1"}}},
          {"NCCL_NCHANNELS_PER_NET_PEER", {"", "1", "4", "8"}, "", {}, std::nullopt},
          {"NCCL_NET_GDR_LEVEL", {"", "PIX", "PHB", "SYS"}, "", {}, std::nullopt},
          {"NCCL_IB_ADAPTIVE_ROUTING", {"", "1"}, "", {}, std::nullopt},
          // ECN-capable classes: DSCP << 2 | ECT(0): 98 = DSCP 24, 106 = DSCP 26, 138 = DSCP 34.
          {"NCCL_IB_TC", {"", "98", "106", "138"}, "", {}, std::nullopt},
      });
}

// mlx5 DCQCN attributes within the vendor ranges, around the values Barre (ATC'25) retuned.
// "" keeps each NIC's current value.
Space dcqcn() {
  return from_specs("dcqcn", "DCQCN reaction/notification point attributes of every RDMA NIC (mlx5 sysfs/debugfs)", {},
                    {
                        {"roce_rp.rpg_time_reset", {"", "20", "50", "100", "300"}, "", {}, std::nullopt},
                        {"roce_rp.rpg_ai_rate", {"", "5", "10", "20"}, "", {}, std::nullopt},
                        {"roce_rp.rpg_hai_rate", {"", "50", "100", "200"}, "", {}, std::nullopt},
                        {"roce_rp.rpg_min_dec_fac", {"", "50", "80", "95"}, "", {}, std::nullopt},
                        {"roce_rp.rate_reduce_monitor_period", {"", "1", "2", "4"}, "", {}, std::nullopt},
                        {"roce_np.min_time_between_cnps", {"", "0", "2", "4"}, "", {}, std::nullopt},
                    });
}

// Switch ECN marking of the RoCE queues, around the DCQCN paper's (Kmin 5 kB, Kmax 200 kB, Pmax 1%:
// the baseline, the simulator's default preset) up to HPCC's at 400 Gb/s (Kmax 6.4 MB, Pmax 0.2).
// Only the simulator applies it; the profile records the winner as advice for the switches.
Space switch_ecn() {
  return from_specs("switch-ecn",
                    "ECN Kmin, Kmax and Pmax of the switches' RoCE queues: simulator only (-- --backend sim); a profile "
                    "records the winner as advice to configure on the switches",
                    {},
                    {
                        {"switch.ecn.kmin_bytes", {"5000", "20000", "50000", "100000", "200000", "400000"}, "", {}, std::nullopt},
                        {"switch.ecn.kmax_bytes", {"200000", "400000", "800000", "1600000", "6400000"}, "", {}, std::nullopt},
                        {"switch.ecn.pmax", {"0.01", "0.05", "0.1", "0.2", "0.5", "1"}, "", {}, std::nullopt},
                    });
}

std::string value_text(const json& v, const std::string& where) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_null()) return "";
  if (v.is_number_integer()) return std::to_string(v.get<long long>());
  if (v.is_number_float()) return fmt::format("{}", v.get<double>());  // shortest text that reads back the same
  if (v.is_boolean()) return v.get<bool>() ? "1" : "0";
  throw UsageError(where + ": values must be strings, numbers, booleans or null (unset)");
}

std::vector<std::string> string_list(const json& j, const std::string& where) {
  if (!j.is_array()) throw UsageError(where + ": must be a list");
  std::vector<std::string> out;
  for (const auto& v : j) out.push_back(value_text(v, where));
  return out;
}

void check_keys(const json& j, std::initializer_list<std::string_view> allowed, const std::string& where) {
  for (auto it = j.begin(); it != j.end(); ++it)
    if (std::find(allowed.begin(), allowed.end(), it.key()) == allowed.end())
      throw UsageError(fmt::format("{}: unknown key '{}'", where, printable(it.key())));
}

}  // namespace

OmpiAlgorithmCounts parse_ompi_info_counts(const std::string& text) {
  // mca:coll:tuned:param:coll_tuned_allreduce_algorithm_count:value:7
  OmpiAlgorithmCounts counts;
  std::istringstream in(text);
  const std::string head = "mca:coll:tuned:param:coll_tuned_";
  const std::string tail = "_algorithm_count:value:";
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(head, 0) != 0) continue;
    const size_t t = line.find(tail, head.size());
    if (t == std::string::npos) continue;
    const auto n = to_int(std::string_view(line).substr(t + tail.size()));
    if (n && *n > 0 && *n <= std::numeric_limits<int>::max())
      counts[line.substr(head.size(), t - head.size())] = static_cast<int>(*n);
  }
  return counts;
}

Space builtin_space(std::string_view name, const OmpiAlgorithmCounts& ompi_counts) {
  if (name == "ompi-coll") return ompi_coll(ompi_counts);
  if (name == "nccl-proto") return nccl_proto();
  if (name == "nccl-net") return nccl_net();
  if (name == "dcqcn") return dcqcn();
  if (name == "switch-ecn") return switch_ecn();
  std::string names;
  for (auto n : kBuiltinSpaces) names += (names.empty() ? "" : ", ") + std::string(n);
  throw UsageError(fmt::format("--space {}: no such built-in space and no such file (built-in: {})", name, names));
}

namespace {

Space parse_space_fields(const json& doc, const std::string& source) {
  if (!doc.is_object()) throw UsageError(source + ": a space must be a JSON object");
  check_keys(doc, {"schema", "name", "doc", "fixed", "knobs"}, source);
  if (field_or(doc, "schema", "", source) != kSpaceSchema)
    throw UsageError(fmt::format("{}: schema must be \"{}\"", source, kSpaceSchema));
  Space s;
  s.source = source;
  s.name = field_or(doc, "name", std::filesystem::path(source).stem().string(), source);
  if (doc.contains("doc")) {
    if (!doc["doc"].is_string()) throw UsageError(source + ": doc must be a string");
    s.doc = doc["doc"].get<std::string>();
  }
  if (doc.contains("fixed")) {
    if (!doc["fixed"].is_object()) throw UsageError(source + ": fixed must be an object of NAME: value");
    for (auto it = doc["fixed"].begin(); it != doc["fixed"].end(); ++it) {
      const std::string v = value_text(it.value(), source + ": fixed." + it.key());
      const Tunable& t = tunable_or_throw(it.key(), source + ": fixed");
      if (t.scope != TunableScope::Env) throw UsageError(source + ": fixed." + it.key() + ": only environment tunables can be fixed");
      validate_tunable_value(t, v, source + ": fixed");
      s.fixed_env[it.key()] = v;
    }
  }
  if (!doc.contains("knobs") || !doc["knobs"].is_array() || doc["knobs"].empty())
    throw UsageError(source + ": knobs must be a non-empty list");
  for (size_t i = 0; i < doc["knobs"].size(); ++i) {
    const json& kj = doc["knobs"][i];
    const std::string where = fmt::format("{}: knobs[{}]", source, i);
    if (!kj.is_object() || !kj.contains("name") || !kj["name"].is_string())
      throw UsageError(where + ": each knob is an object with a string name");
    check_keys(kj, {"name", "values", "baseline", "numeric", "collectives", "when"}, where);
    if (!kj.contains("values")) throw UsageError(where + ": values missing");
    std::optional<std::string> base;
    if (kj.contains("baseline")) base = value_text(kj["baseline"], where + ".baseline");
    std::optional<bool> numeric;
    if (kj.contains("numeric")) {
      if (!kj["numeric"].is_boolean()) throw UsageError(where + ".numeric: must be true or false");
      numeric = kj["numeric"].get<bool>();
    }
    std::vector<std::string> colls;
    if (kj.contains("collectives")) colls = string_list(kj["collectives"], where + ".collectives");
    std::optional<Condition> when;
    if (kj.contains("when")) {
      const json& w = kj["when"];
      if (!w.is_object() || !w.contains("knob") || !w["knob"].is_string() || !w.contains("op") || !w["op"].is_string())
        throw UsageError(where + ".when: must be {\"knob\": NAME, \"op\": OP, \"value\": V} (or \"values\": [...])");
      check_keys(w, {"knob", "op", "value", "values"}, where + ".when");
      Condition c{w["knob"].get<std::string>(), w["op"].get<std::string>(), {}};
      if (w.contains("values")) c.values = string_list(w["values"], where + ".when.values");
      if (w.contains("value")) c.values.push_back(value_text(w["value"], where + ".when.value"));
      when = std::move(c);
    }
    s.knobs.push_back(make_knob(source, kj["name"].get<std::string>(), string_list(kj["values"], where + ".values"), base, numeric,
                                std::move(colls), std::move(when), s.knobs));
  }
  return s;
}

}  // namespace

Space parse_space(const json& doc, const std::string& source) {
  return with_json_errors(source, [&] { return parse_space_fields(doc, source); });
}

Space load_space(const std::filesystem::path& path) {
  const std::string text = read_file(path);
  json j;
  if (is_yaml_path(path.string())) {
    j = parse_yaml(text, path.string());
  } else {
    try {
      j = parse_json(text);
    } catch (const json::parse_error& e) {
      throw UsageError(path.string() + ": not JSON: " + json_error_text(e));
    }
  }
  return parse_space(j, path.string());
}

Space resolve_space(const std::string& name_or_path, const OmpiAlgorithmCounts& ompi_counts) {
  if (std::find(std::begin(kBuiltinSpaces), std::end(kBuiltinSpaces), name_or_path) != std::end(kBuiltinSpaces))
    return builtin_space(name_or_path, ompi_counts);
  std::error_code ec;
  if (std::filesystem::is_regular_file(name_or_path, ec)) return load_space(name_or_path);
  return builtin_space(name_or_path);  // throws, listing the built-in names
}

ojson space_to_json(const Space& s) {
  ojson j;
  j["schema"] = kSpaceSchema;
  j["name"] = s.name;
  if (!s.doc.empty()) j["doc"] = s.doc;
  if (!s.fixed_env.empty()) j["fixed"] = s.fixed_env;
  j["knobs"] = ojson::array();
  for (const auto& k : s.knobs) {
    ojson kj;
    kj["name"] = k.name;
    ojson vals = ojson::array();
    for (const auto& v : k.values) vals.push_back(v.empty() ? ojson(nullptr) : ojson(v));
    kj["values"] = vals;
    kj["baseline"] = k.values[k.baseline].empty() ? ojson(nullptr) : ojson(k.values[k.baseline]);
    kj["numeric"] = k.numeric;
    if (!k.collectives.empty()) kj["collectives"] = k.collectives;
    if (k.when) kj["when"] = ojson{{"knob", k.when->knob}, {"op", k.when->op}, {"values", k.when->values}};
    j["knobs"].push_back(kj);
  }
  return j;
}

Space restrict_to(const Space& s, const std::vector<std::string>& collectives) {
  Space r = s;
  r.knobs.clear();
  const Config base = baseline_config(s);
  for (std::size_t k = 0; k < s.knobs.size(); ++k) {
    const Knob& kn = s.knobs[k];
    const bool affects = kn.collectives.empty() || std::any_of(kn.collectives.begin(), kn.collectives.end(), [&](const std::string& c) {
                           return std::find(collectives.begin(), collectives.end(), c) != collectives.end();
                         });
    if (!affects) continue;
    Knob copy = kn;
    if (copy.when && std::none_of(r.knobs.begin(), r.knobs.end(), [&](const Knob& e) { return e.name == copy.when->knob; })) {
      // Its condition names a dropped knob, which stays at its baseline: decide it once here.
      if (!knob_active(s, base, k)) continue;
      copy.when.reset();
    }
    r.knobs.push_back(std::move(copy));
  }
  if (r.knobs.empty()) {
    std::string cs;
    for (const auto& c : collectives) cs += (cs.empty() ? "" : ",") + c;
    throw UsageError(fmt::format("space {}: no knob affects the collectives benchmarked (--coll {})", s.name, cs));
  }
  return r;
}

ojson config_to_json(const Space& s, const Config& c) {
  ojson j = ojson::object();
  for (std::size_t k = 0; k < s.knobs.size(); ++k) {
    if (!knob_active(s, c, k)) continue;
    const std::string& v = s.knobs[k].values[c[k]];
    j[s.knobs[k].name] = v.empty() ? ojson(nullptr) : ojson(v);
  }
  return j;
}

Config config_from_json(const Space& s, const json& j, const std::string& where) {
  if (!j.is_object()) throw UsageError(where + ": a configuration must be an object");
  Config c = baseline_config(s);
  for (auto it = j.begin(); it != j.end(); ++it) {
    const auto kn = std::find_if(s.knobs.begin(), s.knobs.end(), [&](const Knob& k) { return k.name == it.key(); });
    if (kn == s.knobs.end()) throw UsageError(fmt::format("{}: '{}' is not a knob of space {}", where, printable(it.key()), s.name));
    const std::string v = value_text(it.value(), where);
    const auto vi = std::find(kn->values.begin(), kn->values.end(), v);
    if (vi == kn->values.end()) throw UsageError(fmt::format("{}: {}={} is not a value of space {}", where, it.key(), printable(v), s.name));
    c[static_cast<std::size_t>(kn - s.knobs.begin())] = static_cast<std::size_t>(vi - kn->values.begin());
  }
  return canonical(s, c);
}

}  // namespace railkit::tuner
