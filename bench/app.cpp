#include "bench/app.hpp"

#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <limits>
#include <optional>
#include <ctime>
#include <iostream>
#include <filesystem>
#include <set>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "bench/harness.hpp"
#include "bench/lone_bootstrap.hpp"
#if RAILKIT_HAVE_MPI
#include "bench/mpi/mpi_session.hpp"
#endif
#if RAILKIT_HAVE_NCCL
#include "bench/nccl/nccl_backend.hpp"
#endif
#include "core/atomic_file.hpp"
#include "core/clock.hpp"
#include "core/nccl_log.hpp"
#include "core/env.hpp"
#include "core/sysinfo.hpp"
#include "core/units.hpp"
#include "core/version.hpp"

namespace railkit::bench {
namespace {

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
          {"placement", placement_name(o.placement)},
          {"split", split_name(o.split)},
          {"ranks_per_node", o.ranks_per_node},
          {"ngpus", o.gpus_per_process},
          {"cudagraph", o.graph_launches},
          {"nonblocking", o.nonblocking}};
}

/// Every rank learns whether any rank met a problem before anything collective (a GPU range, a
/// backend that resolves differently, memory): rank 0 prints the first failing rank's message
/// (naming the rank, and how many others failed) and every rank throws QuietExit with one code.
void agree(Bootstrap& boot, const std::optional<Error>& mine) {
  const std::int64_t code = boot.allreduce_max(mine ? exit_code(mine->code()) : 0);
  if (code == 0) return;
  const std::vector<std::string> texts = boot.gather_text_to_root(mine ? std::string(mine->what()) : std::string());
  if (boot.rank() == 0) {
    int first = -1, failed = 0;
    for (size_t r = 0; r < texts.size(); ++r)
      if (!texts[r].empty() && failed++ == 0) first = static_cast<int>(r);
    std::string line = first >= 0 ? texts[static_cast<size_t>(first)] : "a rank failed without a message";
    if (boot.size() > 1) line += fmt::format(" [rank {}{}]", first, failed > 1 ? fmt::format(" and {} other{}", failed - 1, failed > 2 ? "s" : "") : "");
    print_error_line(line);
  }
  throw QuietExit(static_cast<ErrorCode>(code));
}

/// Runs `check` on this rank and agrees on its outcome with every other rank (see agree).
template <typename F>
void agreed(Bootstrap& boot, F&& check) {
  std::optional<Error> problem;
  try {
    check();
  } catch (const Error& e) {
    problem = e;
  }
  agree(boot, problem);
}

/// --observe on the nccl backend: NCCL logs INIT,NET,GRAPH at INFO into a file of this rank's,
/// unless the user chose NCCL_DEBUG* themselves. Returns the file NCCL will write. Must run
/// before NCCL reads its environment (communicator creation).
std::string arrange_nccl_log(char** envp) {
  std::string file = env_value(envp, "NCCL_DEBUG_FILE");
  if (env_value(envp, "NCCL_DEBUG").empty()) ::setenv("NCCL_DEBUG", "INFO", 1);
  if (env_value(envp, "NCCL_DEBUG_SUBSYS").empty()) ::setenv("NCCL_DEBUG_SUBSYS", "INIT,NET,GRAPH", 1);
  char host[256] = {};
  ::gethostname(host, sizeof host - 1);
  if (file.empty()) {
    file = (std::filesystem::temp_directory_path() / fmt::format("railkit-nccl.{}.{}.log", host, ::getpid())).string();
    ::setenv("NCCL_DEBUG_FILE", file.c_str(), 1);
  }
  // NCCL expands %h (host) and %p (pid) in the file name.
  std::string expanded;
  for (size_t i = 0; i < file.size(); ++i) {
    if (file[i] == '%' && i + 1 < file.size() && (file[i + 1] == 'h' || file[i + 1] == 'p')) {
      expanded += file[i + 1] == 'h' ? std::string(host) : std::to_string(::getpid());
      ++i;
    } else {
      expanded += file[i];
    }
  }
  return expanded;
}

