// nccl-tests' text output as railkit.results/1 documents, every format since 2019:
// - 2.13+ (2022): one table header "size count type redop root" then "time algbw busbw #wrong"
//   per placement; 2.16 adds "# Collective test starting: NAME" before each run's "# nThread",
//   2.17 "# nccl-tests version"; optional columns: "timestamp" (-Z), "copybw" (2024 copy
//   overlap), "i_min i_max i_p99 i_cv%" per placement (-I 1);
// - before 2.13: each test printed its own header, with "redop" and "root" only where the test
//   has them and an "error" column (the largest error value, not a count of wrong elements), and
//   device lines "#   Rank N Pid ..." without "Group".
// The collective is taken from the run's program line ("# Collective test starting:", or a
// command line naming X_perf between runs), then --coll, then the file name; without any, from the
// table's shape only where exactly one collective fits (README "Importing other tools' logs").
// NCCL's own log lines between rows are skipped, and a row they split is joined again.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <optional>
#include <vector>

#include "core/collectives.hpp"
#include "core/error.hpp"
#include "core/strings.hpp"
#include "ingest/import_nccl_detail.hpp"

namespace railkit::ingest::nccl_detail {
using nlohmann::json;
using namespace import_detail;

namespace {

/// The columns of one table, from its header line.
struct Layout {
  bool has_redop = false, has_root = false;
  std::size_t pre = 3;             ///< size count type [redop] [root]
  std::vector<std::string> group;  ///< one placement's columns: time|cputime algbw busbw ...
  std::size_t groups = 0;
  bool timestamp = false;          ///< "timestamp": a "%Y-%m-%d %H:%M:%S" after the last group
  std::size_t width() const { return pre + groups * group.size(); }
};

constexpr std::string_view kGroupColumns[] = {"time", "cputime", "algbw", "busbw", "#wrong", "error",
                                              "copybw", "i_min", "i_max", "i_p99", "i_cv%"};

/// A table header's layout; nullopt when the line is not one; fails on a column railkit does not know.
std::optional<Layout> table_layout(const std::vector<std::string>& tok, const std::string& file, std::size_t ln) {
  if (tok.size() < 8 || tok[0] != "#" || tok[1] != "size" || tok[2] != "count" || tok[3] != "type") return std::nullopt;
  Layout l;
  std::size_t k = 4;
  if (tok[k] == "redop") l.has_redop = true, ++k;
  if (k < tok.size() && tok[k] == "root") l.has_root = true, ++k;
  l.pre = k - 1;  // tok[0] is the "#"
  std::vector<std::string> cur;
  for (; k < tok.size(); ++k) {
    const std::string& c = tok[k];
    if (c == "timestamp" && k + 1 == tok.size()) {
      l.timestamp = true;
      break;
    }
    if (std::find(std::begin(kGroupColumns), std::end(kGroupColumns), c) == std::end(kGroupColumns))
      fail(file, ln, "table header column '" + printable(c) + "' is not one of nccl-tests' (" + join_list(std::vector<std::string>(std::begin(kGroupColumns), std::end(kGroupColumns))) + ")");
    if ((c == "time" || c == "cputime") && !cur.empty()) {
      if (!l.group.empty() && cur != l.group) fail(file, ln, "the table header's placements have different columns");
      l.group = cur, ++l.groups, cur.clear();
    }
    cur.push_back(c);
  }
  if (!cur.empty()) {
    if (!l.group.empty() && cur != l.group) fail(file, ln, "the table header's placements have different columns");
    l.group = cur, ++l.groups;
  }
  if (l.groups == 0 || l.group.size() < 4 || (l.group[0] != "time" && l.group[0] != "cputime") || l.group[1] != "algbw" ||
      l.group[2] != "busbw")
    fail(file, ln, "a table header without 'time algbw busbw' per placement");
  return l;
}

/// Half a unit in the last printed digit of a number as nccl-tests prints it ("1.25", "1.2e+03").
double half_unit(std::string_view tok) {
  const auto e = tok.find_first_of("eE");
  const auto mant = tok.substr(0, e);
  const auto dot = mant.find('.');
  const int decimals = dot == std::string_view::npos ? 0 : static_cast<int>(mant.size() - dot - 1);
  const int exp = e == std::string_view::npos ? 0 : static_cast<int>(to_int(tok.substr(e + 1)).value_or(0));
  return 0.5 * std::pow(10.0, exp - decimals);
}

/// Whether busbw / algbw as printed (each rounded) can be `factor`; true when the figures are too
/// small to tell (algbw under 100 units of its last digit).
bool factor_fits(double factor, std::string_view alg, std::string_view bus) {
  const double a = to_double(alg).value_or(0), b = to_double(bus).value_or(0);
  const double ha = half_unit(alg), hb = half_unit(bus);
  if (a < 100 * ha) return true;
  return factor >= (b - hb) / (a + ha) - 1e-12 && factor <= (b + hb) / (a - ha) + 1e-12;
}

/// Where NCCL's own log text ("HOST:PID:TID [DEV] NCCL INFO ...") starts in a line; npos when
/// none. Text glued before it (a row's first columns printed without a newline) stays outside.
std::size_t nccl_log_start(std::string_view line) {
  std::size_t at = std::string_view::npos;
  for (const char* kind : {"] NCCL INFO", "] NCCL WARN", "] NCCL TRACE"})
    at = std::min(at, line.find(kind));
  if (at == std::string_view::npos) return at;
  const auto open = line.rfind('[', at);
  if (open == std::string_view::npos || open == 0 || line[open - 1] != ' ') return std::string_view::npos;
  std::size_t start = line.find_last_of(" \t", open - 2);
  start = start == std::string_view::npos ? 0 : start + 1;
  // "HOST:PID:TID" glued to a printed figure ("-1host:1:2", "N/Ahost:1:2"): the figure stays.
  std::string_view host = line.substr(start, open - 1 - start);
  if (std::count(host.begin(), host.end(), ':') < 2) return std::string_view::npos;
  if (trim(line.substr(0, start)).empty()) return start;  // the line's first word: all of it is the host
  if (host.rfind("N/A", 0) == 0) return start + 3;
  std::size_t k = 0;
  while (k < host.size() && (std::isdigit(static_cast<unsigned char>(host[k])) || host[k] == '.' || host[k] == '-' || host[k] == '+'))
    ++k;
  if (k > 0 && k < host.size() && host[k] == 'e' && k + 1 < host.size() && (host[k + 1] == '+' || host[k + 1] == '-')) {
    k += 2;
    while (k < host.size() && std::isdigit(static_cast<unsigned char>(host[k]))) ++k;
  }
  return k < host.size() && std::isalpha(static_cast<unsigned char>(host[k])) ? start + k : start;
}

/// `line` without NCCL's log text and a launcher's rank label glued before it ("-1[0] ", " 0: ").
std::string_view without_nccl_log(std::string_view line, std::string_view* log) {
  const auto at = nccl_log_start(line);
  if (at == std::string_view::npos) return line;
  *log = line.substr(at);
  std::string_view keep = line.substr(0, at);
  while (!keep.empty() && keep.back() == ' ') keep.remove_suffix(1);
  if (!keep.empty() && keep.back() == ']') {  // "[0]" or "[1,0]" of -prepend-rank
    const auto open = keep.rfind('[');
    if (open != std::string_view::npos) keep = keep.substr(0, open);
  } else if (!keep.empty() && keep.back() == ':') {  // "<stdout>:" of --tag-output, "0:" of srun -l
    const auto sp = keep.find_last_of(" \t]");
    const auto tag = keep.rfind("[", keep.size());
    if (tag != std::string_view::npos && keep.find("]<std", tag) != std::string_view::npos) keep = keep.substr(0, tag);
    else if (sp != std::string_view::npos) keep = keep.substr(0, sp + 1);
  }
  return keep;
}

/// One run (one table) being read.
struct Run {
  ResultsDocument doc;
  std::string program;           ///< the program its program line names
  std::size_t program_line = 0;  ///< 0: no program line
  bool foreign = false;          ///< the program measures something railkit has no collective for
  std::vector<std::string> hosts;
  int nranks = 0;
  int iters = -1;
  std::optional<Layout> layout;
  std::size_t table_line = 0, first_line = 0;
  bool footer = false;  ///< "# Avg bus bandwidth" was seen
  std::optional<RowShape> shape;        ///< the first row's
  std::string ratio_alg, ratio_bus;     ///< the printed algbw and busbw of the row with the largest algbw
  double ratio_alg_value = -1;
  std::vector<std::string> pending;     ///< a row NCCL's log lines split: its columns so far
  std::size_t pending_line = 0;
  std::vector<std::size_t> joined;      ///< first lines of rows joined again
  std::map<std::string, std::pair<std::uint64_t, int>> last;  ///< per dtype/redop/root: last size and cycle
  json devices = json::array();
  std::optional<RecordBudget> budget;  ///< the records' text so far
};

/// Reads nccl-tests' text output line by line: one Run per table, one function per kind of line.
struct TextImport {
  TextImport(std::string_view t, const std::string& f, const ImportOptions& opts) : text(t), file(f), o(opts) {}

