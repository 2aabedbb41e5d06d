#pragma once
// `railkit history`: results over time in one SQLite file (Debian's libsqlite3), and a check of
// new results against the run-to-run band of the last comparable runs (README.md, "Metrics and
// history"). The results documents stay the source of truth: the database holds each
// document's path and content hash and can be rebuilt from the documents.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/results.hpp"

struct sqlite3;

namespace railkit::ingest::history {

/// The schema this railkit writes. Older databases are migrated forward on open; a newer one is
/// refused (UsageError).
inline constexpr int kSchemaVersion = 2;

/// The migration steps: step i (from 0) takes a database from version i to i + 1. Each runs in
/// its own transaction together with the update of meta.schema_version.
const std::vector<std::string_view>& migrations();

/// $XDG_DATA_HOME/railkit/history.sqlite, else $HOME/.local/share/railkit/history.sqlite.
/// Throws UsageError when neither variable is set.
std::filesystem::path default_db_path();

/// What identifies a cluster in the history. Results documents carry no topology fingerprint,
/// so: "sim:<run.sim.cluster_hash>" for a simulated run that records one, else
/// "hosts:<the run's distinct host names, sorted, comma-separated>".
std::string cluster_id(const ResultsDocument& doc);

/// A result's comparison key: only results equal in every field are compared.
struct Key {
  std::string cluster, backend;
  int nranks = 0;
  std::string timing_method;
  bool simulated = false;
  std::string op, dtype, redop;
  std::uint64_t bytes = 0;
  bool in_place = false;
  std::string group;  ///< --split group, "" without
  bool operator==(const Key&) const = default;
  auto operator<=>(const Key&) const = default;
};

/// One document's figures for one key (records of several -N cycles: the median of each field).
struct Point {
  Key key;
  std::string start_time;  ///< the run's, UTC ISO 8601
  std::string path;        ///< the document
  std::string content_hash;
  double busbw_GBps = 0;
  double time_us_p50 = 0, time_us_p99 = 0, time_us_avg = 0;
  std::int64_t wrong = 0;  ///< wrong elements (0 also when not checked); saturates at INT64_MAX, never negative
};

/// Counts of an add.
struct AddCount {
  int documents_added = 0, documents_present = 0;
  int rows_added = 0;
};

/// A document to add: where it is and its parsed content.
struct Input {
  std::filesystem::path path;
  std::string content_hash;  ///< "fnv1a64:<16 hex>" of its bytes
  ResultsDocument doc;
};

/// Filters of `history show`; empty / 0 = any.
struct ShowQuery {
  std::string op;
  std::uint64_t bytes = 0;
  std::string cluster, backend, dtype;
  int nranks = 0;
  int last = 0;  ///< the newest N points per key; 0 = all
};

/// An open history database: created (directories too), migrated forward, WAL journal, busy
/// timeout 10 s; every write is one BEGIN IMMEDIATE transaction, so writers in several processes
/// wait for each other instead of failing.
class Db {
 public:
  /// Throws UsageError (the database is newer than this railkit, or not a railkit history: not an
  /// SQLite file, or another application's tables, said at once; a FIFO or directory) and
  /// IoError (cannot be opened or created).
  explicit Db(const std::filesystem::path& path);
  ~Db();
  Db(const Db&) = delete;
  Db& operator=(const Db&) = delete;

  int schema_version();
  /// Adds a document's records; a document whose content hash is already there adds nothing.
  /// `path` is stored absolute.
  AddCount add(const ResultsDocument& doc, const std::filesystem::path& path, const std::string& content_hash);
  /// Replaces every row with the records of `inputs`, in one transaction (readers see the old
  /// rows or the new ones, never a half-built database).
  AddCount rebuild(const std::vector<Input>& inputs);
  /// The stored document paths, oldest first.
  std::vector<std::string> document_paths();
  /// Points matching `q`, oldest first.
  std::vector<Point> points(const ShowQuery& q);
  /// Every point, oldest first (start_time, then insertion).
  std::vector<Point> all_points();

  sqlite3* handle() { return db_; }

 private:
  void exec(const std::string& sql);
  AddCount insert(const ResultsDocument& doc, const std::filesystem::path& path, const std::string& content_hash);
  template <class F>
  auto write(F&& f);  ///< f() inside BEGIN IMMEDIATE .. COMMIT, rolled back on a throw
  sqlite3* db_ = nullptr;
  std::string path_;
};

/// The results documents of a sweep directory's launches that finished ok (ingest/ cannot read
/// sweep.json itself: the caller passes sweep::ok_results_documents).
using SweepDocuments = std::function<std::vector<std::filesystem::path>(const std::filesystem::path& dir)>;

/// The documents of `paths`: a results document file; a sweep directory (DIR/sweep.json: the
/// documents `sweep_documents` gives, its launches that finished ok; refused when it is empty);
/// any other directory: every *.json file below it that is a railkit.results/1 document (others
/// are skipped; a *.json that cannot be followed, a symlink loop say, is skipped with a line in
/// `notes`). Throws UsageError / IoError naming a file given by name that cannot be read or is
/// not a results document (UsageError for a FIFO, device or socket: never opened to wait).
std::vector<Input> load_inputs(const std::vector<std::string>& paths, const SweepDocuments& sweep_documents = {},
                               std::vector<std::string>* notes = nullptr);

/// The points of one document, one per key.
std::vector<Point> points_of(const Input& in);

/// The band rule of `history check`: band = median ± max(k × 1.4826 × MAD, tolerance × median)
/// of the history's busbw (MAD: median absolute deviation; 1.4826 × MAD estimates the standard
/// deviation of normal noise and ignores outliers; the tolerance floor keeps a very steady
/// history from flagging noise below it).
struct BandRule {
  int last = 10;            ///< compare with the newest N comparable runs before the result
  int min_runs = 3;         ///< fewer: cannot judge
  double k = 3.0;
  double tolerance = 0.05;  ///< fraction of the median
  std::string text() const;
};

enum class Verdict { Regression, AboveBand, WithinBand, CannotJudge };

/// One result against its history.
struct Judgement {
  Point point;
  Verdict verdict = Verdict::CannotJudge;
  int runs = 0;  ///< comparable runs used
  double median = 0, lo = 0, hi = 0;
  std::string reason;  ///< for CannotJudge
};

/// Median, then the band, then the verdict of `value` against `history` (busbw values, GB/s).
Judgement judge(const Point& p, const std::vector<double>& history, const BandRule& rule);

/// Judges each of `targets` against the newest `rule.last` points of `all` (oldest first) with the
/// same key before it: for a document that `all` holds, the points ahead of it; for another, those
/// that started no later (never the same document). Points with wrong values are never
/// history; a target with wrong values cannot be judged.
std::vector<Judgement> check(const std::vector<Point>& targets, const std::vector<Point>& all, const BandRule& rule);

/// The newest point of every key in `all`.
std::vector<Point> newest_per_key(const std::vector<Point>& all);

}  // namespace railkit::ingest::history
