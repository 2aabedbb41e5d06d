// The matrix of a sweep: axes, matrix files and presets as factors, their cartesian product,
// each round's order, and the knobs that cannot reach a backend (sweep/sweep.hpp).
#include "sweep/sweep.hpp"

#include <algorithm>
#include <cctype>
#include <random>
#include <set>

#include <fmt/format.h>

#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "core/json_text.hpp"
#include "core/profile.hpp"
#include "core/strings.hpp"
#include "core/tunables.hpp"
#include "launch/bench_run.hpp"

namespace railkit::sweep {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

bool valid_env_name(std::string_view n) {
  if (n.empty() || !(std::isalpha(static_cast<unsigned char>(n[0])) || n[0] == '_')) return false;
  return std::all_of(n.begin(), n.end(), [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
}

std::string env_value_text(const json& v, const std::string& where) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_number_integer()) return std::to_string(v.get<long long>());
  throw UsageError(where + ": value must be a string or an integer, got " + json_dump(v));
}

/// A matrix file's `env`: variables a profile may set (env_key_allowed), nothing else.
std::map<std::string, std::string> env_from_json(const json& j, const std::string& where) {
  if (!j.is_object()) throw UsageError(where + ": `env` must be an object of NAME: value");
  std::map<std::string, std::string> env;
  for (const auto& [k, v] : j.items()) {
    if (!valid_env_name(k)) throw UsageError(where + ": invalid environment variable name '" + k + "'");
    if (!env_key_allowed(k))
      throw UsageError(fmt::format("{}: env {}: not an allowed environment variable (a matrix file may set what a "
                                   "profile may: NCCL_*, NVSHMEM_*, UCX_*, OMPI_MCA_*, TORCH_NCCL_*, RAILKIT_*, "
                                   "CUDA_DEVICE_MAX_CONNECTIONS)",
                                   where, k));
    env[k] = env_value_text(v, where + " env " + k);
  }
  return env;
}

/// A matrix file's `args`, checked as `--` bench arguments are (no -J/--output_file: the sweep
/// writes one results document per launch).
std::vector<std::string> args_from_json(const json& j, const std::string& where) {
  if (!j.is_array()) throw UsageError(where + ": `args` must be an array of strings");
  std::vector<std::string> out;
  for (const auto& a : j) {
    if (!a.is_string()) throw UsageError(where + ": `args` must be an array of strings");
    out.push_back(a.get<std::string>());
  }
  try {
    launch::check_bench_args(out, "sweep");
  } catch (const UsageError& e) {
    throw UsageError(where + ": `args`: " + e.what());
  }
  return out;
}

}  // namespace

// ---------------------------------------------------------------------------- matrix

Factor parse_axis(std::string_view spec) {
  const std::string what = "--axis " + std::string(spec);
  const size_t eq = spec.find('=');
  if (eq == std::string_view::npos) throw UsageError(what + ": expected NAME=v1,v2,...");
  const std::string name(spec.substr(0, eq));
  if (!valid_env_name(name)) throw UsageError(what + ": '" + name + "' is not a valid environment variable name");
  const std::string_view values = spec.substr(eq + 1);
  if (values.empty()) throw UsageError(what + ": no values after '='");
  Factor f{"--axis " + name, {}};
  std::set<std::string> seen;
  for (auto& v : split(values, ',')) {
    if (v.empty()) throw UsageError(what + ": empty value in the list");
    if (!seen.insert(v).second) throw UsageError(what + ": value '" + v + "' repeats");
    f.choices.push_back(Choice{name + "=" + v, {{name, v}}, {}});
  }
  return f;
}

