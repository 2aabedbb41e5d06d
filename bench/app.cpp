#include "bench/app.hpp"

#include <unistd.h>

#include <cstdio>
#include <ctime>
#include <iostream>
#include <filesystem>
#include <set>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "bench/harness.hpp"
#include "bench/mpi/mpi_session.hpp"
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
          {"cudagraph", o.graph_launches}};
}

/// One rank's error as every rank agrees on it: the ranks where `failed` holds print `e`
/// (unless `speak` is false, for a node's other ranks), and every rank exits with its code.
void agree_or_throw(Bootstrap& boot, bool failed, const Error& e, bool speak = true) {
  if (boot.allreduce_max(failed ? 1 : 0) == 0) return;
  if (failed && speak) print_error_line(e.what());
  throw QuietExit(e.code());
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
  std::string s = fmt::format("railkit-bench {}\nbackends: mpi ({})", kVersion, mpi::library_version());
#if RAILKIT_HAVE_NCCL
  s += fmt::format(", nccl ({})", nccl::version_text());
#endif
  return s + "\n";
}

namespace {

/// Whether --backend (or auto) selects the NCCL backend here. The only place that knows which
/// backends are compiled in, with make_backend. `--backend nccl` without a usable GPU throws
/// UnavailableError here, before any other check that depends on the backend.
bool chooses_nccl(const BenchOptions& o) {
#if RAILKIT_HAVE_NCCL
  if (o.backend == BackendChoice::Nccl) {
    if (const std::string why = nccl::unusable_gpu_reason(); !why.empty())
      throw UnavailableError("--backend nccl: " + why);
    return true;
  }
  return o.backend == BackendChoice::Auto && nccl::unusable_gpu_reason().empty();
#else
  if (o.backend == BackendChoice::Nccl)
    throw UnavailableError("--backend nccl: this railkit-bench was built without the NCCL backend (see --version)");
  return false;
#endif
}

/// The data-plane backend on this rank's group (`color`).
std::unique_ptr<Communicator> make_backend(const BenchOptions& o, const Bootstrap& boot, int color, bool use_nccl) {
#if RAILKIT_HAVE_NCCL
  if (use_nccl) {
    nccl::NcclSetup setup;
    setup.color = color;
    setup.local_rank = boot.local_rank();
    setup.device = o.device;
    setup.gpus = o.gpus_per_process;
    setup.init_timeout_s = o.timeout_s;
    return nccl::make_communicator(setup);
  }
#else
  (void)o;
  (void)boot;
  (void)use_nccl;
#endif
  return mpi::make_communicator(color);
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
      print_error_line(e.what(), boot->rank() && !alike ? boot->rank() : -1);
    throw QuietExit(e.code());
  }
}