/// What NCCL did, from every rank's log (gathered to rank 0), with contradictions against
/// the environment as warnings. Collective; returns null JSON on ranks other than 0.
nlohmann::json observe_nccl(Bootstrap& boot, const std::string& log_file, const std::map<std::string, std::string>& env,
                            bool several_gpus) {
  std::string text;
  if (!log_file.empty()) {
    try {
      text = read_file(log_file);
    } catch (const Error&) {
      text.clear();  // no log: reported below as no lines
    }
  }
  const std::vector<std::string> texts = boot.gather_text_to_root(text);
  if (boot.rank() != 0) return nullptr;
  NcclLogSummary all;
  bool first = true;
  for (size_t r = 0; r < texts.size(); ++r) {
    std::istringstream in(texts[r]);
    // With -g N a process's log holds its N ranks' lines.
    const std::string source = several_gpus ? fmt::format("process {}", r) : fmt::format("rank {}", r);
    const NcclLogSummary one = parse_nccl_log(in, source);
    if (first) all = one;
    else merge_nccl_log(all, one);
    first = false;
  }
  nlohmann::json j = to_json(all);
  for (const std::string& w : nccl_log_contradictions(all, env)) j["warnings"].push_back(w);
  return j;
}

}  // namespace

void print_error_line(const std::string& message, int rank_suffix) {
  std::string line = "railkit-bench: error: " + message;
  if (rank_suffix > 0) line += fmt::format(" [rank {}]", rank_suffix);
  line += '\n';
  std::fflush(stdout);
  const char* p = line.data();
  size_t left = line.size();
  while (left > 0) {
    const ssize_t n = ::write(STDERR_FILENO, p, left);
    if (n <= 0) break;
    p += n;
    left -= static_cast<size_t>(n);
  }
}

std::string version_text() {
  std::vector<std::string> backends;
#if RAILKIT_HAVE_MPI
  backends.push_back(fmt::format("mpi ({})", mpi::library_version()));
#else
  backends.push_back("no mpi (built without MPI: one process, no launcher)");
#endif
#if RAILKIT_HAVE_NCCL
  backends.push_back(fmt::format("nccl ({})", nccl::version_text()));
#endif
  std::string s = fmt::format("railkit-bench {}\nbackends: ", kVersion);
  for (size_t i = 0; i < backends.size(); ++i) s += (i ? ", " : "") + backends[i];
  return s + "\n";
}


