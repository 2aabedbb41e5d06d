#include "bench/app.hpp"

#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <iostream>
#include <limits>
#include <memory>
#include <optional>
#include <set>
#include <sstream>
#include <string_view>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "bench/backend.hpp"
#include "bench/harness.hpp"
#include "bench/run_document.hpp"
#include "bench/lone_bootstrap.hpp"
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
  if (const BackendEntry* w = world_backend()) w->abort_world(code);
  return code;
}

std::string version_text() {
  std::vector<std::string> backends;
  for (const BackendEntry& e : backend_table()) {
    if (e.built()) backends.push_back(fmt::format("{} ({})", e.name, e.version()));
    else if (!e.absent_version.empty()) backends.emplace_back(e.absent_version);
  }
  std::string s = fmt::format("railkit-bench {}\nbackends: ", kVersion);
  for (size_t i = 0; i < backends.size(); ++i) s += (i ? ", " : "") + backends[i];
  return s + "\n";
}


namespace {

/// Whether --backend `c` simulates every rank in one process (no launcher, nothing to agree).
bool simulated(BackendChoice c) { return c != BackendChoice::Auto && backend_entry(c).traits.simulated; }

/// Checks -g: above 1 is a usage error on a backend with one rank per process (mpi) and with
/// --split (which groups processes).
void check_slots(const BenchOptions& o, const BackendEntry& backend) {
  if (o.gpus_per_process == 1) return;
  if (!backend.traits.gpu_slots)
    throw UsageError(fmt::format("-g/--ngpus '{}': only one GPU per process on the mpi backend (several GPUs "
                                 "per process need --backend nccl); launch one rank per GPU",
                                 o.gpus_per_process));
  if (o.split.mode != SplitMode::None)
    throw UsageError(fmt::format("-g/--ngpus '{}' with --split {}: a split groups whole processes; launch one "
                                 "rank per GPU to split",
                                 o.gpus_per_process, split_name(o.split)));
}

/// What this rank resolved, agreed by every rank.
struct Resolved {
  const BackendEntry* entry = nullptr;  ///< the backend of the run
  std::unique_ptr<BackendRun> run;      ///< prepared for this run
  int slots = 1;                        ///< GPU ranks per process (-g; sim: the cluster's GPUs)
  const BackendTraits& traits() const { return entry->traits; }
};

/// Resolves the backend and -g on every rank, checks what only this rank can see (a usable
/// GPU, its GPU range), and agrees: every rank goes on, or every rank exits with the first
/// failing rank's message printed once. A backend that resolves differently is refused too.
/// A simulated backend runs in one process: nothing to agree with, its errors are thrown as
/// they are (a bad cluster file or NCCL value is a usage error).
Resolved agree_on_setup(const BenchOptions& o, Bootstrap& boot, char** envp) {
  Resolved r;
  const auto prepare = [&] {
    r.entry = &resolve_backend(o.backend);
    if (!r.traits().simulated) check_slots(o, *r.entry);
    r.run = r.entry->prepare(o, boot, envp);
    r.slots = r.run->slots();
  };
  if (simulated(o.backend)) {
    prepare();
    return r;
  }
  agreed(boot, prepare);
  const BackendEntry& first = backend_entry(kAutoOrder[0]);
  const std::int64_t on_first = boot.allreduce_sum(r.entry == &first ? 1 : 0);
  if (on_first != 0 && on_first != boot.size())
    throw UsageError(fmt::format("--backend {}: {} of {} processes chose nccl (a usable GPU) and the others mpi; "
                                 "every rank must run the same backend: pass --backend nccl or --backend mpi",
                                 o.backend == BackendChoice::Auto ? "auto" : "(per rank)", on_first, boot.size()));
  return r;
}

/// Ranks of this launch according to the launcher's environment (1 when none says).
int launcher_size(char** envp) {
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

/// Throws UsageError when this node cannot hold the buffers of the largest size: in each GPU's
/// free memory (nccl, for the ranks that share it), else in the host's MemAvailable.
void check_buffer_room(const BenchOptions& o, const Plan& plan, const Bootstrap& boot, const BackendRun& run, int slots) {
  const std::string& host = boot.hosts()[static_cast<size_t>(boot.rank())];
  const auto refuse = [&](int ranks, const std::string& where, std::uint64_t need, std::uint64_t room, const char* what) {
    throw UsageError(fmt::format("-e/--maxbytes '{}': {} rank{} on {} need{} {} of buffers (2 x {} per rank) but only "
                                 "{:.1f} GiB {}",
                                 o.max_bytes, ranks, ranks == 1 ? "" : "s", where, ranks == 1 ? "s" : "",
                                 format_bytes(need), format_bytes(plan.buffer_bytes),
                                 static_cast<double>(room) / (1ull << 30), what));
  };
  if (const auto rooms = run.buffer_rooms(boot.local_size())) {
    for (const BufferRoom& r : *rooms) {
      const std::uint64_t need = 2 * plan.buffer_bytes * static_cast<std::uint64_t>(std::max(r.ranks, 1));
      if (need > r.free_bytes) refuse(std::max(r.ranks, 1), r.where + " of " + host, need, r.free_bytes, "of its memory is free");
    }
    return;
  }
  const int local_ranks = boot.local_size() * slots;
  const std::uint64_t need = 2 * plan.buffer_bytes * static_cast<std::uint64_t>(local_ranks);
  const auto avail = mem_available_bytes(SysRoot{});
  if (avail && need > *avail) refuse(local_ranks, host, need, *avail, "is available");
}

/// The checks of the run's shape that need the rank count and the plan, agreed by every rank.
Plan agree_on_plan(const BenchOptions& o, Bootstrap& boot, const Resolved& res, int group_size) {
  const int slots = res.slots;
  res.run->check_root(o, group_size);
  if (o.root >= group_size)
    throw UsageError(fmt::format("-r/--root '{}': the groups of --split {} have only {} ranks", o.root,
                                 split_name(o.split), group_size));
  Plan plan = make_plan(o, group_size);
  if (plan.sizes.empty() || plan.buffer_bytes == 0)
    throw UsageError(fmt::format("-e/--maxbytes '{}': every size leaves less than one element per rank", o.max_bytes));
  agreed(boot, [&] {
    if (res.traits().simulated) return;  // its buffers are never backed by memory
    check_buffer_room(o, plan, boot, *res.run, slots);
  });
  if (res.traits().int_counts && plan.max_count > static_cast<std::uint64_t>(std::numeric_limits<int>::max()))
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
LauncherGuess launcher_guess(char** envp) {
  std::map<std::string, std::string> env;
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "OMPI_MCA_orte_hnp_uri", "MPI_LOCALNRANKS", "SLURM_STEP_NUM_TASKS",
                           "SLURM_STEP_ID", "SLURM_PROCID", "SLURM_MPI_TYPE", "PMIX_VERSION", "PMI_FD", "PMI_PORT"})
    if (std::string v = env_value(envp, name); !v.empty()) env[name] = std::move(v);
  return infer_launcher(env);
}

/// observed.backend: how the backend measured, and how the ranks found each other (`bootstrap`).
nlohmann::json how_measured(const Communicator& comm, std::string_view bootstrap) {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& [k, v] : comm.facts()) j[k] = v;
  j["bootstrap"] = bootstrap;
  return j;
}

