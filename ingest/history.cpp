#include "ingest/history.hpp"

#include <sqlite3.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <cstdlib>
#include <map>
#include <set>
#include <thread>

#include <fmt/format.h>

#include "core/atomic_file.hpp"
#include "core/clock.hpp"
#include "core/error.hpp"
#include "core/json_text.hpp"
#include "core/stats.hpp"
#include "core/strings.hpp"

namespace railkit::ingest::history {

namespace fs = std::filesystem;

const std::vector<std::string_view>& migrations() {
  static const std::vector<std::string_view> steps = {
      // 0 -> 1: documents and their records.
      "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);"
      "CREATE TABLE documents (id INTEGER PRIMARY KEY, content_hash TEXT NOT NULL UNIQUE, path TEXT NOT NULL,"
      " cluster TEXT NOT NULL, backend TEXT NOT NULL, backend_version TEXT NOT NULL, nranks INTEGER NOT NULL,"
      " nnodes INTEGER NOT NULL, simulated INTEGER NOT NULL, label TEXT NOT NULL, start_time TEXT NOT NULL,"
      " added_at TEXT NOT NULL);"
      "CREATE TABLE results (document_id INTEGER NOT NULL REFERENCES documents(id), op TEXT NOT NULL,"
      " dtype TEXT NOT NULL, redop TEXT NOT NULL, bytes INTEGER NOT NULL, in_place INTEGER NOT NULL,"
      " grp TEXT NOT NULL, cycle INTEGER NOT NULL, busbw_GBps REAL, algbw_GBps REAL, time_us_avg REAL,"
      " time_us_p50 REAL, time_us_p99 REAL, wrong INTEGER);",
      // 1 -> 2: run.timing_method (documents before it were back_to_back), indexes for the lookups.
      "ALTER TABLE documents ADD COLUMN timing_method TEXT NOT NULL DEFAULT 'back_to_back';"
      "CREATE INDEX results_by_key ON results(op, bytes, document_id);"
      "CREATE INDEX documents_by_run ON documents(cluster, backend, nranks, start_time);",
  };
  static_assert(kSchemaVersion == 2);
  return steps;
}

fs::path default_db_path() {
  const char* xdg = std::getenv("XDG_DATA_HOME");
  if (xdg && *xdg && fs::path(xdg).is_absolute()) return fs::path(xdg) / "railkit" / "history.sqlite";
  const char* home = std::getenv("HOME");
  if (home && *home) return fs::path(home) / ".local" / "share" / "railkit" / "history.sqlite";
  throw UsageError("history: neither XDG_DATA_HOME nor HOME is set: give --db FILE");
}

constexpr double kAbsent = std::numeric_limits<double>::quiet_NaN();  // bound as NULL

std::string cluster_id(const ResultsDocument& doc) {
  if (doc.simulated && doc.run.sim.is_object() && doc.run.sim.contains("cluster_hash") &&
      doc.run.sim["cluster_hash"].is_string())
    return "sim:" + doc.run.sim["cluster_hash"].get<std::string>();
  std::set<std::string> hosts(doc.run.hosts.begin(), doc.run.hosts.end());
  if (hosts.empty() && is_imported(doc))  // a log that names no host: comparable with nothing else
    return "unknown:" + doc.run.imported.value("file", std::string("imported log"));
  return "hosts:" + join(std::vector<std::string>(hosts.begin(), hosts.end()), ",");
}

namespace {

/// A prepared statement, finalized at scope exit.
class Stmt {
 public:
  Stmt(sqlite3* db, const std::string& sql, const std::string& where) : db_(db), where_(where) {
    if (sqlite3_prepare_v2(db, sql.c_str(), -1, &s_, nullptr) != SQLITE_OK) fail("prepare");
  }
  ~Stmt() { sqlite3_finalize(s_); }
  Stmt(const Stmt&) = delete;
  Stmt& operator=(const Stmt&) = delete;
  Stmt& bind(int i, const std::string& v) {
    sqlite3_bind_text(s_, i, v.c_str(), static_cast<int>(v.size()), SQLITE_TRANSIENT);
    return *this;
  }
  Stmt& bind(int i, std::int64_t v) {
    sqlite3_bind_int64(s_, i, v);
    return *this;
  }
  Stmt& bind(int i, double v) {
    if (std::isfinite(v)) sqlite3_bind_double(s_, i, v);
    else sqlite3_bind_null(s_, i);
    return *this;
  }
  Stmt& reset() {
    sqlite3_reset(s_);
    sqlite3_clear_bindings(s_);
    return *this;
  }
  /// True while a row is there.
  bool step() {
    const int rc = sqlite3_step(s_);
    if (rc == SQLITE_ROW) return true;
    if (rc == SQLITE_DONE) return false;
    fail("step");
    return false;
  }
  std::string text(int c) const {
    const auto* p = sqlite3_column_text(s_, c);
    return p ? reinterpret_cast<const char*>(p) : "";
  }
  std::int64_t integer(int c) const { return sqlite3_column_int64(s_, c); }
  double real(int c) const {
    return sqlite3_column_type(s_, c) == SQLITE_NULL ? std::nan("") : sqlite3_column_double(s_, c);
  }

