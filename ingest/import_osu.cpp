// OSU micro-benchmark output as railkit.results/1 documents: "# OSU MPI <Name> Test vX.Y", an
// optional "# Datatype: MPI_CHAR." line (7.1+), a "# Size ..." header and one row per size.
// Latency tests print times only (algbw and busbw derived); osu_bw prints MB/s (time derived).
#include <algorithm>
#include <optional>

#include "core/collectives.hpp"
#include "core/error.hpp"
#include "core/strings.hpp"
#include "ingest/import.hpp"

namespace railkit::ingest {
using nlohmann::json;
using namespace import_detail;

namespace {

/// OSU tests railkit has a collective for, by the name in "# OSU MPI <name> Test". `times_n`:
/// OSU's Size is one rank's block and railkit's bytes are nranks x Size.
struct OsuTest {
  std::string_view title;
  std::string_view op;
  bool times_n;
  bool reduction;
  int nranks;  ///< fixed rank count (point-to-point: 2), 0 = the run's
};
constexpr OsuTest kTests[] = {
    {"Allreduce Latency", "all_reduce", false, true, 0},
    {"Reduce Latency", "reduce", false, true, 0},
    {"Reduce_scatter Latency", "reduce_scatter", false, true, 0},  // Size: the whole vector
    {"Broadcast Latency", "broadcast", false, false, 0},
    {"Allgather Latency", "all_gather", true, false, 0},
    {"All-to-All Personalized Exchange Latency", "alltoall", true, false, 0},
    {"Latency", "sendrecv", false, false, 2},
    {"Bandwidth", "sendrecv", false, false, 2}};

/// Splits a "# Size  Avg Latency(us)  ..." header into its column names (separated by 2+ spaces).
std::vector<std::string> header_columns(std::string_view line) {
  std::vector<std::string> cols;
  std::string_view rest = trim(line.substr(1));
  while (!rest.empty()) {
    std::size_t end = rest.find("  ");
    if (end == std::string_view::npos) end = rest.size();
    cols.emplace_back(trim(rest.substr(0, end)));
    rest = trim(rest.substr(end));
  }
  return cols;
}

/// Reads one OSU test's output line by line into one document.
struct OsuImport {
  OsuImport(const std::string& f, const ImportOptions& opts, ResultsDocument doc)
      : file(f), o(opts), d(std::move(doc)), budget(opts) {}

  const std::string& file;
  const ImportOptions& o;
  ResultsDocument d;
  const OsuTest* test = nullptr;
  std::string dtype;
  std::vector<std::string> columns;
  std::size_t header_line = 0, title_line = 0;
  int nranks = 0;
  RecordBudget budget;  ///< the records' text so far

