// railkit history (ingest/history): schema migrations forward, refusal of a newer schema, idempotent
// adds, the band rule of `history check` on synthetic documents, and two writer processes at once.
#include <cmath>
#include <sqlite3.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <limits>

#include <fmt/format.h>

#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "ingest/history.hpp"
#include "results_util.hpp"
#include "test_util.hpp"

namespace railkit::ingest::history {
namespace {
namespace fs = std::filesystem;

using test::TempDir;

/// A measured all_reduce run at 1 MiB out of place on hosts a,b with this busbw, started at
/// 2026-01-DD.
ResultsDocument run_doc(double busbw, int day, int nranks = 8) {
  ResultsDocument d = test::make_doc("h", {{"all_reduce", 1048576, false, busbw}});
  d.run.hosts = {"b", "a", "b"};
  d.run.nnodes = 2;
  d.run.nranks = nranks;
  d.run.start_time = fmt::format("2026-01-{:02d}T10:00:00Z", day);
  return d;
}

/// Writes `d` to DIR/NAME and reads it back as an input.
Input write_input(const fs::path& dir, const std::string& name, const ResultsDocument& d) {
  write_file_atomic(dir / name, dump_results(d));
  auto in = load_inputs({(dir / name).string()});
  EXPECT_EQ(in.size(), 1u);
  return in.at(0);
}

void raw_exec(sqlite3* db, const std::string& sql) {
  char* err = nullptr;
  ASSERT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err), SQLITE_OK) << (err ? err : "") << "\n" << sql;
}

TEST(History, ClusterIsTheSortedDistinctHostsOrTheSimulatedClusterHash) {
  EXPECT_EQ(cluster_id(run_doc(1, 1)), "hosts:a,b");
  ResultsDocument s = run_doc(1, 1);
  s.simulated = true;
  s.run.sim = {{"cluster_hash", "fnv1a64:00ff"}};
  EXPECT_EQ(cluster_id(s), "sim:fnv1a64:00ff");
}

TEST(History, DefaultPathFollowsXdgDataHome) {
  const char* old = std::getenv("XDG_DATA_HOME");
  const std::string keep = old ? old : "";
  ::setenv("XDG_DATA_HOME", "/x/data", 1);
  EXPECT_EQ(default_db_path(), fs::path("/x/data/railkit/history.sqlite"));
  ::unsetenv("XDG_DATA_HOME");
  ::setenv("HOME", std::getenv("HOME") ? std::getenv("HOME") : "/root", 1);
  EXPECT_EQ(default_db_path(), fs::path(std::getenv("HOME")) / ".local/share/railkit/history.sqlite");
  if (old) ::setenv("XDG_DATA_HOME", keep.c_str(), 1);
}

TEST(History, CreatesTheDatabaseAndItsDirectoriesAtTheCurrentVersion) {
  TempDir tmp;
  const fs::path p = tmp.path / "a" / "b" / "history.sqlite";
  Db db(p);
  EXPECT_TRUE(fs::exists(p));
  EXPECT_EQ(db.schema_version(), kSchemaVersion);
  EXPECT_EQ(migrations().size(), static_cast<std::size_t>(kSchemaVersion));
}

TEST(History, MigratesAVersion1DatabaseForwardKeepingItsRows) {
  TempDir tmp;
  const fs::path p = tmp.path / "old.sqlite";
  {  // a database as railkit with schema version 1 left it: no timing_method column
    sqlite3* raw = nullptr;
    ASSERT_EQ(sqlite3_open(p.c_str(), &raw), SQLITE_OK);
    raw_exec(raw, std::string(migrations()[0]));
    raw_exec(raw, "INSERT INTO meta VALUES('schema_version', '1');"
                  "INSERT INTO documents(id, content_hash, path, cluster, backend, backend_version, nranks, nnodes,"
                  " simulated, label, start_time, added_at) VALUES(7, 'fnv1a64:1', '/old.json', 'hosts:a,b', 'mpi',"
                  " 'v', 8, 2, 0, 'old', '2025-12-01T00:00:00Z', '2025-12-01T00:00:00Z');"
                  "INSERT INTO results VALUES(7, 'all_reduce', 'float', 'sum', 1048576, 0, '', 0, 9.5, 6.3, 10, 10,"
                  " 11, 0);");
    sqlite3_close(raw);
  }
  Db db(p);
  EXPECT_EQ(db.schema_version(), 2);
  const auto pts = db.all_points();
  ASSERT_EQ(pts.size(), 1u);
  EXPECT_EQ(pts[0].key.timing_method, "back_to_back");  // what documents before the key meant
  EXPECT_DOUBLE_EQ(pts[0].busbw_GBps, 9.5);
  EXPECT_EQ(pts[0].path, "/old.json");
  // A run added now is comparable with the migrated one.
  const auto in = write_input(tmp.path, "new.json", run_doc(9.6, 2));
  db.add(in.doc, in.path, in.content_hash);
  EXPECT_EQ(db.all_points().size(), 2u);
  EXPECT_EQ(db.all_points()[0].key, db.all_points()[1].key);
}