namespace {

/// The backend this rank resolves --backend to: true for nccl. The only place, with
/// make_backend, that knows which backends are compiled in. Throws UnavailableError for a
/// backend that is not built or, for nccl, has no usable GPU here.
bool resolve_backend(const BenchOptions& o) {
#if RAILKIT_HAVE_NCCL
  const std::string no_gpu = nccl::unusable_gpu_reason();
  if (o.backend == BackendChoice::Nccl && !no_gpu.empty()) throw UnavailableError("--backend nccl: " + no_gpu);
  if (o.backend == BackendChoice::Nccl || (o.backend == BackendChoice::Auto && no_gpu.empty())) return true;
#else
  if (o.backend == BackendChoice::Nccl)
    throw UnavailableError("--backend nccl: this railkit-bench was built without the NCCL backend (see --version)");
  const std::string no_gpu = "built without the NCCL backend";
#endif
#if RAILKIT_HAVE_MPI
  return false;
#else
  throw UnavailableError(fmt::format("--backend {}: this railkit-bench was built without MPI and {} ({})",
                                     o.backend == BackendChoice::Mpi ? "mpi" : "auto",
                                     o.backend == BackendChoice::Mpi ? "has no mpi backend" : "found no usable GPU",
                                     no_gpu));
#endif
}

/// GPU ranks each process drives: -g on the nccl backend. Above 1 is a usage error on the mpi
/// backend (one rank per process) and with --split (which groups processes).
int slots_per_process(const BenchOptions& o, bool use_nccl) {
  if (o.gpus_per_process == 1) return 1;
  if (!use_nccl)
    throw UsageError(fmt::format("-g/--ngpus '{}': only one GPU per process on the mpi backend (several GPUs "
                                 "per process need --backend nccl); launch one rank per GPU",
                                 o.gpus_per_process));
  if (o.split.mode != SplitMode::None)
    throw UsageError(fmt::format("-g/--ngpus '{}' with --split {}: a split groups whole processes; launch one "
                                 "rank per GPU to split",
                                 o.gpus_per_process, split_name(o.split)));
  return o.gpus_per_process;
}

#if RAILKIT_HAVE_NCCL
nccl::NcclSetup nccl_setup(const BenchOptions& o, const Bootstrap& boot, AbortSignal* signal) {
  nccl::NcclSetup setup;
  setup.local_rank = boot.local_rank();
  setup.device = o.device;
  setup.gpus = o.gpus_per_process;
  setup.blocking = !o.nonblocking;
  setup.poll_timeout_s = o.timeout_s;
  setup.signal = signal;
  return setup;
}
#endif

/// The data-plane backend on this rank's group (`color`). Collective.
std::unique_ptr<Communicator> make_backend(const BenchOptions& o, Bootstrap& boot, int color, bool use_nccl,
                                           AbortSignal& signal) {
#if RAILKIT_HAVE_NCCL
  if (use_nccl) {
    const std::unique_ptr<Bootstrap> group = boot.split(color);
    return nccl::make_communicator(nccl_setup(o, boot, &signal), *group);
  }
#else
  (void)o, (void)use_nccl, (void)signal;
#endif
#if RAILKIT_HAVE_MPI
  (void)boot;
  return mpi::make_communicator(color);
#else
  (void)boot, (void)color;
  throw UnavailableError("this railkit-bench was built without MPI: no mpi backend");
#endif
}

std::string backend_version(bool use_nccl) {
#if RAILKIT_HAVE_NCCL
  if (use_nccl) return nccl::version_text();
#else
  (void)use_nccl;
#endif
#if RAILKIT_HAVE_MPI
  return mpi::library_version();
#else
  return {};
#endif
}

/// What this rank resolved, agreed by every rank.
struct Resolved {
  bool use_nccl = false;
  int slots = 1;  ///< GPU ranks per process (-g)
};

/// Resolves the backend and -g on every rank, checks what only this rank can see (a usable
/// GPU, its GPU range), and agrees: every rank goes on, or every rank exits with the first
/// failing rank's message printed once. A backend that resolves differently is refused too.
Resolved agree_on_setup(const BenchOptions& o, Bootstrap& boot) {
  Resolved r;
  agreed(boot, [&] {
    r.use_nccl = resolve_backend(o);
    r.slots = slots_per_process(o, r.use_nccl);
#if RAILKIT_HAVE_NCCL
    if (r.use_nccl) nccl::check_setup(nccl_setup(o, boot, nullptr));
#endif
  });
  const std::int64_t on_nccl = boot.allreduce_sum(r.use_nccl ? 1 : 0);
  if (on_nccl != 0 && on_nccl != boot.size())
    throw UsageError(fmt::format("--backend {}: {} of {} processes chose nccl (a usable GPU) and the others mpi; "
                                 "every rank must run the same backend: pass --backend nccl or --backend mpi",
                                 o.backend == BackendChoice::Auto ? "auto" : "(per rank)", on_nccl, boot.size()));
  return r;
}

/// Lines joined, each ended by a newline (for device names, which hold none).
std::string join_lines(const std::vector<std::string>& lines) {
  std::string out;
  for (const std::string& l : lines) out += l + '\n';
  return out;
}

std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

/// Ranks of this launch according to the launcher's environment (1 when none says).
[[maybe_unused]] int launcher_size(char** envp) {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMIX_SIZE", "PMI_SIZE", "SLURM_NTASKS"}) {
    const std::string v = env_value(envp, name);
    if (!v.empty()) {
      try {
        return std::stoi(v);
      } catch (...) {
        return 1;
      }
    }
  }
  return 1;
}

