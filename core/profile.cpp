#include "core/profile.hpp"

#include <algorithm>
#include <climits>
#include <cmath>
#include <initializer_list>
#include <utility>

#include <fmt/format.h>

#include "core/collectives.hpp"
#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "core/json_text.hpp"
#include "core/tunables.hpp"

namespace railkit {
namespace {

using json = nlohmann::json;
using ojson = nlohmann::ordered_json;

constexpr std::string_view kEnvPrefixes[] = {"NCCL_", "NVSHMEM_", "UCX_", "OMPI_MCA_", "TORCH_NCCL_", "RAILKIT_"};
constexpr std::string_view kEnvExact = "CUDA_DEVICE_MAX_CONNECTIONS";

constexpr std::string_view kBackends[] = {"mpi", "nccl", "sim"};

/// Text for a one-line message: as is when short printable ASCII, else JSON-quoted and escaped.
std::string shown(std::string_view s) {
  constexpr std::size_t kMax = 80;
  const bool plain = s.size() <= kMax && std::all_of(s.begin(), s.end(), [](char c) {
                       return static_cast<unsigned char>(c) >= 0x20 && static_cast<unsigned char>(c) < 0x7f;
                     });
  if (plain) return std::string(s);
  const bool cut = s.size() > kMax;
  const json q = std::string(s.substr(0, kMax));
  return q.dump(-1, ' ', true, json::error_handler_t::replace) + (cut ? "..." : "");
}

std::string join_names(std::span<const std::string_view> names) {
  std::string s;
  for (auto n : names) s += (s.empty() ? "" : ", ") + std::string(n);
  return s;
}

/// "NCCL_*, NVSHMEM_*, ..." for messages.
std::string allowed_env() {
  std::string s;
  for (auto p : kEnvPrefixes) s += (s.empty() ? "" : ", ") + std::string(p) + "*";
  return s;
}

bool coll_known(std::string_view c) { return find_collective(c) != nullptr; }

/// A JSON value and where it is in the document ("decisions[2].env").
struct Node {
  const json& v;
  std::string path;
};

/// Reads one document, throwing "<source>: <path>: <reason>" on the first problem.
class Reader {
 public:
  Reader(const std::string& source, std::vector<std::string>& warnings) : source_(source), warnings_(warnings) {}

  [[noreturn]] void fail(const std::string& path, const std::string& why) const {
    throw UsageError(path.empty() ? fmt::format("{}: {}", source_, why) : fmt::format("{}: {}: {}", source_, path, why));
  }

  /// The value must be an object whose keys are all in `fields`.
  void object(const Node& n, std::initializer_list<std::string_view> fields) const {
    if (!n.v.is_object()) fail(n.path, expected("an object", n.v));
    for (const auto& [k, _] : n.v.items())
      if (std::find(fields.begin(), fields.end(), k) == fields.end()) fail(child_path(n.path, shown(k)), "unknown field");
  }

  Node at(const Node& n, std::string_view key) const {
    const std::string p = child_path(n.path, key);
    const auto it = n.v.find(key);
    if (it == n.v.end()) fail(p, "missing");
    return {*it, p};
  }

  std::string str(const Node& n) const {
    if (!n.v.is_string()) fail(n.path, expected("a string", n.v));
    return n.v.get<std::string>();
  }

  bool boolean(const Node& n) const {
    if (!n.v.is_boolean()) fail(n.path, expected("true or false", n.v));
    return n.v.get<bool>();
  }

  /// A finite number >= 0.
  double nonneg(const Node& n) const {
    if (!n.v.is_number()) fail(n.path, expected("a number", n.v));
    const double x = n.v.get<double>();
    if (!std::isfinite(x)) fail(n.path, "not a finite number");
    if (x < 0) fail(n.path, fmt::format("{} is negative", x));
    return x;
  }

  /// A finite number in [0, 1).
  double fraction(const Node& n) const {
    const double x = nonneg(n);
    if (x >= 1) fail(n.path, fmt::format("{} is not below 1 (a fraction: 0.05 = 5%)", x));
    return x;
  }

