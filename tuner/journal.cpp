#include "tuner/journal.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "core/json_text.hpp"
#include "core/strings.hpp"
#include "launch/sim_bench.hpp"

namespace railkit::tuner {

namespace fs = std::filesystem;

std::vector<nlohmann::json> read_journal(const std::filesystem::path& path) {
  return with_json_errors(path.string(), [&] {
    const std::string text = read_file(path);
    std::vector<nlohmann::json> lines;
    size_t pos = 0, good_end = 0;
    int lineno = 0;
    while (pos < text.size()) {
      const size_t nl = text.find('\n', pos);
      ++lineno;
      const bool complete = nl != std::string::npos;
      const std::string line = text.substr(pos, complete ? nl - pos : std::string::npos);
      const size_t next = complete ? nl + 1 : text.size();
      nlohmann::json j;
      bool parsed = true;
      try {
        j = parse_json(line);
      } catch (const nlohmann::json::parse_error&) {
        parsed = false;
      }
      if (!parsed || !complete || !j.is_object()) {
        if (next < text.size() || (complete && parsed))  // a broken line before the end
          throw UsageError(fmt::format("{}:{}: not a journal line (JSON object per line)", path.string(), lineno));
        break;  // the torn last line of an interrupted write
      }
      lines.push_back(std::move(j));
      pos = next;
      good_end = next;
    }
    const std::string first = path.string() + ":1";
    if (lines.empty() || field_or(lines.front(), "type", "", first) != "session" ||
        field_or(lines.front(), "schema", "", first) != kJournalSchema)
      throw UsageError(path.string() + ": not a railkit tuning journal (the first line must be a " + kJournalSchema + " session)");
    if (good_end < text.size()) {
      if (::truncate(path.c_str(), static_cast<off_t>(good_end)) != 0)
        throw IoError(fmt::format("{}: cannot drop its torn last line: {}", path.string(), std::strerror(errno)));
    }
    return lines;
  });
}

void append_journal(const std::filesystem::path& path, const nlohmann::ordered_json& line) {
  const std::string text = json_dump(line) + "\n";
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) throw IoError(fmt::format("{}: cannot open for appending: {}", path.string(), std::strerror(errno)));
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      const int e = errno;
      ::close(fd);
      throw IoError(fmt::format("{}: write failed: {}", path.string(), std::strerror(e)));
    }
    done += static_cast<size_t>(n);
  }
  if (::fsync(fd) != 0) {
    const int e = errno;
    ::close(fd);
    throw IoError(fmt::format("{}: fsync failed: {}", path.string(), std::strerror(e)));
  }
  ::close(fd);
}

// ---------------------------------------------------------------- typed records