TEST(History, ANewerSchemaOrAForeignDatabaseIsRefused) {
  TempDir tmp;
  const fs::path p = tmp.path / "new.sqlite";
  { Db db(p); }
  sqlite3* raw = nullptr;
  ASSERT_EQ(sqlite3_open(p.c_str(), &raw), SQLITE_OK);
  raw_exec(raw, fmt::format("UPDATE meta SET value = '{}' WHERE key = 'schema_version'", kSchemaVersion + 1));
  sqlite3_close(raw);
  try {
    Db db(p);
    FAIL() << "opened a newer database";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("newer than this railkit"), std::string::npos) << e.what();
  }
  const fs::path q = tmp.path / "other.sqlite";
  ASSERT_EQ(sqlite3_open(q.c_str(), &raw), SQLITE_OK);
  raw_exec(raw, "CREATE TABLE t(x)");
  sqlite3_close(raw);
  EXPECT_THROW(Db{q}, UsageError);
}

TEST(History, AFileThatIsNotADatabaseIsRefusedAtOnceAndLeftAlone) {
  // Issue 32: a text file as --db was retried for 10 s (PRAGMA journal_mode=WAL answered
  // SQLITE_NOTADB 200 times), then an I/O error; it is a bad input, said at once.
  TempDir tmp;
  const fs::path p = tmp.path / "notes.txt";
  const std::string text(4096, 'x');
  write_file_atomic(p, text);
  EXPECT_EQ(test::usage_error_of([&] { Db db(p); }),
            "--db '" + p.string() + "': not a railkit history (not an SQLite database)");
  EXPECT_EQ(read_file(p), text);
  ASSERT_EQ(::mkfifo((tmp.path / "fifo").c_str(), 0644), 0);  // SQLite would wait reading it
  EXPECT_EQ(test::usage_error_of([&] { Db db(tmp.path / "fifo"); }),
            "--db '" + (tmp.path / "fifo").string() + "': is a FIFO, not a regular file");
}

TEST(History, AnotherApplicationsMetaTableIsNotAHistory) {
  // Issue 32: a database with a `meta` table of its own passed for a railkit history (then failed
  // inside SQL, exit 9, after switching the file to WAL).
  TempDir tmp;
  const std::pair<const char*, const char*> cases[] = {
      {"CREATE TABLE meta (name TEXT, version INTEGER); INSERT INTO meta VALUES ('schema', 3);",
       "its meta table has the columns name, version, not railkit's key, value"},
      {"CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT); INSERT INTO meta VALUES ('owner', 'x');",
       "its meta table holds no schema_version"},
      {"CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT); INSERT INTO meta VALUES ('schema_version', '1');",
       "no documents table"},
      {"CREATE TABLE t(x)", "an SQLite database without railkit's meta table"},
  };
  int i = 0;
  for (const auto& [sql, why] : cases) {
    const fs::path p = tmp.path / fmt::format("other{}.sqlite", i++);
    sqlite3* raw = nullptr;
    ASSERT_EQ(sqlite3_open(p.c_str(), &raw), SQLITE_OK);
    raw_exec(raw, sql);
    sqlite3_close(raw);
    EXPECT_EQ(test::usage_error_of([&] { Db db(p); }), "--db '" + p.string() + "': not a railkit history (" + why + ")");
    ASSERT_EQ(sqlite3_open(p.c_str(), &raw), SQLITE_OK);
    sqlite3_stmt* s = nullptr;
    ASSERT_EQ(sqlite3_prepare_v2(raw, "PRAGMA journal_mode", -1, &s, nullptr), SQLITE_OK);
    ASSERT_EQ(sqlite3_step(s), SQLITE_ROW);
    EXPECT_STREQ(reinterpret_cast<const char*>(sqlite3_column_text(s, 0)), "delete") << why;  // not made WAL
    sqlite3_finalize(s);
    sqlite3_close(raw);
  }
}