  /// An integer in [0, max] (an integral float such as 1024.0 counts).
  std::uint64_t count(const Node& n, std::uint64_t max = UINT64_MAX) const {
    std::uint64_t x = 0;
    if (n.v.is_number_unsigned()) {
      x = n.v.get<std::uint64_t>();
    } else if (n.v.is_number_integer()) {
      if (n.v.get<std::int64_t>() < 0) fail(n.path, fmt::format("{} is negative", n.v.get<std::int64_t>()));
      x = static_cast<std::uint64_t>(n.v.get<std::int64_t>());
    } else if (n.v.is_number_float()) {
      const double d = n.v.get<double>();
      if (!std::isfinite(d) || d != std::floor(d)) fail(n.path, fmt::format("expected an integer, got {}", d));
      if (d < 0) fail(n.path, fmt::format("{} is negative", d));
      if (d >= 18446744073709551616.0) fail(n.path, fmt::format("{} is too large", d));
      x = static_cast<std::uint64_t>(d);
    } else {
      fail(n.path, expected("an integer", n.v));
    }
    if (x > max) fail(n.path, fmt::format("{} is above the maximum {}", x, max));
    return x;
  }

  int small_count(const Node& n) const { return static_cast<int>(count(n, INT_MAX)); }

  std::vector<std::string> strings(const Node& n) const {
    if (!n.v.is_array()) fail(n.path, expected("an array of strings", n.v));
    std::vector<std::string> r;
    for (std::size_t i = 0; i < n.v.size(); ++i) r.push_back(str({n.v[i], index_path(n.path, i)}));
    return r;
  }

  std::vector<double> numbers(const Node& n) const {
    if (!n.v.is_array()) fail(n.path, expected("an array of numbers", n.v));
    std::vector<double> r;
    for (std::size_t i = 0; i < n.v.size(); ++i) r.push_back(nonneg({n.v[i], index_path(n.path, i)}));
    return r;
  }

  /// Any JSON object, kept as is.
  json free_object(const Node& n) const {
    if (!n.v.is_object()) fail(n.path, expected("an object", n.v));
    return n.v;
  }

  std::string coll(const Node& n) const {
    std::string c = str(n);
    if (!coll_known(c)) fail(n.path, fmt::format("unknown collective '{}' (one of {})", shown(c), collective_names()));
    return c;
  }

  /// A string value that can be placed in the environment or a sysfs file.
  std::string setting_value(const Node& n) const {
    if (!n.v.is_string()) fail(n.path, expected("a string (values are text, as the environment holds them)", n.v));
    std::string s = n.v.get<std::string>();
    if (s.find('\0') != std::string::npos) fail(n.path, "contains a NUL character");
    return s;
  }

  /// NAME -> value: allowed names, string values, known tunables checked, others warned about.
  std::map<std::string, std::string> env(const Node& n) const {
    if (!n.v.is_object()) fail(n.path, expected("an object of NAME: \"value\"", n.v));
    std::map<std::string, std::string> r;
    for (const auto& [k, v] : n.v.items()) {
      const std::string p = child_path(n.path, shown(k));
      if (!env_key_allowed(k))
        fail(p, fmt::format("not an allowed environment variable (a profile may set {} and {})", allowed_env(), kEnvExact));
      const std::string value = setting_value({v, p});
      if (const Tunable* t = find_tunable(k)) {
        if (t->scope != TunableScope::Env) fail(p, "a DCQCN attribute, not an environment variable");
        const std::string why = tunable_value_problem(*t, value);
        if (!why.empty()) fail(p + "=" + shown(value), why);
      } else {
        warnings_.push_back(p + ": not in the tunables table; passed through unchanged");
      }
      r.emplace(k, value);
    }
    return r;
  }

  static std::string child_path(const std::string& path, std::string_view key) {
    return path.empty() ? std::string(key) : path + "." + std::string(key);
  }
  static std::string index_path(const std::string& path, std::size_t i) { return fmt::format("{}[{}]", path, i); }

 private:
  static std::string expected(std::string_view what, const json& v) {
    return fmt::format("expected {}, got {}", what, v.type_name());
  }

