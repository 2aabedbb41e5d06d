// nccl-tests output as railkit.results/1 documents: the text printed on stdout (every version
// from 2.13: the "# nThread" header, "#  Rank" device lines, the size table with out-of-place and
// in-place columns, "# Out of bounds values" and "# Avg bus bandwidth"; 2.17+ adds "# nccl-tests
// version ... nccl-library=" and "# Collective test starting: NAME") and the -J JSON file (2.17+).
#include <algorithm>
#include <optional>
#include <vector>

#include "core/collectives.hpp"
#include "core/error.hpp"
#include "core/json_text.hpp"
#include "core/quote.hpp"
#include "core/strings.hpp"
#include "ingest/import.hpp"

namespace railkit::ingest {
using nlohmann::json;
using namespace import_detail;

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

/// nccl-tests programs that measure something railkit has no collective for.
constexpr std::string_view kForeign[] = {"alltoallv_perf", "gather_perf", "scatter_perf", "hypercube_perf"};

/// The collective named by a program name or path ("./build/all_reduce_perf"); "" when none.
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

/// nccl-tests' type names (test_typenames) as railkit dtypes; "" for the fp8 types railkit lacks.
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

/// NCCL's version code (22809) as "NCCL 2.28.9".
std::string nccl_version_name(long long code) {
  if (code >= 10000) return "NCCL " + std::to_string(code / 10000) + "." + std::to_string(code / 100 % 100) + "." + std::to_string(code % 100);
  return "NCCL " + std::to_string(code / 1000) + "." + std::to_string(code / 100 % 10) + "." + std::to_string(code % 100);
}

/// The collective of a table whose log does not name it, from the first row's shape: count x
/// element size equals size (all_reduce, broadcast, reduce, sendrecv) or size / nranks.
std::string op_of_shape(std::string_view redop, int root, std::uint64_t size, std::uint64_t count, std::size_t esize, int nranks,
                        const std::string& file, std::size_t line) {
  const bool whole = count * esize == size;
  const bool shared = nranks > 1 && count * esize * static_cast<std::uint64_t>(nranks) == size;
  std::string op;
  if (root >= 0) op = redop == "none" ? "broadcast" : "reduce";
  else if (redop != "none" && whole) op = "all_reduce";
  else if (redop != "none" && shared) op = "reduce_scatter";
  else if (redop == "none" && whole) op = "sendrecv";
  if (op.empty())
    fail(file, line,
         "the log does not name its collective and the table cannot tell (all_gather and alltoall print the same "
         "columns): name the file after the nccl-tests program (all_gather_perf.log) or pass --op");
  return op;
}

/// One run (one table) being read.
struct Run {
  ResultsDocument doc;
  std::string program_op;  ///< from "# Collective test starting:"
  std::vector<std::string> hosts;
  int nranks = 0;
  int iters = -1;
  bool table = false;  ///< the table header was seen
  bool footer = false; ///< "# Avg bus bandwidth" was seen
  std::size_t table_line = 0;
  std::size_t first_line = 0;
  std::string op;  ///< resolved at the first row
  json devices = json::array();
};

void finish_common(ResultsDocument& d, const std::vector<std::string>& hosts, int nranks, int iters) {
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
  for (auto& r : d.results)
    if (iters > 0) {
      r.iters = iters;
      r.absent.erase("iters");
    }
}

/// Parses one "time algbw busbw #wrong" group of a row into a record.
ResultRecord placement(const std::vector<std::string>& tok, std::size_t at, const ResultRecord& base, bool in_place,
                       const std::string& file, std::size_t line) {
  ResultRecord r = base;
  r.in_place = in_place;
  r.time_us.avg = number(tok[at], file, line, "time");
  r.algbw_GBps = number(tok[at + 1], file, line, "algbw");
  r.busbw_GBps = number(tok[at + 2], file, line, "busbw");
  r.absent.erase("algbw_GBps");
  r.absent.erase("busbw_GBps");
  if (tok[at + 3] != "N/A") {
    const double w = number(tok[at + 3], file, line, "#wrong");
    if (w != std::floor(w)) fail(file, line, "#wrong '" + printable(tok[at + 3]) + "' is not a whole number");
    r.wrong = static_cast<std::int64_t>(w);
    r.absent.erase("wrong");
  }
  return r;
}

/// The token after `key` in a header line's tokens; nullopt when `key` is absent or last.
std::optional<std::string> value_after(const std::vector<std::string>& tok, std::string_view key) {
  for (std::size_t k = 0; k + 1 < tok.size(); ++k)
    if (tok[k] == key) return tok[k + 1];
  return std::nullopt;
}

/// Reads nccl-tests' text output line by line: one Run per table, one function per kind of line.
struct TextImport {
  TextImport(std::string_view t, const std::string& f, const ImportOptions& opts) : text(t), file(f), o(opts) {}