namespace {

using json = nlohmann::json;
using ojson = nlohmann::ordered_json;

ojson buckets_json(const std::map<BucketKey, double>& b) {
  ojson a = ojson::array();
  for (const auto& [k, v] : b) a.push_back({{"coll", k.coll}, {"bytes", k.lower_bytes}, {"busbw_GBps", v}});
  return a;
}

/// The elements of the array `a` with the path of each ("<where>[3]").
template <class F>
void each_element(const json& a, const std::string& where, F&& f) {
  if (!a.is_array()) throw UsageError(fmt::format("{} must be an array, not {}", where, a.type_name()));
  for (std::size_t i = 0; i < a.size(); ++i) f(a[i], fmt::format("{}[{}]", where, i));
}

std::map<BucketKey, double> buckets_from(const json& a, const std::string& where) {
  std::map<BucketKey, double> b;
  each_element(a, where, [&](const json& x, const std::string& at) {
    b[{field<std::string>(x, "coll", at), field<std::uint64_t>(x, "bytes", at)}] = field<double>(x, "busbw_GBps", at);
  });
  return b;
}

ojson sizes_json(const SizeValues& s) {
  ojson a = ojson::array();
  for (const auto& [k, v] : s) a.push_back({{"coll", k.first}, {"bytes", k.second}, {"busbw_GBps", v}});
  return a;
}

SizeValues sizes_from(const json& a, const std::string& where) {
  SizeValues s;
  each_element(a, where, [&](const json& x, const std::string& at) {
    s[{field<std::string>(x, "coll", at), field<std::uint64_t>(x, "bytes", at)}] = field<double>(x, "busbw_GBps", at);
  });
  return s;
}

using Env = std::map<std::string, std::string>;

/// A journaled status (ok, failed, timeout): interrupted launches are never journaled.
TrialStatus status_from(const json& j, const std::string& source) {
  const auto st = j.is_string() ? parse_trial_status(j.get<std::string>()) : std::nullopt;
  if (!st || *st == TrialStatus::Interrupted) throw UsageError(source + ": unknown status " + json_dump(j));
  return *st;
}

/// Runs `read`, turning a missing or mistyped field into a UsageError naming the line.
template <class F>
auto read_line(const std::string& what, F&& read) -> decltype(read()) {
  return with_json_errors(what + " is incomplete", std::forward<F>(read));
}

launch::LauncherOptions launcher_from_json(const json& j, const std::string& where) {
  launch::LauncherOptions l;
  l.kind = launch::parse_launcher(field<std::string>(j, "kind", where));
  l.np = field<int>(j, "np", where);
  l.ppn = field<int>(j, "ppn", where);
  l.hostfile = field<std::string>(j, "hostfile", where);
  l.args = field<std::vector<std::string>>(j, "args", where);
  l.as_root = field<bool>(j, "as_root", where);
  l.cpus = field<int>(j, "cpus", where);
  return l;
}

ojson weights_json(const std::optional<std::string>& path, const BucketWeights& weights) {
  if (!path) return nullptr;
  ojson w = ojson::array();
  for (const auto& [k, v] : weights) w.push_back({{"coll", k.coll}, {"bytes", k.lower_bytes}, {"weight", v}});
  return ojson{{"path", *path}, {"buckets", w}};
}

ojson dcqcn_json(const std::optional<DcqcnOnNodes>& d) {
  if (!d) return nullptr;
  return ojson{{"railkit", d->railkit}, {"root", d->root}, {"netdevs", d->netdevs}, {"priority", d->priority}};
}

std::optional<DcqcnOnNodes> dcqcn_from(const json& j, const std::string& where) {
  if (j.is_null()) return std::nullopt;
  DcqcnOnNodes d;
  d.railkit = field<std::string>(j, "railkit", where);
  d.root = field<std::string>(j, "root", where);
  d.netdevs = field<std::vector<std::string>>(j, "netdevs", where);
  d.priority = field<int>(j, "priority", where);
  return d;
}

ojson topo_json(const TopoSource& t) {
  return ojson{{"root", t.root.empty() ? ojson(nullptr) : ojson(t.root)}, {"railkit", t.railkit}};
}

TopoSource topo_from(const json& line, const std::string& where) {
  TopoSource t;
  if (!line.contains("topo")) return t;  // a journal from before the fingerprint source was journaled
  const json& j = line["topo"];
  const std::string at = where + ": topo";
  json_member(j, "root", at);
  t.root = field_opt<std::string>(j, "root", at).value_or("");
  t.railkit = field<std::string>(j, "railkit", at);
  return t;
}

/// The options of a session line, but for the space (read first: trials need it).
void read_options(const json& j, TuneOptions& o, BucketWeights& weights, const std::string& where) {
  o.strategy = field<std::string>(j, "strategy", where);
  o.budget = field<int>(j, "budget", where);
  o.seed = field<std::uint64_t>(j, "seed", where);
  o.bench = field<std::string>(j, "bench", where);
  o.bench_args = field<std::vector<std::string>>(j, "bench_args", where);
  o.iters = field<int>(j, "iters", where);
  o.launcher = launcher_from_json(json_member(j, "launcher", where), where + ": launcher");
  o.timeout_s = field<double>(j, "timeout_s", where);
  o.kill_grace_s = field<double>(j, "kill_grace_s", where);
  if (const json& w = json_member(j, "weights", where); !w.is_null()) {
    o.weights_path = field<std::string>(w, "path", where + ": weights");
    each_element(json_member(w, "buckets", where + ": weights"), where + ": weights.buckets",
                 [&](const json& b, const std::string& at) {
                   weights[{field<std::string>(b, "coll", at), field<std::uint64_t>(b, "bytes", at)}] =
                       field<double>(b, "weight", at);
                 });
  }
  const json& v = json_member(j, "validation", where);
  const std::string vw = where + ": validation";
  o.validate = field<bool>(v, "enabled", vw);
  o.pairs = field<int>(v, "pairs", vw);
  o.validate_iters = field<int>(v, "iters", vw);
  o.max_regression = field<double>(v, "max_regression", vw);
  o.baseline_env = field<Env>(v, "baseline_env", vw);
  o.dcqcn = dcqcn_from(json_member(j, "dcqcn", where), where + ": dcqcn");
  o.topo = topo_from(j, where);
  json_member(j, "emit_ompi_rules", where);
  o.emit_ompi_rules = field_opt<std::string>(j, "emit_ompi_rules", where);
  o.profile_name = field<std::string>(j, "profile_name", where);
  o.allow_inert = field_or(j, "allow_inert", false, where);  // absent in journals written before knobs' reach was judged
  if (j.contains("sim") && !j["sim"].is_null()) o.sim = launch::sim_evidence_from_json(j["sim"], where + ": sim");
}

}  // namespace