  const std::string& source_;
  std::vector<std::string>& warnings_;
};

ojson env_json(const std::map<std::string, std::string>& env) {
  ojson o = ojson::object();
  for (const auto& [k, v] : env) o[k] = v;
  return o;
}

// Strict dumps (not json_dump): text that is not UTF-8 in a profile is refused by write_profile,
// never stored replaced, since a profile's values are set on other nodes as they are.
ojson ordered(const json& j) { return ojson::parse(j.dump()); }

void check_interval(const Reader& r, const std::string& path, double lo, double hi) {
  if (lo > hi) r.fail(path, fmt::format("ratio_lo {} is above ratio_hi {}", lo, hi));
}

/// cluster.fingerprint_facts: fact name -> value, both text (topology's fingerprint.facts).
std::map<std::string, std::string> read_facts(const Reader& r, const Node& n) {
  if (!n.v.is_object()) r.fail(n.path, fmt::format("expected an object of fact: \"value\", got {}", n.v.type_name()));
  std::map<std::string, std::string> facts;
  for (const auto& [k, v] : n.v.items()) {
    const std::string p = Reader::child_path(n.path, k.empty() ? "\"\"" : shown(k));
    const bool printable = !k.empty() && std::none_of(k.begin(), k.end(), [](char ch) {
      return static_cast<unsigned char>(ch) < 0x20 || static_cast<unsigned char>(ch) == 0x7f;
    });
    if (!printable) r.fail(p, "not a fact name (empty or holding a control character)");
    if (!v.is_string())
      r.fail(p, fmt::format("expected a string (fact values are text, as `railkit topo` gives them), got {}", v.type_name()));
    const std::string value = v.get<std::string>();
    if (value.find('\0') != std::string::npos) r.fail(p, "contains a NUL character");
    facts.emplace(k, value);
  }
  return facts;
}

ProfileCluster read_cluster(const Reader& r, const Node& n) {
  r.object(n, {"fingerprint", "fingerprint_facts", "nodes", "ranks", "ranks_per_node", "backend", "backend_version",
               "hosts", "gpu_models", "nic_models", "extra"});
  ProfileCluster c;
  c.fingerprint = r.str(r.at(n, "fingerprint"));
  if (n.v.contains("fingerprint_facts")) c.fingerprint_facts = read_facts(r, r.at(n, "fingerprint_facts"));
  c.nodes = r.small_count(r.at(n, "nodes"));
  c.ranks = r.small_count(r.at(n, "ranks"));
  c.ranks_per_node = r.small_count(r.at(n, "ranks_per_node"));
  const Node b = r.at(n, "backend");
  c.backend = r.str(b);
  if (std::find(std::begin(kBackends), std::end(kBackends), c.backend) == std::end(kBackends))
    r.fail(b.path, fmt::format("unknown backend '{}' (one of {})", shown(c.backend), join_names(kBackends)));
  c.backend_version = r.str(r.at(n, "backend_version"));
  c.hosts = r.strings(r.at(n, "hosts"));
  c.gpu_models = r.strings(r.at(n, "gpu_models"));
  c.nic_models = r.strings(r.at(n, "nic_models"));
  c.extra = r.free_object(r.at(n, "extra"));
  return c;
}

void read_settings(const Reader& r, const Node& n, ProfileDocument& p) {
  r.object(n, {"env", "dcqcn", "switch_ecn"});
  if (n.v.contains("switch_ecn")) {  // optional: advice for the switches (a simulated tuning's winner)
    const Node sw = r.at(n, "switch_ecn");
    if (!sw.v.is_object()) r.fail(sw.path, fmt::format("expected an object of setting: \"value\", got {}", sw.v.type_name()));
    for (const auto& [name, v] : sw.v.items()) {
      const std::string sp = Reader::child_path(sw.path, shown(name));
      const Tunable* t = find_tunable(name);
      if (t == nullptr || t->scope != TunableScope::Switch)
        r.fail(sp, "not a switch setting of the tunables table (switch.ecn.kmin_bytes, switch.ecn.kmax_bytes, switch.ecn.pmax)");
      const std::string value = r.setting_value({v, sp});
      const std::string why = tunable_value_problem(*t, value);
      if (!why.empty()) r.fail(sp + "=" + shown(value), why);
      p.switch_ecn.emplace(name, value);
    }
  }
  p.env = r.env(r.at(n, "env"));
  const Node d = r.at(n, "dcqcn");
  if (!d.v.is_object()) r.fail(d.path, fmt::format("expected an object of priority: {{attribute: \"value\"}}, got {}", d.v.type_name()));
  for (const auto& [prio, attrs] : d.v.items()) {
    const std::string pp = Reader::child_path(d.path, shown(prio));
    if (prio.size() != 1 || prio[0] < '0' || prio[0] > '7') r.fail(pp, "not a priority (\"0\" to \"7\")");
    if (!attrs.is_object()) r.fail(pp, fmt::format("expected an object of attribute: \"value\", got {}", attrs.type_name()));
    auto& out = p.dcqcn[prio];
    for (const auto& [name, v] : attrs.items()) {
      const std::string ap = Reader::child_path(pp, shown(name));
      const Tunable* t = find_tunable(name);
      if (t == nullptr || t->scope != TunableScope::Dcqcn)
        r.fail(ap, "not a DCQCN attribute of the tunables table (roce_rp.* or roce_np.*)");
      const std::string value = r.setting_value({v, ap});
      const std::string why = tunable_value_problem(*t, value);
      if (!why.empty()) r.fail(ap + "=" + shown(value), why);
      out.emplace(name, value);
    }
  }
}

ProfileDecision read_decision(const Reader& r, const Node& n) {
  r.object(n, {"coll", "min_bytes", "max_bytes", "env", "config", "busbw_GBps", "baseline_busbw_GBps", "ratio",
               "ratio_lo", "ratio_hi", "significant"});
  ProfileDecision d;
  d.coll = r.coll(r.at(n, "coll"));
  d.min_bytes = r.count(r.at(n, "min_bytes"));
  d.max_bytes = r.count(r.at(n, "max_bytes"));
  if (d.min_bytes > d.max_bytes)
    r.fail(Reader::child_path(n.path, "min_bytes"), fmt::format("{} is above max_bytes {}", d.min_bytes, d.max_bytes));
  d.env = r.env(r.at(n, "env"));
  d.config = r.str(r.at(n, "config"));
  d.busbw_GBps = r.nonneg(r.at(n, "busbw_GBps"));
  d.baseline_busbw_GBps = r.nonneg(r.at(n, "baseline_busbw_GBps"));
  d.ratio = r.nonneg(r.at(n, "ratio"));
  d.ratio_lo = r.nonneg(r.at(n, "ratio_lo"));
  d.ratio_hi = r.nonneg(r.at(n, "ratio_hi"));
  check_interval(r, Reader::child_path(n.path, "ratio_lo"), d.ratio_lo, d.ratio_hi);
  d.significant = r.boolean(r.at(n, "significant"));
  return d;
}

/// Two decisions for one collective must not claim the same size.
void check_overlaps(const Reader& r, const Node& n, const std::vector<ProfileDecision>& ds) {
  for (std::size_t i = 0; i < ds.size(); ++i)
    for (std::size_t k = 0; k < i; ++k)
      if (ds[i].coll == ds[k].coll && ds[i].min_bytes <= ds[k].max_bytes && ds[k].min_bytes <= ds[i].max_bytes)
        r.fail(Reader::index_path(n.path, i),
               fmt::format("{} bytes {}..{} overlap {} ({}..{})", ds[i].coll, ds[i].min_bytes, ds[i].max_bytes,
                           Reader::index_path(n.path, k), ds[k].min_bytes, ds[k].max_bytes));
}

ProfileExpectation read_expectation(const Reader& r, const Node& n) {
  r.object(n, {"coll", "bytes", "busbw_GBps", "tolerance", "config", "env"});
  ProfileExpectation e;
  e.coll = r.coll(r.at(n, "coll"));
  e.bytes = r.count(r.at(n, "bytes"));
  e.busbw_GBps = r.nonneg(r.at(n, "busbw_GBps"));
  e.tolerance = r.fraction(r.at(n, "tolerance"));
  if (n.v.contains("env")) e.env = r.env(r.at(n, "env"));  // optional: absent = settings.env
  if (n.v.contains("config")) e.config = r.str(r.at(n, "config"));
  return e;
}

ProfileEvidenceRow read_row(const Reader& r, const Node& n) {
  r.object(n, {"coll", "bytes", "baseline_busbw_GBps", "tuned_busbw_GBps", "ratio", "ratio_lo", "ratio_hi"});
  ProfileEvidenceRow row;
  row.coll = r.coll(r.at(n, "coll"));
  row.bytes = r.count(r.at(n, "bytes"));
  row.baseline_busbw_GBps = r.numbers(r.at(n, "baseline_busbw_GBps"));
  const Node tuned = r.at(n, "tuned_busbw_GBps");
  row.tuned_busbw_GBps = r.numbers(tuned);
  if (row.tuned_busbw_GBps.size() != row.baseline_busbw_GBps.size())
    r.fail(tuned.path, fmt::format("{} values for {} baseline values (one of each per A/B pair)",
                                   row.tuned_busbw_GBps.size(), row.baseline_busbw_GBps.size()));
  row.ratio = r.nonneg(r.at(n, "ratio"));
  row.ratio_lo = r.nonneg(r.at(n, "ratio_lo"));
  row.ratio_hi = r.nonneg(r.at(n, "ratio_hi"));
  check_interval(r, Reader::child_path(n.path, "ratio_lo"), row.ratio_lo, row.ratio_hi);
  return row;
}

ProfileEvidence read_evidence(const Reader& r, const Node& n, const ProfileCluster& cluster) {
  r.object(n, {"validated", "validated_at", "railkit_version", "strategy", "space", "trials", "pairs", "max_regression",
               "baseline_env", "rows", "tune_dir", "extra"});
  ProfileEvidence e;
  const Node validated = r.at(n, "validated");
  e.validated = r.boolean(validated);
  e.validated_at = r.str(r.at(n, "validated_at"));
  e.railkit_version = r.str(r.at(n, "railkit_version"));
  e.strategy = r.str(r.at(n, "strategy"));
  e.space = r.str(r.at(n, "space"));
  e.trials = r.small_count(r.at(n, "trials"));
  e.pairs = r.small_count(r.at(n, "pairs"));
  e.max_regression = r.fraction(r.at(n, "max_regression"));
  e.baseline_env = r.env(r.at(n, "baseline_env"));
  const Node rows = r.at(n, "rows");
  if (!rows.v.is_array()) r.fail(rows.path, fmt::format("expected an array, got {}", rows.v.type_name()));
  for (std::size_t i = 0; i < rows.v.size(); ++i) e.rows.push_back(read_row(r, {rows.v[i], Reader::index_path(rows.path, i)}));
  e.tune_dir = r.str(r.at(n, "tune_dir"));
  e.extra = r.free_object(r.at(n, "extra"));
  if (e.validated) {
    const std::string why = "true requires {} (a profile cannot claim validation without evidence)";
    if (e.pairs < 1) r.fail(validated.path, fmt::format(fmt::runtime(why), "evidence.pairs >= 1"));
    if (e.rows.empty()) r.fail(validated.path, fmt::format(fmt::runtime(why), "evidence.rows to be non-empty"));
    if (e.validated_at.empty()) r.fail(validated.path, fmt::format(fmt::runtime(why), "evidence.validated_at"));
    if (cluster.backend == "sim") r.fail(validated.path, "true but cluster.backend is sim (a simulated profile is never validated)");
  }
  return e;
}

}  // namespace

bool env_key_allowed(std::string_view key) {
  if (key == kEnvExact) return true;
  const bool name_chars = std::all_of(key.begin(), key.end(), [](char c) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
  });
  if (!name_chars) return false;
  return std::any_of(std::begin(kEnvPrefixes), std::end(kEnvPrefixes),
                     [&](std::string_view p) { return key.size() > p.size() && key.substr(0, p.size()) == p; });
}