  std::string_view text;
  const std::string& file;
  const ImportOptions& o;
  ImportResult out;
  std::optional<Run> run;
  std::string file_op;  ///< from the file's name
  bool foreign = false; ///< the file or a run names a program railkit has no collective for

  void open(std::size_t ln);
  void close(std::size_t ln);
  void read_line(std::string_view line, std::size_t ln);
  void version_line(std::string_view line, std::size_t ln);
  void collective_line(std::string_view line, std::size_t ln);
  void nthread_line(std::string_view line, std::size_t ln);
  void device_line(std::string_view line, std::size_t ln);
  void comment_line(std::string_view line, std::size_t ln);
  void row_line(std::string_view line, std::size_t ln);
};

void TextImport::close(std::size_t line) {
  if (!run) return;
  if (run->table && !run->footer)
    fail(file, line, "the table that starts at line " + std::to_string(run->table_line) +
                         " ends without nccl-tests' '# Avg bus bandwidth' line (a truncated log?)");
  if (run->table) {
    finish_common(run->doc, run->hosts, run->nranks, run->iters);
    if (run->devices.size() > 0) run->doc.observed["devices"] = run->devices;
    run->doc.run.imported["first_line"] = run->first_line;
    run->doc.run.imported["last_line"] = line;
    out.docs.push_back(ImportedDocument{"", std::move(run->doc)});
  }
  run.reset();
}

void TextImport::open(std::size_t line) {
  run.emplace();
  run->doc = new_document(ImportSource::NcclTests, file, text, "nccl-tests text");
  run->first_line = line;
}

void TextImport::read_line(std::string_view line, std::size_t ln) {
  // A run starts at its first header line: "# nccl-tests version" (2.17+) or "# nThread".
  const bool version = line.rfind("# nccl-tests version ", 0) == 0;
  const bool nthread = line.rfind("# nThread ", 0) == 0;
  if (version || (nthread && (!run || run->table || !run->doc.run.absent.count("options")))) {
    close(ln - 1);
    open(ln);
  }
  if (version) return version_line(line, ln);
  if (line.rfind("# Collective test starting: ", 0) == 0) return collective_line(line, ln);
  if (nthread) return nthread_line(line, ln);
  if (!run) {
    const auto tok = split_ws(line);
    if (tok.size() >= 6 && tok[0] == "#" && tok[1] == "size" && tok[2] == "count") open(ln);  // a table without the header lines
    else return;
  }
  if (line.rfind("# Blocking Enabled", 0) == 0) {
    run->doc.run.options["blocking"] = true;
    return;
  }
  if (line.rfind("#  Rank ", 0) == 0 && line.find(" Pid ") != std::string_view::npos) return device_line(line, ln);
  if (line.rfind("#", 0) == 0) return comment_line(line, ln);
  row_line(line, ln);
}

void TextImport::version_line(std::string_view line, std::size_t ln) {
  // "# nccl-tests version %s nccl-headers=%d nccl-library=%d" (2.17+)
  const auto tok = split_ws(line);
  if (tok.size() >= 4) run->doc.run.imported["tool_version"] = tok[3];
  for (const auto& t : tok)
    if (t.rfind("nccl-library=", 0) == 0) {
      const auto code = to_int(std::string_view(t).substr(13));
      if (!code) fail(file, ln, "nccl-library '" + printable(t) + "' is not NCCL's version code");
      run->doc.run.backend_version = nccl_version_name(*code);
      known(run->doc, "backend_version");
    } else if (t.rfind("nccl-headers=", 0) == 0) {
      run->doc.run.imported["nccl_headers"] = std::string(t.substr(13));
    }
}

void TextImport::collective_line(std::string_view line, std::size_t ln) {
  if (!run) open(ln);
  bool f = false;
  run->program_op = op_of_program(trim(line.substr(28)), &f);
  run->doc.run.imported["program"] = std::string(trim(line.substr(28)));
  if (f) foreign = true;
}

void TextImport::nthread_line(std::string_view line, std::size_t ln) {
  // "# nThread %d nGpus %d minBytes %ld maxBytes %ld step: %ld(%s) warmup iters: %d iters: %d agg iters: %d validation: %d graph: %d"
  const auto tok = split_ws(line);
  json opts = json::object();
  auto put_int = [&](const char* name, std::optional<std::string> v) {
    if (!v) fail(file, ln, std::string("the '# nThread' header has no ") + name);
    opts[name] = whole(*v, file, ln, name);
  };
  put_int("nthreads", value_after(tok, "nThread"));
  put_int("ngpus", value_after(tok, "nGpus"));
  put_int("minbytes", value_after(tok, "minBytes"));
  put_int("maxbytes", value_after(tok, "maxBytes"));
  if (const auto step = value_after(tok, "step:")) {
    const auto paren = step->find('(');
    const std::string num = step->substr(0, paren);
    const std::string kind = paren == std::string::npos ? "" : step->substr(paren);
    opts[kind == "(factor)" ? "stepfactor" : "stepbytes"] = whole(num, file, ln, "step");
  }
  std::size_t warm = 0;
  for (std::size_t k = 0; k + 2 < tok.size(); ++k)
    if (tok[k] == "warmup" && tok[k + 1] == "iters:") {
      opts["warmup_iters"] = whole(tok[k + 2], file, ln, "warmup iters");
      warm = k + 2;
    }
  for (std::size_t k = warm; k + 1 < tok.size(); ++k)
    if (tok[k] == "iters:" && (k == 0 || (tok[k - 1] != "warmup" && tok[k - 1] != "agg"))) {
      opts["iters"] = whole(tok[k + 1], file, ln, "iters");
      run->iters = static_cast<int>(std::min<std::uint64_t>(opts["iters"].get<std::uint64_t>(), 1u << 30));
    } else if (tok[k] == "iters:" && tok[k - 1] == "agg") {
      opts["agg_iters"] = whole(tok[k + 1], file, ln, "agg iters");
    }
  if (const auto v = value_after(tok, "validation:")) opts["check"] = whole(*v, file, ln, "validation");
  if (const auto v = value_after(tok, "graph:")) opts["cudagraph"] = whole(*v, file, ln, "graph");
  run->doc.run.options = opts;
  known(run->doc, "options");
}

void TextImport::device_line(std::string_view line, std::size_t ln) {
  // "#  Rank %2d Group %2d Pid %6d on %10s device %2d [%s] %s"
  const auto tok = split_ws(line);
  if (tok.size() < 11 || tok[3] != "Group" || tok[5] != "Pid" || tok[7] != "on" || tok[9] != "device")
    fail(file, ln, "a device line that is not '#  Rank N Group G Pid P on HOST device D [BUS] NAME'");
  const auto rank = whole(tok[2], file, ln, "rank");
  const std::string host = tok[8];
  if (std::find(run->hosts.begin(), run->hosts.end(), host) == run->hosts.end()) run->hosts.push_back(host);
  ++run->nranks;
  std::string name;
  const auto rb = line.find(']');
  if (rb != std::string_view::npos) name = std::string(trim(line.substr(rb + 1)));
  run->devices.push_back(json{{"rank", rank},
                              {"group", whole(tok[4], file, ln, "group")},
                              {"pid", whole(tok[6], file, ln, "pid")},
                              {"host", host},
                              {"device", whole(tok[10], file, ln, "device")},
                              {"pci", tok.size() > 11 ? tok[11] : ""},
                              {"name", name}});
}

/// The table header, "# Out of bounds values" and "# Avg bus bandwidth"; other comments are skipped.
void TextImport::comment_line(std::string_view line, std::size_t ln) {
  const auto tok = split_ws(line);
  if (tok.size() >= 9 && tok[1] == "size" && tok[2] == "count" && tok[3] == "type" && tok[4] == "redop" && tok[5] == "root") {
    if (run->table) fail(file, ln, "a second table header before the first table's '# Avg bus bandwidth' line");
    run->table = true;
    run->table_line = ln;
    if (tok[6] == "cputime") run->doc.run.options["report_cputime"] = true;
    return;
  }
  if (line.rfind("# Out of bounds values : ", 0) == 0 && run->table) {
    const auto t = split_ws(line.substr(25));
    if (t.empty()) fail(file, ln, "no count after '# Out of bounds values :'");
    run->doc.summary.errors = static_cast<std::int64_t>(whole(t[0], file, ln, "out of bounds values"));
    known(run->doc, "summary.errors");
    return;
  }
  if (line.rfind("# Avg bus bandwidth    : ", 0) == 0 && run->table) {
    const auto t = split_ws(line.substr(25));
    if (t.empty()) fail(file, ln, "no figure after '# Avg bus bandwidth :'");
    run->doc.summary.avg_busbw_GBps = number(t[0], file, ln, "average bus bandwidth");
    run->doc.run.imported["avg_busbw_printed"] = t[0];
    known(run->doc, "summary.avg_busbw_GBps");
    run->footer = true;
  }
}

void TextImport::row_line(std::string_view line, std::size_t ln) {
  if (!run->table || run->footer) return;
  const auto tok = split_ws(line);
  if (tok.empty() || !to_int(tok[0])) return;  // NCCL INFO/WARN lines between rows
  // "%12li  %12li  %8s  %6s  %6s" then per placement "  time  algbw  busbw  #wrong", an
  // optional "%21s" timestamp (2.17+ -Z), or only the in-place group (trace replay).
  std::size_t n = tok.size();
  if (n == 15 || n == 11) n -= 2;  // a timestamp: date and time
  if (n != 13 && n != 9)
    fail(file, ln, "a table row with " + std::to_string(tok.size()) +
                       " columns (expected size count type redop root and time algbw busbw #wrong per placement): a truncated line?");
  const std::uint64_t size = whole(tok[0], file, ln, "size");
  const std::uint64_t count = whole(tok[1], file, ln, "count");
  const std::string dtype = dtype_of(tok[2]);
  if (dtype.empty()) fail(file, ln, "type '" + printable(tok[2]) + "' has no railkit dtype");
  const std::string redop = tok[3];
  static constexpr std::string_view kRedops[] = {"sum", "prod", "min", "max", "avg", "none"};
  if (std::find(std::begin(kRedops), std::end(kRedops), redop) == std::end(kRedops))
    fail(file, ln, "redop '" + printable(redop) + "' has no railkit name");
  const auto root = to_int(tok[4]);
  if (!root || *root < -1) fail(file, ln, "root '" + printable(tok[4]) + "' is not a rank or -1");
  if (run->op.empty()) {
    if (foreign) fail(file, ln, "this nccl-tests program measures a collective railkit has no name for");
    run->op = !o.op.empty() ? o.op : !run->program_op.empty() ? run->program_op : !file_op.empty() ? file_op
              : op_of_shape(redop, static_cast<int>(*root), size, count, element_size(dtype), run->nranks, file, ln);
  }
  ResultRecord base = new_record(run->op, size, false, 0, ln);
  base.dtype = dtype;
  base.redop = redop;
  base.root = static_cast<int>(*root);
  base.count = count;
  for (const char* k : {"dtype", "redop", "root", "count"}) base.absent.erase(k);
  if (n == 13) {
    run->doc.results.push_back(placement(tok, 5, base, false, file, ln));
    run->doc.results.push_back(placement(tok, 9, base, true, file, ln));
  } else {
    run->doc.results.push_back(placement(tok, 5, base, true, file, ln));
  }
}

ImportResult import_text(std::string_view text, const std::string& file, const ImportOptions& o) {
  const auto lines = lines_of(text);
  TextImport t(text, file, o);
  t.file_op = op_of_program(file, &t.foreign);
  for (std::size_t i = 0; i < lines.size(); ++i) t.read_line(lines[i], i + 1);
  t.close(lines.size());
  if (t.out.docs.empty()) fail(file, lines.size() ? lines.size() : 1, "no nccl-tests table (the '#  size  count  type ...' header and its rows) in the file");
  return std::move(t.out);
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
    r.wrong = static_cast<std::int64_t>(num("nwrong"));
    r.absent.erase("wrong");
  }
  if (row.contains("actual_iterations")) {
    r.iters = field<int>(row, "actual_iterations", w);
    r.absent.erase("iters");
  }
  return r;
}