int run_ranks(const BenchOptions& o, Bootstrap& bootstrap, char** envp) {
  Bootstrap* boot = &bootstrap;
  const int rank = boot->rank();
  const int nranks = boot->size();

  // Checks that need the rank count or the machine, agreed by every rank before any allocation.
  validate(o, nranks);
  const bool nccl_chosen = chooses_nccl(o);
  const int slots = slots_per_process(o, nccl_chosen);
  const int data_ranks = nranks * slots;  // ranks of the data plane: process p drives ranks p*slots ..
  // With -g N (no split) the one group holds every GPU rank; node_layout over processes otherwise.
  std::vector<int> node_of_data_rank;
  for (int r = 0; r < data_ranks; ++r)
    node_of_data_rank.push_back(boot->node_of_rank()[static_cast<size_t>(r / slots)]);
  const NodeLayout layout = node_layout(node_of_data_rank, slots == 1 ? o.ranks_per_node : 0);
  const std::vector<Group> groups = make_groups(o.split, layout);
  const int my_group = group_of(groups, rank * slots);
  const std::string nccl_log = nccl_chosen && o.observe ? arrange_nccl_log(envp) : std::string();
  // A rank of a node that --split nodes: leaves out gets a communicator of its own and measures nothing.
  const int color = my_group >= 0 ? my_group : static_cast<int>(groups.size()) + rank;
  auto comm = make_backend(o, *boot, color, nccl_chosen);
  const int group_size = static_cast<int>(groups.front().ranks.size());
  if (o.graph_launches > 0 && !comm->supports_graphs())
    throw UsageError(fmt::format("-G/--cudagraph '{}': CUDA graphs need the nccl backend (this run uses {})",
                                 o.graph_launches, comm->name()));
  if (o.root >= group_size)
    throw UsageError(fmt::format("-r/--root '{}': the groups of --split {} have only {} ranks", o.root,
                                 split_name(o.split), group_size));
  if (const std::string why = comm->unsupported_reason(o.dtype, o.redop); !why.empty()) throw UsageError(why);
  const Plan plan = make_plan(o, group_size);
  if (plan.sizes.empty() || plan.buffer_bytes == 0)
    throw UsageError(fmt::format("-e/--maxbytes '{}': every size leaves less than one element per rank", o.max_bytes));
  {
    const int local_ranks = boot->local_size() * slots;
    const std::uint64_t per_rank = 2 * plan.buffer_bytes;
    const std::uint64_t need = per_rank * static_cast<std::uint64_t>(local_ranks);
    const auto avail = mem_available_bytes(SysRoot{});
    const bool short_of_memory = avail && need > *avail;
    agree_or_throw(*boot, short_of_memory,
                   UsageError(fmt::format("-e/--maxbytes '{}': {} rank{} on {} need{} {} of buffers (2 x {} per rank) but "
                                          "only {:.1f} GiB is available",
                                          o.max_bytes, local_ranks, local_ranks == 1 ? "" : "s",
                                          boot->hosts()[static_cast<size_t>(rank)], local_ranks == 1 ? "s" : "",
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
  run.nranks = data_ranks;
  run.hosts.clear();
  for (const std::string& h : boot->hosts())
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
      for (int r : g.ranks) hosts.push_back(boot->hosts()[static_cast<size_t>(r)]);
      gs.push_back({{"name", g.name}, {"ranks", g.ranks}, {"hosts", hosts}});
    }
    run.split = {{"mode", split_name(o.split)},
                 {"ranks_per_node", o.ranks_per_node > 0 ? nlohmann::json(o.ranks_per_node) : nlohmann::json(nullptr)},
                 {"groups", gs}};
  }
  ResultsSink sink(doc, rank == 0 ? o.output_file : std::string());

  // One entry per data rank: with -g N, process p's pid and host for ranks p*N .. p*N + N - 1.
  const std::vector<double> pids = boot->gather_to_root(std::vector<double>{static_cast<double>(::getpid())});
  std::vector<std::string> my_devices;
  for (int k = 0; k < slots; ++k) my_devices.push_back(comm->device(k));
  std::vector<std::string> rank_devices;
  for (const std::string& text : boot->gather_text_to_root(join_lines(my_devices))) {
    std::vector<std::string> lines = split_lines(text);
    lines.resize(static_cast<size_t>(slots));
    rank_devices.insert(rank_devices.end(), lines.begin(), lines.end());
  }
  const auto proc_of = [&](int r) { return static_cast<size_t>(r / slots); };
  TableReporter table(std::cout);
  Reporter* reporter = rank == 0 ? &table : nullptr;
  if (reporter) {
    RunHeader h{run, o, {}, plan.notes};
    for (int r = 0; r < data_ranks; ++r)
      h.ranks.push_back(
          {r, static_cast<int>(pids[proc_of(r)]), boot->hosts()[proc_of(r)], rank_devices[static_cast<size_t>(r)]});
    reporter->run_start(h);
  }

  // A run that ends early (timeout, error) still prints the footer and leaves the document with
  // everything measured and the reason; rank 0 only.
  const auto end_early = [&](ErrorRecord why) {
    ResultsDocument d = sink.snapshot();
    d.summary.complete = false;
    d.error = std::move(why);
    if (reporter) reporter->run_end(d);
    sink.write(d);
  };

  Watchdog wd(*boot, o.timeout_s, [&](const TimeoutReport& rep) {
    if (comm) comm->abort();
    nlohmann::json ranks = nlohmann::json::array();
    for (const RankState& s : rep.ranks)
      ranks.push_back({{"rank", s.rank}, {"host", s.host}, {"state", s.state}, {"ops_entered", s.seq},
                       {"phase", s.at.phase}, {"bytes", s.at.bytes}, {"iteration", s.at.iteration},
                       {"in_place", s.at.in_place}, {"waited_s", s.waited_s}});
    end_early(ErrorRecord{std::string(error_code_name(ErrorCode::Timeout)), exit_code(ErrorCode::Timeout), rep.message,
                          {{"timeout_s", rep.timeout_s},
                           {"phase", rep.at.phase},
                           {"bytes", rep.at.bytes},
                           {"iteration", rep.at.iteration},
                           {"in_place", rep.at.in_place},
                           {"not_arrived", rep.not_arrived},
                           {"ranks", ranks}}});
    print_error_line(rep.message);
  });

  Harness harness(o, *boot, *comm, groups, wd, sink, reporter);
  std::int64_t wrong = 0;
  try {
    wrong = harness.run(plan);
  } catch (const Error& e) {
    // Record what was measured and why the run stopped, then end every rank.
    if (rank == 0)
      end_early(ErrorRecord{std::string(error_code_name(e.code())), exit_code(e.code()), e.what(), nlohmann::json::object()});
    print_error_line(e.what(), rank ? rank : -1);
    MPI_Abort(MPI_COMM_WORLD, exit_code(e.code()));
    return exit_code(e.code());
  }

  // Per-rank facts for the document: peak memory of every rank.
  std::vector<double> rss;
  wd.enter(OpPoint{"gather ranks", 0, -1, false});
  rss = boot->gather_to_root(std::vector<double>{static_cast<double>(peak_rss_bytes(SysRoot{}).value_or(0))});
  wd.leave();
  nlohmann::json observed_nccl = nullptr;
  if (nccl_chosen && o.observe) {
    comm.reset();  // NCCL flushes its log when the communicator goes
    wd.enter(OpPoint{"gather NCCL logs", 0, -1, false});
    observed_nccl = observe_nccl(*boot, nccl_log, run.env, slots > 1);
    wd.leave();
  }
  if (rank == 0) {
    ResultsDocument d = sink.snapshot();
    if (!observed_nccl.is_null()) {
      d.observed["nccl"] = observed_nccl;
      for (const auto& w : observed_nccl.value("warnings", nlohmann::json::array())) {
        d.observed["warnings"].push_back(w);
        std::cout << "# warning: " << w.get<std::string>() << "\n";
      }
    }
    nlohmann::json ranks = nlohmann::json::array();
    for (int r = 0; r < data_ranks; ++r)
      ranks.push_back({{"rank", r},
                       {"host", boot->hosts()[proc_of(r)]},
                       {"pid", static_cast<std::int64_t>(pids[proc_of(r)])},
                       {"peak_rss_bytes", static_cast<std::uint64_t>(rss[proc_of(r)])},
                       {"device", rank_devices[static_cast<size_t>(r)]}});
    d.observed["ranks"] = ranks;
    d.observed["buffer_bytes"] = plan.buffer_bytes;
    reporter->run_end(d);
    sink.write(d);
  }
  boot->barrier();
  return wrong > 0 ? exit_code(ErrorCode::DataError) : 0;
}

}  // namespace railkit::bench