/// The checks of the run's shape that need the rank count and the plan, agreed by every rank.
Plan agree_on_plan(const BenchOptions& o, Bootstrap& boot, const Resolved& res, int group_size) {
  const int slots = res.slots;
  if (o.root >= group_size)
    throw UsageError(fmt::format("-r/--root '{}': the groups of --split {} have only {} ranks", o.root,
                                 split_name(o.split), group_size));
  Plan plan = make_plan(o, group_size);
  if (plan.sizes.empty() || plan.buffer_bytes == 0)
    throw UsageError(fmt::format("-e/--maxbytes '{}': every size leaves less than one element per rank", o.max_bytes));
  agreed(boot, [&] {
    const int local_ranks = boot.local_size() * slots;
    const std::uint64_t need = 2 * plan.buffer_bytes * static_cast<std::uint64_t>(local_ranks);
    const auto avail = mem_available_bytes(SysRoot{});
    if (avail && need > *avail)
      throw UsageError(fmt::format("-e/--maxbytes '{}': {} rank{} on {} need{} {} of buffers (2 x {} per rank) but "
                                   "only {:.1f} GiB is available",
                                   o.max_bytes, local_ranks, local_ranks == 1 ? "" : "s",
                                   boot.hosts()[static_cast<size_t>(boot.rank())], local_ranks == 1 ? "s" : "",
                                   format_bytes(need), format_bytes(plan.buffer_bytes),
                                   static_cast<double>(*avail) / (1ull << 30)));
  });
  if (!res.use_nccl && plan.max_count > static_cast<std::uint64_t>(std::numeric_limits<int>::max()))
    throw UsageError(fmt::format("-e/--maxbytes '{}': {} elements exceed MPI's int count", o.max_bytes, plan.max_count));
  agreed(boot, [&] {
    if (!o.output_file.empty() && boot.rank() == 0) check_writable(o.output_file, "-J/--output_file");
  });
  return plan;
}

/// The run's description for the results document, known before any communicator exists.
RunInfo make_run_info(const BenchOptions& o, const Bootstrap& boot, bool use_nccl, int data_ranks,
                      const std::vector<Group>& groups) {
  RunInfo run;
  run.label = o.label;
  run.backend = use_nccl ? "nccl" : "mpi";
  run.backend_version = backend_version(use_nccl);
  run.railkit_version = kVersion;
  run.nranks = data_ranks;
  for (const std::string& h : boot.hosts())
    if (std::find(run.hosts.begin(), run.hosts.end(), h) == run.hosts.end()) run.hosts.push_back(h);
  run.nnodes = static_cast<int>(run.hosts.size());
  run.command = shell_join(o.argv);
  run.env = capture_env(environ, kRecordedEnvPrefixes);  // after --observe's NCCL_DEBUG settings
  run.start_time = utc_now_iso();
  run.average = std::string(average_name(o.average));
  run.options = options_json(o);
  if (o.split.mode != SplitMode::None) {
    nlohmann::json gs = nlohmann::json::array();
    for (const Group& g : groups) {
      nlohmann::json hosts = nlohmann::json::array();
      for (int r : g.ranks) hosts.push_back(boot.hosts()[static_cast<size_t>(r)]);
      gs.push_back({{"name", g.name}, {"ranks", g.ranks}, {"hosts", hosts}});
    }
    run.split = {{"mode", split_name(o.split)},
                 {"ranks_per_node", o.ranks_per_node > 0 ? nlohmann::json(o.ranks_per_node) : nlohmann::json(nullptr)},
                 {"groups", gs}};
  }
  return run;
}

/// The error record of a watchdog timeout.
ErrorRecord timeout_record(const TimeoutReport& rep) {
  nlohmann::json ranks = nlohmann::json::array();
  for (const RankState& s : rep.ranks)
    ranks.push_back({{"rank", s.rank}, {"host", s.host}, {"state", s.state}, {"ops_entered", s.seq},
                     {"phase", s.at.phase}, {"bytes", s.at.bytes}, {"iteration", s.at.iteration},
                     {"in_place", s.at.in_place}, {"waited_s", s.waited_s}});
  return ErrorRecord{std::string(error_code_name(ErrorCode::Timeout)), exit_code(ErrorCode::Timeout), rep.message,
                     {{"timeout_s", rep.timeout_s},
                      {"phase", rep.at.phase},
                      {"bytes", rep.at.bytes},
                      {"iteration", rep.at.iteration},
                      {"in_place", rep.at.in_place},
                      {"not_arrived", rep.not_arrived},
                      {"ranks", ranks}}};
}

/// Every data rank's pid, host and device, gathered to rank 0 (one entry per GPU rank with -g).
struct RankFacts {
  std::vector<double> pids;            ///< per process
  std::vector<std::string> devices;    ///< per data rank
};

RankFacts gather_rank_facts(Bootstrap& boot, const Communicator& comm, int slots) {
  RankFacts f;
  f.pids = boot.gather_to_root(std::vector<double>{static_cast<double>(::getpid())});
  std::vector<std::string> mine;
  for (int k = 0; k < slots; ++k) mine.push_back(comm.device(k));
  for (const std::string& text : boot.gather_text_to_root(join_lines(mine))) {
    std::vector<std::string> lines = split_lines(text);
    lines.resize(static_cast<size_t>(slots));
    f.devices.insert(f.devices.end(), lines.begin(), lines.end());
  }
  return f;
}