TEST(History, ASymlinkLoopInADirectoryIsSkippedAndSaid) {
  // Issue 32: `history add DIR` with a symlink loop named *.json was an internal error.
  TempDir tmp;
  fs::create_directories(tmp.path / "docs" / "sub");
  write_file_atomic(tmp.path / "docs" / "run.json", dump_results(run_doc(9.5, 1)));
  fs::create_symlink("loop.json", tmp.path / "docs" / "sub" / "loop.json");
  std::vector<std::string> notes;
  const auto in = load_inputs({(tmp.path / "docs").string()}, {}, &notes);
  ASSERT_EQ(in.size(), 1u);
  EXPECT_EQ(in[0].path.filename(), "run.json");
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_EQ(notes[0], (tmp.path / "docs" / "sub" / "loop.json").string() + ": skipped: " +
                          std::error_code(ELOOP, std::generic_category()).message());
}

TEST(History, AFifoGivenAsADocumentIsRefusedNotWaitedOn) {
  TempDir tmp;
  const fs::path fifo = tmp.path / "doc.json";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0644), 0);
  EXPECT_EQ(test::usage_error_of([&] { load_inputs({fifo.string()}); }),
            "input '" + fifo.string() + "': is a FIFO, not a regular file");
}

TEST(History, ImportedLogsKeepWhatTheyDidNotPrintAbsent) {
  // An OSU log without --nranks: no busbw and no p50 printed, no host named.
  TempDir tmp;
  ResultsDocument d = run_doc(10, 1);
  d.run.hosts.clear();
  d.run.backend = "osu";
  d.run.imported = {{"tool", "osu"}, {"file", "/logs/osu_allreduce.log"}, {"format", "osu"}};
  d.run.absent = {"hosts"};
  d.results[0].absent = {"busbw_GBps", "time_us.p50"};
  EXPECT_EQ(cluster_id(d), "unknown:/logs/osu_allreduce.log");  // comparable with no other log
  Db db(tmp.path / "h.sqlite");
  const auto in = write_input(tmp.path, "osu.json", d);
  db.add(in.doc, in.path, in.content_hash);
  const auto pts = db.all_points();
  ASSERT_EQ(pts.size(), 1u);
  EXPECT_TRUE(std::isnan(pts[0].busbw_GBps)) << "absent, not 0";
  EXPECT_TRUE(std::isnan(pts[0].time_us_p50));
  EXPECT_FALSE(std::isnan(pts[0].time_us_avg));
}

TEST(History, AddingTheSameDocumentTwiceAddsItOnce) {
  TempDir tmp;
  Db db(tmp.path / "h.sqlite");
  const auto in = write_input(tmp.path, "r.json", run_doc(10, 1));
  AddCount a = db.add(in.doc, in.path, in.content_hash);
  EXPECT_EQ(a.documents_added, 1);
  EXPECT_EQ(a.rows_added, 1);
  AddCount b = db.add(in.doc, in.path, in.content_hash);
  EXPECT_EQ(b.documents_added, 0);
  EXPECT_EQ(b.documents_present, 1);
  // The same bytes under another name are the same document.
  fs::copy_file(tmp.path / "r.json", tmp.path / "copy.json");
  const auto copy = load_inputs({(tmp.path / "copy.json").string()}).at(0);
  EXPECT_EQ(db.add(copy.doc, copy.path, copy.content_hash).documents_present, 1);
  EXPECT_EQ(db.all_points().size(), 1u);
  EXPECT_EQ(db.document_paths(), std::vector<std::string>{(tmp.path / "r.json").string()});
  // Rebuilt from the documents: the same rows.
  EXPECT_EQ(db.rebuild(load_inputs({tmp.path.string()})).documents_added, 1);  // copy.json: same content
  EXPECT_EQ(db.all_points().size(), 1u);
}