/// The options a backend runs with: the sim backend moves no data, so it checks none (-c 0).
BenchOptions effective_options(const BenchOptions& given, const Resolved& res) {
  BenchOptions o = given;
  if (res.traits().simulated) o.check_passes = 0;
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

namespace {

/// How this process reaches the others: the launch's world (MPI) or none (one process).
struct Launch {
  Bootstrap& boot;
  char** envp;                 ///< main's third argument
  std::string_view bootstrap;  ///< observed.backend.bootstrap: "MPI", "none (one process)"
};

/// Runs this rank; sets `alone` once the ranks stopped agreeing (past the agreed checks), from
/// when on an error may be this rank's only.
int run_ranks(const BenchOptions& o, const Launch& launch, bool& alone);

}  // namespace

int run_bench(const BenchOptions& o, int* argc, char*** argv, char** envp) {
  if (simulated(o.backend)) {
    // One process simulates every rank: no launcher, no MPI_Init. main prints what escapes.
    if (const int n = launcher_size(envp); n > 1)
      throw UsageError(fmt::format("--backend sim: one process simulates every rank of --sim-cluster, but the launcher "
                                   "started {}; run railkit-bench once, without mpirun or srun",
                                   n));
    auto boot = make_lone_bootstrap();
    bool alone = false;
    return run_ranks(o, Launch{*boot, envp, "none (one process)"}, alone);
  }
  const BackendEntry* const brings_world = world_backend();
  std::unique_ptr<World> world;
  std::unique_ptr<Bootstrap> boot;
  if (brings_world) {
    world = brings_world->start_world(argc, argv, o.timeout_s > 0);
    boot = world->bootstrap();
  } else {
    if (const int n = launcher_size(envp); n > 1)
      throw UnavailableError(fmt::format("this railkit-bench was built without MPI and runs as one process, but the "
                                         "launcher started {} (drive several GPUs from one process with -g N)", n));
    boot = make_lone_bootstrap();
  }
  // An error that may be this rank's alone while others wait for it in a collective: the world
  // stays up (finalizing would wait for them too) and main prints the line and aborts every rank.
  const auto on_its_own = [&](ErrorCode code, const std::string& message) {
    if (world) world->leave_up();
    const int rank = boot->rank();
    (void)boot.release();  // its teardown frees communicators others may be using; the job ends
    return RankFailure(code, message, rank);
  };
  bool alone = false;
  try {
    return run_ranks(o, Launch{*boot, envp, brings_world ? brings_world->world_name : "none (one process)"}, alone);
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

namespace {

/// One rank's run past the agreed checks: what its steps share.
struct RankRun {
  const BenchOptions& o;
  const Launch& launch;
  const Resolved& res;
  const std::vector<Group>& groups;
  const Plan& plan;
  ResultsSink& sink;
  TableReporter& table;
  std::atomic<Reporter*>& reporter;
  Watchdog& wd;
  std::unique_ptr<Communicator> comm;
  RankFacts facts;
};

/// The results document as it starts: the run's description, with what the backend adds.
/// Rank 0 prints the backend's warnings.
ResultsDocument start_document(const BenchOptions& o, Bootstrap& boot, const Resolved& res,
                               const std::vector<Group>& groups) {
  ResultsDocument doc;
  doc.run = make_run_info(o, boot, std::string(res.entry->name), res.entry->version(), boot.size() * res.slots, groups);
  res.run->annotate(doc, boot);
  if (boot.rank() == 0)
    for (const std::string& w : res.run->warnings()) print_warning_line(w);
  return doc;
}

/// Makes the communicator of this rank's group (`my_group`, -1: none), prints the header on
/// rank 0 and measures. Returns the count of wrong elements.
std::int64_t measure(RankRun& r, int my_group, const std::vector<std::string>& header_lines) {
  Bootstrap& boot = r.launch.boot;
  const int rank = boot.rank();
  // A rank of a node that --split nodes: leaves out gets a communicator of its own and measures nothing.
  const int color = my_group >= 0 ? my_group : static_cast<int>(r.groups.size()) + rank;
  r.wd.enter(OpPoint{std::string(r.res.entry->init_what), 0, -1, false});
  r.comm = r.res.run->make(boot, color, r.wd.signal());
  r.wd.leave();
  Communicator& comm = *r.comm;
  if (r.o.graph_launches > 0 && !comm.graph_capture())
    throw UsageError(fmt::format("-G/--cudagraph '{}': CUDA graphs need the nccl backend (this run uses {})",
                                 r.o.graph_launches, comm.name()));
  if (const std::string why = comm.unsupported_reason(r.o.dtype, r.o.redop); !why.empty()) throw UsageError(why);

  // Where each rank runs (CPUs) and, on the mpi backend, what carries its data (transport).
  const std::optional<RankTransport> transport =
      r.res.run->transport(rank, boot.hosts(), launcher_guess(r.launch.envp));
  r.facts = gather_rank_facts(boot, comm, r.res.slots, !r.res.traits().simulated, transport);
  if (rank == 0) {
    RunHeader header = run_header(r.sink.snapshot().run, r.o, r.plan, r.facts, r.res.slots);
    header.lines = header_lines;
    r.table.run_start(header);
    r.reporter.store(&r.table);
  }
  Harness harness(r.o, boot, comm, r.groups, r.wd, r.sink, rank == 0 ? &r.table : nullptr);
  return harness.run(r.plan);
}

/// After the measurements: every rank's peak memory, what the backend observed, the
/// communicators' teardown, NCCL's logs, and the final document on rank 0.
void finish_run(RankRun& r, const std::string& nccl_log) {
  Bootstrap& boot = r.launch.boot;
  r.wd.enter(OpPoint{"gather ranks", 0, -1, false});
  const std::vector<double> rss =
      boot.gather_to_root(std::vector<double>{static_cast<double>(peak_rss_bytes(SysRoot{}).value_or(0))});
  r.wd.leave();
  const nlohmann::json backend_facts = how_measured(*r.comm, r.launch.bootstrap);
  // A backend that knows what its NCCL did (sim) says so itself, in the shape a log gives.
  nlohmann::json observed_nccl = nullptr;
  if (r.o.observe && !r.res.traits().nccl_log) {
    const SelfObserved* const self = r.comm->self_observed();
    if (const std::optional<NcclLogSummary> summary = self ? self->observed_nccl() : std::nullopt) {
      observed_nccl = to_json(*summary);
      for (const std::string& w : nccl_log_contradictions(*summary, r.sink.snapshot().run.env))
        observed_nccl["warnings"].push_back(w);
    }
  }
  // Communicators go before the NCCL log is read (NCCL flushes it then); their teardown is watched.
  r.wd.enter(OpPoint{"communicator teardown", 0, -1, false});
  r.comm.reset();
  r.wd.leave();
  if (r.res.traits().nccl_log && r.o.observe) {
    r.wd.enter(OpPoint{"gather NCCL logs", 0, -1, false});
    observed_nccl = observe_nccl(boot, nccl_log, r.sink.snapshot().run.env, r.res.slots > 1);
    r.wd.leave();
  }
  if (boot.rank() == 0)
    finish_document(r.sink, r.table, boot, r.facts, rss, r.res.slots, r.plan, backend_facts, observed_nccl);
}

int run_ranks(const BenchOptions& given, const Launch& launch, bool& alone) {
  Bootstrap& boot = launch.boot;
  const int rank = boot.rank();

  // Checks that need the rank count or the machine, agreed by every rank before anything
  // collective or any allocation.
  validate(given, boot.size());
  const Resolved res = agree_on_setup(given, boot, launch.envp);
  const BenchOptions o = effective_options(given, res);
  const std::vector<Group> groups = data_groups(o, boot, res.slots);
  const int my_group = group_of(groups, rank * res.slots);
  const Plan plan = agree_on_plan(o, boot, res, static_cast<int>(groups.front().ranks.size()));
  alone = true;  // the last agreed check: from here on an error may be this rank's only
  const std::string nccl_log = res.traits().nccl_log && o.observe ? arrange_nccl_log(launch.envp) : std::string();
  ResultsSink sink(start_document(o, boot, res, groups), rank == 0 ? o.output_file : std::string(),
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
  Watchdog wd(boot, o.timeout_s, [&](const TimeoutReport& rep) {
    end_early(timeout_record(rep));
    print_error_line(rep.message);
  });

  RankRun run{o, launch, res, groups, plan, sink, table, reporter, wd, nullptr, {}};
  std::int64_t wrong = 0;
  try {
    wrong = measure(run, my_group, res.run->header_lines(given));
  } catch (const UsageError&) {
    throw;  // alike on every rank, before any measurement: printed once by run_bench
  } catch (const Error& e) {
    // The watchdog asked this thread to stop (or fired while it failed): it reports and exits.
    if (wd.signal().requested()) wd.wait_for_exit();
    // Record what was measured and why the run stopped, then end every rank.
    if (rank == 0)
      end_early(ErrorRecord{std::string(error_code_name(e.code())), exit_code(e.code()), e.what(), nlohmann::json::object()});
    print_error_line(e.what(), rank ? rank : -1);
    boot.abort_job(exit_code(e.code()));
  }
  finish_run(run, nccl_log);
  boot.barrier();
  return wrong > 0 ? exit_code(ErrorCode::DataError) : 0;
}

}  // namespace

}  // namespace railkit::bench