/// The run's end on rank 0: observed facts, the footer and the final document.
void finish_document(ResultsSink& sink, Reporter& reporter, const Bootstrap& boot, const RankFacts& facts,
                     const std::vector<double>& rss, int slots, const Plan& plan, const nlohmann::json& backend_facts,
                     const nlohmann::json& observed_nccl) {
  ResultsDocument d = sink.snapshot();
  if (!observed_nccl.is_null()) {
    d.observed["nccl"] = observed_nccl;
    for (const auto& w : observed_nccl.value("warnings", nlohmann::json::array())) {
      d.observed["warnings"].push_back(w);
      std::cout << "# warning: " << w.get<std::string>() << "\n";
    }
  }
  nlohmann::json ranks = nlohmann::json::array();
  for (size_t r = 0; r < facts.devices.size(); ++r) {
    const size_t p = r / static_cast<size_t>(slots);
    ranks.push_back({{"rank", r},
                     {"host", boot.hosts()[p]},
                     {"pid", static_cast<std::int64_t>(facts.pids[p])},
                     {"peak_rss_bytes", static_cast<std::uint64_t>(rss[p])},
                     {"device", facts.devices[r]}});
  }
  d.observed["ranks"] = ranks;
  d.observed["buffer_bytes"] = plan.buffer_bytes;
  d.observed["backend"] = backend_facts;
  reporter.run_end(d);
  sink.write(d);
}

}  // namespace

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
#if RAILKIT_HAVE_MPI
  mpi::Session session(argc, argv, o.timeout_s > 0);
  auto boot = mpi::make_bootstrap(session);
#else
  (void)argc, (void)argv;
  if (const int n = launcher_size(envp); n > 1)
    throw UnavailableError(fmt::format("this railkit-bench was built without MPI and runs as one process, but the "
                                       "launcher started {} (drive several GPUs from one process with -g N)", n));
  auto boot = make_lone_bootstrap();
#endif
  try {
    return run_ranks(o, *boot, envp);
  } catch (const QuietExit&) {
    throw;
  } catch (const Error& e) {
    // Print before MPI_Finalize: a rank that leaves first can make the launcher kill the others.
    // Errors every rank raises alike (usage) are printed once, by rank 0.
    const bool alike = e.code() == ErrorCode::Usage || e.code() == ErrorCode::Unavailable;
    if (!alike || boot->rank() == 0)
      print_error_line(e.what(), boot->rank() && !alike ? boot->rank() : -1);
    throw QuietExit(e.code());
  }
}

