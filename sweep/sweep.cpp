#include "sweep/sweep.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <ctime>
#include <ostream>
#include <random>
#include <set>

#include <fmt/format.h>

#include "core/atomic_file.hpp"
#include "core/clock.hpp"
#include "core/error.hpp"
#include "core/json_text.hpp"
#include "core/launch.hpp"
#include "core/results.hpp"
#include "core/strings.hpp"
#include "core/tunables.hpp"
#include "core/units.hpp"
#include "core/version.hpp"
#include "launch/sim_bench.hpp"
#include "sweep/compare.hpp"
#include "sweep/prom.hpp"
#include "sweep/inputs.hpp"

namespace railkit::sweep {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

using ojson = nlohmann::ordered_json;

ojson config_to_json(const BenchConfig& c) {
  return ojson{{"name", c.name}, {"env", c.env}, {"args", c.args}};
}

ojson record_to_json(const LaunchRecord& l) {
  const ConfigRecord& r = l.run;
  ojson j;
  j["round"] = l.round;
  j["name"] = r.name;
  j["env"] = r.env;
  j["args"] = r.args;
  j["status"] = name(r.status);
  j["backend"] = l.backend.empty() ? ojson(nullptr) : ojson(l.backend);
  j["inert"] = l.inert;
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

/// j[key] as T; absent or null: `fallback`; another type: a UsageError naming `where` and the key.
template <class T>
T get_or(const json& j, const char* key, T fallback, const std::string& where) {
  auto v = field_opt<T>(j, key, where);
  return v ? std::move(*v) : std::move(fallback);
}

}  // namespace

// ---------------------------------------------------------------------------- sweep.json

std::vector<const LaunchRecord*> SweepDocument::of(const std::string& name) const {
  std::vector<const LaunchRecord*> out;
  for (const auto& l : launches)
    if (l.run.name == name) out.push_back(&l);
  std::stable_sort(out.begin(), out.end(), [](const LaunchRecord* a, const LaunchRecord* b) { return a->round < b->round; });
  return out;
}

const LaunchRecord* SweepDocument::find(const std::string& name, int round) const {
  for (const auto& l : launches)
    if (l.run.name == name && l.round == round) return &l;
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
  j["launcher"] = ojson::parse(json_dump(d.launcher));
  j["timeout_s"] = d.timeout_s;
  j["baseline"] = d.baseline;
  j["rounds"] = d.rounds;
  j["seed"] = d.seed;
  j["order"] = d.order;
  j["backend"] = ojson::parse(json_dump(d.backend));
  j["allow_inert"] = d.allow_inert;
  ojson inert = nullptr;
  if (!d.inert.empty()) {
    inert = ojson::object();
    inert["backend"] = d.inert_backend;
    inert["allowed"] = d.allow_inert;
    inert["knobs"] = ojson::array();
    for (const auto& k : d.inert)
      inert["knobs"].push_back(ojson{{"name", k.name}, {"reaches", k.reaches}, {"source", k.source}});
  }
  j["inert"] = inert;
  j["topology"] = ojson::parse(json_dump(d.topology));
  j["sim"] = ojson::parse(json_dump(d.sim));
  ojson planned = ojson::array();
  for (const auto& c : d.planned) planned.push_back(config_to_json(c));
  j["planned"] = planned;
  ojson launches = ojson::array();
  for (const auto& r : d.launches) launches.push_back(record_to_json(r));
  j["launches"] = launches;
  return j;
}

namespace {

LaunchRecord launch_from_json(const json& c, const std::string& source, const std::string& where) {
  LaunchRecord l;
  ConfigRecord& r = l.run;
  l.round = get_or<int>(c, "round", 1, where);
  r.name = field<std::string>(c, "name", where);
  if (l.round < 1) throw UsageError(fmt::format("{}: launch of '{}' in round {} (rounds count from 1)", source, r.name, l.round));
  r.env = get_or<std::map<std::string, std::string>>(c, "env", {}, where);
  r.args = get_or<std::vector<std::string>>(c, "args", {}, where);
  const std::string status = field<std::string>(c, "status", where);
  const auto st = parse_trial_status(status);
  if (!st || *st == TrialStatus::Interrupted)
    throw UsageError(source + ": config '" + r.name + "': unknown status '" + status + "'");
  r.status = *st;
  l.backend = get_or<std::string>(c, "backend", "", where);
  l.inert = get_or<std::vector<std::string>>(c, "inert", {}, where);
  r.results = get_or<std::string>(c, "results", "", where);
  r.stdout_file = get_or<std::string>(c, "stdout", "", where);
  r.stderr_file = get_or<std::string>(c, "stderr", "", where);
  r.exit_code = field_opt<int>(c, "exit_code", where);
  r.elapsed_s = get_or<double>(c, "elapsed_s", 0.0, where);
  r.started = get_or<std::string>(c, "started", "", where);
  r.command = get_or<std::vector<std::string>>(c, "command", {}, where);
  r.error = get_or<std::string>(c, "error", "", where);
  r.stderr_tail = get_or<std::string>(c, "stderr_tail", "", where);
  return l;
}

}  // namespace

SweepDocument sweep_from_json(const json& j, const std::string& source) {
  return with_json_errors(source + ": malformed sweep document", [&] {
    const json schema = j.is_object() ? field_or(j, "schema", json(), source) : json();
    if (schema != kSweepSchema && schema != kSweepSchemaV1)
      throw UsageError(source + ": not a railkit sweep document (schema " + std::string(kSweepSchema) + ")");
    const bool v1 = schema == kSweepSchemaV1;
    SweepDocument d;
    d.railkit_version = get_or<std::string>(j, "railkit_version", "", source);
    d.created = get_or<std::string>(j, "created", "", source);
    d.updated = get_or<std::string>(j, "updated", "", source);
    d.bench = get_or<std::string>(j, "bench", "", source);
    d.bench_args = get_or<std::vector<std::string>>(j, "bench_args", {}, source);
    d.launcher = field_or(j, "launcher", json::object(), source);
    d.timeout_s = get_or<double>(j, "timeout_s", 0.0, source);
    d.baseline = get_or<std::string>(j, "baseline", "", source);
    d.rounds = get_or<int>(j, "rounds", 1, source);
    if (d.rounds < 1) throw UsageError(source + ": rounds must be >= 1");
    d.seed = get_or<std::uint64_t>(j, "seed", 0, source);
    if (const json order = field_or(j, "order", json(), source); !order.is_null()) {
      if (!order.is_array()) throw UsageError(fmt::format("{}: order must be an array, not {}", source, order.type_name()));
      for (std::size_t i = 0; i < order.size(); ++i)
        d.order.push_back(json_as<std::vector<std::string>>(order[i], fmt::format("{}: order[{}]", source, i)));
    }
    d.backend = j.contains("backend") && j["backend"].is_object() ? j["backend"] : json::object();
    d.allow_inert = get_or<bool>(j, "allow_inert", false, source);
    if (j.contains("inert") && j["inert"].is_object()) {
      const std::string iw = source + ": inert";
      d.inert_backend = get_or<std::string>(j["inert"], "backend", "", iw);
      const json knobs = field_or(j["inert"], "knobs", json::array(), iw);
      if (!knobs.is_array()) throw UsageError(fmt::format("{}: knobs must be an array, not {}", iw, knobs.type_name()));
      for (std::size_t i = 0; i < knobs.size(); ++i) {
        const std::string kw = fmt::format("{}.knobs[{}]", iw, i);
        d.inert.push_back(InertKnob{field<std::string>(knobs[i], "name", kw), get_or<std::string>(knobs[i], "reaches", "", kw),
                                    get_or<std::string>(knobs[i], "source", "", kw)});
      }
    }
    d.topology = field_or(j, "topology", json(nullptr), source);
    if (d.topology.is_object()) {  // what the report reads of it (sweep_notes)
      field_or(d.topology, "measured_node", true, source + ": topology");
      field_or(d.topology, "note", "", source + ": topology");
    }
    d.sim = field_or(j, "sim", json(nullptr), source);
    if (!d.sim.is_null()) {  // what the report reads of it (sweep_notes)
      json_object(d.sim, source + ": sim");
      field<std::string>(d.sim, "cluster", source + ": sim");
      if (!field_or(d.sim, "round_seeds", json::array(), source + ": sim").is_array())
        throw UsageError(source + ": sim: round_seeds must be an array");
    }
    const json planned = field_or(j, "planned", json::array(), source);
    if (!planned.is_array()) throw UsageError(fmt::format("{}: planned must be an array, not {}", source, planned.type_name()));
    for (std::size_t i = 0; i < planned.size(); ++i) {
      const std::string pw = fmt::format("{}: planned[{}]", source, i);
      d.planned.push_back(BenchConfig{field<std::string>(planned[i], "name", pw),
                                      field_or(planned[i], "env", std::map<std::string, std::string>{}, pw),
                                      field_or(planned[i], "args", std::vector<std::string>{}, pw)});
    }
    const char* key = v1 ? "configs" : "launches";
    if (!j.contains(key) || !j[key].is_array()) throw UsageError(source + ": no `" + key + "` array");
    for (std::size_t i = 0; i < j[key].size(); ++i)
      d.launches.push_back(launch_from_json(j[key][i], source, fmt::format("{}: {}[{}]", source, key, i)));
    return d;
  });
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
    j = parse_json(text);
  } catch (const json::parse_error& e) {
    throw UsageError(p.string() + ": not JSON: " + json_error_text(e));
  }
  return sweep_from_json(j, p.string());
}