ojson to_json(const ProfileDocument& p) {
  const ProfileCluster& c = p.cluster;
  ojson dcqcn = ojson::object();
  for (const auto& [prio, attrs] : p.dcqcn) dcqcn[prio] = env_json(attrs);
  ojson decisions = ojson::array();
  for (const auto& d : p.decisions)
    decisions.push_back({{"coll", d.coll},
                         {"min_bytes", d.min_bytes},
                         {"max_bytes", d.max_bytes},
                         {"env", env_json(d.env)},
                         {"config", d.config},
                         {"busbw_GBps", d.busbw_GBps},
                         {"baseline_busbw_GBps", d.baseline_busbw_GBps},
                         {"ratio", d.ratio},
                         {"ratio_lo", d.ratio_lo},
                         {"ratio_hi", d.ratio_hi},
                         {"significant", d.significant}});
  ojson expectations = ojson::array();
  for (const auto& e : p.expectations) {
    ojson x = {{"coll", e.coll}, {"bytes", e.bytes}, {"busbw_GBps", e.busbw_GBps}, {"tolerance", e.tolerance}};
    if (e.env) {  // optional: measured with other settings than settings.env
      x["config"] = e.config;
      x["env"] = env_json(*e.env);
    }
    expectations.push_back(std::move(x));
  }
  const ProfileEvidence& ev = p.evidence;
  ojson rows = ojson::array();
  for (const auto& r : ev.rows)
    rows.push_back({{"coll", r.coll},
                    {"bytes", r.bytes},
                    {"baseline_busbw_GBps", r.baseline_busbw_GBps},
                    {"tuned_busbw_GBps", r.tuned_busbw_GBps},
                    {"ratio", r.ratio},
                    {"ratio_lo", r.ratio_lo},
                    {"ratio_hi", r.ratio_hi}});
  ojson j = ojson::object();
  j["schema"] = p.schema;
  j["name"] = p.name;
  j["created"] = p.created;
  ojson cluster = ojson::object();
  cluster["fingerprint"] = c.fingerprint;
  if (!c.fingerprint_facts.empty()) cluster["fingerprint_facts"] = env_json(c.fingerprint_facts);  // optional
  cluster["nodes"] = c.nodes;
  cluster["ranks"] = c.ranks;
  cluster["ranks_per_node"] = c.ranks_per_node;
  cluster["backend"] = c.backend;
  cluster["backend_version"] = c.backend_version;
  cluster["hosts"] = c.hosts;
  cluster["gpu_models"] = c.gpu_models;
  cluster["nic_models"] = c.nic_models;
  cluster["extra"] = ordered(c.extra);
  j["cluster"] = std::move(cluster);
  j["settings"] = {{"env", env_json(p.env)}, {"dcqcn", std::move(dcqcn)}};
  if (!p.switch_ecn.empty()) j["settings"]["switch_ecn"] = env_json(p.switch_ecn);  // optional
  j["decisions"] = std::move(decisions);
  j["expectations"] = std::move(expectations);
  j["evidence"] = {{"validated", ev.validated},
                   {"validated_at", ev.validated_at},
                   {"railkit_version", ev.railkit_version},
                   {"strategy", ev.strategy},
                   {"space", ev.space},
                   {"trials", ev.trials},
                   {"pairs", ev.pairs},
                   {"max_regression", ev.max_regression},
                   {"baseline_env", env_json(ev.baseline_env)},
                   {"rows", std::move(rows)},
                   {"tune_dir", ev.tune_dir},
                   {"extra", ordered(ev.extra)}};
  return j;
}

