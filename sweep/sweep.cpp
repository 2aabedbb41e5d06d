#include "sweep/sweep.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <ctime>
#include <ostream>
#include <set>

#include <fmt/format.h>

#include "core/atomic_file.hpp"
#include "core/clock.hpp"
#include "core/error.hpp"
#include "core/launch.hpp"
#include "core/results.hpp"
#include "core/strings.hpp"
#include "core/units.hpp"
#include "core/version.hpp"

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
  throw UsageError(where + ": value must be a string or an integer, got " + v.dump());
}

std::map<std::string, std::string> env_from_json(const json& j, const std::string& where) {
  if (!j.is_object()) throw UsageError(where + ": `env` must be an object of NAME: value");
  std::map<std::string, std::string> env;
  for (const auto& [k, v] : j.items()) {
    if (!valid_env_name(k)) throw UsageError(where + ": invalid environment variable name '" + k + "'");
    env[k] = env_value_text(v, where + " env " + k);
  }
  return env;
}

std::vector<std::string> args_from_json(const json& j, const std::string& where) {
  if (!j.is_array()) throw UsageError(where + ": `args` must be an array of strings");
  std::vector<std::string> out;
  for (const auto& a : j) {
    if (!a.is_string()) throw UsageError(where + ": `args` must be an array of strings");
    out.push_back(a.get<std::string>());
  }
  return out;
}


using ojson = nlohmann::ordered_json;

ojson config_to_json(const BenchConfig& c) {
  return ojson{{"name", c.name}, {"env", c.env}, {"args", c.args}};
}

ojson record_to_json(const ConfigRecord& r) {
  ojson j;
  j["name"] = r.name;
  j["env"] = r.env;
  j["args"] = r.args;
  j["status"] = name(r.status);
  j["results"] = r.results.empty() ? ojson(nullptr) : ojson(r.results);
  j["stdout"] = r.stdout_file;
  j["stderr"] = r.stderr_file;
  j["exit_code"] = r.exit_code ? ojson(*r.exit_code) : ojson(nullptr);
  j["elapsed_s"] = std::round(r.elapsed_s * 1000) / 1000;
  j["started"] = r.started;
  j["command"] = r.command;
  j["error"] = r.error.empty() ? ojson(nullptr) : ojson(r.error);
  j["stderr_tail"] = r.stderr_tail.empty() ? ojson(nullptr) : ojson(r.stderr_tail);
  return j;
}

template <class T>
T get_or(const json& j, const char* key, T fallback) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return fallback;
  return it->get<T>();
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
      throw UsageError(source + ": schema is " + doc["schema"].dump() + ", expected \"" + kMatrixSchema + "\"");
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
    doc = json::parse(text);
  } catch (const json::parse_error& e) {
    throw UsageError("--matrix " + path.string() + ": not JSON: " + e.what());
  }
  return parse_matrix(doc, path.string());
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

// ---------------------------------------------------------------------------- sweep.json

const ConfigRecord* SweepDocument::find(const std::string& name) const {
  for (const auto& r : configs)
    if (r.name == name) return &r;
  return nullptr;
}

ojson to_json(const SweepDocument& d) {
  ojson j;
  j["schema"] = d.schema;
  j["railkit_version"] = d.railkit_version;
  j["created"] = d.created;
  j["updated"] = d.updated;
  j["bench"] = d.bench;
  j["bench_args"] = d.bench_args;
  j["launcher"] = ojson::parse(d.launcher.dump());
  j["timeout_s"] = d.timeout_s;
  j["baseline"] = d.baseline;
  ojson planned = ojson::array();
  for (const auto& c : d.planned) planned.push_back(config_to_json(c));
  j["planned"] = planned;
  ojson configs = ojson::array();
  for (const auto& r : d.configs) configs.push_back(record_to_json(r));
  j["configs"] = configs;
  return j;
}