TEST(History, BandRuleFlagsARegressionNotNoiseAndSaysWhenItCannotJudge) {
  TempDir tmp;
  Db db(tmp.path / "h.sqlite");
  const double hist[] = {10.0, 10.2, 9.9, 10.1, 9.8, 10.0};
  for (int i = 0; i < 6; ++i) {
    const auto in = write_input(tmp.path, fmt::format("r{}.json", i), run_doc(hist[i], i + 1));
    db.add(in.doc, in.path, in.content_hash);
  }
  const auto all = db.all_points();
  BandRule rule;  // last 10, min 3, k 3, tolerance 5%
  const auto judge_doc = [&](double busbw, int nranks = 8) {
    const auto in = write_input(tmp.path, "new.json", run_doc(busbw, 20, nranks));
    const auto js = check(points_of(in), all, rule);
    EXPECT_EQ(js.size(), 1u);
    return js.at(0);
  };
  const Judgement reg = judge_doc(7.0);  // a synthetic regression: 30 % below every run
  EXPECT_EQ(reg.verdict, Verdict::Regression);
  EXPECT_EQ(reg.runs, 6);
  EXPECT_DOUBLE_EQ(reg.median, 10.0);
  EXPECT_NEAR(reg.lo, 9.5, 1e-9);  // MAD 0.1 -> 3 x 0.148 = 0.44 < 5 % of 10 = 0.5
  EXPECT_EQ(judge_doc(9.7).verdict, Verdict::WithinBand);
  EXPECT_EQ(judge_doc(11.0).verdict, Verdict::AboveBand);
  const Judgement other = judge_doc(7.0, 16);  // another rank count: nothing comparable
  EXPECT_EQ(other.verdict, Verdict::CannotJudge);
  EXPECT_EQ(other.reason, "only 0 comparable runs (need 3)");

  rule.last = 2;  // the newest 2 runs only: too few
  EXPECT_EQ(judge_doc(7.0).verdict, Verdict::CannotJudge);
  EXPECT_EQ(judge_doc(7.0).reason, "only 2 comparable runs (need 3)");
  rule = BandRule{};

  // Simulated results are never compared with measured ones.
  auto sim = run_doc(7.0, 20);
  sim.simulated = true;
  sim.run.backend = "mpi";
  write_file_atomic(tmp.path / "sim.json", dump_results(sim));
  EXPECT_EQ(check(points_of(load_inputs({(tmp.path / "sim.json").string()}).at(0)), all, rule).at(0).verdict,
            Verdict::CannotJudge);

  // With no documents given: the newest run of each key against the ones before it.
  const auto newest = newest_per_key(all);
  ASSERT_EQ(newest.size(), 1u);
  EXPECT_EQ(newest[0].start_time, "2026-01-06T10:00:00Z");
  const Judgement last = check(newest, all, rule).at(0);
  EXPECT_EQ(last.runs, 5);  // never itself
  EXPECT_EQ(last.verdict, Verdict::WithinBand);
}

TEST(History, RunsStartedInTheSameSecondFollowTheOrderTheyWereAdded) {
  TempDir tmp;
  Db db(tmp.path / "h.sqlite");
  for (int i = 0; i < 4; ++i) {  // start times have whole seconds: quick runs share one
    const auto in = write_input(tmp.path, fmt::format("r{}.json", i), run_doc(10 + 0.01 * i, 1));
    db.add(in.doc, in.path, in.content_hash);
  }
  const auto all = db.all_points();
  const auto js = check(newest_per_key(all), all, BandRule{});
  ASSERT_EQ(js.size(), 1u);
  EXPECT_EQ(js[0].runs, 3);
  EXPECT_EQ(js[0].verdict, Verdict::WithinBand);
  EXPECT_EQ(check({all[1]}, all, BandRule{}).at(0).runs, 1);  // only r0 is ahead of r1
  // A document outside the database that started in that second is judged against all of them.
  const auto out = write_input(tmp.path, "x.json", run_doc(5, 1));
  EXPECT_EQ(check(points_of(out), all, BandRule{}).at(0).verdict, Verdict::Regression);
}