namespace {

ProfileDocument read_profile_document(const json& j, const std::string& source) {
  ProfileDocument p;
  const Reader r(source, p.warnings);
  const Node root{j, ""};
  if (!j.is_object()) r.fail("", fmt::format("not a profile document (expected a JSON object, got {})", j.type_name()));
  const Node schema = r.at(root, "schema");
  p.schema = r.str(schema);
  if (p.schema != kProfileSchema)
    r.fail("", fmt::format("unsupported schema '{}' (this railkit reads {})", shown(p.schema), kProfileSchema));
  r.object(root, {"schema", "name", "created", "cluster", "settings", "decisions", "expectations", "evidence"});
  p.name = r.str(r.at(root, "name"));
  p.created = r.str(r.at(root, "created"));
  p.cluster = read_cluster(r, r.at(root, "cluster"));
  read_settings(r, r.at(root, "settings"), p);
  const Node decisions = r.at(root, "decisions");
  if (!decisions.v.is_array()) r.fail(decisions.path, fmt::format("expected an array, got {}", decisions.v.type_name()));
  for (std::size_t i = 0; i < decisions.v.size(); ++i)
    p.decisions.push_back(read_decision(r, {decisions.v[i], Reader::index_path(decisions.path, i)}));
  check_overlaps(r, decisions, p.decisions);
  const Node expectations = r.at(root, "expectations");
  if (!expectations.v.is_array())
    r.fail(expectations.path, fmt::format("expected an array, got {}", expectations.v.type_name()));
  for (std::size_t i = 0; i < expectations.v.size(); ++i)
    p.expectations.push_back(read_expectation(r, {expectations.v[i], Reader::index_path(expectations.path, i)}));
  p.evidence = read_evidence(r, r.at(root, "evidence"), p.cluster);
  return p;
}

}  // namespace

ProfileDocument profile_from_json(const json& j, const std::string& source) {
  return with_json_errors(source, [&] { return read_profile_document(j, source); });
}

ProfileDocument load_profile(const std::filesystem::path& path) {
  const std::string text = read_file(path);
  json j;
  try {
    j = parse_json(text);
  } catch (const json::exception& e) {
    throw UsageError(path.string() + ": not valid JSON: " + json_error_text(e));
  }
  return profile_from_json(j, path.string());
}

void write_profile(const std::filesystem::path& path, const ProfileDocument& p) {
  std::string text;
  try {
    text = to_json(p).dump(2) + "\n";  // strict: see ordered()
  } catch (const ojson::exception& e) {
    throw UsageError(fmt::format("{}: the profile cannot be written as JSON: {}", path.string(), e.what()));
  }
  write_file_atomic(path, text);
}

}  // namespace railkit
