#include "bench/app.hpp"

#include <unistd.h>

#include <ctime>
#include <iostream>
#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "bench/harness.hpp"
#include "bench/mpi/mpi_session.hpp"
#include "core/atomic_file.hpp"
#include "core/env.hpp"
#include "core/sysinfo.hpp"
#include "core/units.hpp"
#include "core/version.hpp"

namespace railkit::bench {
namespace {

std::string utc_now_iso() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

nlohmann::json options_json(const BenchOptions& o) {
  nlohmann::json colls = nlohmann::json::array();
  for (Coll c : o.colls) colls.push_back(info(c).name);
  return {{"minbytes", o.min_bytes},
          {"maxbytes", o.max_bytes},
          {"stepfactor", o.step_factor},
          {"stepbytes", o.step_bytes},
          {"iters", o.iters},
          {"warmup_iters", o.warmup_iters},
          {"check", o.check_passes},
          {"datatype", info(o.dtype).name},
          {"op", info(o.redop).name},
          {"root", o.root},
          {"average", static_cast<int>(o.average)},
          {"run_cycles", o.run_cycles},
          {"timeout_s", o.timeout_s},
          {"colls", colls},
          {"placement", placement_name(o.placement)}};
}

/// One rank's error as every rank agrees on it: the ranks where `failed` holds print `e`
/// (unless `speak` is false, for a node's other ranks), and every rank exits with its code.
void agree_or_throw(Bootstrap& boot, bool failed, const Error& e, bool speak = true) {
  if (boot.allreduce_max(failed ? 1 : 0) == 0) return;
  if (failed && speak) std::cerr << "railkit-bench: error: " << e.what() << std::endl;
  throw QuietExit(e.code());
}

void write_document(const std::string& path, const ResultsDocument& doc) {
  write_file_atomic(path, dump_results(doc));
}

}  // namespace

std::string version_text() {
  std::string s = fmt::format("railkit-bench {}\nbackends: mpi ({})", kVersion, mpi::library_version());
  return s + "\n";
}

int launcher_rank(char** envp) {
  for (const char* name : {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK", "SLURM_PROCID"}) {
    const std::string v = env_value(envp, name);
    if (!v.empty()) {
      try {
        return std::stoi(v);
      } catch (...) {
        return -1;
      }
    }
  }
  return -1;
}

std::string shell_join(const std::vector<std::string>& argv) {
  std::string out;
  for (const std::string& a : argv) {
    if (!out.empty()) out += ' ';
    const bool plain = !a.empty() && a.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./:=,+@%") == std::string::npos;
    if (plain) {
      out += a;
      continue;
    }
    out += '\'';
    for (char ch : a) out += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
    out += '\'';
  }
  return out;
}

int run_ranks(const BenchOptions& o, Bootstrap& bootstrap, char** envp);

int run_bench(const BenchOptions& o, int* argc, char*** argv, char** envp) {
  if (o.backend == BackendChoice::Nccl)
    throw UnavailableError("--backend nccl: this railkit-bench was built without the NCCL backend (see --version)");

  mpi::Session session(argc, argv, o.timeout_s > 0);
  auto boot = mpi::make_bootstrap(session);
  try {
    return run_ranks(o, *boot, envp);
  } catch (const QuietExit&) {
    throw;
  } catch (const Error& e) {
    // Print before MPI_Finalize: a rank that leaves first can make the launcher kill the others.
    // Errors every rank raises alike (usage) are printed once, by rank 0.
    const bool alike = e.code() == ErrorCode::Usage || e.code() == ErrorCode::Unavailable;
    if (!alike || boot->rank() == 0)
      std::cerr << "railkit-bench: error: " << e.what() << (boot->rank() && !alike ? fmt::format(" [rank {}]", boot->rank()) : "")
                << std::endl;
    throw QuietExit(e.code());
  }
}

int run_ranks(const BenchOptions& o, Bootstrap& bootstrap, char** envp) {
  Bootstrap* boot = &bootstrap;
  const int rank = boot->rank();
  const int nranks = boot->size();

  // Checks that need the rank count or the machine, agreed by every rank before any allocation.
  validate(o, nranks);
  auto comm = mpi::make_communicator();
  if (const std::string why = comm->unsupported_reason(o.dtype, o.redop); !why.empty()) throw UsageError(why);
  const Plan plan = make_plan(o, nranks);
  if (plan.sizes.empty() || plan.buffer_bytes == 0)
    throw UsageError(fmt::format("-e/--maxbytes '{}': every size leaves less than one element per rank", o.max_bytes));
  {
    const std::uint64_t per_rank = 2 * plan.buffer_bytes;
    const std::uint64_t need = per_rank * static_cast<std::uint64_t>(boot->local_size());
    const auto avail = mem_available_bytes(SysRoot{});
    const bool short_of_memory = avail && need > *avail;
    agree_or_throw(*boot, short_of_memory,
                   UsageError(fmt::format("-e/--maxbytes '{}': {} rank{} on {} need{} {} of buffers (2 x {} per rank) but "
                                          "only {:.1f} GiB is available",
                                          o.max_bytes, boot->local_size(), boot->local_size() == 1 ? "" : "s",
                                          boot->hosts()[static_cast<size_t>(rank)], boot->local_size() == 1 ? "s" : "",
                                          format_bytes(need), format_bytes(plan.buffer_bytes),
                                          static_cast<double>(avail.value_or(0)) / (1ull << 30))),
                   boot->local_rank() == 0);
  }
  if (plan.max_count > static_cast<std::uint64_t>(std::numeric_limits<int>::max()))
    throw UsageError(fmt::format("-e/--maxbytes '{}': {} elements exceed MPI's int count", o.max_bytes, plan.max_count));
  if (!o.output_file.empty()) {
    std::string why;
    if (rank == 0) {
      try {
        check_writable(o.output_file, "-J/--output_file");
      } catch (const UsageError& e) {
        why = e.what();
      }
    }
    agree_or_throw(*boot, !why.empty(), UsageError(why));
  }

  ResultsDocument doc;
  RunInfo& run = doc.run;
  run.label = o.label;
  run.backend = comm->name();
  run.backend_version = comm->version();
  run.railkit_version = kVersion;
  run.nranks = nranks;
  run.hosts.clear();
  for (const std::string& h : boot->hosts())
    if (std::find(run.hosts.begin(), run.hosts.end(), h) == run.hosts.end()) run.hosts.push_back(h);
  run.nnodes = static_cast<int>(run.hosts.size());
  run.command = shell_join(o.argv);
  run.env = capture_env(envp, kRecordedEnvPrefixes);
  run.start_time = utc_now_iso();
  run.average = std::string(average_name(o.average));
  run.options = options_json(o);
  ResultsSink sink(doc);

  const std::vector<double> pids = boot->gather_to_root(std::vector<double>{static_cast<double>(::getpid())});
  TableReporter table(std::cout);
  Reporter* reporter = rank == 0 ? &table : nullptr;
  if (reporter) {
    RunHeader h{run, o, {}, plan.notes};
    for (int r = 0; r < nranks; ++r)
      h.ranks.push_back({r, static_cast<int>(pids[static_cast<size_t>(r)]), boot->hosts()[static_cast<size_t>(r)]});
    reporter->run_start(h);
  }

  Watchdog wd(*boot, o.timeout_s, [&](const TimeoutReport& rep) {
    ResultsDocument d = sink.snapshot();
    d.summary.complete = false;
    nlohmann::json ranks = nlohmann::json::array();
    for (const RankState& s : rep.ranks)
      ranks.push_back({{"rank", s.rank}, {"host", s.host}, {"state", s.state}, {"ops_entered", s.seq},
                       {"phase", s.at.phase}, {"bytes", s.at.bytes}, {"iteration", s.at.iteration},
                       {"in_place", s.at.in_place}, {"waited_s", s.waited_s}});
    d.error = ErrorRecord{std::string(error_code_name(ErrorCode::Timeout)), exit_code(ErrorCode::Timeout), rep.message,
                          {{"timeout_s", rep.timeout_s},
                           {"phase", rep.at.phase},
                           {"bytes", rep.at.bytes},
                           {"iteration", rep.at.iteration},
                           {"in_place", rep.at.in_place},
                           {"not_arrived", rep.not_arrived},
                           {"ranks", ranks}}};
    if (reporter) reporter->run_end(d);
    std::cerr << "railkit-bench: error: " << rep.message << std::endl;
    if (!o.output_file.empty()) write_document(o.output_file, d);
  });

  Harness harness(o, *boot, *comm, wd, sink, reporter);
  std::int64_t wrong = 0;
  try {
    wrong = harness.run(plan);
  } catch (const Error& e) {
    // Record what was measured and why the run stopped, then end every rank.
    if (rank == 0) {
      ResultsDocument d = sink.snapshot();
      d.summary.complete = false;
      d.error = ErrorRecord{std::string(error_code_name(e.code())), exit_code(e.code()), e.what(), nlohmann::json::object()};
      if (reporter) reporter->run_end(d);
      if (!o.output_file.empty()) write_document(o.output_file, d);
    }
    std::cerr << "railkit-bench: error: " << e.what() << (rank ? fmt::format(" [rank {}]", rank) : "") << std::endl;
    MPI_Abort(MPI_COMM_WORLD, exit_code(e.code()));
    return exit_code(e.code());
  }

  // Per-rank facts for the document: peak memory of every rank.
  std::vector<double> rss;
  wd.enter(OpPoint{"gather ranks", 0, -1, false});
  rss = boot->gather_to_root(std::vector<double>{static_cast<double>(peak_rss_bytes(SysRoot{}).value_or(0))});
  wd.leave();
  if (rank == 0) {
    ResultsDocument d = sink.snapshot();
    nlohmann::json ranks = nlohmann::json::array();
    for (int r = 0; r < nranks; ++r)
      ranks.push_back({{"rank", r},
                       {"host", boot->hosts()[static_cast<size_t>(r)]},
                       {"pid", static_cast<std::int64_t>(pids[static_cast<size_t>(r)])},
                       {"peak_rss_bytes", static_cast<std::uint64_t>(rss[static_cast<size_t>(r)])}});
    d.observed["ranks"] = ranks;
    d.observed["buffer_bytes"] = plan.buffer_bytes;
    reporter->run_end(d);
    if (!o.output_file.empty()) write_document(o.output_file, d);
  }
  boot->barrier();
  return wrong > 0 ? exit_code(ErrorCode::DataError) : 0;
}

}  // namespace railkit::bench