 private:
  [[noreturn]] void fail(const char* what) {
    throw IoError(fmt::format("history database {}: {} failed: {}", where_, what, sqlite3_errmsg(db_)));
  }
  sqlite3* db_;
  sqlite3_stmt* s_ = nullptr;
  std::string where_;
};

/// The one line that refuses a file that is not a railkit history (exit 6).
[[noreturn]] void not_a_history(const std::string& path, const std::string& why) {
  throw UsageError(fmt::format("--db '{}': not a railkit history ({})", path, why));
}

/// Refuses a database that is not a railkit history before anything changes it: a file that is not
/// an SQLite database (at once: SQLITE_NOTADB is no lock to wait for), or one with tables but not
/// railkit's (meta(key, value) holding schema_version, documents, results): another application's
/// file, even one with a `meta` table of its own. An empty database is a new history.
void refuse_unless_history(sqlite3* db, const std::string& path) {
  sqlite3_stmt* probe = nullptr;
  int rc = sqlite3_prepare_v2(db, "SELECT count(*) FROM sqlite_master", -1, &probe, nullptr);
  if (rc == SQLITE_OK) rc = sqlite3_step(probe);
  const bool empty = rc == SQLITE_ROW && sqlite3_column_int64(probe, 0) == 0;
  sqlite3_finalize(probe);
  if ((rc & 0xff) == SQLITE_NOTADB) not_a_history(path, "not an SQLite database");
  if (rc != SQLITE_ROW) throw IoError(fmt::format("history database {}: cannot read: {}", path, sqlite3_errmsg(db)));
  if (empty) return;
  std::vector<std::string> tables, columns;
  for (Stmt t(db, "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name", path); t.step();)
    tables.push_back(t.text(0));
  const auto has = [&](const char* name) { return std::find(tables.begin(), tables.end(), name) != tables.end(); };
  if (!has("meta")) not_a_history(path, "an SQLite database without railkit's meta table");
  for (Stmt c(db, "SELECT name FROM pragma_table_info('meta')", path); c.step();) columns.push_back(c.text(0));
  if (columns != std::vector<std::string>{"key", "value"})
    not_a_history(path, "its meta table has the columns " + join(columns, ", ") + ", not railkit's key, value");
  if (!Stmt(db, "SELECT value FROM meta WHERE key = 'schema_version'", path).step())
    not_a_history(path, "its meta table holds no schema_version");
  for (const char* t : {"documents", "results"})
    if (!has(t)) not_a_history(path, fmt::format("no {} table", t));
}

/// core's median, but NaN (unknown) rather than 0 for no values.
double median_or_nan(const std::vector<double>& v) { return v.empty() ? std::nan("") : railkit::median(v); }

/// `sum` plus the wrong elements `w` of one record, saturating at INT64_MAX: a negative count (no
/// tool prints one) counts as its size, so any non-zero count stays a wrong result, never 0.
std::int64_t add_wrong(std::int64_t sum, std::int64_t w) {
  const std::int64_t mag = w == INT64_MIN ? INT64_MAX : (w < 0 ? -w : w);
  return sum > INT64_MAX - mag ? INT64_MAX : sum + mag;
}

/// One record as read from a document or the database.
struct Raw {
  Point p;
  std::int64_t doc = 0;  ///< groups records of one document
};

/// Records of the same document and key become one point (medians over -N cycles), in order of
/// their first record.
std::vector<Point> aggregate(const std::vector<Raw>& raws) {
  std::map<std::pair<std::int64_t, Key>, std::size_t> at;
  std::vector<std::vector<const Raw*>> groups;
  for (const Raw& r : raws) {
    auto [it, fresh] = at.emplace(std::pair(r.doc, r.p.key), groups.size());
    if (fresh) groups.emplace_back();
    groups[it->second].push_back(&r);
  }
  std::vector<Point> out;
  for (const auto& g : groups) {
    Point p = g.front()->p;
    const auto med = [&](double Point::*f) {
      std::vector<double> v;
      for (const Raw* r : g) v.push_back(r->p.*f);
      return median_or_nan(v);
    };
    p.busbw_GBps = med(&Point::busbw_GBps);
    p.time_us_p50 = med(&Point::time_us_p50);
    p.time_us_p99 = med(&Point::time_us_p99);
    p.time_us_avg = med(&Point::time_us_avg);
    p.wrong = 0;
    for (const Raw* r : g) p.wrong = add_wrong(p.wrong, r->p.wrong);
    out.push_back(std::move(p));
  }
  return out;
}

/// The results document in `text`, or nullopt when it is JSON of another schema (and `strict` is
/// false). Throws UsageError naming `path` otherwise.
std::optional<Input> parse_input(const fs::path& path, bool strict) {
  const std::string text = read_input_file(path, "input");
  nlohmann::json j;
  try {
    j = parse_json(text);
  } catch (const nlohmann::json::exception& e) {
    if (!strict) return std::nullopt;
    throw UsageError(path.string() + " is not valid JSON: " + json_error_text(e));
  }
  if (!strict && !(j.is_object() && j.value("schema", nlohmann::json()) == kResultsSchema)) return std::nullopt;
  Input in;
  in.path = fs::absolute(path).lexically_normal();
  in.content_hash = "fnv1a64:" + fnv1a64_hex(text);
  try {
    from_json(j, in.doc);
  } catch (const UsageError& e) {
    throw UsageError(path.string() + ": " + e.what());
  }
  return in;
}

}  // namespace

Db::Db(const fs::path& path) : path_(path.string()) {
  std::error_code ec;
  if (const auto st = fs::status(path, ec); fs::exists(st) && !fs::is_regular_file(st))  // SQLite would wait on a FIFO
    throw UsageError(fmt::format("--db '{}': is {}, not a regular file", path_,
                                 fs::is_directory(st) ? "a directory" : fs::is_fifo(st) ? "a FIFO" : "a device or socket"));
  if (path.has_parent_path()) fs::create_directories(path.parent_path(), ec);
  if (sqlite3_open_v2(path_.c_str(), &db_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX,
                      nullptr) != SQLITE_OK) {
    const std::string msg = db_ ? sqlite3_errmsg(db_) : "out of memory";
    sqlite3_close(db_);
    db_ = nullptr;
    throw IoError(fmt::format("history database {}: cannot open: {}", path_, msg));
  }
  try {
    sqlite3_busy_timeout(db_, 10000);  // another writer holds the lock: wait up to 10 s
    refuse_unless_history(db_, path_);
    // WAL lets readers go on while one writes; switching needs a moment alone with the file.
    for (int i = 0;; ++i) {
      const int rc = sqlite3_exec(db_, "PRAGMA journal_mode=WAL", nullptr, nullptr, nullptr);
      if (rc == SQLITE_OK) break;
      if (i == 200 || (rc != SQLITE_BUSY && rc != SQLITE_LOCKED)) break;  // stays in rollback-journal mode: still correct
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    exec("PRAGMA synchronous=NORMAL");
    // Forward, one step per transaction; the version is read inside it, so two processes opening
    // an old database at once migrate it once.
    for (;;) {
      exec("BEGIN IMMEDIATE");
      try {
        const int v = schema_version();
        if (v > kSchemaVersion)
          throw UsageError(fmt::format("history database {} has schema version {}, newer than this railkit's ({}): "
                                       "use a newer railkit, or rebuild it with `railkit history rebuild --db` into "
                                       "another file",
                                       path_, v, kSchemaVersion));
        if (v == kSchemaVersion) {
          exec("COMMIT");
          break;
        }
        exec(std::string(migrations()[static_cast<std::size_t>(v)]));
        Stmt(db_, "INSERT OR REPLACE INTO meta(key, value) VALUES('schema_version', ?)", path_)
            .bind(1, std::to_string(v + 1))
            .step();
        exec("COMMIT");
      } catch (...) {
        sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
        throw;
      }
    }
  } catch (...) {
    sqlite3_close(db_);
    db_ = nullptr;
    throw;
  }
}

Db::~Db() { sqlite3_close(db_); }

void Db::exec(const std::string& sql) {
  char* err = nullptr;
  if (sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &err) != SQLITE_OK) {
    const std::string msg = err ? err : sqlite3_errmsg(db_);
    sqlite3_free(err);
    throw IoError(fmt::format("history database {}: {}", path_, msg));
  }
}

int Db::schema_version() {
  Stmt has(db_, "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'meta'", path_);
  has.step();
  if (has.integer(0) == 0) {
    Stmt any(db_, "SELECT count(*) FROM sqlite_master", path_);
    any.step();
    if (any.integer(0) != 0)
      not_a_history(path_, "an SQLite database without railkit's meta table");
    return 0;
  }
  Stmt v(db_, "SELECT value FROM meta WHERE key = 'schema_version'", path_);
  if (!v.step()) return 0;
  const auto n = to_int(v.text(0));
  if (!n || *n < 0) throw UsageError(fmt::format("history database {}: bad schema_version '{}'", path_, v.text(0)));
  return static_cast<int>(*n);
}

AddCount Db::insert(const ResultsDocument& doc, const fs::path& path, const std::string& content_hash) {
  AddCount c;
  Stmt have(db_, "SELECT id FROM documents WHERE content_hash = ?", path_);
  if (have.bind(1, content_hash).step()) {
    c.documents_present = 1;
    return c;
  }
    Stmt ins(db_,
             "INSERT INTO documents(content_hash, path, cluster, backend, backend_version, nranks, nnodes, simulated,"
             " label, start_time, added_at, timing_method) VALUES(?,?,?,?,?,?,?,?,?,?,?,?)",
             path_);
    ins.bind(1, content_hash)
        .bind(2, fs::absolute(path).lexically_normal().string())
        .bind(3, cluster_id(doc))
        .bind(4, doc.run.backend)
        .bind(5, doc.run.backend_version)
        .bind(6, std::int64_t{doc.run.nranks})
        .bind(7, std::int64_t{doc.run.nnodes})
        .bind(8, std::int64_t{doc.simulated})
        .bind(9, doc.run.label)
        .bind(10, doc.run.start_time)
        .bind(11, utc_now_iso())
        .bind(12, doc.run.timing_method)
        .step();
    const std::int64_t id = sqlite3_last_insert_rowid(db_);
    Stmt rec(db_,
             "INSERT INTO results(document_id, op, dtype, redop, bytes, in_place, grp, cycle, busbw_GBps, algbw_GBps,"
             " time_us_avg, time_us_p50, time_us_p99, wrong) VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
             path_);
    for (const ResultRecord& r : doc.results) {
      rec.reset()
          .bind(1, id)
          .bind(2, r.op)
          .bind(3, r.dtype)
          .bind(4, r.redop)
          .bind(5, static_cast<std::int64_t>(r.bytes))
          .bind(6, std::int64_t{r.in_place})
          .bind(7, r.group.value_or(""))
          .bind(8, std::int64_t{r.cycle})
          // What an imported log did not print is NULL, never 0.
          .bind(9, r.has("busbw_GBps") ? r.busbw_GBps : kAbsent)
          .bind(10, r.has("algbw_GBps") ? r.algbw_GBps : kAbsent)
          .bind(11, r.has("time_us.avg") ? r.time_us.avg : kAbsent)
          .bind(12, r.has("time_us.p50") ? r.time_us.p50 : kAbsent)
          .bind(13, r.has("time_us.p99") ? r.time_us.p99 : kAbsent);
      if (r.wrong) rec.bind(14, *r.wrong);
      rec.step();
    }
  c.documents_added = 1;
  c.rows_added = static_cast<int>(doc.results.size());
  return c;
}

template <class F>
auto Db::write(F&& f) {
  exec("BEGIN IMMEDIATE");
  try {
    auto r = f();
    exec("COMMIT");
    return r;
  } catch (...) {
    sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
    throw;
  }
}

AddCount Db::add(const ResultsDocument& doc, const fs::path& path, const std::string& content_hash) {
  return write([&] { return insert(doc, path, content_hash); });
}

AddCount Db::rebuild(const std::vector<Input>& inputs) {
  return write([&] {
    exec("DELETE FROM results; DELETE FROM documents;");
    AddCount total;
    for (const Input& in : inputs) {
      const AddCount n = insert(in.doc, in.path, in.content_hash);
      total.documents_added += n.documents_added;
      total.documents_present += n.documents_present;
      total.rows_added += n.rows_added;
    }
    return total;
  });
}

std::vector<std::string> Db::document_paths() {
  std::vector<std::string> out;
  Stmt s(db_, "SELECT path FROM documents ORDER BY start_time, id", path_);
  while (s.step()) out.push_back(s.text(0));
  return out;
}

std::vector<Point> Db::points(const ShowQuery& q) {
  std::string sql =
      "SELECT d.id, d.content_hash, d.path, d.cluster, d.backend, d.nranks, d.timing_method, d.simulated,"
      " d.start_time, r.op, r.dtype, r.redop, r.bytes, r.in_place, r.grp, r.busbw_GBps, r.time_us_p50,"
      " r.time_us_p99, r.time_us_avg, r.wrong FROM results r JOIN documents d ON d.id = r.document_id WHERE 1";
  if (!q.op.empty()) sql += " AND r.op = ?1";
  if (q.bytes) sql += " AND r.bytes = ?2";
  if (!q.cluster.empty()) sql += " AND d.cluster = ?3";
  if (!q.backend.empty()) sql += " AND d.backend = ?4";
  if (!q.dtype.empty()) sql += " AND r.dtype = ?5";
  if (q.nranks) sql += " AND d.nranks = ?6";
  sql += " ORDER BY d.start_time, d.id, r.rowid";
  Stmt s(db_, sql, path_);
  if (!q.op.empty()) s.bind(1, q.op);
  if (q.bytes) s.bind(2, static_cast<std::int64_t>(q.bytes));
  if (!q.cluster.empty()) s.bind(3, q.cluster);
  if (!q.backend.empty()) s.bind(4, q.backend);
  if (!q.dtype.empty()) s.bind(5, q.dtype);
  if (q.nranks) s.bind(6, std::int64_t{q.nranks});
  std::vector<Raw> raws;
  while (s.step()) {
    Raw r;
    r.doc = s.integer(0);
    r.p.content_hash = s.text(1);
    r.p.path = s.text(2);
    r.p.key.cluster = s.text(3);
    r.p.key.backend = s.text(4);
    r.p.key.nranks = static_cast<int>(s.integer(5));
    r.p.key.timing_method = s.text(6);
    r.p.key.simulated = s.integer(7) != 0;
    r.p.start_time = s.text(8);
    r.p.key.op = s.text(9);
    r.p.key.dtype = s.text(10);
    r.p.key.redop = s.text(11);
    r.p.key.bytes = static_cast<std::uint64_t>(s.integer(12));
    r.p.key.in_place = s.integer(13) != 0;
    r.p.key.group = s.text(14);
    r.p.busbw_GBps = s.real(15);
    r.p.time_us_p50 = s.real(16);
    r.p.time_us_p99 = s.real(17);
    r.p.time_us_avg = s.real(18);
    r.p.wrong = s.integer(19);
    raws.push_back(std::move(r));
  }
  std::vector<Point> pts = aggregate(raws);
  if (q.last > 0) {  // the newest N per key
    std::map<Key, int> seen;
    std::vector<Point> kept;
    for (auto it = pts.rbegin(); it != pts.rend(); ++it)
      if (++seen[it->key] <= q.last) kept.push_back(*it);
    pts.assign(kept.rbegin(), kept.rend());
  }
  return pts;
}

std::vector<Point> Db::all_points() { return points(ShowQuery{}); }

std::vector<Input> load_inputs(const std::vector<std::string>& paths, const SweepDocuments& sweep_documents,
                               std::vector<std::string>* notes) {
  std::vector<Input> out;
  for (const std::string& arg : paths) {
    const fs::path p{arg};
    std::error_code ec;
    if (!fs::is_directory(p, ec)) {
      out.push_back(*parse_input(p, true));
      continue;
    }
    if (fs::exists(p / "sweep.json")) {
      if (!sweep_documents) throw UsageError(fmt::format("{}: a sweep directory, not read here", p.string()));
      for (const fs::path& doc : sweep_documents(p)) out.push_back(*parse_input(doc, true));
      continue;
    }
    std::vector<fs::path> files;
    for (fs::recursive_directory_iterator it(p, ec), end; !ec && it != end; it.increment(ec)) {
      if (it->path().extension() != ".json") continue;
      std::error_code link;  // a symlink loop or one that cannot be followed: skipped, and said
      if (it->is_regular_file(link)) files.push_back(it->path());
      else if (link && notes) notes->push_back(fmt::format("{}: skipped: {}", it->path().string(), link.message()));
    }
    if (ec) throw IoError(fmt::format("{}: cannot list the directory: {}", p.string(), ec.message()));
    std::sort(files.begin(), files.end());
    for (const auto& f : files)
      if (auto in = parse_input(f, false)) out.push_back(std::move(*in));
  }
  return out;
}

std::vector<Point> points_of(const Input& in) {
  std::vector<Raw> raws;
  for (const ResultRecord& r : in.doc.results) {
    Raw x;
    x.p.key = Key{cluster_id(in.doc), in.doc.run.backend, in.doc.run.nranks, in.doc.run.timing_method,
                  in.doc.simulated, r.op, r.dtype, r.redop, r.bytes, r.in_place, r.group.value_or("")};
    x.p.start_time = in.doc.run.start_time;
    x.p.path = in.path.string();
    x.p.content_hash = in.content_hash;
    x.p.busbw_GBps = r.busbw_GBps;
    x.p.time_us_p50 = r.time_us.p50;
    x.p.time_us_p99 = r.time_us.p99;
    x.p.time_us_avg = r.time_us.avg;
    x.p.wrong = r.wrong.value_or(0);
    raws.push_back(std::move(x));
  }
  return aggregate(raws);
}

std::string BandRule::text() const {
  return fmt::format("band = median +- max({:g} x 1.4826 x MAD, {:g}% of the median) of the busbw of the newest {} "
                     "comparable runs before the result (same cluster, backend, ranks, timing method, op, dtype, "
                     "redop, bytes, placement, group; simulated never with measured); below: REGRESSION, above: above "
                     "band; fewer than {} runs: cannot judge",
                     k, tolerance * 100, last, min_runs);
}

Judgement judge(const Point& p, const std::vector<double>& history, const BandRule& rule) {
  Judgement j;
  j.point = p;
  j.runs = static_cast<int>(history.size());
  if (j.runs < rule.min_runs) {
    j.reason = fmt::format("only {} comparable run{} (need {})", j.runs, j.runs == 1 ? "" : "s", rule.min_runs);
    return j;
  }
  if (!std::isfinite(p.busbw_GBps)) {
    j.reason = "the result has no busbw";
    return j;
  }
  j.median = median_or_nan(history);
  std::vector<double> dev;
  for (double v : history) dev.push_back(std::fabs(v - j.median));
  const double half = std::max(rule.k * 1.4826 * median_or_nan(dev), rule.tolerance * j.median);
  j.lo = j.median - half;
  j.hi = j.median + half;
  j.verdict = p.busbw_GBps < j.lo   ? Verdict::Regression
              : p.busbw_GBps > j.hi ? Verdict::AboveBand
                                    : Verdict::WithinBand;
  return j;
}

std::vector<Judgement> check(const std::vector<Point>& targets, const std::vector<Point>& all, const BandRule& rule) {
  std::map<Key, std::vector<const Point*>> by_key;  // oldest first, as `all` is
  for (const Point& p : all) by_key[p.key].push_back(&p);
  std::vector<Judgement> out;
  for (const Point& t : targets) {
    if (t.wrong != 0) {
      Judgement j;
      j.point = t;
      j.reason = fmt::format("the result has {} wrong values", t.wrong);
      out.push_back(std::move(j));
      continue;
    }
    std::vector<double> hist;
    const auto it = by_key.find(t.key);
    if (it != by_key.end()) {
      // Before it: a document in the database, the points ahead of it (start time, then the order
      // they were added: start times have whole seconds); another, the ones that started no later.
      const auto& ps = it->second;
      const auto self = std::find_if(ps.begin(), ps.end(), [&](const Point* p) { return p->content_hash == t.content_hash; });
      std::vector<const Point*> before;
      for (auto p = ps.begin(); p != (self != ps.end() ? self : ps.end()); ++p)
        if (self != ps.end() || !(t.start_time < (*p)->start_time)) before.push_back(*p);
      for (auto p = before.rbegin(); p != before.rend() && static_cast<int>(hist.size()) < rule.last; ++p) {
        const Point& h = **p;
        if (h.wrong != 0 || !std::isfinite(h.busbw_GBps)) continue;
        hist.push_back(h.busbw_GBps);
      }
    }
    out.push_back(judge(t, hist, rule));
  }
  return out;
}

std::vector<Point> newest_per_key(const std::vector<Point>& all) {
  std::map<Key, const Point*> newest;
  std::vector<Key> order;
  for (const Point& p : all) {
    if (!newest.count(p.key)) order.push_back(p.key);
    newest[p.key] = &p;
  }
  std::vector<Point> out;
  for (const Key& k : order) out.push_back(*newest[k]);
  return out;
}

}  // namespace railkit::ingest::history