  std::string_view text;
  const std::string& file;
  const ImportOptions& o;
  ImportResult out;
  std::optional<Run> run;
  std::string file_program;  ///< the program the file's name names
  std::string pending_program;  ///< a command line's program, for the next run
  std::size_t pending_program_line = 0;
  std::string nccl_version;  ///< "NCCL version X" of NCCL's log, for runs without nccl-library=

  void open(std::size_t ln);
  void close(std::size_t ln);
  void read_line(std::string_view line, std::size_t ln);
  bool starts_run(std::string_view line, std::size_t ln);
  void version_line(std::string_view line, std::size_t ln);
  void program_line(std::string program, std::size_t ln);
  void nthread_line(std::string_view line, std::size_t ln);
  void device_line(std::string_view line, std::size_t ln);
  void comment_line(std::string_view line, const std::vector<std::string>& tok, std::size_t ln);
  void row_line(std::vector<std::string> tok, std::size_t ln, bool cut);
  void row(const std::vector<std::string>& tok, std::size_t ln);
  ResultRecord placement(const std::vector<std::string>& tok, std::size_t at, ResultRecord r, bool in_place, std::size_t ln);
  void resolve_op();
  void mark_truncated(std::size_t line);
};

void TextImport::open(std::size_t line) {
  run.emplace();
  run->budget.emplace(o);
  run->doc = new_document(ImportSource::NcclTests, file, text, "nccl-tests text");
  run->first_line = line;
  if (!pending_program.empty()) program_line(pending_program, pending_program_line);
  pending_program.clear();
}

void TextImport::close(std::size_t line) {
  if (!run) return;
  if (!run->pending.empty())
    fail(file, run->pending_line, "a table row with " + std::to_string(run->pending.size()) + " of its " +
                                      std::to_string(run->layout->width()) + " columns and no rest after it (a truncated line?)");
  if (run->layout && !run->footer && run->doc.results.empty())
    fail(file, line, "the table that starts at line " + std::to_string(run->table_line) + " has no rows (a truncated log?)");
  if (run->layout && !run->footer) mark_truncated(line);
  if (run->layout && !run->doc.results.empty()) {
    resolve_op();
    ResultsDocument& d = run->doc;
    if (run->nranks > 0) d.run.nranks = run->nranks, known(d, "nranks");
    if (!run->hosts.empty()) {
      d.run.hosts = run->hosts;
      d.run.nnodes = static_cast<int>(run->hosts.size());
      known(d, "hosts");
      known(d, "nnodes");
    }
    const bool cycles = std::any_of(d.results.begin(), d.results.end(), [](const ResultRecord& r) { return r.cycle > 0; });
    for (auto& r : d.results) {
      if (run->iters > 0) r.iters = run->iters, r.absent.erase("iters");
      if (cycles) r.absent.erase("cycle");
    }
    if (d.run.absent.count("backend_version") && !nccl_version.empty())
      d.run.backend_version = "NCCL " + nccl_version, known(d, "backend_version"), d.run.imported["backend_version_from"] = "NCCL's log";
    if (!run->devices.empty()) d.observed["devices"] = run->devices;
    if (!run->joined.empty()) d.run.imported["rows_joined"] = run->joined;
    d.run.imported["first_line"] = run->first_line;
    d.run.imported["last_line"] = line;
    add_document(out, o, "", std::move(d));
  }
  run.reset();
}

/// A table that ends without "# Avg bus bandwidth" (a run that died, or a log cut short): the
/// document is incomplete (summary.complete false, error says where the rows stop), with a note.
void TextImport::mark_truncated(std::size_t line) {
  const std::size_t last = run->doc.results.back().observed.value("source_line", std::size_t{0});
  const std::string what = "the table that starts at line " + std::to_string(run->table_line) + " stops at line " +
                           std::to_string(last) + " without nccl-tests' '# Avg bus bandwidth' line";
  mark_incomplete(run->doc, out.notes, file, last, what, "a run that ended early, or a truncated log",
                  json{{"table_line", run->table_line}, {"last_row_line", last}, {"end_line", line}});
}

/// The run's collective: its program line, --coll, the file's name, or the one collective its
/// table's shape (and busbw / algbw) fits; refused when none says and the shape cannot tell.
void TextImport::resolve_op() {
  std::string op, from;
  if (run->program_line) {
    if (run->foreign)
      fail(file, run->program_line, "this nccl-tests program (" + run->program + ") measures a collective railkit has no name for");
    op = op_of_program(run->program, nullptr), from = "program line " + std::to_string(run->program_line);
  }
  if (!o.op.empty()) {
    if (!op.empty() && op != o.op)
      fail(file, run->program_line, "--coll " + o.op + " but this line names " + printable(run->program) + " (" + op + ")");
    op = o.op, from = "--coll";
  }
  if (op.empty() && !file_program.empty()) {
    bool foreign = false;
    op = op_of_program(file_program, &foreign), from = "file name";
    if (foreign) fail(file, run->table_line, "the file's name names an nccl-tests program (" + op + ") that measures a collective railkit has no name for");
  }
  if (op.empty()) {
    std::vector<std::string> fits;
    for (const auto& c : op_candidates(*run->shape))
      if (run->ratio_alg.empty() || run->shape->nranks <= 0 ||
          factor_fits(busbw_factor(*find_collective(c), run->shape->nranks), run->ratio_alg, run->ratio_bus))
        fits.push_back(c);
    if (fits.size() != 1)
      fail(file, run->table_line,
           "the log does not name the collective of this table and its shape fits " +
               (fits.empty() ? std::string("no collective") : join_list(fits, " and ")) +
               " (no '# Collective test starting:' or X_perf command line before it, no program in the file's name): pass "
               "--coll, or name the file after the nccl-tests program (all_reduce_perf.log)");
    op = fits[0], from = "table shape";
  }
  run->doc.run.imported["op_from"] = from;
  for (auto& r : run->doc.results) r.op = op;
}

void TextImport::read_line(std::string_view raw, std::size_t ln) {
  std::string_view log;
  const std::string_view line = without_nccl_log(raw, &log);
  if (!log.empty() || raw.rfind("NCCL version ", 0) == 0) {
    const std::string_view l = log.empty() ? raw : log;
    if (const auto v = l.find("NCCL version "); v != std::string_view::npos && nccl_version.empty()) {
      const auto t = split_ws(l.substr(v + 13));
      if (!t.empty()) nccl_version = t[0].substr(0, t[0].find('+'));
    }
    if (log.empty()) return;
  }
  if (trim(line).empty()) return;
  if (starts_run(line, ln)) return;
  const auto tok = split_ws(line);
  if (line.rfind("#", 0) != 0 && (!run || !run->layout || run->footer)) {
    // A command line between runs ("./build/sendrecv_perf -b 8 ...", "mpirun ... all_reduce_perf"):
    // its program is the next run's.
    for (const auto& t : tok)
      if (!op_of_program(t, nullptr).empty()) {  // railkit's collectives and the foreign programs alike
        pending_program = t, pending_program_line = ln;
        break;
      }
    return;
  }
  const bool device = tok.size() > 3 && tok[0] == "#" && tok[1] == "Rank" && std::find(tok.begin(), tok.end(), "Pid") != tok.end();
  if (!run) {
    if (device || table_layout(tok, file, ln)) open(ln);  // a log cut before its '# nThread' line
    else return;
  }
  if (line.rfind("# Blocking Enabled", 0) == 0) {
    run->doc.run.options["blocking"] = true;
    return;
  }
  if (device && run->layout) {  // device lines after a table: the next run's, its '# nThread' line missing
    close(ln - 1);
    open(ln);
  }
  if (device) return device_line(line, ln);
  if (line.rfind("#", 0) == 0) return comment_line(line, tok, ln);
  row_line(tok, ln, !log.empty());
}

/// The lines that start a run or name its program; true when `line` was one.
bool TextImport::starts_run(std::string_view line, std::size_t ln) {
  const bool version = line.rfind("# nccl-tests version ", 0) == 0;
  const bool starting = line.rfind("# Collective test starting: ", 0) == 0;
  const bool nthread = line.rfind("# nThread ", 0) == 0;
  if (!version && !starting && !nthread) return false;
  // A run starts at its first header line; the one before ends there.
  const bool fresh = run && !run->layout && !(nthread && !run->doc.run.absent.count("options")) &&
                     !(version && run->doc.run.imported.contains("tool_version")) && !(starting && run->program_line);
  if (!fresh) {
    close(ln - 1);
    open(ln);
  }
  if (version) version_line(line, ln);
  if (starting) program_line(std::string(trim(line.substr(28))), ln);
  if (nthread) nthread_line(line, ln);
  return true;
}

void TextImport::program_line(std::string program, std::size_t ln) {
  bool foreign = false;
  const std::string op = op_of_program(program, &foreign);
  if (op.empty()) return;
  run->program = std::move(program);
  run->program_line = ln;
  run->foreign = foreign;
  run->doc.run.imported["program"] = run->program;
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

/// The token after `key` in a header line's tokens; nullopt when `key` is absent or last.
std::optional<std::string> value_after(const std::vector<std::string>& tok, std::string_view key) {
  for (std::size_t k = 0; k + 1 < tok.size(); ++k)
    if (tok[k] == key) return tok[k + 1];
  return std::nullopt;
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
    const std::string kind = paren == std::string::npos ? "" : step->substr(paren);
    opts[kind == "(factor)" ? "stepfactor" : "stepbytes"] = whole(step->substr(0, paren), file, ln, "step");
  }
  for (std::size_t k = 0; k + 1 < tok.size(); ++k) {
    if (tok[k] != "iters:") continue;
    const std::string before = k > 0 ? tok[k - 1] : "";
    const char* name = before == "warmup" ? "warmup_iters" : before == "agg" ? "agg_iters" : "iters";
    opts[name] = whole(tok[k + 1], file, ln, name);
    if (std::string_view(name) == "iters")
      run->iters = static_cast<int>(std::min<std::uint64_t>(opts["iters"].get<std::uint64_t>(), 1u << 30));
  }
  if (const auto v = value_after(tok, "validation:")) opts["check"] = whole(*v, file, ln, "validation");
  if (const auto v = value_after(tok, "graph:")) opts["cudagraph"] = whole(*v, file, ln, "graph");
  if (const auto v = value_after(tok, "unalign:")) opts["unalign"] = whole(*v, file, ln, "unalign");
  run->doc.run.options = opts;
  known(run->doc, "options");
}

void TextImport::device_line(std::string_view line, std::size_t ln) {
  // "#  Rank %2d Group %2d Pid %6d on %10s device %2d [%s] %s" (2.13+); before: no "Group".
  const auto tok = split_ws(line);
  const std::size_t g = tok.size() > 3 && tok[3] == "Group" ? 2 : 0;
  if (tok.size() < 9 + g || tok[3 + g] != "Pid" || tok[5 + g] != "on" || tok[7 + g] != "device")
    fail(file, ln, "a device line that is not '#  Rank N [Group G] Pid P on HOST device D [BUS] NAME'");
  const auto rank = whole(tok[2], file, ln, "rank");
  const std::string host = tok[6 + g];
  if (std::find(run->hosts.begin(), run->hosts.end(), host) == run->hosts.end()) run->hosts.push_back(host);
  ++run->nranks;
  std::string name;
  const auto rb = line.find(']');
  if (rb != std::string_view::npos) name = std::string(trim(line.substr(rb + 1)));
  json dev{{"rank", rank}, {"pid", whole(tok[4 + g], file, ln, "pid")}, {"host", host},
           {"device", whole(tok[8 + g], file, ln, "device")}, {"pci", tok.size() > 9 + g ? tok[9 + g] : ""}, {"name", name}};
  if (g) dev["group"] = whole(tok[4], file, ln, "group");
  run->devices.push_back(std::move(dev));
}

/// The table header, "# Out of bounds values" and "# Avg bus bandwidth"; other comments are skipped.
void TextImport::comment_line(std::string_view line, const std::vector<std::string>& tok, std::size_t ln) {
  if (auto l = table_layout(tok, file, ln)) {
    if (run->layout) fail(file, ln, "a second table header before the first table's '# Avg bus bandwidth' line");
    run->layout = std::move(l);
    run->table_line = ln;
    if (run->layout->group[0] == "cputime") run->doc.run.options["report_cputime"] = true;
    return;
  }
  if (!run->layout) return;
  if (!run->pending.empty())
    fail(file, run->pending_line, "a table row with " + std::to_string(run->pending.size()) + " of its " +
                                      std::to_string(run->layout->width()) + " columns, then line " + std::to_string(ln) + " (a truncated line?)");
  if (line.rfind("# Out of bounds values", 0) == 0) {
    const auto colon = std::find(tok.begin(), tok.end(), ":");
    if (colon == tok.end() || colon + 1 == tok.end()) fail(file, ln, "no count after '# Out of bounds values :'");
    run->doc.summary.errors = static_cast<std::int64_t>(std::min<std::uint64_t>(whole(*(colon + 1), file, ln, "out of bounds values"), INT64_MAX));
    known(run->doc, "summary.errors");
  } else if (line.rfind("# Avg bus bandwidth", 0) == 0) {
    const auto colon = std::find(tok.begin(), tok.end(), ":");
    if (colon == tok.end() || colon + 1 == tok.end()) fail(file, ln, "no figure after '# Avg bus bandwidth :'");
    run->doc.summary.avg_busbw_GBps = number(*(colon + 1), file, ln, "average bus bandwidth");
    run->doc.run.imported["avg_busbw_printed"] = *(colon + 1);
    known(run->doc, "summary.avg_busbw_GBps");
    run->footer = true;
  }
}

/// A row's columns, or a part of one that NCCL's log split (`cut`: NCCL's text followed on the
/// same line; the rest of the row comes on later lines, after NCCL's).
void TextImport::row_line(std::vector<std::string> tok, std::size_t ln, bool cut) {
  if (!run->layout || run->footer || tok.empty()) return;
  const Layout& l = *run->layout;
  if (run->pending.empty()) {
    if (!to_int(tok[0])) {
      if (tok[0].find_first_not_of("0123456789") == std::string::npos)  // digits only: a size past 64 bits
        fail(file, ln, "size '" + printable(tok[0]) + "' is past 2^63 - 1: not a size railkit can hold");
      return;  // other text between rows
    }
    // all_gather and alltoall before 2.13.1 print an empty redop: a figure follows the type.
    if (l.has_redop && tok.size() > 3 && to_double(tok[3])) tok.insert(tok.begin() + 3, "");
    if (!cut) return row(tok, ln);
    run->pending = std::move(tok);
    run->pending_line = ln;
    return;
  }
  run->pending.insert(run->pending.end(), tok.begin(), tok.end());
  if (run->pending.size() < l.width() || (cut && run->pending.size() == l.width() && l.timestamp)) return;
  const auto joined = std::move(run->pending);
  run->pending.clear();
  run->joined.push_back(run->pending_line);
  row(joined, run->pending_line);
}

/// One placement's columns (`at`: its first) of a row into `r`.
ResultRecord TextImport::placement(const std::vector<std::string>& tok, std::size_t at, ResultRecord r, bool in_place, std::size_t ln) {
  const auto& cols = run->layout->group;
  r.in_place = in_place;
  for (std::size_t c = 0; c < cols.size(); ++c) {
    const std::string& name = cols[c];
    const std::string& t = tok[at + c];
    if (name == "time" || name == "cputime") r.time_us.avg = number(t, file, ln, name);
    else if (name == "algbw") r.algbw_GBps = number(t, file, ln, name), r.absent.erase("algbw_GBps");
    else if (name == "busbw") r.busbw_GBps = number(t, file, ln, name), r.absent.erase("busbw_GBps");
    else if (name == "#wrong" && t != "N/A") {
      if (const auto exact = to_int(t); exact && *exact >= 0) {  // as printed (%ld): exact up to 2^63 - 1
        r.wrong = *exact;
        r.absent.erase("wrong");
        continue;
      }
      const double w = number(t, file, ln, "#wrong");
      if (w != std::floor(w)) fail(file, ln, "#wrong '" + printable(t) + "' is not a count of wrong elements");
      if (w >= 0x1p63)  // would not fit the document's integer: refused, never wrapped or saturated
        fail(file, ln, "#wrong '" + printable(t) + "' is more wrong elements than railkit can store (at most 2^63 - 1)");
      r.wrong = static_cast<std::int64_t>(w);
      r.absent.erase("wrong");
    } else if (name == "error" && t != "N/A") {
      (void)number(t, file, ln, "error");
      r.observed["max_error"] = t;  // the largest difference from the expected value, not a count
    } else if (name == "copybw") {
      r.observed["copybw_GBps"] = number(t, file, ln, name);
    } else if (name == "i_min" || name == "i_max" || name == "i_p99" || name == "i_cv%") {
      const double v = number(t, file, ln, name);
      double& slot = name == "i_min" ? r.time_us.min : name == "i_max" ? r.time_us.max : name == "i_p99" ? r.time_us.p99 : r.time_us.cv;
      slot = name == "i_cv%" ? v / 100.0 : v;
      r.absent.erase("time_us." + name.substr(2, name == "i_cv%" ? 2 : 3));
    }
  }
  return r;
}

/// A whole row: its first columns, then one or two placements (only in-place: trace replay) and
/// an optional timestamp.
void TextImport::row(const std::vector<std::string>& tok, std::size_t ln) {
  const Layout& l = *run->layout;
  std::size_t n = tok.size();
  if (l.timestamp && n >= l.pre + l.group.size() + 2 && (n - 2 - l.pre) % l.group.size() == 0) n -= 2;
  const std::size_t groups = n >= l.pre ? (n - l.pre) / l.group.size() : 0;
  if (n < l.pre || (n - l.pre) % l.group.size() != 0 || groups == 0 || groups > l.groups)
    fail(file, ln, "a table row with " + std::to_string(tok.size()) + " columns, the header (line " + std::to_string(run->table_line) +
                       ") has " + std::to_string(l.width()) + ": a truncated line?");
  const std::uint64_t size = whole(tok[0], file, ln, "size");
  const std::uint64_t count = whole(tok[1], file, ln, "count");
  const std::string dtype = dtype_of(tok[2]);
  if (dtype.empty()) fail(file, ln, "type '" + printable(tok[2]) + "' has no railkit dtype");
  ResultRecord base = new_record("", size, false, 0, ln);
  base.dtype = dtype;
  base.count = count;
  base.absent.erase("dtype");
  base.absent.erase("count");
  std::size_t k = 3;
  if (l.has_redop) {
    static constexpr std::string_view kRedops[] = {"sum", "prod", "min", "max", "avg", "none", ""};
    if (std::find(std::begin(kRedops), std::end(kRedops), tok[k]) == std::end(kRedops))
      fail(file, ln, "redop '" + printable(tok[k]) + "' has no railkit name");
    base.redop = tok[k].empty() ? "none" : tok[k];
    base.absent.erase("redop");
    ++k;
  }
  if (l.has_root) {
    const auto root = to_int(tok[k]);
    if (!root || *root < -1 || *root > (1 << 30)) fail(file, ln, "root '" + printable(tok[k]) + "' is not a rank or -1");
    base.root = static_cast<int>(*root);
    base.absent.erase("root");
  }
  if (!run->shape)
    run->shape = RowShape{l.has_redop, l.has_root, l.has_redop ? tok[3] : "", base.root, size, count, element_size(dtype), run->nranks};
  // -N cycles, and -d all / -o all / -r all runs: the sizes start again.
  auto& [last, cycle] = run->last[dtype + "/" + base.redop + "/" + std::to_string(base.root)];
  if (last && size <= last) ++cycle;
  last = size;
  base.cycle = cycle;
  if (groups == l.groups) {
    for (std::size_t g = 0; g < groups; ++g)
      run->doc.results.push_back(placement(tok, l.pre + g * l.group.size(), base, g == 1, ln));
  } else {  // only the in-place placement (trace replay prints no out-of-place columns)
    run->doc.results.push_back(placement(tok, l.pre, base, true, ln));
  }
  for (std::size_t at = run->doc.results.size() - (groups == l.groups ? groups : 1); at < run->doc.results.size(); ++at)
    run->budget->add(run->doc.results[at], file, ln);
  const std::string& alg = tok[l.pre + 1];
  if (const double a = to_double(alg).value_or(0); a > run->ratio_alg_value)
    run->ratio_alg_value = a, run->ratio_alg = alg, run->ratio_bus = tok[l.pre + 2];
  if (n < tok.size())  // -Z: the local time the row was printed
    for (std::size_t at = run->doc.results.size() - (groups == l.groups ? groups : 1); at < run->doc.results.size(); ++at)
      run->doc.results[at].observed["timestamp"] = tok[n] + " " + tok[n + 1];
}

}  // namespace

ImportResult import_text(std::string_view text, const std::string& file, const ImportOptions& o) {
  TextImport t(text, file, o);
  if (!op_of_program(file, nullptr).empty()) t.file_program = file;
  LineCursor lines{text};
  for (std::string_view line; lines.next(line);) t.read_line(line, lines.line);
  t.close(lines.line);
  if (t.out.docs.empty()) {
    fail(file, lines.line ? lines.line : 1,
         "no nccl-tests table (a '#  size  count  type ...' header with rows after it) in the file");
  }
  return std::move(t.out);
}

}  // namespace railkit::ingest::nccl_detail
