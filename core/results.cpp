#include "core/results.hpp"

#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "core/json_text.hpp"

namespace railkit {
using nlohmann::json;

namespace {

using ojson = nlohmann::ordered_json;

ojson summary_json(const Summary& s) {
  return {{"avg", s.avg}, {"min", s.min}, {"max", s.max}, {"p50", s.p50}, {"p99", s.p99}, {"cv", s.cv}};
}

Summary summary_from(const json& j) {
  Summary s;
  s.avg = j.at("avg").get<double>();
  s.min = j.at("min").get<double>();
  s.max = j.at("max").get<double>();
  s.p50 = j.at("p50").get<double>();
  s.p99 = j.at("p99").get<double>();
  s.cv = j.at("cv").get<double>();
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
            {"group", r.group ? ojson(*r.group) : ojson(nullptr)}};
  return j;
}

ResultRecord record_from(const json& j) {
  ResultRecord r;
  r.op = j.at("op").get<std::string>();
  r.dtype = j.at("dtype").get<std::string>();
  r.redop = j.at("redop").get<std::string>();
  r.root = j.at("root").get<int>();
  r.bytes = j.at("bytes").get<std::uint64_t>();
  r.count = j.at("count").get<std::uint64_t>();
  r.in_place = j.at("in_place").get<bool>();
  r.cycle = j.value("cycle", 0);
  r.iters = j.value("iters", 0);
  r.time_us = summary_from(j.at("time_us"));
  r.algbw_GBps = j.at("algbw_GBps").get<double>();
  r.busbw_GBps = j.at("busbw_GBps").get<double>();
  if (!j.at("wrong").is_null()) r.wrong = j.at("wrong").get<std::int64_t>();
  const json& k = j.at("ranks");
  r.ranks.time_us_min = k.at("time_us_min").get<double>();
  r.ranks.time_us_max = k.at("time_us_max").get<double>();
  r.ranks.slowest_rank = k.at("slowest_rank").get<int>();
  r.ranks.slowest_host = k.at("slowest_host").get<std::string>();
  if (j.contains("group") && !j.at("group").is_null()) r.group = j.at("group").get<std::string>();
  return r;
}

}  // namespace

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

std::string dump_results(const ResultsDocument& d, int indent) {
  const RunInfo& r = d.run;
  ojson results = ojson::array();
  for (const auto& rec : d.results) results.push_back(record_json(rec));
  ojson observed = ojson::parse(json_dump(d.observed));
  ojson options = ojson::parse(json_dump(r.options));
  ojson error = nullptr;
  if (d.error)
    error = {{"code", d.error->code},
             {"exit_code", d.error->exit_code},
             {"message", d.error->message},
             {"detail", ojson::parse(json_dump(d.error->detail))}};
  const ojson j = {{"schema", d.schema},
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
         {"split", ojson::parse(json_dump(r.split))}}},
       {"results", std::move(results)},
       {"observed", observed},
       {"summary",
        {{"avg_busbw_GBps", d.summary.avg_busbw_GBps},
         {"errors", d.summary.errors},
         {"complete", d.summary.complete}}},
       {"error", error}};
  return json_dump(j, indent) + "\n";
}

void from_json(const json& j, ResultsDocument& d) {
  try {
    d.schema = j.at("schema").get<std::string>();
    if (d.schema != kResultsSchema)
      throw UsageError("unsupported results schema '" + d.schema + "' (expected " + kResultsSchema + ")");
    const json& r = j.at("run");
    d.run.label = r.at("label").get<std::string>();
    d.run.backend = r.at("backend").get<std::string>();
    d.run.backend_version = r.at("backend_version").get<std::string>();
    d.run.railkit_version = r.value("railkit_version", "");
    d.run.nranks = r.at("nranks").get<int>();
    d.run.nnodes = r.at("nnodes").get<int>();
    d.run.hosts = r.at("hosts").get<std::vector<std::string>>();
    d.run.command = r.at("command").get<std::string>();
    d.run.env = r.at("env").get<std::map<std::string, std::string>>();
    d.run.start_time = r.value("start_time", "");
    d.run.average = r.value("average", "avg");
    d.run.options = r.value("options", json::object());
    d.run.split = r.value("split", json(nullptr));
    d.results.clear();
    for (const auto& rec : j.at("results")) d.results.push_back(record_from(rec));
    d.observed = j.value("observed", json::object());
    const json& s = j.at("summary");
    d.summary.avg_busbw_GBps = s.at("avg_busbw_GBps").get<double>();
    d.summary.errors = s.at("errors").get<std::int64_t>();
    d.summary.complete = s.value("complete", true);
    d.error.reset();
    if (j.contains("error") && !j.at("error").is_null()) {
      const json& e = j.at("error");
      d.error = ErrorRecord{e.at("code").get<std::string>(), e.at("exit_code").get<int>(),
                            e.at("message").get<std::string>(), e.value("detail", json::object())};
    }
  } catch (const json::exception& e) {
    throw UsageError(std::string("malformed results document: ") + e.what());
  }
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