Factor parse_matrix(const json& doc, const std::string& source) {
  const json* configs = &doc;
  std::map<std::string, std::string> common_env;
  std::vector<std::string> common_args;
  if (doc.is_object()) {
    if (doc.contains("schema") && doc["schema"] != kMatrixSchema)
      throw UsageError(source + ": schema is " + json_dump(doc["schema"]) + ", expected \"" + kMatrixSchema + "\"");
    for (const auto& [k, v] : doc.items())
      if (k != "schema" && k != "env" && k != "args" && k != "configs")
        throw UsageError(source + ": unknown key '" + k + "' (expected schema, env, args, configs)");
    if (!doc.contains("configs")) throw UsageError(source + ": no `configs` array");
    configs = &doc["configs"];
    if (doc.contains("env")) common_env = env_from_json(doc["env"], source);
    if (doc.contains("args")) common_args = args_from_json(doc["args"], source);
  }
  if (!configs->is_array() || configs->empty())
    throw UsageError(source + ": `configs` must be a non-empty array of {name, env, args}");
  Factor f{"--matrix " + source, {}};
  std::set<std::string> names;
  for (size_t i = 0; i < configs->size(); ++i) {
    const json& c = (*configs)[i];
    const std::string where = fmt::format("{}: configs[{}]", source, i);
    if (!c.is_object()) throw UsageError(where + ": must be an object {name, env, args}");
    for (const auto& [k, v] : c.items())
      if (k != "name" && k != "env" && k != "args")
        throw UsageError(where + ": unknown key '" + k + "' (expected name, env, args)");
    if (!c.contains("name") || !c["name"].is_string() || c["name"].get<std::string>().empty())
      throw UsageError(where + ": `name` must be a non-empty string");
    Choice ch;
    ch.label = c["name"].get<std::string>();
    if (!names.insert(ch.label).second) throw UsageError(where + ": name '" + ch.label + "' repeats");
    ch.env = common_env;
    if (c.contains("env"))
      for (auto& [k, v] : env_from_json(c["env"], where)) ch.env[k] = v;
    ch.args = common_args;
    if (c.contains("args"))
      for (auto& a : args_from_json(c["args"], where)) ch.args.push_back(a);
    f.choices.push_back(std::move(ch));
  }
  return f;
}

Factor load_matrix(const fs::path& path) {
  std::string text;
  try {
    text = read_file(path);
  } catch (const Error& e) {
    throw UsageError(std::string("--matrix: ") + e.what());
  }
  json doc;
  try {
    doc = parse_json(text);
  } catch (const json::parse_error& e) {
    throw UsageError("--matrix " + path.string() + ": not JSON: " + json_error_text(e));
  }
  return with_json_errors("--matrix " + path.string(), [&] { return parse_matrix(doc, path.string()); });
}

std::vector<Factor> preset_factors(std::string_view preset, const topo::Topology* topo) {
  const std::string src = "--preset " + std::string(preset);
  if (preset == "pxn") {
    Factor f{src, {}};
    f.choices.push_back(Choice{"pxn-off", {{"NCCL_PXN_DISABLE", "1"}}, {}});
    for (int level = 0; level <= 2; ++level)
      f.choices.push_back(Choice{fmt::format("pxn-level{}", level),
                                 {{"NCCL_PXN_DISABLE", "0"}, {"NCCL_P2P_PXN_LEVEL", std::to_string(level)}},
                                 {}});
    return {f};
  }
  if (preset == "rails") {
    if (!topo || topo->rails.empty() || topo->nccl_ib_hca.empty())
      throw UnavailableError(src + ": no rail found on the node probed at " + (topo ? topo->root : std::string("?")) +
                             " (no GPU with an RDMA NIC); probe a captured node with --topo-root DIR");
    Factor hca{src + " (NCCL_IB_HCA)", {}};
    hca.choices.push_back(Choice{"rails-all", {{"NCCL_IB_HCA", topo->nccl_ib_hca}}, {}});
    std::vector<std::string> nics;
    for (const auto& r : topo->rails) {
      const std::string h = r.nic + ":" + std::to_string(r.port);
      if (std::find(nics.begin(), nics.end(), h) == nics.end()) nics.push_back(h);
    }
    if (nics.size() > 1)
      for (const auto& h : nics)
        hca.choices.push_back(Choice{"rail-" + h.substr(0, h.find(':')), {{"NCCL_IB_HCA", "=" + h}}, {}});
    Factor cross{src + " (NCCL_CROSS_NIC)", {}};
    for (int v : {0, 1})
      cross.choices.push_back(Choice{fmt::format("cross-nic-{}", v), {{"NCCL_CROSS_NIC", std::to_string(v)}}, {}});
    return {hca, cross};
  }
  if (preset == "algo") {
    Factor f{src, {}};
    f.choices.push_back(Choice{"algo-default", {}, {}});
    for (const char* algo : {"Ring", "Tree"})
      for (const char* proto : {"LL", "LL128", "Simple"})
        f.choices.push_back(Choice{fmt::format("{}-{}", algo, proto), {{"NCCL_ALGO", algo}, {"NCCL_PROTO", proto}}, {}});
    return {f};
  }
  throw UsageError(src + ": unknown preset (expected pxn, rails or algo)");
}