// ---------------------------------------------------------------------------- runner

namespace {

json launcher_json(const LauncherOptions& l) {
  return json{{"kind", launch::launcher_name(l.kind)}, {"np", l.np}, {"ppn", l.ppn}, {"hostfile", l.hostfile}, {"args", l.args}};
}

void write_doc(const fs::path& path, const SweepDocument& d) { write_file_atomic(path, json_dump(to_json(d), 2) + "\n"); }

using LaunchKey = std::pair<std::string, int>;  // configuration, round

/// Finished launches in run order (round by round, each in its order), then the records of
/// launches no longer planned (configurations dropped, rounds beyond --rounds) in their old order.
std::vector<LaunchRecord> ordered(const std::vector<std::vector<std::string>>& order, std::map<LaunchKey, LaunchRecord> recs,
                                  const std::vector<LaunchKey>& old_order) {
  std::vector<LaunchRecord> out;
  for (std::size_t r = 0; r < order.size(); ++r)
    for (const auto& name : order[r])
      if (auto it = recs.find({name, static_cast<int>(r) + 1}); it != recs.end()) {
        out.push_back(std::move(it->second));
        recs.erase(it);
      }
  for (const auto& k : old_order)
    if (auto it = recs.find(k); it != recs.end()) {
      out.push_back(std::move(it->second));
      recs.erase(it);
    }
  return out;
}

/// Checks the options before anything runs; returns the baseline's name. Throws UsageError.
std::string check_sweep_options(const SweepOptions& o) {
  if (o.configs.empty()) throw UsageError("nothing to sweep: no configuration");
  if (o.rounds < 1) throw UsageError(fmt::format("--rounds {}: must be >= 1", o.rounds));
  o.launcher.validate();
  launch::check_bench_args(o.bench_args, "sweep");
  if (::access(o.bench.c_str(), X_OK) != 0 || fs::is_directory(o.bench))
    throw UsageError("--bench " + o.bench + ": not an executable file");
  if (o.timeout_s < 0) throw UsageError(fmt::format("--timeout-s {}: must be >= 0", o.timeout_s));
  std::vector<std::string> names;
  for (const auto& c : o.configs) names.push_back(c.name);
  if (o.baseline.empty()) return names.front();
  if (const auto i = find_config(names, o.baseline)) return names[*i];
  throw UsageError("--baseline " + o.baseline + ": no such configuration (have: " + numbered(names) + ")");
}

/// The one line that refuses knobs that cannot reach `backend` (known by `how`).
std::string inert_refusal(const std::vector<InertKnob>& inert, const std::string& backend, const std::string& how) {
  const InertKnob& k = inert.front();
  std::vector<std::string> others;
  for (std::size_t i = 1; i < inert.size(); ++i) others.push_back(inert[i].name);
  return fmt::format("{}{}{} cannot reach the {} backend that runs this sweep ({} reaches {}; {}): its results would "
                     "differ by noise alone; pass --allow-inert to measure it anyway (marked inert)",
                     k.source.empty() ? "" : k.source + ": ", k.name, others.empty() ? "" : " (and " + join(others, ", ") + ")",
                     backend, k.name, k.reaches, how);
}

/// Earlier launches of the sweep in `sweep_path` (--resume), in their order; refuses a sweep run
/// with other bench arguments, launcher, configurations or seed, and an existing one without --resume.
SweepDocument earlier_sweep(const SweepOptions& o, const fs::path& out_dir, const fs::path& sweep_path,
                            const std::optional<launch::SimEvidence>& sim, std::map<LaunchKey, LaunchRecord>& recs,
                            std::vector<LaunchKey>& old_order) {
  if (!fs::exists(sweep_path)) return {};
  if (!o.resume)
    throw UsageError("--out " + o.out_dir.string() +
                     " already holds a sweep (sweep.json): pass --resume to continue it, or choose another directory");
  SweepDocument old = load_sweep(out_dir);
  if (sim && old.sim.is_object() && old.sim.value("cluster_hash", std::string()) != sim->cluster_hash)
    throw UsageError(fmt::format("--resume: {} simulated {} ({}), which now hashes to {}: its rounds would not compare "
                                 "with new ones; restore the file or sweep into another directory",
                                 sweep_path.string(), sim->cluster, old.sim.value("cluster_hash", std::string("?")),
                                 sim->cluster_hash));
  if (old.bench_args != o.bench_args)
    throw UsageError("--resume: " + sweep_path.string() + " was run with other bench arguments (" +
                     json_dump(json(old.bench_args)) + ")");
  if (old.launcher != launcher_json(o.launcher))
    throw UsageError("--resume: " + sweep_path.string() + " was run with another launcher setup (" + json_dump(old.launcher) + ")");
  if (o.seed && !old.launches.empty() && *o.seed != old.seed)
    throw UsageError(fmt::format("--seed {}: the sweep in {} was shuffled with seed {}", *o.seed, sweep_path.string(), old.seed));
  for (auto& l : old.launches) {
    for (const auto& c : o.configs)
      if (c.name == l.run.name && (c.env != l.run.env || c.args != l.run.args))
        throw UsageError("--resume: configuration '" + l.run.name + "' in " + sweep_path.string() +
                         " has another environment or arguments than now");
    const LaunchKey k{l.run.name, l.round};
    old_order.push_back(k);
    recs[k] = std::move(l);
  }
  old.launches.clear();
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

/// Adds a backend a results document named to doc.backend.seen.
void saw_backend(SweepDocument& doc, const std::string& backend) {
  if (backend.empty()) return;
  json& seen = doc.backend["seen"];
  if (!seen.is_array()) seen = json::array();
  if (std::find(seen.begin(), seen.end(), backend) == seen.end()) seen.push_back(backend);
}

/// Adds inert knobs of `backend` to the document's list (each once).
void note_inert(SweepDocument& doc, const std::vector<InertKnob>& inert, const std::string& backend) {
  if (inert.empty()) return;
  if (doc.inert_backend.empty()) doc.inert_backend = backend;
  else if (doc.inert_backend.find(backend) == std::string::npos) doc.inert_backend += ", " + backend;
  for (const auto& k : inert)
    if (std::none_of(doc.inert.begin(), doc.inert.end(), [&](const InertKnob& x) { return x.name == k.name; }))
      doc.inert.push_back(k);
}

}  // namespace

namespace {

/// sweep.json as the sweep starts: its options, the seed and each round's order, the backend
/// expected, and what --resume found (`recs`, in `old_order`).
SweepDocument start_document(const SweepOptions& o, const std::string& baseline, const launch::ExpectedBackend& expected,
                             const std::vector<InertKnob>& inert, const std::optional<launch::SimEvidence>& sim,
                             const SweepDocument& old, const std::map<LaunchKey, LaunchRecord>& recs,
                             const std::vector<LaunchKey>& old_order) {
  SweepDocument doc;
  doc.created = old.created.empty() ? utc_now_iso() : old.created;
  doc.railkit_version = kVersion;
  doc.updated = utc_now_iso();
  doc.bench = o.bench;
  doc.bench_args = o.bench_args;
  doc.launcher = launcher_json(o.launcher);
  doc.timeout_s = o.timeout_s;
  doc.baseline = baseline;
  doc.rounds = o.rounds;
  if (!recs.empty()) doc.seed = old.seed;
  else if (o.seed) doc.seed = *o.seed;
  else doc.seed = std::random_device{}();
  doc.planned = o.configs;
  for (int r = 1; r <= o.rounds; ++r) {
    std::vector<std::string> names;
    for (size_t k : round_order(o.configs.size(), doc.seed, r)) names.push_back(o.configs[k].name);
    doc.order.push_back(std::move(names));
  }
  doc.backend = json{{"expected", expected.backend.empty() ? json(nullptr) : json(expected.backend)},
                     {"how", expected.how},
                     {"seen", json::array()}};
  for (const auto& [k, l] : recs) saw_backend(doc, l.backend);
  doc.allow_inert = o.allow_inert;
  note_inert(doc, inert, expected.backend);
  for (const auto& [k, l] : recs)
    if (!l.inert.empty()) note_inert(doc, inert_in({BenchConfig{l.run.name, l.run.env, {}}}, l.backend, o.knob_sources), l.backend);
  doc.topology = o.topology;
  if (sim) {
    doc.sim = json::parse(launch::to_json(*sim).dump());
    std::vector<std::uint64_t> seeds;
    for (int r = 1; r <= o.rounds; ++r) seeds.push_back(launch::sim_replica_seed(sim->seed, r - 1));
    doc.sim["round_seeds"] = seeds;
  }
  doc.launches = ordered(doc.order, recs, old_order);
  return doc;
}

/// Every (round, configuration index) still to run, in run order; the launches --resume skips
/// are said on `progress` and counted in `skipped`.
std::vector<std::pair<int, size_t>> pending_launches(const SweepOptions& o, const SweepDocument& doc,
                                                     const std::map<LaunchKey, LaunchRecord>& recs,
                                                     std::ostream& progress, int& skipped) {
  const size_t total = o.configs.size() * static_cast<size_t>(o.rounds);
  std::vector<std::pair<int, size_t>> todo;
  size_t pos = 0;
  for (int r = 1; r <= o.rounds; ++r)
    for (size_t k : round_order(o.configs.size(), doc.seed, r)) {
      ++pos;
      auto it = recs.find({o.configs[k].name, r});
      if (it != recs.end() && (it->second.run.status == TrialStatus::Ok || !o.retry_failed)) {
        ++skipped;
        progress << fmt::format("[{}/{}] round {}/{} {}: {} earlier, skipped (--resume)\n", pos, total, r, o.rounds,
                                o.configs[k].name, name(it->second.run.status));
      } else {
        todo.emplace_back(r, k);
      }
    }
  progress.flush();
  return todo;
}

/// The record of a finished launch of `c` in `round`: its backend (from its results document)
/// and, in `now_inert`, the knobs of `c` that cannot reach it.
LaunchRecord record_launch(const SweepOptions& o, int round, const BenchConfig& c, const launch::TrialRun& tr,
                           const fs::path& out_dir, std::vector<InertKnob>& now_inert, std::string& fidelity) {
  LaunchRecord l{round, tr.record, "", {}};
  if (!l.run.results.empty()) {
    try {
      const ResultsDocument d = load_results((out_dir / l.run.results).string());
      l.backend = d.run.backend;
      fidelity = launch::simulated_fidelity(d);
    } catch (const Error&) {
    }
  }
  now_inert = l.backend.empty() ? std::vector<InertKnob>{} : inert_in({c}, l.backend, o.knob_sources);
  for (const auto& x : now_inert) l.inert.push_back(x.name);
  return l;
}

/// --prom: the whole sweep as one node_exporter textfile, stamped now.
void write_prom(const fs::path& file, const fs::path& out_dir, const SweepDocument& doc) {
  const double now_s = std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  write_file_atomic(file, render_sweep_prometheus(sweep_inputs(out_dir, doc), now_s));
}

}  // namespace

SweepOutcome run_sweep(const SweepOptions& o, char* const* envp, std::ostream& progress, bool tty) {
  const InterruptHold hold;  // a Ctrl-C between two launches ends the next one as interrupted
  const std::string baseline = check_sweep_options(o);
  if (!o.prom.empty()) check_writable(o.prom, "--prom");  // before anything runs
  std::optional<launch::SimEvidence> sim;  // one local process simulates every rank of the cluster file
  if (launch::is_sim(o.bench_args)) {
    (void)launch::launcher_for_bench(o.launcher, true, o.bench_args);
    sim = launch::sim_evidence(o.bench_args);
  }
  // Which backend runs, and whether every knob can reach it: before anything is written.
  const launch::ExpectedBackend expected = launch::expected_backend(o.bench, o.bench_args, o.launcher, envp);
  std::vector<InertKnob> inert;
  if (!expected.backend.empty()) {
    inert = inert_in(o.configs, expected.backend, o.knob_sources);
    if (!inert.empty() && !o.allow_inert) throw UsageError(inert_refusal(inert, expected.backend, expected.how));
  }

  std::error_code ec;
  fs::create_directories(o.out_dir, ec);
  if (ec || !fs::is_directory(o.out_dir)) throw UsageError("--out " + o.out_dir.string() + ": cannot create the directory");
  const fs::path out_dir = fs::absolute(o.out_dir);
  const fs::path sweep_path = out_dir / "sweep.json";
  check_writable(sweep_path, "--out");

  SweepOutcome res;
  std::map<LaunchKey, LaunchRecord> recs;
  std::vector<LaunchKey> old_order;
  const SweepDocument old = earlier_sweep(o, out_dir, sweep_path, sim, recs, old_order);
  res.doc = start_document(o, baseline, expected, inert, sim, old, recs, old_order);
  SweepDocument& doc = res.doc;
  write_doc(sweep_path, doc);
  const std::vector<std::pair<int, size_t>> todo = pending_launches(o, doc, recs, progress, res.skipped);

  const size_t n = o.configs.size(), total = n * static_cast<size_t>(o.rounds);
  const launch::LaunchContext ctx{o.launcher, o.bench, o.bench_args, out_dir, o.timeout_s, o.kill_grace_s};
  SweepProgress line(progress, tty, todo.size());
  for (const auto& [round, k] : todo) {
    const BenchConfig& c = o.configs[k];
    const auto& order = doc.order[static_cast<size_t>(round) - 1];
    const size_t at = static_cast<size_t>(round - 1) * n +
                      static_cast<size_t>(std::find(order.begin(), order.end(), c.name) - order.begin()) + 1;
    line.start(fmt::format("[{}/{}] round {}/{} {}", at, total, round, o.rounds, c.name));
    BenchConfig run = c;
    if (sim) {  // round R: a replica with its own seed
      const auto seed = launch::sim_seed_args(launch::sim_replica_seed(sim->seed, round - 1));
      run.args.insert(run.args.end(), seed.begin(), seed.end());
    }
    launch::TrialRun tr =
        launch::run_config(ctx, run, fmt::format("r{}-{:03d}-{}", round, k + 1, slug(c.name)), envp, line.ticker());
    tr.record.args = c.args;  // the configuration's own; the seed is in its command
    const LaunchResult& lr = tr.launch;
    if (lr.end == LaunchResult::End::Interrupted) {
      line.interrupted(lr);
      throw InterruptedError(lr.signal, fmt::format("sweep interrupted by signal {}; {} finished launches are in "
                                                    "{}; continue with --resume",
                                                    lr.signal, doc.launches.size(), sweep_path.string()));
    }
    std::vector<InertKnob> now_inert;
    std::string fidelity;
    const LaunchRecord l = record_launch(o, round, c, tr, out_dir, now_inert, fidelity);
    if (doc.sim.is_object() && doc.sim.value("fidelity", json(nullptr)).is_null() && !fidelity.empty())
      doc.sim["fidelity"] = fidelity;  // railkit-bench's default, as its document says
    if (l.run.status != TrialStatus::Ok) ++res.failed;
    ++res.ran;
    recs[{c.name, round}] = l;
    doc.updated = utc_now_iso();
    saw_backend(doc, l.backend);
    note_inert(doc, now_inert, l.backend);
    doc.launches = ordered(doc.order, recs, old_order);
    write_doc(sweep_path, doc);
    line.done(l.run, lr.elapsed_s);
    if (!now_inert.empty() && !o.allow_inert)
      throw UsageError(inert_refusal(now_inert, l.backend,
                                     fmt::format("its results document says run.backend {}; the sweep stopped after that "
                                                 "launch, kept in {}",
                                                 l.backend, sweep_path.string())));
  }
  if (!o.prom.empty()) write_prom(o.prom, out_dir, doc);
  return res;
}

}  // namespace railkit::sweep