SweepDocument sweep_from_json(const json& j, const std::string& source) {
  try {
    if (!j.is_object() || j.value("schema", "") != kSweepSchema)
      throw UsageError(source + ": not a railkit sweep document (schema " + std::string(kSweepSchema) + ")");
    SweepDocument d;
    d.railkit_version = get_or<std::string>(j, "railkit_version", "");
    d.created = get_or<std::string>(j, "created", "");
    d.updated = get_or<std::string>(j, "updated", "");
    d.bench = get_or<std::string>(j, "bench", "");
    d.bench_args = get_or<std::vector<std::string>>(j, "bench_args", {});
    d.launcher = j.value("launcher", json::object());
    d.timeout_s = get_or<double>(j, "timeout_s", 0.0);
    d.baseline = get_or<std::string>(j, "baseline", "");
    for (const auto& c : j.value("planned", json::array()))
      d.planned.push_back(BenchConfig{c.at("name").get<std::string>(),
                                      c.value("env", std::map<std::string, std::string>{}),
                                      c.value("args", std::vector<std::string>{})});
    if (!j.contains("configs") || !j["configs"].is_array()) throw UsageError(source + ": no `configs` array");
    for (const auto& c : j["configs"]) {
      ConfigRecord r;
      r.name = c.at("name").get<std::string>();
      r.env = c.value("env", std::map<std::string, std::string>{});
      r.args = get_or<std::vector<std::string>>(c, "args", {});
      const std::string status = c.at("status").get<std::string>();
      const auto st = parse_trial_status(status);
      if (!st || *st == TrialStatus::Interrupted)
        throw UsageError(source + ": config '" + r.name + "': unknown status '" + status + "'");
      r.status = *st;
      r.results = get_or<std::string>(c, "results", "");
      r.stdout_file = get_or<std::string>(c, "stdout", "");
      r.stderr_file = get_or<std::string>(c, "stderr", "");
      if (c.contains("exit_code") && !c["exit_code"].is_null()) r.exit_code = c["exit_code"].get<int>();
      r.elapsed_s = get_or<double>(c, "elapsed_s", 0.0);
      r.started = get_or<std::string>(c, "started", "");
      r.command = get_or<std::vector<std::string>>(c, "command", {});
      r.error = get_or<std::string>(c, "error", "");
      r.stderr_tail = get_or<std::string>(c, "stderr_tail", "");
      d.configs.push_back(std::move(r));
    }
    return d;
  } catch (const json::exception& e) {
    throw UsageError(source + ": malformed sweep document: " + e.what());
  }
}

SweepDocument load_sweep(const fs::path& dir) {
  const fs::path p = dir / "sweep.json";
  std::string text;
  try {
    text = read_file(p);
  } catch (const Error& e) {
    throw UsageError(e.what());
  }
  json j;
  try {
    j = json::parse(text);
  } catch (const json::parse_error& e) {
    throw UsageError(p.string() + ": not JSON: " + e.what());
  }
  return sweep_from_json(j, p.string());
}

// ---------------------------------------------------------------------------- runner

namespace {

json launcher_json(const LauncherOptions& l) {
  return json{{"kind", launch::launcher_name(l.kind)}, {"np", l.np}, {"ppn", l.ppn}, {"hostfile", l.hostfile}, {"args", l.args}};
}

void write_doc(const fs::path& path, const SweepDocument& d) { write_file_atomic(path, to_json(d).dump(2) + "\n"); }

/// Finished records in planned order, then records of configurations no longer planned.
std::vector<ConfigRecord> ordered(const std::vector<BenchConfig>& planned, std::map<std::string, ConfigRecord> recs,
                                  const std::vector<std::string>& old_order) {
  std::vector<ConfigRecord> out;
  for (const auto& c : planned)
    if (auto it = recs.find(c.name); it != recs.end()) {
      out.push_back(std::move(it->second));
      recs.erase(it);
    }
  for (const auto& n : old_order)
    if (auto it = recs.find(n); it != recs.end()) out.push_back(std::move(it->second));
  return out;
}

}  // namespace