int run_ranks(const BenchOptions& o, Bootstrap& bootstrap, char** envp) {
  Bootstrap* boot = &bootstrap;
  const int rank = boot->rank();
  const int nranks = boot->size();

  // Checks that need the rank count or the machine, agreed by every rank before anything
  // collective or any allocation.
  validate(o, nranks);
  const Resolved res = agree_on_setup(o, *boot);
  const int slots = res.slots;
  const int data_ranks = nranks * slots;  // ranks of the data plane: process p drives ranks p*slots ..
  // With -g N (no split) the one group holds every GPU rank; node_layout over processes otherwise.
  std::vector<int> node_of_data_rank;
  for (int r = 0; r < data_ranks; ++r)
    node_of_data_rank.push_back(boot->node_of_rank()[static_cast<size_t>(r / slots)]);
  const NodeLayout layout = node_layout(node_of_data_rank, slots == 1 ? o.ranks_per_node : 0);
  const std::vector<Group> groups = make_groups(o.split, layout);
  const int my_group = group_of(groups, rank * slots);
  const int group_size = static_cast<int>(groups.front().ranks.size());
  const Plan plan = agree_on_plan(o, *boot, res, group_size);
  const std::string nccl_log = res.use_nccl && o.observe ? arrange_nccl_log(envp) : std::string();
  ResultsDocument doc;
  doc.run = make_run_info(o, *boot, res.use_nccl, data_ranks, groups);
  ResultsSink sink(std::move(doc), rank == 0 ? o.output_file : std::string());

  // A run that ends early (timeout, error) still prints the footer and leaves the document with
  // everything measured and the reason; rank 0 only. The reporter prints once the header is out.
  TableReporter table(std::cout);
  std::atomic<Reporter*> reporter{nullptr};
  const auto end_early = [&](ErrorRecord why) {
    ResultsDocument d = sink.snapshot();
    d.summary.complete = false;
    d.error = std::move(why);
    if (Reporter* r = reporter.load()) r->run_end(d);
    sink.write(d);
  };
  // The watchdog exists before the communicators: their creation is watched too.
  Watchdog wd(*boot, o.timeout_s, [&](const TimeoutReport& rep) {
    end_early(timeout_record(rep));
    print_error_line(rep.message);
  });

  std::unique_ptr<Communicator> comm;
  std::int64_t wrong = 0;
  RankFacts facts;
  try {
    // A rank of a node that --split nodes: leaves out gets a communicator of its own and measures nothing.
    const int color = my_group >= 0 ? my_group : static_cast<int>(groups.size()) + rank;
    wd.enter(OpPoint{res.use_nccl ? "NCCL communicator init" : "communicator init", 0, -1, false});
    comm = make_backend(o, *boot, color, res.use_nccl, wd.signal());
    wd.leave();
    if (o.graph_launches > 0 && !comm->supports_graphs())
      throw UsageError(fmt::format("-G/--cudagraph '{}': CUDA graphs need the nccl backend (this run uses {})",
                                   o.graph_launches, comm->name()));
    if (const std::string why = comm->unsupported_reason(o.dtype, o.redop); !why.empty()) throw UsageError(why);

    facts = gather_rank_facts(*boot, *comm, slots);
    if (rank == 0) {
      RunHeader h{sink.snapshot().run, o, {}, plan.notes};
      for (int r = 0; r < data_ranks; ++r) {
        const auto p = static_cast<size_t>(r / slots);
        h.ranks.push_back({r, static_cast<int>(facts.pids[p]), boot->hosts()[p], facts.devices[static_cast<size_t>(r)]});
      }
      table.run_start(h);
      reporter.store(&table);
    }
    Harness harness(o, *boot, *comm, groups, wd, sink, rank == 0 ? &table : nullptr);
    wrong = harness.run(plan);
  } catch (const UsageError&) {
    throw;  // alike on every rank, before any measurement: printed once by run_bench
  } catch (const Error& e) {
    // The watchdog asked this thread to stop (or fired while it failed): it reports and exits.
    if (wd.signal().requested()) wd.wait_for_exit();
    // Record what was measured and why the run stopped, then end every rank.
    if (rank == 0)
      end_early(ErrorRecord{std::string(error_code_name(e.code())), exit_code(e.code()), e.what(), nlohmann::json::object()});
    print_error_line(e.what(), rank ? rank : -1);
    boot->abort_job(exit_code(e.code()));
  }

  // Per-rank facts for the document: peak memory of every rank.
  wd.enter(OpPoint{"gather ranks", 0, -1, false});
  const std::vector<double> rss =
      boot->gather_to_root(std::vector<double>{static_cast<double>(peak_rss_bytes(SysRoot{}).value_or(0))});
  wd.leave();
  nlohmann::json backend_facts = nlohmann::json::object();
  for (const auto& [k, v] : comm->facts()) backend_facts[k] = v;
  backend_facts["bootstrap"] = RAILKIT_HAVE_MPI ? "MPI" : "none (one process)";
  // Communicators go before the NCCL log is read (NCCL flushes it then); their teardown is watched.
  wd.enter(OpPoint{"communicator teardown", 0, -1, false});
  comm.reset();
  wd.leave();
  nlohmann::json observed_nccl = nullptr;
  if (res.use_nccl && o.observe) {
    wd.enter(OpPoint{"gather NCCL logs", 0, -1, false});
    observed_nccl = observe_nccl(*boot, nccl_log, sink.snapshot().run.env, slots > 1);
    wd.leave();
  }
  if (rank == 0) finish_document(sink, table, *boot, facts, rss, slots, plan, backend_facts, observed_nccl);
  boot->barrier();
  return wrong > 0 ? exit_code(ErrorCode::DataError) : 0;
}

}  // namespace railkit::bench
