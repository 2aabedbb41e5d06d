// IMB-MPI1 (Intel(R) MPI Benchmarks) output as railkit.results/1 documents: one document per
// "# Benchmarking NAME" / "# #processes = N" section. IMB prints times only; algbw and busbw are
// derived from railkit's bytes and t_avg with railkit's busbw factors (results/README.md).
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

/// IMB benchmarks railkit has a collective for. `times_n`: IMB's #bytes is one rank's block and
/// railkit's bytes (max of send and receive per rank) is nranks x #bytes.
struct ImbBench {
  std::string_view imb;
  std::string_view op;
  bool times_n;
  bool reduction;
};
constexpr ImbBench kBenches[] = {
    {"Allreduce", "all_reduce", false, true},  {"Reduce", "reduce", false, true},
    {"Reduce_scatter", "reduce_scatter", false, true},  // #bytes: the whole vector each rank sends
    {"Bcast", "broadcast", false, false},      {"Allgather", "all_gather", true, false},
    {"Alltoall", "alltoall", true, false},     {"PingPong", "sendrecv", false, false}};

const ImbBench* find_bench(std::string_view name) {
  for (const auto& b : kBenches)
    if (b.imb == name) return &b;
  return nullptr;
}

/// "# Key    : value" -> value, trimmed; nullopt when the line is not that key.
std::optional<std::string> header_value(std::string_view line, std::string_view key) {
  if (line.rfind("# ", 0) != 0) return std::nullopt;
  std::string_view rest = line.substr(2);
  if (rest.rfind(key, 0) != 0) return std::nullopt;
  rest.remove_prefix(key.size());
  rest = trim(rest);
  if (rest.empty() || rest.front() != ':') return std::nullopt;
  return std::string(trim(rest.substr(1)));
}

struct Section {
  std::string bench;
  const ImbBench* known = nullptr;
  int nranks = 0;
  std::size_t line = 0;
  std::vector<std::string> columns;
  std::size_t header_line = 0;
  std::vector<ResultRecord> rows;
  std::optional<RecordBudget> budget;  ///< the rows' text so far
};

/// What the file's header lines say (IMB prints them once, before the first section); every
/// section's document takes them as they stand when the section closes.
struct ImbHeader {
  std::string version, date, command, dtype, dtype_red, mpi_op, max_bytes;
};

/// MPI_Op names as railkit redops; "" for those railkit has none for.
std::string redop_of_mpi(std::string_view v) {
  static constexpr std::pair<std::string_view, std::string_view> kOps[] = {
      {"MPI_SUM", "sum"}, {"MPI_PROD", "prod"}, {"MPI_MIN", "min"}, {"MPI_MAX", "max"}};
  std::string op;
  for (const auto& [k, name] : kOps)
    if (v == k) op = name;
  return op;
}

/// The "# Key : value" header lines kept, and how each value is read.
struct HeaderKey {
  std::string_view key;
  std::string ImbHeader::*field;
  std::string (*read)(std::string_view);
};
constexpr HeaderKey kHeaderKeys[] = {
    {"Date", &ImbHeader::date, [](std::string_view v) { return std::string(v); }},
    {"MPI_Datatype for reductions", &ImbHeader::dtype_red, dtype_of_mpi},
    {"MPI_Datatype", &ImbHeader::dtype, dtype_of_mpi},
    {"MPI_Op", &ImbHeader::mpi_op, redop_of_mpi},
    {"Maximum message length in bytes", &ImbHeader::max_bytes, [](std::string_view v) { return std::string(v); }}};

/// Reads IMB-MPI1's output line by line: one Section per "# Benchmarking", one document each.
struct ImbImport {
  ImbImport(std::string_view t, const std::string& f, const ImportOptions& opts, const std::vector<std::string_view>& ls)
      : text(t), file(f), o(opts), lines(ls) {}

  std::string_view text;
  const std::string& file;
  const ImportOptions& o;
  const std::vector<std::string_view>& lines;
  ImportResult out;
  ImbHeader head;
  std::optional<Section> sec;
  std::vector<std::pair<std::size_t, std::string>> skipped;  ///< sections of benchmarks railkit has no collective for

  void read_line(std::size_t i);
  bool header_line(std::size_t i);
  void row_line(const std::vector<std::string>& tok, std::size_t ln);
  void close(std::size_t last);
  ResultsDocument section_document(std::size_t last) const;
  void add_rows(ResultsDocument& d);
  void mark_truncated(ResultsDocument& d);
};