namespace {

/// Checks the options before anything runs; returns the baseline's name. Throws UsageError.
std::string check_sweep_options(const SweepOptions& o) {
  if (o.configs.empty()) throw UsageError("nothing to sweep: no configuration");
  o.launcher.validate();
  launch::check_bench_args(o.bench_args, "sweep");
  if (::access(o.bench.c_str(), X_OK) != 0 || fs::is_directory(o.bench))
    throw UsageError("--bench " + o.bench + ": not an executable file");
  if (o.timeout_s < 0) throw UsageError(fmt::format("--timeout-s {}: must be >= 0", o.timeout_s));
  std::string baseline = o.baseline.empty() ? o.configs.front().name : o.baseline;
  if (std::none_of(o.configs.begin(), o.configs.end(), [&](const BenchConfig& c) { return c.name == baseline; })) {
    std::vector<std::string> names;
    for (const auto& c : o.configs) names.push_back(c.name);
    throw UsageError("--baseline " + baseline + ": no such configuration (have: " + join(names, ", ") + ")");
  }
  return baseline;
}

/// Earlier records of the sweep in `sweep_path` (--resume), in their order; refuses a sweep run
/// with other bench arguments, launcher or configurations, and an existing one without --resume.
SweepDocument earlier_sweep(const SweepOptions& o, const fs::path& out_dir, const fs::path& sweep_path,
                            std::map<std::string, ConfigRecord>& recs, std::vector<std::string>& old_order) {
  if (!fs::exists(sweep_path)) return {};
  if (!o.resume)
    throw UsageError("--out " + o.out_dir.string() +
                     " already holds a sweep (sweep.json): pass --resume to continue it, or choose another directory");
  SweepDocument old = load_sweep(out_dir);
  if (old.bench_args != o.bench_args)
    throw UsageError("--resume: " + sweep_path.string() + " was run with other bench arguments (" +
                     json(old.bench_args).dump() + ")");
  if (old.launcher != launcher_json(o.launcher))
    throw UsageError("--resume: " + sweep_path.string() + " was run with another launcher setup (" + old.launcher.dump() + ")");
  for (auto& r : old.configs) {
    for (const auto& c : o.configs)
      if (c.name == r.name && (c.env != r.env || c.args != r.args))
        throw UsageError("--resume: configuration '" + r.name + "' in " + sweep_path.string() +
                         " has another environment or arguments than now");
    old_order.push_back(r.name);
    recs[r.name] = std::move(r);
  }
  return old;
}

/// The progress lines of a sweep: k/N, elapsed and ETA from the mean time of the launches so far.
class SweepProgress {
 public:
  SweepProgress(std::ostream& out, bool tty, std::size_t todo) : out_(out), tty_(tty), todo_(todo) {}
  void start(const std::string& head) {
    head_ = head;
    if (tty_) out_ << "\r\033[K" << head_ << ": running, " << eta(0) << std::flush;
    else out_ << head_ << ": running (sweep " << format_duration(elapsed()) << ", " << eta(0) << ")\n" << std::flush;
  }
  /// For run_config's tick (rewrites the line in place on a terminal).
  std::function<void(double)> ticker() {
    if (!tty_) return {};
    return [this](double el) {
      out_ << "\r\033[K" << head_ << ": running " << format_duration(el) << ", " << eta(el) << std::flush;
    };
  }
  void interrupted(const LaunchResult& lr) {
    if (tty_) out_ << "\r\033[K";
    out_ << head_ << ": " << lr.describe() << "; not recorded\n" << std::flush;
  }
  void done(const ConfigRecord& r, double run_s) {
    ++runs_;
    total_s_ += run_s;
    std::string line = fmt::format("{}: {} in {}", head_, name(r.status), format_duration(run_s));
    if (r.status != TrialStatus::Ok) line += " - " + r.error;
    line += fmt::format(" (sweep {}", format_duration(elapsed()));
    if (runs_ < todo_)
      line += ", ETA " + format_duration(total_s_ / static_cast<double>(runs_) * static_cast<double>(todo_ - runs_));
    line += ")";
    if (tty_) out_ << "\r\033[K";
    out_ << line << "\n" << std::flush;
  }