json launcher_to_json(const launch::LauncherOptions& l) {
  return json{{"kind", launch::launcher_name(l.kind)}, {"np", l.np}, {"ppn", l.ppn}, {"hostfile", l.hostfile}, {"args", l.args},
              {"as_root", l.as_root}, {"cpus", l.cpus}};
}

ojson to_json(const SessionRecord& r) {
  const TuneOptions& o = r.options;
  ojson j;
  j["type"] = "session";
  j["schema"] = kJournalSchema;
  j["created"] = r.created;
  j["railkit_version"] = r.railkit_version;
  j["space"] = space_to_json(o.space);
  j["strategy"] = o.strategy;
  j["budget"] = o.budget;
  j["seed"] = o.seed;
  j["bench"] = o.bench;
  j["bench_args"] = o.bench_args;
  j["iters"] = o.iters;
  j["launcher"] = launcher_to_json(o.launcher);
  j["timeout_s"] = o.timeout_s;
  j["kill_grace_s"] = o.kill_grace_s;
  j["weights"] = weights_json(o.weights_path, r.weights);
  j["validation"] = {{"enabled", o.validate}, {"pairs", o.pairs}, {"iters", o.validate_iters},
                     {"max_regression", o.max_regression}, {"baseline_env", o.baseline_env}};
  j["dcqcn"] = dcqcn_json(o.dcqcn);
  j["topo"] = topo_json(o.topo);
  j["emit_ompi_rules"] = o.emit_ompi_rules ? ojson(*o.emit_ompi_rules) : ojson(nullptr);
  j["profile_name"] = o.profile_name;
  j["allow_inert"] = o.allow_inert;
  j["sim"] = o.sim ? launch::to_json(*o.sim) : ojson(nullptr);
  return j;
}

SessionRecord session_from_json(const json& line, const fs::path& dir) {
  const std::string source = (dir / "journal.jsonl").string();
  SessionRecord r;
  r.options.space = parse_space(json_member(line, "space", source + ":1: session"),
                                source + ": space");
  read_line(source + ": its session line", [&] {
    const std::string where = source + ":1: session";
    r.created = field_or(line, "created", "", where);
    r.railkit_version = field_or(line, "railkit_version", "", where);
    read_options(line, r.options, r.weights, where);
    return 0;
  });
  r.options.out_dir = dir;
  return r;
}

ojson to_json(const Space& space, const TrialRecord& r) {
  ojson j;
  j["type"] = "trial";
  j["trial"] = r.id;
  j["config"] = config_to_json(space, r.proposal.config);
  j["label"] = r.label;
  j["fidelity"] = r.proposal.fidelity;
  j["iters"] = r.iters;
  j["env"] = r.settings.env;
  j["dcqcn"] = r.settings.dcqcn;
  if (!r.settings.switch_settings.empty()) j["switch"] = r.settings.switch_settings;
  j["status"] = name(r.status);
  j["results"] = r.results;
  j["objective"] = r.objective ? ojson(*r.objective) : ojson(nullptr);
  j["buckets"] = buckets_json(r.buckets);
  j["elapsed_s"] = r.elapsed_s;
  j["started"] = r.started;
  if (!r.error.empty()) j["error"] = r.error;
  if (r.infeasible) j["infeasible"] = true;
  return j;
}