/// A table that stops before the header's "# Maximum message length in bytes": the document is
/// incomplete (summary.complete false, error says where it stops) and a note says so.
void ImbImport::mark_truncated(ResultsDocument& d) {
  const auto max_bytes = to_int(head.max_bytes);
  if (!max_bytes || d.results.empty()) return;
  const ResultRecord& tail = d.results.back();
  const auto printed = tail.observed.value("source_bytes", std::uint64_t{0});
  if (printed >= static_cast<std::uint64_t>(*max_bytes)) return;
  const std::size_t line = tail.observed.value("source_line", std::size_t{0});
  const std::string what = "the IMB " + sec->bench + " table stops at " + std::to_string(printed) + " bytes (line " +
                           std::to_string(line) + "); the header announced sizes up to " + std::to_string(*max_bytes);
  mark_incomplete(d, out.notes, file, line, what, "a truncated log?",
                  json{{"last_bytes", printed}, {"announced_max_bytes", *max_bytes}, {"line", line}});
}

void ImbImport::close(std::size_t last) {
  if (!sec) return;
  if (!sec->known) {
    out.notes.push_back(file + ":" + std::to_string(sec->line) + ": IMB " + sec->bench + " skipped: railkit has no collective for it");
    skipped.emplace_back(sec->line, sec->bench);
  } else if (sec->columns.empty() || sec->rows.empty()) {
    fail(file, last, "IMB " + sec->bench + " section (line " + std::to_string(sec->line) + ") has no table rows (a truncated log?)");
  } else {
    ResultsDocument d = section_document(last);
    add_rows(d);
    mark_truncated(d);
    const std::string stem = stem_of(file);
    const std::string name = stem + "." + slug(sec->bench) + (sec->nranks > 0 ? ".np" + std::to_string(sec->nranks) : "");
    d.run.label = !o.label.empty() ? o.label : name;
    add_document(out, o, name, std::move(d));
  }
  sec.reset();
}

/// The section's document with its run keys and no results yet.
ResultsDocument ImbImport::section_document(std::size_t last) const {
  ResultsDocument d = new_document(ImportSource::Imb, file, text, "IMB-MPI1 text");
  d.run.timing_method = "barrier_separated";
  d.run.imported["benchmark"] = sec->bench;
  d.run.imported["first_line"] = sec->line;
  d.run.imported["last_line"] = last;
  if (!head.version.empty()) d.run.imported["tool_version"] = head.version;
  if (!head.date.empty()) d.run.imported["date_local"] = head.date;
  if (!head.command.empty()) {
    d.run.command = head.command;
    known(d, "command");
  }
  if (sec->nranks > 0) {
    d.run.nranks = sec->nranks;
    known(d, "nranks");
  }
  const bool has_avg = std::find(sec->columns.begin(), sec->columns.end(), "t_avg[usec]") != sec->columns.end();
  if (has_avg) {
    d.run.average = "avg";  // IMB's t_avg: the mean over processes of each one's time
    known(d, "average");
  }
  return d;
}

/// The section's rows into `d`, with dtype, redop, root and the derived bandwidths.
void ImbImport::add_rows(ResultsDocument& d) {
  const std::string& dt = sec->known->reduction ? head.dtype_red : head.dtype;
  double sum = 0;
  int with_busbw = 0;
  for (auto& r : sec->rows) {
    if (!dt.empty()) {
      r.dtype = dt;
      r.absent.erase("dtype");
    }
    if (sec->known->reduction && !head.mpi_op.empty()) {
      r.redop = head.mpi_op;
      r.absent.erase("redop");
    } else if (!sec->known->reduction) {
      r.redop = "none";
      r.absent.erase("redop");
    }
    if (!find_collective(r.op)->has_root) {
      r.root = -1;
      r.absent.erase("root");
    }
    derive_bandwidth(d, r, sec->nranks);
    if (!r.absent.count("busbw_GBps")) {
      sum += r.busbw_GBps;
      ++with_busbw;
    }
    d.results.push_back(std::move(r));
  }
  if (with_busbw == static_cast<int>(d.results.size())) {
    d.summary.avg_busbw_GBps = sum / with_busbw;
    known(d, "summary.avg_busbw_GBps");
    d.run.imported["derived"].push_back("summary.avg_busbw_GBps");
  }
}

/// The file's header lines (version, "# Key : value", the calling sequence); true when line i is one.
bool ImbImport::header_line(std::size_t i) {
  const std::string_view line = lines[i];
  // "#    Intel(R) MPI Benchmarks 2019 Update 5, MPI-1 part", "#    Intel (R) MPI Benchmarks 4.1, MPI-1 part"
  for (const std::string_view banner : {"Intel(R) MPI Benchmarks ", "Intel (R) MPI Benchmarks "})
    if (const auto p = line.find(banner); p != std::string_view::npos && line.rfind("#", 0) == 0) {
      const std::string_view rest = line.substr(p + banner.size());
      head.version = std::string(trim(rest.substr(0, rest.find(','))));
      return true;
    }
  for (const auto& k : kHeaderKeys)
    if (auto v = header_value(line, k.key)) {
      head.*k.field = k.read(*v);
      return true;
    }
  if (line.rfind("# Calling sequence was:", 0) == 0) {
    for (std::size_t k = i + 1; k < lines.size() && k < i + 4; ++k) {
      const std::string_view c = trim(lines[k]);
      if (c.size() > 2 && c.rfind("# ", 0) == 0) {
        head.command = std::string(trim(c.substr(2)));
        break;
      }
    }
    return true;
  }
  return false;
}