  void read_line(std::string_view line, std::size_t ln);
  void title(std::string_view line, std::size_t ln);
  void row_line(const std::vector<std::string>& tok, std::size_t ln);
  void finish(std::size_t nlines);
};

void OsuImport::read_line(std::string_view line, std::size_t ln) {
  if (line.rfind("# OSU MPI", 0) == 0) return title(line, ln);
  if (line.rfind("# Datatype: ", 0) == 0) {
    std::string v(trim(line.substr(12)));
    if (!v.empty() && v.back() == '.') v.pop_back();
    dtype = dtype_of_mpi(v);
    return;
  }
  if (line.rfind("# Size", 0) == 0) {
    if (!test) fail(file, ln, "a '# Size' header before the '# OSU MPI ... Test' line");
    columns = header_columns(line);
    header_line = ln;
    return;
  }
  const auto tok = split_ws(line);
  if (tok.empty() || line.rfind("#", 0) == 0 || columns.empty()) return;
  if (!to_int(tok[0])) {
    if (tok[0].find_first_not_of("0123456789") == std::string::npos)  // digits only: a size past 64 bits
      fail(file, ln, "Size '" + printable(tok[0]) + "' is past 2^63 - 1: not a size railkit can hold");
    return;
  }
  row_line(tok, ln);
}

void OsuImport::title(std::string_view line, std::size_t ln) {
  if (test) fail(file, ln, "a second OSU header (line " + std::to_string(title_line) + " started the first): one test per file");
  // "# OSU MPI Allreduce Latency Test v7.3", "# OSU MPI-CUDA Bandwidth Test v5.6.3"
  std::string_view rest = line.substr(9);
  if (!rest.empty() && rest.front() == '-') rest.remove_prefix(rest.find(' ') == std::string_view::npos ? rest.size() : rest.find(' '));
  rest = trim(rest);
  const auto test_at = rest.rfind(" Test");
  if (test_at == std::string_view::npos) fail(file, ln, "an OSU header without ' Test vX.Y'");
  const std::string name(trim(rest.substr(0, test_at)));
  const std::string_view ver = trim(rest.substr(test_at + 5));
  for (const auto& t : kTests)
    if (t.title == name) test = &t;
  if (!test) fail(file, ln, "OSU '" + printable(name) + "' has no railkit collective (known: allreduce, reduce, reduce_scatter, bcast, allgather, alltoall, latency, bw)");
  d.run.imported["benchmark"] = name;
  if (!ver.empty() && ver.front() == 'v') d.run.imported["tool_version"] = std::string(ver.substr(1));
  title_line = ln;
  if (test->nranks) nranks = test->nranks;
}

void OsuImport::row_line(const std::vector<std::string>& tok, std::size_t ln) {
  if (tok.size() != columns.size())
    fail(file, ln, "an OSU row with " + std::to_string(tok.size()) + " columns, the header (line " + std::to_string(header_line) +
                       ") has " + std::to_string(columns.size()) + ": a truncated line?");
  const std::uint64_t size = whole(tok[0], file, ln, "Size");
  std::optional<double> avg, lo, hi, mbps;
  std::optional<int> iters;
  for (std::size_t c = 1; c < tok.size(); ++c) {
    const std::string& col = columns[c];
    if (col == "Avg Latency(us)" || col == "Latency (us)") avg = number(tok[c], file, ln, col);
    else if (col == "Min Latency(us)") lo = number(tok[c], file, ln, col);
    else if (col == "Max Latency(us)") hi = number(tok[c], file, ln, col);
    else if (col == "Bandwidth (MB/s)") mbps = number(tok[c], file, ln, col);
    else if (col == "Iterations") iters = static_cast<int>(std::min<std::uint64_t>(whole(tok[c], file, ln, col), 1u << 30));
    else (void)number(tok[c], file, ln, col);
  }
  if (test->times_n && nranks <= 0)
    fail(file, ln, "OSU " + std::string(test->title) + "'s Size is one rank's block and OSU prints no rank count: pass --nranks");
  const std::uint64_t bytes =
      test->times_n ? times_ranks(size, static_cast<std::uint64_t>(nranks), file, ln, "OSU Size " + std::to_string(size)) : size;
  ResultRecord r;
  if (mbps) {
    // osu_bw: MB/s (1e6 B/s) as printed is algbw; the time per message is derived from it.
    r = new_record(std::string(test->op), bytes, false, *mbps > 0 ? static_cast<double>(size) / *mbps : 0.0, ln);
    r.algbw_GBps = *mbps / 1000.0;
    r.busbw_GBps = r.algbw_GBps;
    r.absent.erase("algbw_GBps");
    r.absent.erase("busbw_GBps");
    json& derived = d.run.imported["derived"];
    if (!derived.is_array()) derived = json::array({"time_us.avg"});
  } else if (avg) {
    r = new_record(std::string(test->op), bytes, false, *avg, ln);
    derive_bandwidth(d, r, nranks);
  } else {
    fail(file, ln, "the OSU header (line " + std::to_string(header_line) + ") has no latency or bandwidth column");
  }
  r.observed["source_bytes"] = size;
  if (!dtype.empty()) {
    r.dtype = dtype;
    r.absent.erase("dtype");
  }
  if (!test->reduction) {
    r.redop = "none";
    r.absent.erase("redop");
  }
  if (!find_collective(r.op)->has_root) {
    r.root = -1;
    r.absent.erase("root");
  }
  set_iters_and_rank_spread(r, iters, lo, hi);
  budget.add(r, file, ln);
  d.results.push_back(std::move(r));
}

/// After the last line: refusals of a file without a test or rows, then the run keys and summary.
void OsuImport::finish(std::size_t nlines) {
  if (!test) fail(file, 1, "no '# OSU MPI ... Test' header");
  if (d.results.empty()) fail(file, nlines ? nlines : 1, "no OSU rows after the '# Size' header (a truncated log?)");
  if (nranks > 0) {
    d.run.nranks = nranks;
    known(d, "nranks");
    if (o.nranks > 0 && !test->nranks) d.run.imported["nranks_from"] = "--nranks";
  }
  if (std::find(columns.begin(), columns.end(), "Avg Latency(us)") != columns.end()) {
    d.run.average = "avg";  // OSU's Avg Latency: the mean over ranks of each one's average
    known(d, "average");
  }
  bool all = true;
  double sum = 0;
  for (const auto& r : d.results) {
    all = all && !r.absent.count("busbw_GBps");
    sum += r.busbw_GBps;
  }
  if (all) {
    d.summary.avg_busbw_GBps = sum / static_cast<double>(d.results.size());
    known(d, "summary.avg_busbw_GBps");
    if (d.run.imported["derived"].is_array()) d.run.imported["derived"].push_back("summary.avg_busbw_GBps");
  }
}

}  // namespace

ImportResult import_osu(std::string_view text, const std::string& file, const ImportOptions& o) {
  LineCursor lines{text};
  OsuImport osu(file, o, new_document(ImportSource::Osu, file, text, "OSU text"));
  osu.d.run.timing_method = "barrier_separated";
  osu.nranks = o.nranks;
  for (std::string_view line; lines.next(line);) osu.read_line(line, lines.line);
  osu.finish(lines.line);
  ImportResult out;
  const std::string stem = stem_of(file);
  osu.d.run.label = !o.label.empty() ? o.label : stem;
  add_document(out, o, stem, std::move(osu.d));
  return out;
}

}  // namespace railkit::ingest