 private:
  double elapsed() const { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0_).count(); }
  std::string eta(double current_s) const {
    if (runs_ == 0) return "ETA -";
    const double avg = total_s_ / static_cast<double>(runs_);
    return "ETA " + format_duration(std::max(0.0, avg - current_s) + avg * static_cast<double>(todo_ - runs_ - 1));
  }

  std::ostream& out_;
  bool tty_;
  std::size_t todo_, runs_ = 0;
  double total_s_ = 0;
  std::string head_;
  std::chrono::steady_clock::time_point t0_ = std::chrono::steady_clock::now();
};

}  // namespace

SweepOutcome run_sweep(const SweepOptions& o, char* const* envp, std::ostream& progress, bool tty) {
  const std::string baseline = check_sweep_options(o);
  std::error_code ec;
  fs::create_directories(o.out_dir, ec);
  if (ec || !fs::is_directory(o.out_dir)) throw UsageError("--out " + o.out_dir.string() + ": cannot create the directory");
  const fs::path out_dir = fs::absolute(o.out_dir);
  const fs::path sweep_path = out_dir / "sweep.json";
  check_writable(sweep_path, "--out");

  SweepOutcome res;
  std::map<std::string, ConfigRecord> recs;
  std::vector<std::string> old_order;
  SweepDocument& doc = res.doc;
  doc.created = earlier_sweep(o, out_dir, sweep_path, recs, old_order).created;
  doc.railkit_version = kVersion;
  if (doc.created.empty()) doc.created = utc_now_iso();
  doc.updated = utc_now_iso();
  doc.bench = o.bench;
  doc.bench_args = o.bench_args;
  doc.launcher = launcher_json(o.launcher);
  doc.timeout_s = o.timeout_s;
  doc.baseline = baseline;
  doc.planned = o.configs;
  doc.configs = ordered(doc.planned, recs, old_order);
  write_doc(sweep_path, doc);

  const size_t n = o.configs.size();
  std::vector<size_t> todo;
  for (size_t k = 0; k < n; ++k) {
    auto it = recs.find(o.configs[k].name);
    if (it != recs.end() && (it->second.status == TrialStatus::Ok || !o.retry_failed)) {
      ++res.skipped;
      progress << fmt::format("[{}/{}] {}: {} earlier, skipped (--resume)\n", k + 1, n, o.configs[k].name, name(it->second.status));
    } else {
      todo.push_back(k);
    }
  }
  progress.flush();

  const launch::LaunchContext ctx{o.launcher, o.bench, o.bench_args, out_dir, o.timeout_s, o.kill_grace_s};
  SweepProgress line(progress, tty, todo.size());
  for (size_t k : todo) {
    const BenchConfig& c = o.configs[k];
    line.start(fmt::format("[{}/{}] {}", k + 1, n, c.name));
    launch::TrialRun tr = launch::run_config(ctx, c, fmt::format("{:03d}-{}", k + 1, slug(c.name)), envp, line.ticker());
    const LaunchResult& lr = tr.launch;
    if (lr.end == LaunchResult::End::Interrupted) {
      line.interrupted(lr);
      throw InterruptedError(lr.signal, fmt::format("sweep interrupted by signal {}; {} finished configurations are in "
                                                    "{}; continue with --resume",
                                                    lr.signal, doc.configs.size(), sweep_path.string()));
    }
    const ConfigRecord& r = tr.record;
    if (r.status != TrialStatus::Ok) ++res.failed;
    ++res.ran;
    recs[c.name] = r;
    doc.updated = utc_now_iso();
    doc.configs = ordered(doc.planned, recs, old_order);
    write_doc(sweep_path, doc);
    line.done(r, lr.elapsed_s);
  }
  return res;
}

}  // namespace railkit::sweep
