// `railkit import`'s path from one input to the texts it writes (import_input): detection, line
// prefixes, the parser, a note for other tools' output left in the file, and each document dumped
// as its run ends, refused when it could not be read back (a number that is not finite, more than
// kMaxImportedDocumentBytes), so memory holds one run's records at a time.
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "core/json_text.hpp"
#include "core/strings.hpp"
#include "ingest/import.hpp"

namespace railkit::ingest {
using nlohmann::json;

namespace {

constexpr std::uint64_t kMiB = std::uint64_t{1} << 20;

/// "64 MiB", "70.3 MiB"; "2000 bytes" below a MiB.
std::string size_text(std::uint64_t bytes) {
  if (bytes < kMiB) return std::to_string(bytes) + " bytes";
  if (bytes % kMiB == 0) return std::to_string(bytes / kMiB) + " MiB";
  return fmt::format("{:.1f} MiB", static_cast<double>(bytes) / kMiB);
}

/// The source line a record was read from (nccl-tests JSON: 1, the file's only line that counts).
std::size_t line_of(const ResultRecord& r) {
  return r.observed.is_object() && r.observed.contains("source_line") ? r.observed["source_line"].get<std::size_t>() : 1;
}

/// Refuses a document with a figure that is not finite: JSON has no infinity, so it would be
/// written as null, which report and history refuse. Only a derived figure can be one (IMB's time
/// of 1e-320 us: bytes / time overflows); the printed ones were checked finite as they were read.
void check_finite(const ResultsDocument& d, const std::string& file) {
  for (const ResultRecord& r : d.results) {
    const std::pair<const char*, double> figures[] = {
        {"time_us.avg", r.time_us.avg}, {"time_us.min", r.time_us.min}, {"time_us.max", r.time_us.max},
        {"time_us.p50", r.time_us.p50}, {"time_us.p99", r.time_us.p99}, {"time_us.cv", r.time_us.cv},
        {"algbw_GBps", r.algbw_GBps},   {"busbw_GBps", r.busbw_GBps},   {"ranks.time_us_min", r.ranks.time_us_min},
        {"ranks.time_us_max", r.ranks.time_us_max}};
    for (const auto& [key, v] : figures)
      if (!std::isfinite(v) && r.has(key) && r.has(std::string(key).substr(0, std::string(key).find('.'))))
        import_detail::fail(file, line_of(r),
                            std::string(key) + " would be " + (std::isnan(v) ? "NaN" : "infinite") + " (" +
                                fmt::format("{} bytes in {:g} us", r.bytes, r.time_us.avg) +
                                "): not a figure a results document can hold");
  }
  if (!d.run.absent.count("summary.avg_busbw_GBps") && !std::isfinite(d.summary.avg_busbw_GBps))
    import_detail::fail(file, d.run.imported.value("first_line", std::size_t{1}),
                        "the average busbw of this run would not be finite: not a figure a results document can hold");
}

/// Refuses `d` when its text is over `limit`, naming the run's first line.
void check_size(const ImportedDocument& d, const std::string& file, std::uint64_t limit) {
  if (d.text.size() > limit)
    import_detail::fail_too_large(file, d.doc.run.imported.value("first_line", std::size_t{1}), d.text.size(), limit, false);
}

/// Dumps `d` into its text and drops its records (import_input's on_document).
void finish_document(ImportedDocument& d, const std::string& file, std::uint64_t limit) {
  check_finite(d.doc, file);
  d.records = d.doc.results.size();
  d.op = d.doc.results.empty() ? "" : d.doc.results.front().op;
  d.text = dump_results(d.doc);
  check_size(d, file, limit);
  std::vector<ResultRecord>().swap(d.doc.results);
}

/// The first line of each other tool's output in `text` (the file's own tool: `src`), as notes:
/// railkit import reads one tool per file, so the rest is named, never dropped in silence.
void note_other_tools(std::string_view text, ImportSource src, const std::string& file, std::vector<std::string>& notes) {
  if (src == ImportSource::NcclTests && !trim(text.substr(0, 4096)).empty() && trim(text.substr(0, 4096)).front() == '{')
    return;  // nccl-tests JSON: one document, no lines of other tools
  std::vector<ImportSource> seen{src};
  std::size_t ln = 0, pos = 0;
  while (pos < text.size()) {
    std::size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view line = text.substr(pos, end - pos);
    pos = end + 1;
    ++ln;
    if (line.find('#') == std::string_view::npos && line.find("Intel") == std::string_view::npos) continue;  // a row
    const auto other = import_source_of_line(line);
    if (!other || std::find(seen.begin(), seen.end(), *other) != seen.end()) continue;
    seen.push_back(*other);
    notes.push_back(file + ":" + std::to_string(ln) + ": " + std::string(import_source_name(*other)) +
                    " output from this line on was not imported (this file was read as " +
                    std::string(import_source_name(src)) + " output; railkit import --from " +
                    std::string(import_source_name(*other)) + " reads the other)");
  }
}

}  // namespace

ImportResult import_input(std::string text, const std::string& file, std::optional<ImportSource> from, const ImportOptions& o) {
  const std::size_t bytes = text.size();
  const ImportSource src = from ? *from : detect_import_source(text, file);
  Unprefixed u{std::move(text), {}, 0};
  strip_line_prefixes_in_place(u);
  ImportOptions opts = o;
  opts.on_document = [&](ImportedDocument& d) {
    d.doc.run.imported["bytes"] = bytes;
    if (!u.kinds.empty()) d.doc.run.imported["line_prefix"] = u.kinds;
    finish_document(d, file, import_detail::max_document_bytes(o));
  };
  ImportResult r = import_parse(src, u.text, file, opts);
  note_other_tools(u.text, src, file, r.notes);
  for (const auto& d : r.docs) check_size(d, file, import_detail::max_document_bytes(o));  // a label set after the dump
  return r;
}

ImportResult import_file(const std::string& path, std::optional<ImportSource> from, const ImportOptions& o) {
  return import_input(read_input_file(path, "input"), path, from, o);
}

namespace import_detail {

std::uint64_t max_document_bytes(const ImportOptions& o) {
  return o.max_document_bytes ? o.max_document_bytes : kMaxImportedDocumentBytes;
}

void fail_too_large(const std::string& file, std::size_t line, std::uint64_t bytes, std::uint64_t limit, bool at_least) {
  fail(file, line,
       fmt::format("the document of this run would be {}{}, more than the {} railkit reads back (report, compare, "
                   "history): nothing written; split the log and import the parts",
                   at_least ? "over " : "", size_text(bytes), size_text(limit)));
}

void RecordBudget::add(const ResultRecord& r, const std::string& file, std::size_t line) {
  const std::string text = dump_record(r);
  // In the document each line of it is indented by two levels more, and a ",\n" follows it.
  bytes += text.size() + 4 * (static_cast<std::uint64_t>(std::count(text.begin(), text.end(), '\n')) + 1) + 2;
  if (bytes > limit) fail_too_large(file, line, bytes, limit, true);
}

std::uint64_t times_ranks(std::uint64_t a, std::uint64_t b, const std::string& file, std::size_t line, std::string_view what) {
  std::uint64_t out = 0;
  if (__builtin_mul_overflow(a, b, &out))
    fail(file, line, fmt::format("{} x {} ranks does not fit in 64 bits: not a size railkit can hold", what, b));
  return out;
}

void add_document(ImportResult& out, const ImportOptions& o, std::string name, ResultsDocument d) {
  out.docs.push_back(ImportedDocument{std::move(name), std::move(d), "", 0, ""});
  if (o.on_document) o.on_document(out.docs.back());
}

void set_label(ImportedDocument& d, const std::string& label) {
  if (!d.text.empty()) {  // dumped with the label it had: "label" is the first key of "run"
    const std::string was = "\"label\": " + json_dump(json(d.doc.run.label));
    if (const auto at = d.text.find(was); at != std::string::npos)
      d.text.replace(at, was.size(), "\"label\": " + json_dump(json(label)));
  }
  d.doc.run.label = label;
}

}  // namespace import_detail

}  // namespace railkit::ingest
