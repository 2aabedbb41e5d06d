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

namespace railkit::tuner {

namespace fs = std::filesystem;

std::vector<nlohmann::json> read_journal(const std::filesystem::path& path) {
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
  if (lines.empty() || lines.front().value("type", "") != "session" || lines.front().value("schema", "") != kJournalSchema)
    throw UsageError(path.string() + ": not a railkit tuning journal (the first line must be a " + kJournalSchema + " session)");
  if (good_end < text.size()) {
    if (::truncate(path.c_str(), static_cast<off_t>(good_end)) != 0)
      throw IoError(fmt::format("{}: cannot drop its torn last line: {}", path.string(), std::strerror(errno)));
  }
  return lines;
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

std::map<BucketKey, double> buckets_from(const json& a) {
  std::map<BucketKey, double> b;
  for (const auto& x : a) b[{x.at("coll").get<std::string>(), x.at("bytes").get<std::uint64_t>()}] = x.at("busbw_GBps").get<double>();
  return b;
}

ojson sizes_json(const SizeValues& s) {
  ojson a = ojson::array();
  for (const auto& [k, v] : s) a.push_back({{"coll", k.first}, {"bytes", k.second}, {"busbw_GBps", v}});
  return a;
}

SizeValues sizes_from(const json& a) {
  SizeValues s;
  for (const auto& x : a) s[{x.at("coll").get<std::string>(), x.at("bytes").get<std::uint64_t>()}] = x.at("busbw_GBps").get<double>();
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
  try {
    return read();
  } catch (const json::exception& e) {
    throw UsageError(what + " is incomplete: " + e.what());
  }
}

launch::LauncherOptions launcher_from_json(const json& j) {
  launch::LauncherOptions l;
  l.kind = launch::parse_launcher(j.at("kind").get<std::string>());
  l.np = j.at("np").get<int>();
  l.ppn = j.at("ppn").get<int>();
  l.hostfile = j.at("hostfile").get<std::string>();
  l.args = j.at("args").get<std::vector<std::string>>();
  l.as_root = j.at("as_root").get<bool>();
  l.cpus = j.at("cpus").get<int>();
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

std::optional<DcqcnOnNodes> dcqcn_from(const json& j) {
  if (j.is_null()) return std::nullopt;
  DcqcnOnNodes d;
  d.railkit = j.at("railkit").get<std::string>();
  d.root = j.at("root").get<std::string>();
  d.netdevs = j.at("netdevs").get<std::vector<std::string>>();
  d.priority = j.at("priority").get<int>();
  return d;
}

ojson topo_json(const TopoSource& t) {
  return ojson{{"root", t.root.empty() ? ojson(nullptr) : ojson(t.root)}, {"railkit", t.railkit}};
}

TopoSource topo_from(const json& line) {
  TopoSource t;
  if (!line.contains("topo")) return t;  // a journal from before the fingerprint source was journaled
  const json& j = line["topo"];
  if (!j.at("root").is_null()) t.root = j["root"].get<std::string>();
  t.railkit = j.at("railkit").get<std::string>();
  return t;
}

/// The options of a session line, but for the space (read first: trials need it).
void read_options(const json& j, TuneOptions& o, BucketWeights& weights) {
  o.strategy = j.at("strategy").get<std::string>();
  o.budget = j.at("budget").get<int>();
  o.seed = j.at("seed").get<std::uint64_t>();
  o.bench = j.at("bench").get<std::string>();
  o.bench_args = j.at("bench_args").get<std::vector<std::string>>();
  o.iters = j.at("iters").get<int>();
  o.launcher = launcher_from_json(j.at("launcher"));
  o.timeout_s = j.at("timeout_s").get<double>();
  o.kill_grace_s = j.at("kill_grace_s").get<double>();
  if (!j.at("weights").is_null()) {
    o.weights_path = j["weights"].at("path").get<std::string>();
    for (const auto& b : j["weights"].at("buckets"))
      weights[{b.at("coll").get<std::string>(), b.at("bytes").get<std::uint64_t>()}] = b.at("weight").get<double>();
  }
  const json& v = j.at("validation");
  o.validate = v.at("enabled").get<bool>();
  o.pairs = v.at("pairs").get<int>();
  o.validate_iters = v.at("iters").get<int>();
  o.max_regression = v.at("max_regression").get<double>();
  o.baseline_env = v.at("baseline_env").get<Env>();
  o.dcqcn = dcqcn_from(j.at("dcqcn"));
  o.topo = topo_from(j);
  if (!j.at("emit_ompi_rules").is_null()) o.emit_ompi_rules = j["emit_ompi_rules"].get<std::string>();
  o.profile_name = j.at("profile_name").get<std::string>();
  o.allow_inert = j.value("allow_inert", false);  // absent in journals written before knobs' reach was judged
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
  return j;
}

SessionRecord session_from_json(const json& line, const fs::path& dir) {
  const std::string source = (dir / "journal.jsonl").string();
  SessionRecord r;
  r.options.space = parse_space(read_line(source + ": its session line", [&]() -> const json& { return line.at("space"); }),
                                source + ": space");
  read_line(source + ": its session line", [&] {
    r.created = line.value("created", "");
    r.railkit_version = line.value("railkit_version", "");
    read_options(line, r.options, r.weights);
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
  j["status"] = name(r.status);
  j["results"] = r.results;
  j["objective"] = r.objective ? ojson(*r.objective) : ojson(nullptr);
  j["buckets"] = buckets_json(r.buckets);
  j["elapsed_s"] = r.elapsed_s;
  j["started"] = r.started;
  if (!r.error.empty()) j["error"] = r.error;
  return j;
}

TrialRecord trial_from_json(const Space& space, const json& line, const std::string& source) {
  const std::string what = fmt::format("{}: trial {}", source, json_dump(line.value("trial", json())));
  return read_line(what, [&] {
    TrialRecord t;
    t.id = line.at("trial").get<int>();
    t.proposal.config = config_from_json(space, line.at("config"), what);
    t.proposal.fidelity = line.at("fidelity").get<int>();
    t.label = line.value("label", "");
    t.iters = line.value("iters", 0);
    t.settings.env = line.value("env", Env{});
    t.settings.dcqcn = line.value("dcqcn", Env{});
    t.status = status_from(line.at("status"), source);
    t.results = line.value("results", "");
    if (const json& o = line.at("objective"); !o.is_null()) {
      if (!o.is_number())
        throw UsageError(fmt::format("{}: objective must be a number (GB/s) or null, not {} {}", what, o.type_name(),
                                     json_dump(o)));
      t.objective = o.get<double>();
    }
    t.buckets = buckets_from(line.at("buckets"));
    t.elapsed_s = line.value("elapsed_s", 0.0);
    t.started = line.value("started", "");
    t.error = line.value("error", "");
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
  j["iters"] = r.iters;
  j["status"] = name(r.status);
  j["results"] = r.results;
  j["backend"] = r.backend;
  j["buckets"] = buckets_json(r.buckets);
  j["sizes"] = sizes_json(r.sizes);
  j["elapsed_s"] = r.elapsed_s;
  if (!r.error.empty()) j["error"] = r.error;
  return j;
}

std::string validation_role(std::size_t candidate) {
  return candidate == 0 ? std::string("baseline") : fmt::format("candidate-{}", candidate);
}

ValidationRecord validation_from_json(const Space& space, const json& line, const std::string& source) {
  const std::string what = fmt::format("{}: validation round {} {}", source, json_dump(line.value("round", json())),
                                       json_dump(line.value("role", json())));
  return read_line(what, [&] {
    ValidationRecord r;
    r.round = line.at("round").get<int>();
    r.role = line.at("role").get<std::string>();
    if (line.contains("config") && !line["config"].is_null()) r.config = config_from_json(space, line["config"], what);
    r.settings.env = line.value("env", Env{});
    r.settings.dcqcn = line.value("dcqcn", Env{});
    r.iters = line.value("iters", 0);
    r.status = status_from(line.at("status"), source);
    r.results = line.value("results", "");
    r.backend = line.value("backend", "");
    r.buckets = buckets_from(line.at("buckets"));
    r.sizes = sizes_from(line.at("sizes"));
    r.elapsed_s = line.value("elapsed_s", 0.0);
    r.error = line.value("error", "");
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
    FingerprintFacts f;
    f.source = line.at("source").get<std::string>();
    if (f.source != "nodes" && f.source != "topo-root")
      throw UsageError(source + ": topology line: unknown source " + json_dump(line["source"]));
    if (!line.at("root").is_null()) f.root = line["root"].get<std::string>();
    for (const auto& x : line.at("nodes")) {
      NodeFingerprint n;
      n.host = x.at("host").get<std::string>();
      if (!x.at("fingerprint").is_null()) n.hash = x["fingerprint"].get<std::string>();
      n.nic_models = x.at("nic_models").get<std::vector<std::string>>();
      if (!x.at("document").is_null()) n.document = x["document"].get<std::string>();
      n.error = x.value("error", "");
      if (x.contains("facts"))  // absent in journals written before profiles stored the facts
        n.facts = x["facts"].get<std::map<std::string, std::string>>();
      f.nodes.push_back(std::move(n));
    }
    f.probed = line.value("probed", "");
    return f;
  });
}

ojson to_json(const DoneRecord& r) {
  return ojson{{"type", "done"}, {"profile", r.profile}, {"validated", r.validated}, {"finished", r.finished}};
}

DoneRecord done_from_json(const json& line, const std::string& source) {
  return read_line(source + ": its done line", [&] {
    DoneRecord d;
    d.profile = line.at("profile").get<std::string>();
    d.validated = line.at("validated").get<bool>();
    d.finished = line.value("finished", "");
    return d;
  });
}

JournalRecords parse_journal(const std::vector<json>& lines, const fs::path& dir) {
  const std::string source = (dir / "journal.jsonl").string();
  JournalRecords j;
  j.session = session_from_json(lines.at(0), dir);
  const Space& space = j.session.options.space;
  for (std::size_t i = 1; i < lines.size(); ++i) {  // read_journal keeps every line up to the end: i is line i + 1
    const json& line = lines[i];
    const std::string at = fmt::format("{}:{}", source, i + 1);
    const std::string type = line.value("type", "");
    if (type == "trial") j.trials.push_back(trial_from_json(space, line, at));
    else if (type == "validation") j.validations.push_back(validation_from_json(space, line, at));
    else if (type == "topology") j.topology = topology_from_json(line, at);
    else if (type == "done") j.done = done_from_json(line, at);
    else if (type == "budget")  // --resume --budget N: the session's budget from here on
      j.session.options.budget = read_line(at + ": its budget line", [&] { return line.at("budget").get<int>(); });
  }
  return j;
}

}  // namespace railkit::tuner