/// results[]: one record per printed placement; `op` from the first row's shape when still empty.
void json_results(const json& results, ResultsDocument& d, std::string& op, int nranks, const std::string& file) {
  if (!results.is_array()) fail(file, 1, "results is not a list");
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
    if (op.empty()) op = op_of_shape(redop, static_cast<int>(*root), size, count, element_size(dtype), nranks, file, 1);
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
    json_results(json_member(j, "results", "document"), d, op, devs.nranks, file);
    if (j.contains("out_of_bounds")) {
      d.summary.errors = field<std::int64_t>(json_member(j, "out_of_bounds", "document"), "count", "out_of_bounds");
      known(d, "summary.errors");
    }
    if (j.contains("average_bus_bandwidith")) {  // sic: nccl-tests' key
      d.summary.avg_busbw_GBps = field<double>(json_member(j, "average_bus_bandwidith", "document"), "bandwidith", "average_bus_bandwidith");
      known(d, "summary.avg_busbw_GBps");
    }
    if (!devs.devices.empty()) d.observed["devices"] = devs.devices;
    finish_common(d, devs.hosts, devs.nranks, -1);
  });
  if (d.results.empty()) fail(file, 1, "no results in the nccl-tests JSON");
  ImportResult out;
  out.docs.push_back(ImportedDocument{"", std::move(d)});
  return out;
}

}  // namespace

ImportResult import_nccl_tests(std::string_view text, const std::string& file, const ImportOptions& o) {
  if (!o.op.empty() && !find_collective(o.op)) throw UsageError("--op '" + o.op + "': expected one of " + collective_names());
  const std::string_view head = trim(text.substr(0, 4096));
  const bool is_json = !head.empty() && head.front() == '{';
  ImportResult out = is_json ? import_json(text, file, o) : import_text(text, file, o);
  // -J output usually sits next to the text log of the same run: "-json" keeps their names apart.
  const std::string stem = stem_of(file) + (is_json ? "-json" : "");
  for (std::size_t k = 0; k < out.docs.size(); ++k) {
    auto& d = out.docs[k];
    d.name = out.docs.size() == 1 ? stem : stem + "." + std::to_string(k + 1);
    d.doc.run.label = !o.label.empty() ? o.label : d.name;
    d.doc.run.timing_method = "back_to_back";
    d.doc.summary.complete = true;
  }
  return out;
}

}  // namespace railkit::ingest
