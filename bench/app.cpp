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
#include "bench/run_document.hpp"
#include "bench/lone_bootstrap.hpp"
#if RAILKIT_HAVE_MPI
#include "bench/mpi/mpi_session.hpp"
#endif
#if RAILKIT_HAVE_NCCL
#include "bench/nccl/nccl_backend.hpp"
#endif
#if RAILKIT_HAVE_SIM
#include "bench/sim/sim_communicator.hpp"
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

int abort_every_rank(int code) {
#if RAILKIT_HAVE_MPI
  mpi::abort_world(code);
#endif
  return code;
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
#if RAILKIT_HAVE_SIM
  backends.push_back(fmt::format("sim ({})", sim::version_text()));
#else
  backends.push_back("no sim (built without ns-3)");
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

/// What this rank resolved, agreed by every rank.
struct Resolved {
  bool use_nccl = false;
  bool use_sim = false;  ///< --backend sim: this one process simulates every rank of the cluster
  int slots = 1;         ///< GPU ranks per process (-g; sim: the cluster's GPUs)
#if RAILKIT_HAVE_SIM
  std::shared_ptr<const sim::SimSetup> sim;  ///< the cluster and NCCL settings, with use_sim
#endif
  std::string backend() const { return use_sim ? "sim" : use_nccl ? "nccl" : "mpi"; }
};

/// --backend sim: loads the cluster and reads the NCCL settings of `envp`, before anything runs
/// (a bad cluster file or NCCL value is a usage error here). Throws UnavailableError when this
/// railkit-bench was built without ns-3.
void resolve_sim(const BenchOptions& o, char** envp, Resolved& r) {
  r.use_sim = true;
#if RAILKIT_HAVE_SIM
  r.sim = std::make_shared<const sim::SimSetup>(sim::prepare(o, sim::nccl_variables(envp)));
  r.slots = r.sim->cluster.gpus();
#else
  (void)o, (void)envp;
  throw UnavailableError("--backend sim: this railkit-bench was built without ns-3, so without the sim backend "
                         "(Debian: libns3-dev libgsl-dev, then reconfigure; see --version)");
#endif
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
std::unique_ptr<Communicator> make_backend(const BenchOptions& o, Bootstrap& boot, int color, const Resolved& res,
                                           AbortSignal& signal) {
#if RAILKIT_HAVE_SIM
  if (res.use_sim) return sim::make_communicator(res.sim);
#endif
  const bool use_nccl = res.use_nccl;
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

std::string backend_version(const Resolved& res) {
#if RAILKIT_HAVE_SIM
  if (res.use_sim) return sim::version_text();
#endif
  const bool use_nccl = res.use_nccl;
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

/// Resolves the backend and -g on every rank, checks what only this rank can see (a usable
/// GPU, its GPU range), and agrees: every rank goes on, or every rank exits with the first
/// failing rank's message printed once. A backend that resolves differently is refused too.
Resolved agree_on_setup(const BenchOptions& o, Bootstrap& boot, char** envp) {
  Resolved r;
  if (o.backend == BackendChoice::Sim) {
    resolve_sim(o, envp, r);  // one process, nothing to agree with
    return r;
  }
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
  if (res.use_sim && o.root >= group_size)
    throw UsageError(fmt::format("-r/--root '{}': the simulated cluster has only {} GPUs (ranks 0..{})", o.root,
                                 group_size, group_size - 1));
  if (o.root >= group_size)
    throw UsageError(fmt::format("-r/--root '{}': the groups of --split {} have only {} ranks", o.root,
                                 split_name(o.split), group_size));
  Plan plan = make_plan(o, group_size);
  if (plan.sizes.empty() || plan.buffer_bytes == 0)
    throw UsageError(fmt::format("-e/--maxbytes '{}': every size leaves less than one element per rank", o.max_bytes));
  agreed(boot, [&] {
    if (res.use_sim) return;  // its buffers are never backed by memory
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
  if (!res.use_nccl && !res.use_sim && plan.max_count > static_cast<std::uint64_t>(std::numeric_limits<int>::max()))
    throw UsageError(fmt::format("-e/--maxbytes '{}': {} elements exceed MPI's int count", o.max_bytes, plan.max_count));
  agreed(boot, [&] {
    if (!o.output_file.empty() && boot.rank() == 0) check_writable(o.output_file, "-J/--output_file");
    if (!o.prom_file.empty() && boot.rank() == 0) {
      check_writable(o.prom_file, "--prom");
      const auto resolved = [](const std::string& p) {  // one that cannot be resolved: as written
        const std::filesystem::path t = write_target(p);
        std::error_code ec;
        const std::filesystem::path c = std::filesystem::weakly_canonical(t, ec);
        return ec ? t.lexically_normal() : c;
      };
      if (!o.output_file.empty() && resolved(o.prom_file) == resolved(o.output_file))
        throw UsageError(fmt::format("--prom '{}' is the file -J/--output_file writes", o.prom_file));
    }
  });
  return plan;
}

/// The groups of the run, in data ranks: with -g N (no split) the one group holds every GPU
/// rank; the split's node layout is over processes otherwise.
std::vector<Group> data_groups(const BenchOptions& o, const Bootstrap& boot, int slots) {
  std::vector<int> node_of_data_rank;
  for (int r = 0; r < boot.size() * slots; ++r)
    node_of_data_rank.push_back(boot.node_of_rank()[static_cast<size_t>(r / slots)]);
  return make_groups(o.split, node_layout(node_of_data_rank, slots == 1 ? o.ranks_per_node : 0));
}

/// What the header shows: one line per data rank with its process's pid, its host and its device,
/// the transport and affinity warnings, and a note when ranks differ in their transport.
RunHeader run_header(const RunInfo& run, const BenchOptions& o, const Plan& plan, const RankFacts& facts, int slots) {
  RunHeader h{run, o, {}, plan.notes, {}, facts.warnings};
  for (size_t r = 0; r < facts.devices.size(); ++r) {
    const size_t p = r / static_cast<size_t>(slots);
    h.ranks.push_back({static_cast<int>(r), static_cast<int>(facts.pids[p]), facts.hosts[r], facts.devices[r]});
  }
  if (!facts.transport.note.empty()) h.notes.push_back(facts.transport.note);
  return h;
}

/// The environment that says who launched this process (infer_launcher), from main's envp:
/// as it was at start, before MPI_Init.
[[maybe_unused]] LauncherGuess launcher_guess(char** envp) {
  std::map<std::string, std::string> env;
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "OMPI_MCA_orte_hnp_uri", "MPI_LOCALNRANKS", "SLURM_STEP_NUM_TASKS",
                           "SLURM_STEP_ID", "SLURM_PROCID", "SLURM_MPI_TYPE", "PMIX_VERSION", "PMI_FD", "PMI_PORT"})
    if (std::string v = env_value(envp, name); !v.empty()) env[name] = std::move(v);
  return infer_launcher(env);
}

/// observed.backend: how the backend measured, and how the ranks found each other.
nlohmann::json how_measured(const Communicator& comm, bool lone) {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& [k, v] : comm.facts()) j[k] = v;
  j["bootstrap"] = RAILKIT_HAVE_MPI && !lone ? "MPI" : "none (one process)";
  return j;
}

/// The options a backend runs with: the sim backend moves no data, so it checks none (-c 0).
BenchOptions effective_options(const BenchOptions& given, const Resolved& res) {
  BenchOptions o = given;
  if (res.use_sim) o.check_passes = 0;
  return o;
}

/// Prints "railkit-bench: warning: <message>" to stderr in one line.
void print_warning_line(const std::string& message) {
  std::fflush(stdout);
  std::cerr << "railkit-bench: warning: " << message << std::endl;
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

/// Runs this rank; sets `alone` once the ranks stopped agreeing (past the agreed checks), from
/// when on an error may be this rank's only.
int run_ranks(const BenchOptions& o, Bootstrap& bootstrap, char** envp, bool& alone);

int run_bench(const BenchOptions& o, int* argc, char*** argv, char** envp) {
  if (o.backend == BackendChoice::Sim) {
    // One process simulates every rank: no launcher, no MPI_Init. main prints what escapes.
    if (const int n = launcher_size(envp); n > 1)
      throw UsageError(fmt::format("--backend sim: one process simulates every rank of --sim-cluster, but the launcher "
                                   "started {}; run railkit-bench once, without mpirun or srun",
                                   n));
    auto boot = make_lone_bootstrap();
    bool alone = false;
    return run_ranks(o, *boot, envp, alone);
  }
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
  // An error that may be this rank's alone while others wait for it in a collective: MPI stays
  // up (finalizing would wait for them too) and main prints the line and aborts every rank.
  const auto on_its_own = [&](ErrorCode code, const std::string& message) {
#if RAILKIT_HAVE_MPI
    session.leave_up();
#endif
    const int rank = boot->rank();
    (void)boot.release();  // its teardown frees communicators others may be using; the job ends
    return RankFailure(code, message, rank);
  };
  bool alone = false;
  try {
    return run_ranks(o, *boot, envp, alone);
  } catch (const QuietExit&) {
    throw;
  } catch (const Error& e) {
    if (alone && boot->size() > 1) throw on_its_own(e.code(), e.what());
    // Print before MPI_Finalize: a rank that leaves first can make the launcher kill the others.
    // Errors every rank raises alike (usage) are printed once, by rank 0.
    const bool alike = e.code() == ErrorCode::Usage || e.code() == ErrorCode::Unavailable;
    if (!alike || boot->rank() == 0)
      print_error_line(e.what(), boot->rank() && !alike ? boot->rank() : -1);
    throw QuietExit(e.code());
  } catch (const std::exception& e) {
    // Not one of railkit's errors: nothing says the other ranks met it too.
    if (boot->size() > 1) throw on_its_own(ErrorCode::Internal, std::string("internal error: ") + e.what());
    throw;
  }
}

int run_ranks(const BenchOptions& given, Bootstrap& bootstrap, char** envp, bool& alone) {
  Bootstrap* boot = &bootstrap;
  const int rank = boot->rank();
  const int nranks = boot->size();

  // Checks that need the rank count or the machine, agreed by every rank before anything
  // collective or any allocation.
  validate(given, nranks);
  const Resolved res = agree_on_setup(given, *boot, envp);
  const BenchOptions o = effective_options(given, res);
  const int slots = res.slots;
  const int data_ranks = nranks * slots;  // ranks of the data plane: process p drives ranks p*slots ..
  const std::vector<Group> groups = data_groups(o, *boot, slots);
  const int my_group = group_of(groups, rank * slots);
  const int group_size = static_cast<int>(groups.front().ranks.size());
  const Plan plan = agree_on_plan(o, *boot, res, group_size);
  alone = true;  // the last agreed check: from here on an error may be this rank's only
  const std::string nccl_log = res.use_nccl && o.observe ? arrange_nccl_log(envp) : std::string();
  ResultsDocument doc;
  doc.run = make_run_info(o, *boot, res.backend(), backend_version(res), data_ranks, groups);
  std::vector<std::string> header_lines;
#if RAILKIT_HAVE_SIM
  if (res.use_sim) {
    // The run is the simulated cluster; the machine that simulated it is run.sim.machine.
    doc.simulated = true;
    doc.run.timing = "simulated";
    doc.run.sim = sim::run_json(*res.sim, boot->hosts().front());
    doc.run.hosts = sim::node_names(res.sim->cluster);
    doc.run.nnodes = res.sim->cluster.nodes();
    if (rank == 0) {
      if (const std::string w = sim::inert_warning(res.sim->nccl); !w.empty()) print_warning_line(w);
    }
  }
#endif
  if (res.use_sim && given.check_passes > 0) header_lines.push_back("-c: the sim backend moves no data: nothing checked");
  ResultsSink sink(std::move(doc), rank == 0 ? o.output_file : std::string(),
                   rank == 0 ? o.prom_file : std::string());

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
    comm = make_backend(o, *boot, color, res, wd.signal());
    wd.leave();
    if (o.graph_launches > 0 && !comm->supports_graphs())
      throw UsageError(fmt::format("-G/--cudagraph '{}': CUDA graphs need the nccl backend (this run uses {})",
                                   o.graph_launches, comm->name()));
    if (const std::string why = comm->unsupported_reason(o.dtype, o.redop); !why.empty()) throw UsageError(why);

    // Where each rank runs (CPUs) and, on the mpi backend, what carries its data (transport).
    std::optional<RankTransport> transport;
#if RAILKIT_HAVE_MPI
    if (!res.use_nccl && !res.use_sim) transport = mpi::probe_transport(rank, boot->hosts(), launcher_guess(envp));
#endif
    facts = gather_rank_facts(*boot, *comm, slots, !res.use_sim, transport);
    if (rank == 0) {
      RunHeader header = run_header(sink.snapshot().run, o, plan, facts, slots);
      header.lines = header_lines;
      table.run_start(header);
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
  const nlohmann::json backend_facts = how_measured(*comm, res.use_sim);
  // A backend that knows what its NCCL did (sim) says so itself, in the shape a log gives.
  nlohmann::json observed_nccl = nullptr;
  if (o.observe && !res.use_nccl) {
    if (const std::optional<NcclLogSummary> summary = comm->observed_nccl()) {
      observed_nccl = to_json(*summary);
      for (const std::string& w : nccl_log_contradictions(*summary, sink.snapshot().run.env))
        observed_nccl["warnings"].push_back(w);
    }
  }
  // Communicators go before the NCCL log is read (NCCL flushes it then); their teardown is watched.
  wd.enter(OpPoint{"communicator teardown", 0, -1, false});
  comm.reset();
  wd.leave();
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
