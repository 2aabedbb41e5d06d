#pragma once
// `railkit import`: other tools' benchmark logs (nccl-tests text and -J JSON, IMB-MPI1, OSU
// micro-benchmarks) as railkit.results/1 documents, so `report` and `compare` put old logs beside
// new runs. The source's numbers are taken verbatim; what it does not print is left out of the
// document (ResultRecord::absent, RunInfo::absent), never invented. results/README.md
// ("Imported documents") documents the mapping. Parsers: import_nccl_tests.cpp, import_imb.cpp,
// import_osu.cpp; detection and the shared helpers: import.cpp.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/atomic_file.hpp"
#include "core/results.hpp"

namespace railkit::ingest {

/// The tools `railkit import` reads; names as --from and run.backend spell them.
enum class ImportSource { NcclTests, Imb, Osu };
std::string_view import_source_name(ImportSource s) noexcept;
/// The --from names, in detection order: nccl-tests, imb, osu.
std::vector<std::string> import_source_names();
/// Parses nccl-tests | imb | osu. Throws UsageError naming --from.
ImportSource parse_import_source(std::string_view name);

/// The most a document `railkit import` writes may hold: what report, compare and history read
/// back (core's input cap). A run that would make a larger document is refused, never written.
inline constexpr std::uint64_t kMaxImportedDocumentBytes = kMaxInputBytes;

struct ImportedDocument;

struct ImportOptions {
  /// The collective when the log does not say it (old nccl-tests logs print no program name):
  /// all_reduce, all_gather ...; empty = from the log, the file name or the table's shape.
  std::string op;
  /// Ranks of an OSU collective run (OSU prints no rank count); 0 = unknown.
  int nranks = 0;
  /// run.label; empty = the file name's stem (plus the benchmark for IMB files with several).
  std::string label;
  /// Called on each document as its run ends, before the next run is read (import_input dumps it
  /// there and drops its records); the label may still change after (import_detail::set_label).
  std::function<void(ImportedDocument&)> on_document;
  /// The largest document written (kMaxImportedDocumentBytes, what the readers take; tests lower it).
  std::uint64_t max_document_bytes = 0;  ///< 0: kMaxImportedDocumentBytes
};

/// One document made from one input (an IMB file gives one per benchmark and process count).
struct ImportedDocument {
  std::string name;  ///< file-name-safe: the file's stem, plus ".Allreduce.np4" for IMB sections
  ResultsDocument doc;
  /// import_input only: the document as it is written (dump_results), checked to read back; its
  /// records then live only here (doc.results is emptied; `records` and `op` say what it held).
  std::string text;
  std::size_t records = 0;
  std::string op;
};

struct ImportResult {
  std::vector<ImportedDocument> docs;
  /// sections skipped (an IMB benchmark railkit has no collective for), other tools' output in
  /// the file that was not imported
  std::vector<std::string> notes;
};

/// `text` without the prefix a launcher or log collector put before each line: Open MPI's
/// --tag-output "[1,0]<stdout>:", Slurm's srun --label "0: ", MPICH/Intel MPI's -prepend-rank
/// "[0] ", kubectl logs --prefix "[pod/NAME/CONTAINER] ", a time of day "00:55:22 " or an ISO 8601
/// time. A kind is stripped only when at least half of the non-empty lines carry it; two layers at
/// most (a time, then a rank label). After them, the indentation every non-empty line shares (a
/// log pasted as a markdown indented block: "indented block"). Line numbers do not change.
struct Unprefixed {
  std::string text;
  std::vector<std::string> kinds;  ///< the prefixes stripped, outermost first
  std::size_t lines = 0;           ///< lines that carried the most common one
};
Unprefixed strip_line_prefixes(std::string_view text);
/// The same on out.text (kinds and lines empty): the text is copied only when a prefix is stripped.
void strip_line_prefixes_in_place(Unprefixed& out);

/// Which tool wrote `text` (after strip_line_prefixes). Throws UsageError "FILE:1: cannot tell ..." when it cannot tell.
ImportSource detect_import_source(std::string_view text, const std::string& file);

/// The tool whose output `line` is a sign of (what detection looks for); nullopt for none.
std::optional<ImportSource> import_source_of_line(std::string_view line);
/// The parser of `source` on `text` as it stands (no prefixes stripped, run.imported.bytes not set).
ImportResult import_parse(ImportSource source, std::string_view text, const std::string& file, const ImportOptions& o);

/// Parses a log of `source` (after strip_line_prefixes; run.imported.line_prefix names what was stripped). `file` is the name used in messages and run.imported.file.
/// Throws UsageError "FILE:LINE: what is wrong" (exit 6) on malformed input.
ImportResult import_log(ImportSource source, std::string_view text, const std::string& file, const ImportOptions& o);

/// What `railkit import` does with one input, `text` read from `file`: detects the tool (unless
/// `from`), strips line prefixes (copying the text only when there are any), parses it, notes
/// other tools' output it did not import, and turns each document into the text it is written
/// as (ImportedDocument::text), refusing one that could not be read back: a number that is not
/// finite (a time of 1e-320 us gives an infinite bandwidth) or more than kMaxImportedDocumentBytes.
/// Memory: the input, one document's records while it is read, and the documents' texts.
/// Throws UsageError "FILE:LINE: ..." (exit 6).
ImportResult import_input(std::string text, const std::string& file, std::optional<ImportSource> from, const ImportOptions& o);
/// import_input of the file at `path` (read whole, at most kMaxInputBytes).
ImportResult import_file(const std::string& path, std::optional<ImportSource> from, const ImportOptions& o);

ImportResult import_nccl_tests(std::string_view text, const std::string& file, const ImportOptions& o);
ImportResult import_imb(std::string_view text, const std::string& file, const ImportOptions& o);
ImportResult import_osu(std::string_view text, const std::string& file, const ImportOptions& o);

namespace import_detail {

/// The input's lines without their line ends ("\r\n" too); line i is lines[i - 1].
std::vector<std::string_view> lines_of(std::string_view text);
/// The same lines one at a time, for readers that need no look-ahead (no vector of the whole file).
struct LineCursor {
  std::string_view text;
  std::size_t pos = 0;
  std::size_t line = 0;  ///< the number of the line `next` gave last; after the end, the line count
  /// The next line into `out`; false at the end.
  bool next(std::string_view& out);
};
/// Throws UsageError "FILE:LINE: message".
[[noreturn]] void fail(const std::string& file, std::size_t line, const std::string& message);
/// A printed number, finite and >= 0 (a time, a bandwidth); throws via fail otherwise.
double number(std::string_view tok, const std::string& file, std::size_t line, std::string_view what);
/// A printed non-negative integer; throws via fail otherwise.
std::uint64_t whole(std::string_view tok, const std::string& file, std::size_t line, std::string_view what);
/// A new imported document: run.imported {tool, file, format, lines, bytes, railkit_version},
/// label, backend = tool, and every run key absent except label, backend, timing, timing_method
/// and sim; summary keys absent. Parsers fill in and un-mark what the source printed.
ResultsDocument new_document(ImportSource tool, const std::string& file, std::string_view text, std::string_view format);
/// A table that stops before its end (`what`: where it stops; `cause`: what may have cut it): the
/// document is incomplete (summary.complete false, an error of code usage with `what`, `cause`
/// and `detail`), and a note "FILE:LINE: what: imported as incomplete" goes into `notes`.
void mark_incomplete(ResultsDocument& d, std::vector<std::string>& notes, const std::string& file, std::size_t line,
                     const std::string& what, std::string_view cause, nlohmann::json detail);
/// o.max_document_bytes, or kMaxImportedDocumentBytes when 0.
std::uint64_t max_document_bytes(const ImportOptions& o);
/// The text of one run's records as they are read, so that a run whose document would be larger
/// than kMaxImportedDocumentBytes is refused at the row that crosses it, before the rest is held.
struct RecordBudget {
  explicit RecordBudget(const ImportOptions& o) : limit(max_document_bytes(o)) {}
  std::uint64_t limit;
  std::uint64_t bytes = 0;
  /// Adds r's size as dumped; fails at `line` of `file` past the limit.
  void add(const ResultRecord& r, const std::string& file, std::size_t line);
};
/// The refusal of a run whose document would hold `bytes` (more than `limit`; `at_least`: the
/// records read so far, the rest not read).
[[noreturn]] void fail_too_large(const std::string& file, std::size_t line, std::uint64_t bytes, std::uint64_t limit,
                                 bool at_least);
/// a x b for a size; fails at `line` when the product does not fit in 64 bits.
std::uint64_t times_ranks(std::uint64_t a, std::uint64_t b, const std::string& file, std::size_t line, std::string_view what);
/// Adds the document of a run that has ended to `out` and hands it to o.on_document (every
/// reader ends its runs here).
void add_document(ImportResult& out, const ImportOptions& o, std::string name, ResultsDocument d);
/// Sets run.label, in the document's text too when it was already dumped.
void set_label(ImportedDocument& d, const std::string& label);
/// Marks a run key as known (removes it from run.absent).
void known(ResultsDocument& d, const std::string& key);
/// A record with every optional key absent except op, bytes, in_place and time_us.avg.
ResultRecord new_record(std::string op, std::uint64_t bytes, bool in_place, double time_us_avg, std::size_t line);

/// Fills what a log printed beside the average: the iterations (`iters`) and the fastest and
/// slowest rank's times (`ranks.time_us_min/max`, without a slowest rank or host, which IMB and
/// OSU do not name); each only when printed, left absent otherwise.
void set_iters_and_rank_spread(ResultRecord& r, std::optional<int> iters, std::optional<double> time_us_min,
                               std::optional<double> time_us_max);
/// Sets algbw = bytes / time and busbw = algbw x factor(op, nranks) (nranks 0: busbw left out
/// unless the factor does not depend on it), and lists them in run.imported.derived.
void derive_bandwidth(ResultsDocument& d, ResultRecord& r, int nranks);
/// MPI datatype names (MPI_FLOAT ...) as railkit dtypes; "" when railkit has none.
std::string dtype_of_mpi(std::string_view mpi);
/// "file.log" -> "file": a file-name-safe stem.
std::string stem_of(const std::string& file);

}  // namespace import_detail

}  // namespace railkit::ingest