TEST(History, AWideHistoryWidensTheBand) {
  Point p;
  p.busbw_GBps = 8.0;
  BandRule rule;
  // MAD 1 -> 3 x 1.4826 = 4.45 GB/s half-width around 10: 8 is noise here.
  EXPECT_EQ(judge(p, {9, 10, 11, 10, 12, 8}, rule).verdict, Verdict::WithinBand);
  EXPECT_EQ(judge(p, {10, 10, 10}, rule).verdict, Verdict::Regression);
  p.busbw_GBps = std::nan("");
  EXPECT_EQ(judge(p, {10, 10, 10}, rule).verdict, Verdict::CannotJudge);
}

/// Any non-zero wrong count is a wrong result: a negative one (no tool prints one) or INT64_MIN
/// is never summed to 0 or wrapped, and sums past INT64_MAX saturate (UBSan found the overflow).
TEST(History, AnyNonZeroWrongCountIsWrongAndSumsSaturate) {
  TempDir tmp;
  const auto with_wrong = [&](std::vector<std::int64_t> wrongs, int day) {
    ResultsDocument d = run_doc(10.0, day);
    const ResultRecord rec = d.results.at(0);
    d.results.clear();
    for (std::size_t i = 0; i < wrongs.size(); ++i) {  // -N cycles of one key: one point
      d.results.push_back(rec);
      d.results.back().cycle = static_cast<int>(i);
      d.results.back().wrong = wrongs[i];
    }
    return write_input(tmp.path, fmt::format("w{}.json", day), d);
  };
  constexpr auto kMax = std::numeric_limits<std::int64_t>::max();
  EXPECT_EQ(points_of(with_wrong({-5}, 1)).at(0).wrong, 5);
  EXPECT_EQ(points_of(with_wrong({-5, 5}, 2)).at(0).wrong, 10);  // never 0
  EXPECT_EQ(points_of(with_wrong({std::numeric_limits<std::int64_t>::min()}, 3)).at(0).wrong, kMax);
  EXPECT_EQ(points_of(with_wrong({kMax, kMax}, 4)).at(0).wrong, kMax);
  const auto j = check(points_of(with_wrong({-5}, 5)), {}, BandRule{});
  EXPECT_EQ(j.at(0).verdict, Verdict::CannotJudge);
  EXPECT_EQ(j.at(0).reason, "the result has 5 wrong values");
  // In a database: a run with a negative count is no history for the others.
  Db db(tmp.path / "h.sqlite");
  for (int day = 10; day < 13; ++day) {
    const auto in = write_input(tmp.path, fmt::format("c{}.json", day), run_doc(10.0, day));
    db.add(in.doc, in.path, in.content_hash);
  }
  const auto bad = with_wrong({-1}, 13);
  db.add(bad.doc, bad.path, bad.content_hash);
  const auto target = write_input(tmp.path, "t.json", run_doc(10.0, 20));
  EXPECT_EQ(check(points_of(target), db.all_points(), BandRule{}).at(0).runs, 3);
}

TEST(History, TwoWriterProcessesAtOnceBothLand) {
  TempDir tmp;
  const fs::path p = tmp.path / "h.sqlite";
  constexpr int kPerWriter = 25;
  std::vector<Input> inputs[2];
  for (int w = 0; w < 2; ++w)
    for (int i = 0; i < kPerWriter; ++i)
      inputs[w].push_back(write_input(tmp.path, fmt::format("w{}-{}.json", w, i), run_doc(10 + i, 1 + i % 28, 8 + w)));
  pid_t kids[2];
  for (int w = 0; w < 2; ++w) {
    kids[w] = ::fork();
    ASSERT_GE(kids[w], 0);
    if (kids[w] == 0) {  // a separate process with its own connection, creating the file at the same time
      int rc = 0;
      try {
        Db db(p);
        for (const auto& in : inputs[w]) rc |= db.add(in.doc, in.path, in.content_hash).documents_added != 1;
      } catch (const std::exception& e) {
        fprintf(stderr, "writer %d: %s\n", w, e.what());
        rc = 2;
      }
      ::_exit(rc);
    }
  }
  for (pid_t k : kids) {
    int status = 0;
    ASSERT_EQ(::waitpid(k, &status, 0), k);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  }
  Db db(p);
  EXPECT_EQ(db.document_paths().size(), 2u * kPerWriter);
  EXPECT_EQ(db.all_points().size(), 2u * kPerWriter);
}

}  // namespace
}  // namespace railkit::ingest::history