std::vector<BenchConfig> expand(const std::vector<Factor>& factors) {
  if (factors.empty()) throw UsageError("nothing to sweep: give --axis NAME=v1,v2, --matrix FILE or --preset NAME");
  for (const auto& f : factors)
    if (f.choices.empty()) throw UsageError(f.source + ": no configurations");
  const bool any_varies =
      std::any_of(factors.begin(), factors.end(), [](const Factor& f) { return f.choices.size() > 1; });
  std::vector<BenchConfig> out;
  std::vector<size_t> idx(factors.size(), 0);
  std::set<std::string> names;
  for (;;) {
    BenchConfig c;
    std::map<std::string, size_t> origin;  // variable -> factor that set it
    for (size_t i = 0; i < factors.size(); ++i) {
      const Factor& f = factors[i];
      const Choice& ch = f.choices[idx[i]];
      for (const auto& [k, v] : ch.env) {
        auto [it, fresh] = origin.emplace(k, i);
        if (!fresh)
          throw UsageError(k + " is set by both " + factors[it->second].source + " and " + f.source +
                           (factors[it->second].source == f.source ? " (repeated)" : ""));
        c.env[k] = v;
      }
      c.args.insert(c.args.end(), ch.args.begin(), ch.args.end());
      if (!any_varies || f.choices.size() > 1) c.name += (c.name.empty() ? "" : ",") + ch.label;
    }
    if (!names.insert(c.name).second) throw UsageError("configuration name '" + c.name + "' repeats");
    out.push_back(std::move(c));
    // Odometer: last factor varies fastest.
    size_t i = factors.size();
    while (i > 0) {
      --i;
      if (++idx[i] < factors[i].choices.size()) break;
      idx[i] = 0;
      if (i == 0) return out;
    }
  }
}

// ---------------------------------------------------------------------------- knobs and rounds

std::map<std::string, std::string> knob_sources(const std::vector<Factor>& factors) {
  std::map<std::string, std::string> out;
  for (const auto& f : factors)
    for (const auto& c : f.choices)
      for (const auto& [k, v] : c.env) out.emplace(k, f.source);
  return out;
}

std::vector<std::size_t> round_order(std::size_t n, std::uint64_t seed, int round) {
  std::vector<std::size_t> order(n);
  for (std::size_t i = 0; i < n; ++i) order[i] = i;
  std::seed_seq seq{static_cast<std::uint32_t>(seed), static_cast<std::uint32_t>(seed >> 32),
                    static_cast<std::uint32_t>(round)};
  std::mt19937_64 rng(seq);
  for (std::size_t i = n; i > 1; --i) std::swap(order[i - 1], order[rng() % i]);
  return order;
}

std::vector<InertKnob> inert_in(const std::vector<BenchConfig>& configs, const std::string& backend,
                                const std::map<std::string, std::string>& sources) {
  std::vector<std::string> names;
  for (const auto& c : configs)
    for (const auto& [k, v] : c.env) names.push_back(k);
  std::vector<InertKnob> out;
  for (const auto& n : inert_knobs(names, RunTarget{backend, false, {}})) {
    auto it = sources.find(n);
    out.push_back(InertKnob{n, reach_text(*knob_reach(n)), it == sources.end() ? std::string() : it->second});
  }
  return out;
}

}  // namespace railkit::sweep
