#include "core/results.hpp"

#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "core/json_text.hpp"

namespace railkit {
using nlohmann::json;

namespace {

using ojson = nlohmann::ordered_json;

/// Removes the keys named in `absent` ("count", "time_us.p50") from j: imported documents only.
void erase_absent(ojson& j, const std::set<std::string>& absent) {
  for (const auto& key : absent) {
    const auto dot = key.find('.');
    if (dot == std::string::npos) {
      j.erase(key);
    } else if (auto it = j.find(key.substr(0, dot)); it != j.end() && it->is_object()) {
      it->erase(key.substr(dot + 1));
    }
  }
}

/// Reads the keys of an imported document's object leniently: a missing key is recorded in
/// `absent` (as prefix + key) instead of failing; a key that is present must still be valid.
struct Lenient {
  bool on = false;  ///< false: every key required, as for railkit-bench documents
  std::set<std::string>* absent = nullptr;
  std::string prefix;
  bool present(const json& obj, const std::string& key) const {
    if (!on || (obj.is_object() && obj.contains(key))) return true;
    absent->insert(prefix + key);
    return false;
  }
};

ojson summary_json(const Summary& s) {
  return {{"avg", s.avg}, {"min", s.min}, {"max", s.max}, {"p50", s.p50}, {"p99", s.p99}, {"cv", s.cv}};
}

Summary summary_from(const json& j, const std::string& where, const Lenient& len = {}) {
  Summary s;
  s.avg = field<double>(j, "avg", where);
  if (len.present(j, "min")) s.min = field<double>(j, "min", where);
  if (len.present(j, "max")) s.max = field<double>(j, "max", where);
  if (len.present(j, "p50")) s.p50 = field<double>(j, "p50", where);
  if (len.present(j, "p99")) s.p99 = field<double>(j, "p99", where);
  if (len.present(j, "cv")) s.cv = field<double>(j, "cv", where);
  return s;
}

ojson record_json(const ResultRecord& r) {
  ojson j = {{"op", r.op},
            {"dtype", r.dtype},
            {"redop", r.redop},
            {"root", r.root},
            {"bytes", r.bytes},
            {"count", r.count},
            {"in_place", r.in_place},
            {"cycle", r.cycle},
            {"iters", r.iters},
            {"time_us", summary_json(r.time_us)},
            {"algbw_GBps", r.algbw_GBps},
            {"busbw_GBps", r.busbw_GBps},
            {"wrong", r.wrong ? ojson(*r.wrong) : ojson(nullptr)},
            {"ranks",
             {{"time_us_min", r.ranks.time_us_min},
              {"time_us_max", r.ranks.time_us_max},
              {"slowest_rank", r.ranks.slowest_rank},
              {"slowest_host", r.ranks.slowest_host}}},
            {"group", r.group ? ojson(*r.group) : ojson(nullptr)},
            {"observed", ojson::parse(json_dump(r.observed))}};
  erase_absent(j, r.absent);
  return j;
}

ResultRecord record_from(const json& j, const std::string& where, bool imported) {
  ResultRecord r;
  const Lenient len{imported, &r.absent, ""};
  r.op = field<std::string>(j, "op", where);
  if (len.present(j, "dtype")) r.dtype = field<std::string>(j, "dtype", where);
  if (len.present(j, "redop")) r.redop = field<std::string>(j, "redop", where);
  if (len.present(j, "root")) r.root = field<int>(j, "root", where);
  r.bytes = field<std::uint64_t>(j, "bytes", where);
  if (len.present(j, "count")) r.count = field<std::uint64_t>(j, "count", where);
  r.in_place = field<bool>(j, "in_place", where);
  if (len.present(j, "cycle")) r.cycle = field_or(j, "cycle", 0, where);
  if (len.present(j, "iters")) r.iters = field_or(j, "iters", 0, where);
  r.time_us = summary_from(json_member(j, "time_us", where), where + ".time_us", Lenient{imported, &r.absent, "time_us."});
  if (len.present(j, "algbw_GBps")) r.algbw_GBps = field<double>(j, "algbw_GBps", where);
  if (len.present(j, "busbw_GBps")) r.busbw_GBps = field<double>(j, "busbw_GBps", where);
  if (len.present(j, "wrong")) {
    json_member(j, "wrong", where);
    if (const auto wrong = field_opt<std::int64_t>(j, "wrong", where)) r.wrong = *wrong;
  }
  if (len.present(j, "ranks")) {
    const std::string kw = where + ".ranks";
    const json& k = json_member(j, "ranks", where);
    const Lenient lk{imported, &r.absent, "ranks."};
    if (lk.present(k, "time_us_min")) r.ranks.time_us_min = field<double>(k, "time_us_min", kw);
    if (lk.present(k, "time_us_max")) r.ranks.time_us_max = field<double>(k, "time_us_max", kw);
    if (lk.present(k, "slowest_rank")) r.ranks.slowest_rank = field<int>(k, "slowest_rank", kw);
    if (lk.present(k, "slowest_host")) r.ranks.slowest_host = field<std::string>(k, "slowest_host", kw);
  }
  if (len.present(j, "group")) r.group = field_opt<std::string>(j, "group", where);
  if (len.present(j, "observed")) r.observed = field_or(j, "observed", json(nullptr), where);
  if (!r.observed.is_null() && !r.observed.is_object())
    throw UsageError(where + ": observed must be an object or null, not " + std::string(r.observed.type_name()));
  return r;
}

}  // namespace

void refuse_imported(const ResultsDocument& d, const std::string& path, const std::string& what) {
  if (!is_imported(d)) return;
  const std::string tool = d.run.imported.is_object() && d.run.imported.contains("tool") && d.run.imported["tool"].is_string()
                               ? d.run.imported["tool"].get<std::string>()
                               : d.run.backend;
  throw UsageError(what + ": " + path + " was imported from " + tool +
                   "'s log (railkit import), not measured by railkit-bench: it can be reported and compared, never used here");
}

void update_summary(ResultsDocument& doc) {
  double sum = 0;
  std::int64_t wrong = 0;
  for (const auto& r : doc.results) {
    sum += r.busbw_GBps;
    if (r.wrong) wrong += *r.wrong;
  }
  doc.summary.avg_busbw_GBps = doc.results.empty() ? 0.0 : sum / static_cast<double>(doc.results.size());
  doc.summary.errors = wrong;
}

std::string dump_record(const ResultRecord& r, int indent) { return json_dump(record_json(r), indent); }

namespace {

/// `head` (the document dumped with `indent` >= 0 and an empty "results" array) with the records
/// dumped one at a time into that array: the text json_dump gives for the whole tree, without
/// building the tree of every record at once (an imported log may hold 10^5 records).
std::string splice_records(const std::string& head, const std::vector<ResultRecord>& records, int indent) {
  const std::string pad(static_cast<std::size_t>(indent), ' ');
  const std::string key = "\n" + pad + "\"results\": []";
  const auto at = head.find(key);  // the top level's keys are the only ones indented this little
  if (at == std::string::npos || records.empty()) return head;
  std::string out = head.substr(0, at + key.size() - 1);
  const std::string item_pad = "\n" + pad + pad;
  for (std::size_t i = 0; i < records.size(); ++i) {
    out += item_pad;
    for (const char c : dump_record(records[i], indent)) {
      if (c == '\n') out += item_pad;  // strings are escaped: every newline is the dump's own
      else out += c;
    }
    if (i + 1 < records.size()) out += ',';
  }
  out += "\n" + pad + "]";
  out.append(head, at + key.size(), std::string::npos);
  return out;
}

}  // namespace

std::string dump_results(const ResultsDocument& d, int indent) {
  const RunInfo& r = d.run;
  ojson results = ojson::array();
  if (indent <= 0)  // one line (or no indentation to tell the top level by): the whole tree
    for (const auto& rec : d.results) results.push_back(record_json(rec));
  ojson observed = ojson::parse(json_dump(d.observed));
  ojson options = ojson::parse(json_dump(r.options));
  ojson error = nullptr;
  if (d.error)
    error = {{"code", d.error->code},
             {"exit_code", d.error->exit_code},
             {"message", d.error->message},
             {"detail", ojson::parse(json_dump(d.error->detail))}};
  ojson j = {{"schema", d.schema},
       {"simulated", d.simulated},
       {"run",
        {{"label", r.label},
         {"backend", r.backend},
         {"backend_version", r.backend_version},
         {"railkit_version", r.railkit_version},
         {"nranks", r.nranks},
         {"nnodes", r.nnodes},
         {"hosts", r.hosts},
         {"command", r.command},
         {"env", r.env},
         {"start_time", r.start_time},
         {"average", r.average},
         {"options", options},
         {"split", ojson::parse(json_dump(r.split))},
         {"timing", r.timing},
         {"timing_method", r.timing_method},
         {"sim", ojson::parse(json_dump(r.sim))}}},
       {"results", std::move(results)},
       {"observed", observed},
       {"summary",
        {{"avg_busbw_GBps", d.summary.avg_busbw_GBps},
         {"errors", d.summary.errors},
         {"complete", d.summary.complete}}},
       {"error", error}};
  if (is_imported(d)) {
    ojson& run = j["run"];
    run["imported"] = ojson::parse(json_dump(r.imported));
    std::set<std::string> run_keys, summary_keys;
    for (const auto& k : r.absent) (k.rfind("summary.", 0) == 0 ? summary_keys : run_keys).insert(k.rfind("summary.", 0) == 0 ? k.substr(8) : k);
    erase_absent(run, run_keys);
    erase_absent(j["summary"], summary_keys);
  }
  return (indent <= 0 ? json_dump(j, indent) : splice_records(json_dump(j, indent), d.results, indent)) + "\n";
}

void from_json(const json& j, ResultsDocument& d) {
  with_json_errors("malformed results document", [&] {
    const std::string top = "document";
    d.schema = field<std::string>(j, "schema", top);
    if (d.schema != kResultsSchema)
      throw UsageError("unsupported results schema '" + d.schema + "' (expected " + kResultsSchema + ")");
    const json& r = json_member(j, "run", top);
    d.run.absent.clear();
    d.run.imported = field_or(r, "imported", json(nullptr), "run");
    const bool imported = !d.run.imported.is_null();
    if (imported && !d.run.imported.is_object())
      throw UsageError("run: imported must be an object or null, not " + std::string(d.run.imported.type_name()));
    if (imported) {
      const std::string tool = field<std::string>(d.run.imported, "tool", "run.imported");
      (void)field<std::string>(d.run.imported, "file", "run.imported");
      (void)field<std::string>(d.run.imported, "format", "run.imported");
      if (tool != "nccl-tests" && tool != "imb" && tool != "osu")
        throw UsageError("run.imported: tool '" + tool + "' is not nccl-tests, imb or osu");
    }
    const Lenient len{imported, &d.run.absent, ""};
    d.run.label = field<std::string>(r, "label", "run");
    d.run.backend = field<std::string>(r, "backend", "run");
    if (imported && d.run.backend != d.run.imported["tool"].get<std::string>())
      throw UsageError("run: an imported document's backend must be its tool (" + d.run.imported["tool"].get<std::string>() + "), not '" + d.run.backend + "'");
    if (!imported && (d.run.backend == "nccl-tests" || d.run.backend == "imb" || d.run.backend == "osu"))
      throw UsageError("run: backend " + d.run.backend + " without run.imported: only railkit import writes such documents");
    if (len.present(r, "backend_version")) d.run.backend_version = field<std::string>(r, "backend_version", "run");
    if (len.present(r, "railkit_version")) d.run.railkit_version = field_or(r, "railkit_version", "", "run");
    if (len.present(r, "nranks")) d.run.nranks = field<int>(r, "nranks", "run");
    if (len.present(r, "nnodes")) d.run.nnodes = field<int>(r, "nnodes", "run");
    if (len.present(r, "hosts")) d.run.hosts = field<std::vector<std::string>>(r, "hosts", "run");
    if (len.present(r, "command")) d.run.command = field<std::string>(r, "command", "run");
    if (len.present(r, "env")) d.run.env = field<std::map<std::string, std::string>>(r, "env", "run");
    if (len.present(r, "start_time")) d.run.start_time = field_or(r, "start_time", "", "run");
    if (len.present(r, "average")) d.run.average = field_or(r, "average", "avg", "run");
    if (len.present(r, "options")) d.run.options = field_or(r, "options", json::object(), "run");
    if (len.present(r, "split")) d.run.split = field_or(r, "split", json(nullptr), "run");
    d.run.timing = field_or(r, "timing", "host_clock", "run");
    d.run.timing_method = field_or(r, "timing_method", "back_to_back", "run");
    if (d.run.timing_method != "back_to_back" && d.run.timing_method != "barrier_separated")
      throw UsageError("run: timing_method '" + d.run.timing_method + "' is not back_to_back or barrier_separated");
    d.run.sim = field_or(r, "sim", json(nullptr), "run");
    if (!d.run.sim.is_null() && !d.run.sim.is_object())
      throw UsageError("run: sim must be an object or null, not " + std::string(d.run.sim.type_name()));
    d.simulated = field_or(j, "simulated", false, top);
    if (d.run.backend == "sim" && !d.simulated)
      throw UsageError("run.backend is sim but simulated is not true: a simulated run must say so");
    if (imported && d.simulated) throw UsageError("an imported document cannot say simulated: true");
    d.results.clear();
    const json& results = json_member(j, "results", top);
    if (!results.is_array()) throw UsageError(std::string("results must be an array, not ") + results.type_name());
    for (std::size_t i = 0; i < results.size(); ++i)
      d.results.push_back(record_from(results[i], "results[" + std::to_string(i) + "]", imported));
    d.observed = field_or(j, "observed", json::object(), top);
    const json& s = json_member(j, "summary", top);
    const Lenient ls{imported, &d.run.absent, "summary."};
    if (ls.present(s, "avg_busbw_GBps")) d.summary.avg_busbw_GBps = field<double>(s, "avg_busbw_GBps", "summary");
    if (ls.present(s, "errors")) d.summary.errors = field<std::int64_t>(s, "errors", "summary");
    d.summary.complete = field_or(s, "complete", true, "summary");
    d.error.reset();
    if (j.contains("error") && !j.at("error").is_null()) {
      const json& e = j.at("error");
      d.error = ErrorRecord{field<std::string>(e, "code", "error"), field<int>(e, "exit_code", "error"),
                            field<std::string>(e, "message", "error"), field_or(e, "detail", json::object(), "error")};
    }
  });
}

ResultsDocument load_results(const std::string& path) {
  const std::string text = read_file(path);
  json j;
  try {
    j = parse_json(text);
  } catch (const json::exception& e) {
    throw UsageError("results document " + path + " is not valid JSON: " + json_error_text(e));
  }
  ResultsDocument d;
  try {
    from_json(j, d);
  } catch (const UsageError& e) {
    throw UsageError(path + ": " + e.what());
  }
  return d;
}

}  // namespace railkit