TrialRecord trial_from_json(const Space& space, const json& line, const std::string& source) {
  const std::string what = fmt::format("{}: trial {}", source, json_dump(field_or(line, "trial", json(), source)));
  return read_line(what, [&] {
    TrialRecord t;
    t.id = field<int>(line, "trial", what);
    t.proposal.config = config_from_json(space, json_member(line, "config", what), what);
    t.proposal.fidelity = field<int>(line, "fidelity", what);
    t.label = field_or(line, "label", "", what);
    t.iters = field_or(line, "iters", 0, what);
    t.settings.env = field_or(line, "env", Env{}, what);
    t.settings.dcqcn = field_or(line, "dcqcn", Env{}, what);
    t.settings.switch_settings = field_or(line, "switch", Env{}, what);
    t.status = status_from(json_member(line, "status", what), source);
    t.results = field_or(line, "results", "", what);
    if (const json& o = json_member(line, "objective", what); !o.is_null()) {
      if (!o.is_number())
        throw UsageError(fmt::format("{}: objective must be a number (GB/s) or null, not {} {}", what, o.type_name(),
                                     json_dump(o)));
      t.objective = o.get<double>();
    }
    t.buckets = buckets_from(json_member(line, "buckets", what), what + ": buckets");
    t.elapsed_s = field_or(line, "elapsed_s", 0.0, what);
    t.started = field_or(line, "started", "", what);
    t.error = field_or(line, "error", "", what);
    t.infeasible = field_or(line, "infeasible", false, what);
    return t;
  });
}

ojson to_json(const Space& space, const ValidationRecord& r) {
  ojson j;
  j["type"] = "validation";
  j["round"] = r.round;
  j["role"] = r.role;
  j["config"] = r.config ? config_to_json(space, *r.config) : ojson(nullptr);
  j["env"] = r.settings.env;
  j["dcqcn"] = r.settings.dcqcn;
  if (!r.settings.switch_settings.empty()) j["switch"] = r.settings.switch_settings;
  j["iters"] = r.iters;
  j["status"] = name(r.status);
  j["results"] = r.results;
  j["backend"] = r.backend;
  j["buckets"] = buckets_json(r.buckets);
  j["sizes"] = sizes_json(r.sizes);
  j["elapsed_s"] = r.elapsed_s;
  if (!r.error.empty()) j["error"] = r.error;
  if (r.sim_seed) j["sim_seed"] = *r.sim_seed;
  return j;
}

std::string validation_role(std::size_t candidate) {
  return candidate == 0 ? std::string("baseline") : fmt::format("candidate-{}", candidate);
}

ValidationRecord validation_from_json(const Space& space, const json& line, const std::string& source) {
  const std::string what = fmt::format("{}: validation round {} {}", source, json_dump(field_or(line, "round", json(), source)),
                                       json_dump(field_or(line, "role", json(), source)));
  return read_line(what, [&] {
    ValidationRecord r;
    r.round = field<int>(line, "round", what);
    r.role = field<std::string>(line, "role", what);
    if (line.contains("config") && !line["config"].is_null()) r.config = config_from_json(space, line["config"], what);
    r.settings.env = field_or(line, "env", Env{}, what);
    r.settings.dcqcn = field_or(line, "dcqcn", Env{}, what);
    r.settings.switch_settings = field_or(line, "switch", Env{}, what);
    r.iters = field_or(line, "iters", 0, what);
    r.status = status_from(json_member(line, "status", what), source);
    r.results = field_or(line, "results", "", what);
    r.backend = field_or(line, "backend", "", what);
    r.buckets = buckets_from(json_member(line, "buckets", what), what + ": buckets");
    r.sizes = sizes_from(json_member(line, "sizes", what), what + ": sizes");
    r.elapsed_s = field_or(line, "elapsed_s", 0.0, what);
    r.error = field_or(line, "error", "", what);
    r.sim_seed = field_opt<std::uint64_t>(line, "sim_seed", what);
    return r;
  });
}