void ImbImport::read_line(std::size_t i) {
  const std::size_t ln = i + 1;
  const std::string_view line = lines[i];
  if (header_line(i)) return;
  if (line.rfind("# Benchmarking ", 0) == 0) {
    close(ln - 1);
    sec.emplace();
    sec->budget.emplace(o);
    sec->bench = std::string(trim(line.substr(15)));
    sec->known = find_bench(sec->bench);
    sec->line = ln;
    return;
  }
  if (!sec) return;
  if (line.rfind("# #processes = ", 0) == 0) {
    sec->nranks = static_cast<int>(std::min<std::uint64_t>(whole(trim(line.substr(15)), file, ln, "#processes"), 1u << 30));
    return;
  }
  const auto tok = split_ws(line);
  if (tok.empty()) {
    if (!sec->rows.empty()) close(ln - 1);
    return;
  }
  if (tok[0] == "#bytes") {
    sec->columns = tok;
    sec->header_line = ln;
    return;
  }
  if (line.rfind("#", 0) == 0) {
    if (!sec->rows.empty()) close(ln - 1);
    return;
  }
  if (sec->columns.empty() || !sec->known) return;
  row_line(tok, ln);
}

void ImbImport::row_line(const std::vector<std::string>& tok, std::size_t ln) {
  if (tok.size() != sec->columns.size())
    fail(file, ln, "an IMB " + sec->bench + " row with " + std::to_string(tok.size()) + " columns, the header (line " +
                       std::to_string(sec->header_line) + ") has " + std::to_string(sec->columns.size()) + ": a truncated line?");
  std::optional<std::uint64_t> bytes;
  std::optional<double> t_avg, t_min, t_max;
  std::optional<int> reps;
  for (std::size_t c = 0; c < tok.size(); ++c) {
    const std::string& col = sec->columns[c];
    if (col == "#bytes") bytes = whole(tok[c], file, ln, "#bytes");
    else if (col == "#repetitions") reps = static_cast<int>(std::min<std::uint64_t>(whole(tok[c], file, ln, "#repetitions"), 1u << 30));
    else if (col == "t_avg[usec]" || col == "t[usec]") t_avg = number(tok[c], file, ln, col);
    else if (col == "t_min[usec]") t_min = number(tok[c], file, ln, col);
    else if (col == "t_max[usec]") t_max = number(tok[c], file, ln, col);
    else (void)number(tok[c], file, ln, col);  // Mbytes/sec, defects ...: checked, not kept
  }
  if (!bytes || !t_avg) fail(file, ln, "the IMB header has no #bytes or time column");
  if (sec->known->times_n && sec->nranks <= 0)
    fail(file, ln, "IMB " + sec->bench + "'s #bytes is one rank's block: railkit's bytes need the '# #processes' line");
  const std::uint64_t rk_bytes = sec->known->times_n ? times_ranks(*bytes, static_cast<std::uint64_t>(sec->nranks), file, ln,
                                                                   "IMB " + sec->bench + "'s #bytes " + std::to_string(*bytes))
                                                      : *bytes;
  ResultRecord r = new_record(std::string(sec->known->op), rk_bytes, false, *t_avg, ln);
  r.observed["source_bytes"] = *bytes;
  set_iters_and_rank_spread(r, reps, t_min, t_max);
  sec->budget->add(r, file, ln);
  sec->rows.push_back(std::move(r));
}

}  // namespace

ImportResult import_imb(std::string_view text, const std::string& file, const ImportOptions& o) {
  const auto lines = lines_of(text);
  ImbImport imb(text, file, o, lines);
  for (std::size_t i = 0; i < lines.size(); ++i) imb.read_line(i);
  imb.close(lines.size());
  if (imb.out.docs.empty() && imb.out.notes.empty())
    fail(file, lines.size() ? lines.size() : 1, "no IMB-MPI1 '# Benchmarking' section with a table in the file");
  if (imb.out.docs.empty()) {  // every section skipped: refused, naming the benchmarks and the first
    std::vector<std::string> names;
    for (const auto& s : imb.skipped)
      if (std::find(names.begin(), names.end(), s.second) == names.end()) names.push_back(s.second);
    fail(file, imb.skipped.front().first,
         "every IMB section measures a benchmark railkit has no collective for (" + join(names, ", ") + ")");
  }
  return std::move(imb.out);
}

}  // namespace railkit::ingest
