// nccl-tests output as railkit.results/1 documents: the -J JSON file (2.17+) here, the text
// printed on stdout in import_nccl_text.cpp; what both share (program names, types, NCCL's version
// code, the collectives a row's shape fits) is declared in import_nccl_detail.hpp.
#include <algorithm>
#include <optional>
#include <vector>

#include "core/collectives.hpp"
#include "core/error.hpp"
#include "core/json_text.hpp"
#include "core/quote.hpp"
#include "core/strings.hpp"
#include "ingest/import_nccl_detail.hpp"

namespace railkit::ingest {
using nlohmann::json;
using namespace import_detail;
using namespace nccl_detail;

namespace nccl_detail {
namespace {

/// The railkit collective whose nccl-tests program (its name + "_perf") `name` contains, trying
/// the longest names first so "all_reduce_perf" is not taken for "reduce_perf"; "" when none.
std::string op_of_collective_program(std::string_view name) {
  std::vector<const Collective*> longest_first;
  for (const Collective& c : collectives()) longest_first.push_back(&c);
  std::stable_sort(longest_first.begin(), longest_first.end(),
                   [](const Collective* a, const Collective* b) { return a->name.size() > b->name.size(); });
  for (const Collective* c : longest_first)
    if (name.find(std::string(c->name) + "_perf") != std::string_view::npos) return std::string(c->name);
  return "";
}

}  // namespace

/// nccl-tests programs that measure something railkit has no collective for.
constexpr std::string_view kForeign[] = {"alltoallv_perf", "gather_perf", "scatter_perf", "hypercube_perf"};

std::string op_of_program(std::string_view name, bool* foreign) {
  const auto slash = name.find_last_of('/');
  if (slash != std::string_view::npos) name.remove_prefix(slash + 1);
  for (const auto f : kForeign)
    if (name.find(f) != std::string_view::npos && (f != "gather_perf" || name.find("all_gather_perf") == std::string_view::npos) &&
        (f != "scatter_perf" || name.find("reduce_scatter_perf") == std::string_view::npos)) {
      if (foreign) *foreign = true;
      return std::string(f);
    }
  return op_of_collective_program(name);
}

std::string dtype_of(std::string_view t) {
  static constexpr std::string_view kSame[] = {"int8", "uint8", "int32", "uint32", "int64", "uint64",
                                               "half", "float", "double", "bfloat16"};
  for (const auto s : kSame)
    if (s == t) return std::string(s);
  return "";
}

std::size_t element_size(std::string_view dtype) {
  if (dtype == "int8" || dtype == "uint8") return 1;
  if (dtype == "half" || dtype == "bfloat16") return 2;
  if (dtype == "int32" || dtype == "uint32" || dtype == "float") return 4;
  return 8;
}

std::string nccl_version_name(long long code) {
  if (code >= 10000) return "NCCL " + std::to_string(code / 10000) + "." + std::to_string(code / 100 % 100) + "." + std::to_string(code % 100);
  return "NCCL " + std::to_string(code / 1000) + "." + std::to_string(code / 100 % 10) + "." + std::to_string(code % 100);
}

std::vector<std::string> op_candidates(const RowShape& s) {
  const bool none = s.redop.empty() || s.redop == "none";
  const bool whole = s.count * s.esize == s.size;
  const bool shared = s.nranks > 1 && s.count * s.esize * static_cast<std::uint64_t>(s.nranks) == s.size;
  std::vector<std::string> out;
  if (!s.has_redop && !s.has_root) {  // before 2.13: all_gather and sendrecv
    if (whole) out.push_back("sendrecv");
    if (shared || s.nranks <= 1) out.push_back("all_gather");
  } else if (!s.has_redop) {  // before 2.13: broadcast
    out.push_back("broadcast");
  } else if (s.has_root && s.root >= 0) {
    out.push_back(none ? "broadcast" : "reduce");
  } else {  // all_reduce, reduce_scatter, alltoall (before 2.13 without a root column), sendrecv, all_gather
    if (whole && !none) out.push_back("all_reduce");
    if (whole && !none && s.has_root) out.push_back("sendrecv");
    if ((shared || (s.nranks <= 1 && whole)) && !none) out.push_back("reduce_scatter");
    if ((shared || (s.nranks <= 1 && whole)) && none) {
      if (s.has_root) out.push_back("all_gather");
      out.push_back("alltoall");
    }
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

}  // namespace nccl_detail

namespace {

void finish_common(ResultsDocument& d, const std::vector<std::string>& hosts, int nranks) {
  if (nranks > 0) {
    d.run.nranks = nranks;
    known(d, "nranks");
  }
  if (!hosts.empty()) {
    d.run.hosts = hosts;
    d.run.nnodes = static_cast<int>(hosts.size());
    known(d, "hosts");
    known(d, "nnodes");
  }
}

/// The -J file as JSON; a syntax error fails at its line.
json parse_nccl_json(std::string_view text, const std::string& file) {
  try {
    return parse_json(text);
  } catch (const json::parse_error& e) {
    std::size_t line = 1;
    for (std::size_t k = 0; k < e.byte && k < text.size(); ++k) line += text[k] == '\n';
    fail(file, line, std::string("not valid JSON: ") + json_error_text(e));
  } catch (const std::exception& e) {
    fail(file, 1, std::string("not valid JSON: ") + json_error_text(e));
  }
}

/// The document's run keys: version, NCCL version, times, command (and `op` from its program
/// when `op` is empty) and the env that matters.
void json_run(const json& j, ResultsDocument& d, std::string& op, const std::string& file) {
  if (!j.is_object() || !j.contains("results") || !j.contains("config"))
    fail(file, 1, "not nccl-tests -J output (no 'config' and 'results')");
  d.run.imported["json_version"] = field<int>(j, "version", "document");
  if (j.contains("nccl_version")) {
    d.run.backend_version = nccl_version_name(field<long long>(j, "nccl_version", "document"));
    known(d, "backend_version");
  }
  if (j.contains("start_time")) d.run.imported["start_time_local"] = field<std::string>(j, "start_time", "document");
  if (j.contains("end_time")) d.run.imported["end_time_local"] = field<std::string>(j, "end_time", "document");
  if (j.contains("args")) {
    const auto args = field<std::vector<std::string>>(j, "args", "document");
    std::vector<std::string> q;
    for (const auto& a : args) q.push_back(posix_quote(a));
    d.run.command = join(q, " ");
    known(d, "command");
    if (!args.empty()) {
      bool foreign = false;
      const std::string p = op_of_program(args[0], &foreign);
      if (foreign) fail(file, 1, "this nccl-tests program (" + printable(args[0]) + ") measures a collective railkit has no name for");
      if (op.empty()) op = p;
    }
  }
  if (j.contains("env")) {
    for (const auto& e : field<std::vector<std::string>>(j, "env", "document")) {
      const auto eq = e.find('=');
      if (eq == std::string::npos) continue;
      const std::string k = e.substr(0, eq);
      if (k.rfind("NCCL_", 0) == 0 || k.rfind("OMPI_MCA_", 0) == 0 || k.rfind("UCX_", 0) == 0) d.run.env[k] = e.substr(eq + 1);
    }
    known(d, "env");
  }
}

/// The -J config's options under railkit's names (those of the text header).
json json_options(const json& c) {
  json opts = json::object();
  for (const auto& [from, to] : std::initializer_list<std::pair<const char*, const char*>>{
           {"nthreads", "nthreads"}, {"ngpus", "ngpus"}, {"minimum_bytes", "minbytes"}, {"maximum_bytes", "maxbytes"},
           {"step_factor", "stepfactor"}, {"step_bytes", "stepbytes"}, {"warmup_iters", "warmup_iters"}, {"iterations", "iters"},
           {"aggregated_iterations", "agg_iters"}, {"validation", "check"}, {"graph", "cudagraph"}})
    if (c.contains(from)) opts[to] = field<long long>(c, from, "config");
  if (c.contains("blocking_collectives") && field<bool>(c, "blocking_collectives", "config")) opts["blocking"] = true;
  return opts;
}

/// config.devices: the hosts in order of first appearance, the rank count and one entry per device.
struct JsonDevices {
  std::vector<std::string> hosts;
  int nranks = 0;
  json devices = json::array();
};

JsonDevices json_devices(const json& c) {
  JsonDevices out;
  if (!c.contains("devices")) return out;
  for (const auto& dev : json_member(c, "devices", "config")) {
    const std::string host = field<std::string>(dev, "hostname", "config.devices[]");
    if (std::find(out.hosts.begin(), out.hosts.end(), host) == out.hosts.end()) out.hosts.push_back(host);
    ++out.nranks;
    out.devices.push_back(json{{"rank", field<long long>(dev, "rank", "config.devices[]")},
                               {"group", field_or<long long>(dev, "group", 0, "config.devices[]")},
                               {"pid", field_or<long long>(dev, "pid", 0, "config.devices[]")},
                               {"host", host},
                               {"device", field_or<long long>(dev, "device", 0, "config.devices[]")},
                               {"pci", field_or(dev, "device_hex", "", "config.devices[]")},
                               {"name", field_or(dev, "device_info", "", "config.devices[]")}});
  }
  return out;
}

/// One placement (`key`: out_of_place or in_place) of results[k] (`w`) as a record over `base`.
ResultRecord json_placement(const json& row, const json& p, const std::string& w, const char* key, ResultRecord r,
                            const std::string& file) {
  const std::string tk = p.contains("cpu_time") ? "cpu_time" : "time";
  auto num = [&](const std::string& name) {
    const json& v = json_member(p, name, w + "." + key);
    if (!v.is_number() || v.get<double>() < 0) fail(file, 1, w + "." + key + "." + name + " is not a non-negative number");
    return v.get<double>();
  };
  r.time_us.avg = num(tk);
  r.algbw_GBps = num("alg_bw");
  r.busbw_GBps = num("bus_bw");
  if (p.contains("nwrong") && !p["nwrong"].is_null()) {
    // A whole number below 2^63, or refused (1e300 or 2^64 would not fit: never wrapped or saturated).
    try {
      r.wrong = field<std::int64_t>(p, "nwrong", w + "." + key);
    } catch (const UsageError& e) {
      fail(file, 1, std::string(e.what()) + ": not a count of wrong elements railkit can store");
    }
    if (*r.wrong < 0) fail(file, 1, w + "." + key + ".nwrong is negative: not a count of wrong elements");
    r.absent.erase("wrong");
  }
  if (row.contains("actual_iterations")) {
    r.iters = field<int>(row, "actual_iterations", w);
    r.absent.erase("iters");
  }
  return r;
}

/// results[]: one record per printed placement; `op` from the first row's shape when still empty.
void json_results(const json& results, ResultsDocument& d, std::string& op, int nranks, const std::string& file,
                  const ImportOptions& o) {
  if (!results.is_array()) fail(file, 1, "results is not a list");
  RecordBudget budget(o);
  for (std::size_t k = 0; k < results.size(); ++k) {
    const json& row = results[k];
    const std::string w = "results[" + std::to_string(k) + "]";
    const auto size = field<std::uint64_t>(row, "size", w);
    const auto count = field<std::uint64_t>(row, "count", w);
    const std::string dtype = dtype_of(field<std::string>(row, "type", w));
    if (dtype.empty()) fail(file, 1, w + ": type '" + printable(field<std::string>(row, "type", w)) + "' has no railkit dtype");
    const std::string redop = field<std::string>(row, "redop", w);
    const auto root = to_int(trim(field<std::string>(row, "root", w)));
    if (!root || *root < -1) fail(file, 1, w + ": root is not a rank or -1");
    if (op.empty()) {
      const auto fits = op_candidates(RowShape{true, true, redop, static_cast<int>(*root), size, count, element_size(dtype), nranks});
      if (fits.size() != 1)
        fail(file, 1, "the JSON names no program ('args') and its results' shape fits " + join_list(fits, " and ") +
                          ": pass --coll, or name the file after the nccl-tests program (all_reduce_perf.json)");
      op = fits[0];
      d.run.imported["op_from"] = "table shape";
    }
    for (const bool in_place : {false, true}) {
      const char* key = in_place ? "in_place" : "out_of_place";
      if (!row.contains(key) || row[key].is_null()) continue;
      ResultRecord r = new_record(op, size, in_place, 0, 1);
      r.observed = json{{"source_record", k}};
      r.dtype = dtype;
      r.redop = redop;
      r.root = static_cast<int>(*root);
      r.count = count;
      for (const char* a : {"dtype", "redop", "root", "count", "algbw_GBps", "busbw_GBps"}) r.absent.erase(a);
      d.results.push_back(json_placement(row, row[key], w, key, std::move(r), file));
      budget.add(d.results.back(), file, 1);
    }
  }
}

ImportResult import_json(std::string_view text, const std::string& file, const ImportOptions& o) {
  const json j = parse_nccl_json(text, file);
  ResultsDocument d = new_document(ImportSource::NcclTests, file, text, "nccl-tests json");
  std::string op = o.op;
  with_json_errors(file + ":1: nccl-tests JSON", [&] {
    json_run(j, d, op, file);
    const json& c = json_member(j, "config", "document");
    d.run.options = json_options(c);
    known(d, "options");
    const JsonDevices devs = json_devices(c);
    json_results(json_member(j, "results", "document"), d, op, devs.nranks, file, o);
    if (j.contains("out_of_bounds")) {
      d.summary.errors = field<std::int64_t>(json_member(j, "out_of_bounds", "document"), "count", "out_of_bounds");
      known(d, "summary.errors");
    }
    if (j.contains("average_bus_bandwidith")) {  // sic: nccl-tests' key
      d.summary.avg_busbw_GBps = field<double>(json_member(j, "average_bus_bandwidith", "document"), "bandwidith", "average_bus_bandwidith");
      known(d, "summary.avg_busbw_GBps");
    }
    if (!devs.devices.empty()) d.observed["devices"] = devs.devices;
    finish_common(d, devs.hosts, devs.nranks);
  });
  if (d.results.empty()) fail(file, 1, "no results in the nccl-tests JSON");
  ImportResult out;
  add_document(out, o, "", std::move(d));
  return out;
}

}  // namespace

ImportResult import_nccl_tests(std::string_view text, const std::string& file, const ImportOptions& o) {
  if (!o.op.empty() && !find_collective(o.op)) throw UsageError("--coll '" + o.op + "': expected one of " + collective_names());
  const std::string_view head = trim(text.substr(0, 4096));
  const bool is_json = !head.empty() && head.front() == '{';
  ImportResult out = is_json ? import_json(text, file, o) : nccl_detail::import_text(text, file, o);
  // -J output usually sits next to the text log of the same run: "-json" keeps their names apart.
  const std::string stem = stem_of(file) + (is_json ? "-json" : "");
  for (std::size_t k = 0; k < out.docs.size(); ++k) {
    auto& d = out.docs[k];
    d.name = out.docs.size() == 1 ? stem : stem + "." + std::to_string(k + 1);
    set_label(d, !o.label.empty() ? o.label : d.name);  // timing_method: new_document's back_to_back
  }
  return out;
}

}  // namespace railkit::ingest