ojson to_json(const FingerprintFacts& r) {
  ojson nodes = ojson::array();
  for (const auto& n : r.nodes) {
    ojson x;
    x["host"] = n.host;
    x["fingerprint"] = n.hash.empty() ? ojson(nullptr) : ojson(n.hash);
    x["nic_models"] = n.nic_models;
    x["document"] = n.document.empty() ? ojson(nullptr) : ojson(n.document);
    if (!n.error.empty()) x["error"] = n.error;
    if (!n.facts.empty()) x["facts"] = n.facts;
    nodes.push_back(std::move(x));
  }
  ojson j;
  j["type"] = "topology";
  j["source"] = r.source;
  j["root"] = r.root.empty() ? ojson(nullptr) : ojson(r.root);
  j["nodes"] = std::move(nodes);
  j["probed"] = r.probed;
  return j;
}

FingerprintFacts topology_from_json(const json& line, const std::string& source) {
  return read_line(source + ": its topology line", [&] {
    const std::string where = source + ": topology";
    FingerprintFacts f;
    f.source = field<std::string>(line, "source", where);
    if (f.source != "nodes" && f.source != "topo-root" && f.source != "sim")
      throw UsageError(source + ": topology line: unknown source " + json_dump(line["source"]));
    json_member(line, "root", where);
    f.root = field_opt<std::string>(line, "root", where).value_or("");
    each_element(json_member(line, "nodes", where), where + ": nodes", [&](const json& x, const std::string& at) {
      NodeFingerprint n;
      n.host = field<std::string>(x, "host", at);
      json_member(x, "fingerprint", at);
      n.hash = field_opt<std::string>(x, "fingerprint", at).value_or("");
      n.nic_models = field<std::vector<std::string>>(x, "nic_models", at);
      json_member(x, "document", at);
      n.document = field_opt<std::string>(x, "document", at).value_or("");
      n.error = field_or(x, "error", "", at);
      // absent in journals written before profiles stored the facts
      n.facts = field_or(x, "facts", std::map<std::string, std::string>{}, at);
      f.nodes.push_back(std::move(n));
    });
    f.probed = field_or(line, "probed", "", where);
    return f;
  });
}

ojson to_json(const DoneRecord& r) {
  return ojson{{"type", "done"}, {"profile", r.profile}, {"validated", r.validated}, {"finished", r.finished}};
}

DoneRecord done_from_json(const json& line, const std::string& source) {
  return read_line(source + ": its done line", [&] {
    DoneRecord d;
    const std::string where = source + ": done";
    d.profile = field<std::string>(line, "profile", where);
    d.validated = field<bool>(line, "validated", where);
    d.finished = field_or(line, "finished", "", where);
    return d;
  });
}

JournalRecords parse_journal(const std::vector<json>& lines, const fs::path& dir) {
  const std::string source = (dir / "journal.jsonl").string();
  return with_json_errors(source, [&] {
    JournalRecords j;
    j.session = session_from_json(lines.at(0), dir);
    const Space& space = j.session.options.space;
    for (std::size_t i = 1; i < lines.size(); ++i) {  // read_journal keeps every line up to the end: i is line i + 1
      const json& line = lines[i];
      const std::string at = fmt::format("{}:{}", source, i + 1);
      const std::string type = field_or(line, "type", "", at);
      if (type == "trial") j.trials.push_back(trial_from_json(space, line, at));
      else if (type == "validation") j.validations.push_back(validation_from_json(space, line, at));
      else if (type == "topology") j.topology = topology_from_json(line, at);
      else if (type == "done") j.done = done_from_json(line, at);
      else if (type == "budget")  // --resume --budget N: the session's budget from here on
        j.session.options.budget = field<int>(line, "budget", at);
    }
    return j;
  });
}

}  // namespace railkit::tuner
