#include "ingest/import.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>

#include "core/collectives.hpp"
#include "core/error.hpp"
#include "core/strings.hpp"
#include "core/version.hpp"

namespace railkit::ingest {
using nlohmann::json;

namespace {

/// One tool railkit import reads: its --from name, how a line of its output is recognised (and
/// what the refusal names when none is), and its parser. Detection tries the rows in order.
struct Source {
  ImportSource source;
  std::string_view name;
  bool (*line_is_its)(std::string_view line);
  std::string_view sign;  ///< what the "cannot tell" refusal says is missing
  ImportResult (*parse)(std::string_view text, const std::string& file, const ImportOptions& o);
};
constexpr Source kSources[] = {
    {ImportSource::NcclTests, "nccl-tests",
     [](std::string_view line) {
       if (line.rfind("# nccl-tests version ", 0) == 0 || line.rfind("# nThread ", 0) == 0 ||
           line.rfind("# Collective test starting: ", 0) == 0)
         return true;
       const auto tok = split_ws(line);  // "#  Rank 0 [Group 0] Pid", "#  size  count  type"
       return tok.size() > 4 && tok[0] == "#" &&
              ((tok[1] == "Rank" && (tok[3] == "Pid" || (tok.size() > 5 && tok[5] == "Pid"))) || (tok[1] == "size" && tok[2] == "count" && tok[3] == "type"));
     },
     "nccl-tests '# nThread' or table header or JSON", import_nccl_tests},
    {ImportSource::Imb, "imb",
     [](std::string_view line) {
       return line.find("Intel(R) MPI Benchmarks") != std::string_view::npos ||
              line.find("Intel (R) MPI Benchmarks") != std::string_view::npos || line.rfind("# Benchmarking ", 0) == 0;
     },
     "IMB-MPI1 '# Benchmarking' section", import_imb},
    {ImportSource::Osu, "osu", [](std::string_view line) { return line.rfind("# OSU MPI", 0) == 0; },
     "'# OSU MPI' header", import_osu},
};

/// Prefixes that launchers and log collectors put before each line of a program's output; the
/// length of the one at the start of `line`, 0 when it has none.
struct LinePrefix {
  std::string_view kind;  ///< what run.imported.line_prefix says
  std::size_t (*length)(std::string_view line);
};

std::size_t digits(std::string_view s, std::size_t at) {
  std::size_t k = at;
  while (k < s.size() && std::isdigit(static_cast<unsigned char>(s[k]))) ++k;
  return k - at;
}

constexpr LinePrefix kPrefixes[] = {
    {"mpirun --tag-output",  // Open MPI: "[1,0]<stdout>:" (5.x: and a space)
     [](std::string_view l) -> std::size_t {
       if (l.empty() || l[0] != '[') return 0;
       const auto close = l.find("]<std");
       if (close == std::string_view::npos || close > 24) return 0;
       const auto end = l.find(">:", close);
       if (end == std::string_view::npos || end > close + 8) return 0;
       return end + 2 + (end + 2 < l.size() && l[end + 2] == ' ');
     }},
    {"srun --label",  // Slurm: the task number, padded to the widest, then ": "
     [](std::string_view l) -> std::size_t {
       std::size_t k = 0;
       while (k < l.size() && l[k] == ' ') ++k;
       const std::size_t n = digits(l, k);
       return n && k + n + 1 < l.size() && l[k + n] == ':' && l[k + n + 1] == ' ' ? k + n + 2 : 0;
     }},
    {"-prepend-rank",  // MPICH, Intel MPI: "[0] "
     [](std::string_view l) -> std::size_t {
       const std::size_t n = l.empty() || l[0] != '[' ? 0 : digits(l, 1);
       return n && n + 2 < l.size() && l[n + 1] == ']' && l[n + 2] == ' ' ? n + 3 : 0;
     }},
    {"kubectl logs --prefix",  // "[pod/NAME/CONTAINER] "
     [](std::string_view l) -> std::size_t {
       const auto close = l.find("] ");
       return l.rfind("[pod/", 0) == 0 && close != std::string_view::npos ? close + 2 : 0;
     }},
    {"time of day",  // CI logs: "00:55:22 "
     [](std::string_view l) -> std::size_t {
       const bool hms = l.size() > 9 && digits(l, 0) == 2 && l[2] == ':' && digits(l, 3) == 2 && l[5] == ':' && digits(l, 6) == 2;
       std::size_t k = 8;
       while (hms && k < l.size() && l[k] == ' ') ++k;
       return hms && k > 8 ? k : 0;
     }},
    {"ISO 8601 time",  // GitHub Actions and Kubernetes --timestamps: "2024-05-01T12:00:00.1234567Z "
     [](std::string_view l) -> std::size_t {
       const bool date = l.size() > 20 && digits(l, 0) == 4 && l[4] == '-' && digits(l, 5) == 2 && l[7] == '-' && digits(l, 8) == 2 && l[10] == 'T';
       const auto sp = date ? l.find(' ') : std::string_view::npos;
       return sp != std::string_view::npos && sp < 40 ? sp + 1 : 0;
     }},
};

}  // namespace

/// The indentation every non-empty line shares (a log pasted as a markdown indented code block);
/// 0 when a line starts in column 1, as every tool's own '#' lines do.
std::size_t common_indent(std::string_view text) {
  std::size_t indent = std::string_view::npos;
  import_detail::LineCursor c{text};
  for (std::string_view l; c.next(l);) {
    if (trim(l).empty()) continue;
    indent = std::min(indent, l.find_first_not_of(" \t"));
  }
  return indent == std::string_view::npos ? 0 : indent;
}

/// `text` with the first `cut(line)` characters of each line removed (lines without their "\r").
template <typename Cut>
std::string cut_lines(std::string_view text, Cut cut) {
  std::string out;
  out.reserve(text.size());
  import_detail::LineCursor c{text};
  for (std::string_view l; c.next(l);) {
    out.append(l.substr(std::min(cut(l), l.size())));
    if (c.pos <= text.size()) out.push_back('\n');  // the line had its newline
  }
  return out;
}

Unprefixed strip_line_prefixes(std::string_view text) {
  Unprefixed out{std::string(text), {}, 0};
  strip_line_prefixes_in_place(out);
  return out;
}

void strip_line_prefixes_in_place(Unprefixed& out) {
  for (int pass = 0; pass < 2; ++pass) {  // a time, then a rank label: two layers at most
    std::size_t nonempty = 0;
    std::vector<std::size_t> hits(std::size(kPrefixes));
    import_detail::LineCursor c{out.text};
    for (std::string_view l; c.next(l);) {
      if (trim(l).empty()) continue;
      ++nonempty;
      for (std::size_t k = 0; k < std::size(kPrefixes); ++k) hits[k] += kPrefixes[k].length(l) > 0;
    }
    const auto best = static_cast<std::size_t>(std::max_element(hits.begin(), hits.end()) - hits.begin());
    if (hits[best] == 0 || 2 * hits[best] < nonempty) break;
    out.text = cut_lines(out.text, kPrefixes[best].length);
    out.kinds.emplace_back(kPrefixes[best].kind);
    out.lines = std::max(out.lines, hits[best]);
  }
  if (const std::size_t indent = common_indent(out.text)) {
    out.text = cut_lines(out.text, [indent](std::string_view) { return indent; });
    out.kinds.emplace_back("indented block");
  }
}

std::string_view import_source_name(ImportSource s) noexcept {
  for (const auto& x : kSources)
    if (x.source == s) return x.name;
  return "?";
}

std::vector<std::string> import_source_names() {
  std::vector<std::string> out;
  for (const auto& x : kSources) out.emplace_back(x.name);
  return out;
}

ImportSource parse_import_source(std::string_view name) {
  for (const auto& x : kSources)
    if (x.name == name) return x.source;
  throw UsageError("--from '" + std::string(name) + "': expected " + join_list(import_source_names()));
}

ImportSource detect_import_source(std::string_view original, const std::string& file) {
  // Detection reads the first MiB: only that much is unprefixed (import_log unprefixes the whole).
  const Unprefixed u = strip_line_prefixes(original.substr(0, 1 << 20));
  const std::string_view text = u.text;
  const std::string_view head = trim(text.substr(0, 4096));
  if (!head.empty() && head.front() == '{' && original.find("\"nccl_version\"") != std::string_view::npos)
    return ImportSource::NcclTests;
  for (const auto line : import_detail::lines_of(text))
    for (const auto& x : kSources)
      if (x.line_is_its(line)) return x.source;
  std::vector<std::string> signs;
  for (const auto& x : kSources) signs.push_back("no " + std::string(x.sign));
  import_detail::fail(file, 1, "cannot tell which tool wrote this (" + join(signs, ", ") + "): pass --from " +
                                   join(import_source_names(), "|"));
}

std::optional<ImportSource> import_source_of_line(std::string_view line) {
  for (const auto& x : kSources)
    if (x.line_is_its(line)) return x.source;
  return std::nullopt;
}

ImportResult import_parse(ImportSource source, std::string_view text, const std::string& file, const ImportOptions& o) {
  for (const auto& x : kSources)
    if (x.source == source) return x.parse(text, file, o);
  throw UsageError("unknown import source");
}

ImportResult import_log(ImportSource source, std::string_view text, const std::string& file, const ImportOptions& o) {
  const Unprefixed u = strip_line_prefixes(text);
  ImportOptions opts = o;
  opts.on_document = [&](ImportedDocument& d) {
    d.doc.run.imported["bytes"] = text.size();
    if (!u.kinds.empty()) d.doc.run.imported["line_prefix"] = u.kinds;
    if (o.on_document) o.on_document(d);
  };
  return import_parse(source, u.text, file, opts);
}

namespace import_detail {

bool LineCursor::next(std::string_view& out) {
  if (pos >= text.size()) return false;
  std::size_t end = text.find('\n', pos);
  if (end == std::string_view::npos) end = text.size();
  out = text.substr(pos, end - pos);
  if (!out.empty() && out.back() == '\r') out.remove_suffix(1);
  pos = end + 1;
  ++line;
  return true;
}

std::vector<std::string_view> lines_of(std::string_view text) {
  std::vector<std::string_view> out;
  LineCursor c{text};
  for (std::string_view line; c.next(line);) out.push_back(line);
  return out;
}

void fail(const std::string& file, std::size_t line, const std::string& message) {
  throw UsageError(file + ":" + std::to_string(line) + ": " + message);
}

double number(std::string_view tok, const std::string& file, std::size_t line, std::string_view what) {
  const auto v = to_double(tok);
  if (!v || !std::isfinite(*v) || *v < 0)
    fail(file, line, std::string(what) + " '" + printable(tok) + "' is not a non-negative number");
  return *v;
}

std::uint64_t whole(std::string_view tok, const std::string& file, std::size_t line, std::string_view what) {
  const auto v = to_int(tok);
  if (!v && !tok.empty() && tok.find_first_not_of("0123456789") == std::string_view::npos)
    fail(file, line, std::string(what) + " '" + printable(tok) + "' is past 2^63 - 1: not a figure railkit can hold");
  if (!v || *v < 0) fail(file, line, std::string(what) + " '" + printable(tok) + "' is not a non-negative integer");
  return static_cast<std::uint64_t>(*v);
}

ResultsDocument new_document(ImportSource tool, const std::string& file, std::string_view text, std::string_view format) {
  ResultsDocument d;
  d.run.backend = std::string(import_source_name(tool));
  std::size_t lines = 0;
  for (char c : text) lines += c == '\n';
  if (!text.empty() && text.back() != '\n') ++lines;
  d.run.imported = json{{"tool", d.run.backend},
                        {"file", file},
                        {"format", std::string(format)},
                        {"lines", lines},
                        {"bytes", text.size()},
                        {"railkit_version", kVersion}};
  d.run.options = json::object();
  for (const char* k : {"backend_version", "railkit_version", "nranks", "nnodes", "hosts", "command", "env", "start_time",
                        "average", "options", "split", "summary.avg_busbw_GBps", "summary.errors"})
    d.run.absent.insert(k);
  return d;
}

void mark_incomplete(ResultsDocument& d, std::vector<std::string>& notes, const std::string& file, std::size_t line,
                     const std::string& what, std::string_view cause, json detail) {
  d.summary.complete = false;
  d.error = ErrorRecord{std::string(error_code_name(ErrorCode::Usage)), exit_code(ErrorCode::Usage),
                        what + " (" + std::string(cause) + ")", std::move(detail)};
  notes.push_back(file + ":" + std::to_string(line) + ": " + what + ": imported as incomplete");
}

void known(ResultsDocument& d, const std::string& key) { d.run.absent.erase(key); }

ResultRecord new_record(std::string op, std::uint64_t bytes, bool in_place, double time_us_avg, std::size_t line) {
  ResultRecord r;
  r.op = std::move(op);
  r.bytes = bytes;
  r.in_place = in_place;
  r.time_us.avg = time_us_avg;
  r.observed = json{{"source_line", line}};
  r.absent = {"dtype",       "redop", "root",  "count",      "cycle",      "iters",  "time_us.min", "time_us.max",
              "time_us.p50", "time_us.p99", "time_us.cv", "algbw_GBps", "busbw_GBps", "wrong", "ranks", "group"};
  return r;
}

void set_iters_and_rank_spread(ResultRecord& r, std::optional<int> iters, std::optional<double> time_us_min,
                               std::optional<double> time_us_max) {
  if (iters) {
    r.iters = *iters;
    r.absent.erase("iters");
  }
  if (time_us_min && time_us_max) {
    r.ranks.time_us_min = *time_us_min;
    r.ranks.time_us_max = *time_us_max;
    r.absent.erase("ranks");
    r.absent.insert("ranks.slowest_rank");
    r.absent.insert("ranks.slowest_host");
  }
}

void derive_bandwidth(ResultsDocument& d, ResultRecord& r, int nranks) {
  const Collective* c = find_collective(r.op);
  if (r.time_us.avg <= 0) return;  // a zero time gives no bandwidth: left out
  r.algbw_GBps = static_cast<double>(r.bytes) / (r.time_us.avg * 1e-6) / 1e9;
  r.absent.erase("algbw_GBps");
  json& derived = d.run.imported["derived"];
  if (!derived.is_array()) derived = json::array();
  auto add = [&](const char* k) {
    if (std::find(derived.begin(), derived.end(), json(k)) == derived.end()) derived.push_back(k);
  };
  add("algbw_GBps");
  if (c && (c->busbw == BusbwRule::One || nranks >= 1)) {
    r.busbw_GBps = r.algbw_GBps * busbw_factor(*c, nranks >= 1 ? nranks : 1);
    r.absent.erase("busbw_GBps");
    add("busbw_GBps");
  }
}

std::string dtype_of_mpi(std::string_view mpi) {
  static const std::pair<std::string_view, std::string_view> kMap[] = {
      {"MPI_FLOAT", "float"},     {"MPI_DOUBLE", "double"},     {"MPI_INT", "int32"},      {"MPI_INT32_T", "int32"},
      {"MPI_UINT32_T", "uint32"}, {"MPI_INT64_T", "int64"},     {"MPI_UINT64_T", "uint64"}, {"MPI_LONG", "int64"},
      {"MPI_CHAR", "int8"},       {"MPI_SIGNED_CHAR", "int8"},  {"MPI_INT8_T", "int8"},    {"MPI_BYTE", "uint8"},
      {"MPI_UNSIGNED_CHAR", "uint8"}, {"MPI_UINT8_T", "uint8"}};
  for (const auto& [k, v] : kMap)
    if (k == mpi) return std::string(v);
  return "";
}

std::string stem_of(const std::string& file) {
  std::string s = std::filesystem::path(file).filename().string();
  for (const char* ext : {".json", ".log", ".txt", ".out"})
    if (s.size() > std::string_view(ext).size() && s.ends_with(ext)) {
      s.resize(s.size() - std::string_view(ext).size());
      break;
    }
  return slug(s.empty() ? "import" : s);
}

}  // namespace import_detail

}  // namespace railkit::ingest
