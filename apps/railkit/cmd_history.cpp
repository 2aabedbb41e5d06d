// `railkit history add|show|check|rebuild`: results over time in an SQLite file (ingest/history.hpp).
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "apps/railkit/subcommands.hpp"
#include "core/error.hpp"
#include "core/json_text.hpp"
#include "core/strings.hpp"
#include "core/units.hpp"
#include "ingest/history.hpp"
#include "sweep/inputs.hpp"

namespace railkit::app {
namespace {

namespace fs = std::filesystem;
namespace hist = ingest::history;

/// Flags of `railkit history`, as given.
struct HistoryCli {
  std::string db;
  std::vector<std::string> docs;
  std::vector<std::string> from;
  std::string op, bytes, cluster, backend, dtype;
  int nranks = 0;
  int last = 0;
  std::string format = "table";
  hist::BandRule rule;
};

fs::path db_path(const HistoryCli& c) { return c.db.empty() ? hist::default_db_path() : fs::path(c.db); }

/// The database of show and check, which only read: one that does not exist is an error (exit 6)
/// rather than an empty database created on the way.
fs::path existing_db_path(const HistoryCli& c) {
  const fs::path p = db_path(c);
  std::error_code ec;
  if (!fs::exists(p, ec))
    throw UsageError(fmt::format("history database {}: no such file (railkit history add DOCS... --db {} makes it)",
                                 p.string(), p.string()));
  return p;
}

std::string placement(const hist::Key& k) {
  return std::string(k.in_place ? "in_place" : "out_of_place") + (k.group.empty() ? "" : " group " + k.group);
}

/// load_inputs, with a line on stderr for each file below a directory that it skipped.
std::vector<hist::Input> inputs_of(const std::vector<std::string>& paths) {
  std::vector<std::string> notes;
  auto inputs = hist::load_inputs(paths, sweep::ok_results_documents, &notes);
  for (const auto& n : notes) std::cerr << "railkit history: " << n << "\n";
  return inputs;
}

std::string gbps(double v) { return std::isfinite(v) ? fmt::format("{:.3f}", v) : "-"; }

int run_add(const HistoryCli& c) {
  const auto inputs = inputs_of(c.docs);
  const fs::path path = db_path(c);
  hist::Db db(path);
  hist::AddCount total;
  for (const auto& in : inputs) {
    const hist::AddCount n = db.add(in.doc, in.path, in.content_hash);
    total.documents_added += n.documents_added;
    total.documents_present += n.documents_present;
    total.rows_added += n.rows_added;
  }
  std::cout << fmt::format("{}: {} document{} added ({} results), {} already present\n", path.string(),
                           total.documents_added, total.documents_added == 1 ? "" : "s", total.rows_added,
                           total.documents_present);
  return 0;
}

int run_rebuild(const HistoryCli& c) {
  const fs::path path = db_path(c);
  std::vector<std::string> sources = c.from;
  {
    hist::Db db(path);
    if (sources.empty()) sources = db.document_paths();  // the documents the database names
  }
  std::vector<std::string> present, missing;
  for (const auto& s : sources) (fs::exists(s) ? present : missing).push_back(s);
  const auto inputs = inputs_of(present);  // everything read before the old rows go
  const hist::AddCount total = hist::Db(path).rebuild(inputs);
  for (const auto& m : missing) std::cerr << "railkit history: " << m << ": no longer there, left out\n";
  std::cout << fmt::format("{}: rebuilt from {} document{} ({} results){}\n", path.string(), total.documents_added,
                           total.documents_added == 1 ? "" : "s", total.rows_added,
                           missing.empty() ? "" : fmt::format("; {} missing", missing.size()));
  return 0;
}

int run_show(const HistoryCli& c) {
  hist::ShowQuery q;
  q.op = c.op;
  q.bytes = parse_size_bytes(c.bytes, "--bytes");
  q.cluster = c.cluster;
  q.backend = c.backend;
  q.dtype = c.dtype;
  q.nranks = c.nranks;
  q.last = c.last;
  hist::Db db(existing_db_path(c));
  auto pts = db.points(q);
  if (c.format == "json") {
    nlohmann::ordered_json a = nlohmann::ordered_json::array();
    for (const auto& p : pts)
      a.push_back({{"start_time", p.start_time},
                   {"cluster", p.key.cluster},
                   {"backend", p.key.backend},
                   {"nranks", p.key.nranks},
                   {"timing_method", p.key.timing_method},
                   {"simulated", p.key.simulated},
                   {"op", p.key.op},
                   {"dtype", p.key.dtype},
                   {"redop", p.key.redop},
                   {"bytes", p.key.bytes},
                   {"in_place", p.key.in_place},
                   {"group", p.key.group.empty() ? nlohmann::ordered_json() : nlohmann::ordered_json(p.key.group)},
                   {"busbw_GBps", std::isfinite(p.busbw_GBps) ? nlohmann::ordered_json(p.busbw_GBps) : nullptr},
                   {"time_us_p50", std::isfinite(p.time_us_p50) ? nlohmann::ordered_json(p.time_us_p50) : nullptr},
                   {"wrong", p.wrong},
                   {"document", p.path}});
    std::cout << json_dump(a, 2) << "\n";
    return 0;
  }
  if (c.format == "csv") {
    std::cout << "start_time,cluster,backend,nranks,timing_method,simulated,op,dtype,redop,bytes,placement,group,"
                 "busbw_GBps,time_us_p50,document\n";
    const auto csv = [](const std::string& text) {
      const std::string s = terminal_field(text);  // from documents: no escape reaches a terminal
      if (s.find_first_of(",\"\n") == std::string::npos) return s;
      std::string quoted = "\"";
      for (char ch : s) quoted += ch == '"' ? std::string("\"\"") : std::string(1, ch);
      return quoted + "\"";
    };
    for (const auto& p : pts)
      std::cout << fmt::format("{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n", p.start_time, csv(p.key.cluster),
                               csv(p.key.backend), p.key.nranks, p.key.timing_method, p.key.simulated, p.key.op,
                               p.key.dtype, p.key.redop, p.key.bytes, p.key.in_place ? "in_place" : "out_of_place",
                               csv(p.key.group), gbps(p.busbw_GBps), gbps(p.time_us_p50), csv(p.path));
    return 0;
  }
  if (pts.empty()) {
    std::cout << fmt::format("no {} at {} in the history\n", c.op, format_bytes(q.bytes));
    return 0;
  }
  std::stable_sort(pts.begin(), pts.end(), [](const auto& x, const auto& y) { return x.key < y.key; });  // a block per key
  hist::Key shown;
  bool first = true;
  for (const auto& p : pts) {
    hist::Key k = p.key;
    if (first || !(k == shown)) {  // a heading per key
      if (!first) std::cout << "\n";
      // every field from documents: no escape reaches a terminal
      std::cout << terminal_field(fmt::format("{} {} {} {} {}: {} {} ranks, {}{}", k.op, k.dtype, k.redop,
                                              format_bytes(k.bytes), placement(k), k.cluster, k.nranks, k.backend,
                                              (k.timing_method == "back_to_back" ? "" : ", " + k.timing_method) +
                                                  (k.simulated ? ", simulated" : "")))
                << "\n";
      std::cout << fmt::format("  {:<24} {:>12} {:>14}  {}\n", "start (UTC)", "busbw GB/s", "time p50 us", "document");
      shown = k;
      first = false;
    }
    std::cout << fmt::format("  {:<24} {:>12} {:>14}  {}{}\n", terminal_field(p.start_time), gbps(p.busbw_GBps),
                             gbps(p.time_us_p50), terminal_field(p.path),
                             p.wrong != 0 ? fmt::format("  ({} wrong values)", p.wrong) : "");
  }
  return 0;
}

int run_check(const HistoryCli& c) {
  hist::Db db(existing_db_path(c));
  const auto all = db.all_points();
  std::vector<hist::Point> targets;
  if (c.docs.empty()) {
    targets = hist::newest_per_key(all);
  } else {
    for (const auto& in : inputs_of(c.docs))
      for (auto& p : hist::points_of(in)) targets.push_back(std::move(p));
  }
  const auto js = hist::check(targets, all, c.rule);
  std::cout << "rule: " << c.rule.text() << "\n";
  int regressions = 0, above = 0, within = 0, unjudged = 0;
  for (const auto& j : js) {
    const auto& k = j.point.key;
    const std::string what = terminal_field(fmt::format("{} {} {} {} {} ({} {} ranks, {}{}) {}", k.op, k.dtype, k.redop,
                                                        format_bytes(k.bytes), placement(k), k.cluster, k.nranks,
                                                        k.backend, k.simulated ? ", simulated" : "", j.point.path));
    switch (j.verdict) {
      case hist::Verdict::Regression:
        ++regressions;
        std::cout << fmt::format("REGRESSION  {}: busbw {} GB/s below the band {:.3f}..{:.3f} (median {:.3f} of {} runs)\n",
                                 what, gbps(j.point.busbw_GBps), j.lo, j.hi, j.median, j.runs);
        break;
      case hist::Verdict::AboveBand:
        ++above;
        std::cout << fmt::format("above band  {}: busbw {} GB/s above {:.3f}..{:.3f} (median {:.3f} of {} runs)\n", what,
                                 gbps(j.point.busbw_GBps), j.lo, j.hi, j.median, j.runs);
        break;
      case hist::Verdict::WithinBand:
        ++within;
        std::cout << fmt::format("within band {}: busbw {} GB/s in {:.3f}..{:.3f} (median {:.3f} of {} runs)\n", what,
                                 gbps(j.point.busbw_GBps), j.lo, j.hi, j.median, j.runs);
        break;
      case hist::Verdict::CannotJudge:
        ++unjudged;
        std::cout << fmt::format("cannot judge {}: {}\n", what, terminal_field(j.reason));
        break;
    }
  }
  std::cout << fmt::format("{} result{}: {} regression{}, {} above band, {} within band, {} not judged\n", js.size(),
                           js.size() == 1 ? "" : "s", regressions, regressions == 1 ? "" : "s", above, within, unjudged);
  return regressions > 0 ? exit_code(ErrorCode::CheckFailed) : 0;
}

void add_db(CLI::App& sub, HistoryCli& c) {
  sub.add_option("--db", c.db,
                 "history database (SQLite; default $XDG_DATA_HOME/railkit/history.sqlite, else "
                 "~/.local/share/railkit/history.sqlite)");
}

}  // namespace

std::function<int()> setup_history(CLI::App& app) {
  auto c = std::make_shared<HistoryCli>();
  app.require_subcommand(1);

  CLI::App* add = app.add_subcommand(
      "add", "add results documents and sweep directories (their finished launches); a document already there "
             "(same content hash) is not added twice");
  add_db(*add, *c);
  add->add_option("docs", c->docs, "results documents, sweep directories, directories of documents")->required();

  CLI::App* show = app.add_subcommand("show", "the runs of one collective and size over time, per comparable key");
  add_db(*show, *c);
  show->add_option("--op", c->op, "collective: all_reduce, all_gather, ...")->required();
  show->add_option("--bytes", c->bytes, "size per rank as railkit-bench -b takes it (1G = 1 GiB)")->required();
  show->add_option("--cluster", c->cluster, "only this cluster (as show prints it: hosts:a,b or sim:<hash>)");
  show->add_option("--backend", c->backend, "only this backend (mpi, nccl, sim)");
  show->add_option("--dtype", c->dtype, "only this data type");
  show->add_option("--nranks", c->nranks, "only runs of N ranks")->check(CLI::PositiveNumber);
  show->add_option("--last", c->last, "the newest N runs per key (0 = all)")->check(CLI::NonNegativeNumber);
  show->add_option("--format", c->format, "table | csv | json")
      ->check(CLI::IsMember({"table", "csv", "json"}))
      ->capture_default_str();

  CLI::App* check = app.add_subcommand(
      "check", "judge results against the band of the last comparable runs; exit 10 on a regression");
  add_db(*check, *c);
  check->add_option("docs", c->docs,
                    "results documents or sweep directories to judge (default: the newest run of every key in the "
                    "database)");
  check->add_option("--last", c->rule.last, "compare with the newest N comparable runs")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  check->add_option("--min-runs", c->rule.min_runs, "fewer comparable runs: cannot judge")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  check->add_option("--k", c->rule.k, "band half-width in robust standard deviations (1.4826 x MAD)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  check->add_option("--tolerance", c->rule.tolerance, "least band half-width, a fraction of the median")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();

  CLI::App* rebuild = app.add_subcommand(
      "rebuild", "recreate the database from the documents (they are the source of truth): those of --from, else "
                 "the ones it names");
  add_db(*rebuild, *c);
  rebuild->add_option("--from", c->from, "results documents, sweep directories, directories of documents");

  return [c, add, show, check, rebuild]() -> int {
    if (add->parsed()) return run_add(*c);
    if (show->parsed()) return run_show(*c);
    if (check->parsed()) return run_check(*c);
    if (rebuild->parsed()) return run_rebuild(*c);
    throw UsageError("history: give add, show, check or rebuild");
  };
}

}  // namespace railkit::app
