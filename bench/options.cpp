#include "bench/options.hpp"


#include <algorithm>
#include <CLI/CLI.hpp>

#include "core/bench_flags.hpp"
#include "core/collectives.hpp"
#include "core/error.hpp"
#include "core/strings.hpp"
#include "core/units.hpp"

namespace railkit::bench {
namespace {

std::string quoted(const std::string& flag, const std::string& value) { return flag + " '" + value + "'"; }

/// CLI11's names of a flag of core's table: "-b,--minbytes", "--observe,!--no-observe".
std::string cli_names(BenchFlag flag) {
  const BenchFlagSpec& s = bench_flag(flag);
  std::string names = s.short_name.empty() ? "" : std::string(s.short_name) + ",";
  names += s.long_name;
  if (!s.negation.empty()) names += ",!" + std::string(s.negation);
  return names;
}

}  // namespace

std::string_view average_name(Average a) {
  switch (a) {
    case Average::Rank0: return "rank0";
    case Average::Avg: return "avg";
    case Average::Min: return "min";
    case Average::Max: return "max";
  }
  return "avg";
}

std::string_view placement_name(Placement p) {
  switch (p) {
    case Placement::Out: return "out";
    case Placement::In: return "in";
    case Placement::Both: return "both";
  }
  return "both";
}

namespace {

/// The flags as given, before interpretation (CLI11 fills these; interpret() checks them).
struct RawFlags {
  std::string minb, maxb, stepf, stepb, iters, warm, check, dtype, op, root, avg, cycles, timeout, colls, backend,
      placement, stall, split_mode, rpn, device, gpus, graphs, fidelity;
  std::vector<std::string> delays;
  bool version = false;
};

void add_size_and_timing_flags(CLI::App& app, RawFlags& f, BenchOptions& o) {
  app.add_option(cli_names(BenchFlag::MinBytes), f.minb, "Smallest size in bytes (K/M/G binary suffixes; default 32M)");
  app.add_option(cli_names(BenchFlag::MaxBytes), f.maxb, "Largest size in bytes (default 32M)");
  app.add_option(cli_names(BenchFlag::StepFactor), f.stepf,
                 "Multiply the size by this factor between sizes (default 1: use -i)");
  app.add_option(cli_names(BenchFlag::StepBytes), f.stepb,
                 "Add this many bytes between sizes when -f is 1 (default 1M)");
  app.add_option(cli_names(BenchFlag::Iters), f.iters, "Timed iterations per size (default 20)");
  app.add_option(cli_names(BenchFlag::WarmupIters), f.warm, "Untimed warm-up iterations per size (default 5)");
  app.add_option(cli_names(BenchFlag::Check), f.check,
                 "Data-check passes per size, 0 = off (default 1; sim: off, nothing moves)");
  app.add_option(cli_names(BenchFlag::Datatype), f.dtype,
                 "int8 uint8 int32 uint32 int64 uint64 float double (half bfloat16: nccl)");
  app.add_option(cli_names(BenchFlag::Op), f.op, "Reduction: sum prod min max (avg: nccl only); default sum");
  app.add_option(cli_names(BenchFlag::Root), f.root, "Root rank of broadcast and reduce (default 0)");
  app.add_option(cli_names(BenchFlag::Average), f.avg,
                 "Per-op time across ranks: 0 rank 0, 1 avg, 2 min, 3 max (default 1)");
  app.add_option(cli_names(BenchFlag::RunCycles), f.cycles, "Run the whole benchmark this many times (default 1)");
  app.add_option(cli_names(BenchFlag::Timeout), f.timeout,
                 "Watchdog: end the run when an operation takes longer than this (s)");
  app.add_flag(cli_names(BenchFlag::Sync), o.sync,
               "Time each operation alone, as IMB-MPI1 and the OSU benchmarks: a barrier (not timed) before each "
               "timed iteration, the clock around the operation and its completion only; time = the mean of the "
               "iterations (run.timing_method barrier_separated). Default: back to back, as nccl-tests (the loop "
               "timed whole). Not with -G or --backend sim");
}

/// kBackendNames' names, in order.
std::vector<std::string_view> backend_names() {
  std::vector<std::string_view> out;
  for (const auto& b : kBackendNames) out.push_back(b.name);
  return out;
}

void add_run_flags(CLI::App& app, RawFlags& f, BenchOptions& o) {
  app.add_option(cli_names(BenchFlag::OutputFile), o.output_file, "Write the results document (JSON) to this file");
  app.add_option(cli_names(BenchFlag::Prom), o.prom_file,
                 "Write a Prometheus textfile (node_exporter textfile collector) of the run's busbw and time to "
                 "this file at the end (rank 0, atomically)");
  app.add_option(cli_names(BenchFlag::Backend), f.backend,
                 join(backend_names(), " | ") +
                     " (default auto: nccl when built and a GPU is usable, else mpi; sim only when asked)");
  app.add_option(cli_names(BenchFlag::Coll), f.colls,
                 "Collectives, comma separated: " + collective_names(" ") + ", or all (default all_reduce)");
  app.add_option(cli_names(BenchFlag::Label), o.label, "Free text stored in the results document");
  app.add_option(cli_names(BenchFlag::Placement), f.placement,
                 "in | out | both (default both): in-place, out-of-place or both");
  app.add_option(cli_names(BenchFlag::Split), f.split_mode,
                 "Concurrent groups, one communicator each: rail (same node-local index across nodes), node, "
                 "mod:K (rank % K), nodes:0+3,1+2 (groups of nodes; the others sit out), none");
  app.add_option(cli_names(BenchFlag::RanksPerNode), f.rpn,
                 "Ranks [kK, (k+1)K) form node k (default: from the launcher)");
  app.add_option(cli_names(BenchFlag::Device), f.device, "nccl: GPU index for this rank (default: node-local rank)");
  app.add_option(cli_names(BenchFlag::NGpus), f.gpus,
                 "nccl: GPUs driven by each process (ranks = processes x N; the mpi backend takes only 1)");
  app.add_option(cli_names(BenchFlag::CudaGraph), f.graphs,
                 "nccl: capture the -n launches of each size in a CUDA graph and replay it this many times (0 = off)");
  app.add_flag(cli_names(BenchFlag::Observe), o.observe,
               "nccl: record what NCCL did (NICs, PXN, GDR) from its INFO log; sim: what the simulated NCCL did "
               "(default on)");
  app.add_flag(cli_names(BenchFlag::Nonblocking), o.nonblocking,
               "nccl: non-blocking communicators (every call returns at once and is polled; each ncclGroupEnd then "
               "costs a thread, which shows in small-message times). Default: blocking, as nccl-tests");
  app.add_option(cli_names(BenchFlag::InjectStall), f.stall,
                 "Fire drill: this rank skips its first timed collective and stops there (needs -T)");
  app.add_option(cli_names(BenchFlag::InjectDelayUs), f.delays,
                 "Fire drill RANK:US: that rank sleeps US microseconds before each timed collective (repeatable)");
  app.add_option(cli_names(BenchFlag::SimCluster), o.sim_cluster,
                 "sim: the cluster file (YAML or JSON, sim/README.md) whose every GPU is simulated as one rank in "
                 "this process, without mpirun; every figure is simulated");
  app.add_option(cli_names(BenchFlag::Fidelity), f.fidelity,
                 "sim: packet (ns-3 packet level, iteration i with seed + i) | flow (max-min fair flows, "
                 "deterministic: simulated once per size); default packet");
  app.add_option(cli_names(BenchFlag::SimSet), o.sim_sets,
                 "sim: override one cluster key, key.path=value (YAML value; repeatable)");
  app.add_flag(cli_names(BenchFlag::Version), f.version, "Print the version and the backends compiled in");
}

/// railkit-bench's CLI: every flag of core's bench_flags(), read into `f` and `o`, and the footer.
void define_cli(CLI::App& app, RawFlags& f, BenchOptions& o) {
  app.set_help_flag(cli_names(BenchFlag::Help), "Print this help and exit");
  app.footer("Exit codes: 0 done; 1 internal error; 2 CUDA; 3 NCCL; 4 timeout (-T); 5 not available here (a backend not "
             "built or not usable: nccl without a GPU, sim without ns-3); 6 usage (a bad flag, value or input file, "
             "e.g. a --sim-cluster file or a sim flag without --backend sim; one line names it); 7 wrong values in a "
             "data check; 8 MPI; 9 I/O.\n--backend sim --sim-cluster C.yaml [--fidelity packet|flow] [--sim-set k=v]: "
             "no mpirun; NCCL_* settings come from the environment (those not modelled are named as inert); -c is "
             "off and every figure is labelled simulated.");
  add_size_and_timing_flags(app, f, o);
  add_run_flags(app, f, o);
}

constexpr long long kMaxInt = 1'000'000'000;

/// Sizes, counts and the watchdog: integers in their ranges, sizes with suffixes.
void interpret_numbers(const RawFlags& f, BenchOptions& o) {
  if (!f.minb.empty()) o.min_bytes = parse_size_bytes(f.minb, "-b/--minbytes");
  if (!f.maxb.empty()) o.max_bytes = parse_size_bytes(f.maxb, "-e/--maxbytes");
  if (!f.stepb.empty()) o.step_bytes = parse_size_bytes(f.stepb, "-i/--stepbytes");
  if (!f.stepf.empty()) o.step_factor = static_cast<std::uint64_t>(parse_int("-f/--stepfactor", f.stepf, 1, 1 << 20));
  if (!f.iters.empty()) o.iters = static_cast<int>(parse_int("-n/--iters", f.iters, 1, kMaxInt));
  if (!f.warm.empty()) o.warmup_iters = static_cast<int>(parse_int("-w/--warmup_iters", f.warm, 0, kMaxInt));
  if (!f.check.empty()) o.check_passes = static_cast<int>(parse_int("-c/--check", f.check, 0, 1000));
  if (!f.root.empty()) o.root = static_cast<int>(parse_int("-r/--root", f.root, 0, kMaxInt));
  if (!f.avg.empty()) o.average = static_cast<Average>(parse_int("-a/--average", f.avg, 0, 3));
  if (!f.cycles.empty()) o.run_cycles = static_cast<int>(parse_int("-N/--run_cycles", f.cycles, 1, kMaxInt));
  if (!f.timeout.empty()) o.timeout_s = static_cast<double>(parse_int("-T/--timeout", f.timeout, 0, 7 * 24 * 3600));
  if (f.minb == "0" || (!f.minb.empty() && o.min_bytes == 0))
    throw UsageError(quoted("-b/--minbytes", f.minb) + ": sizes must be at least 1 byte");
  if (!f.maxb.empty() && o.max_bytes == 0)
    throw UsageError(quoted("-e/--maxbytes", f.maxb) + ": sizes must be at least 1 byte");
  if (!f.rpn.empty()) o.ranks_per_node = static_cast<int>(parse_int("--ranks-per-node", f.rpn, 1, kMaxInt));
  if (!f.device.empty()) o.device = static_cast<int>(parse_int("--device", f.device, 0, 1023));
  if (!f.gpus.empty()) o.gpus_per_process = static_cast<int>(parse_int("-g/--ngpus", f.gpus, 1, 64));
  if (!f.graphs.empty()) o.graph_launches = static_cast<int>(parse_int("-G/--cudagraph", f.graphs, 0, 1'000'000));
}

/// Names from their tables: datatype, reduction, backend, placement, collectives, split.
void interpret_names(const RawFlags& f, BenchOptions& o) {
  // The label becomes a line of the table's header and text in file and column names.
  if (has_control_chars(o.label))
    throw UsageError(quoted("--label", printable(o.label)) +
                     ": control characters (newline, tab, escape ...) are not allowed in a label");
  if (!f.dtype.empty()) {
    const auto t = parse_dtype(f.dtype);
    if (!t) throw UsageError(quoted("-d/--datatype", f.dtype) + ": unknown datatype (int8 uint8 int32 uint32 int64 uint64 half bfloat16 float double)");
    o.dtype = *t;
  }
  if (!f.op.empty()) {
    const auto x = parse_redop(f.op);
    if (!x) throw UsageError(quoted("-o/--op", f.op) + ": unknown reduction (sum prod min max avg)");
    o.redop = *x;
  }
  if (!f.backend.empty()) {
    const auto it = std::find_if(std::begin(kBackendNames), std::end(kBackendNames),
                                 [&](const BackendName& b) { return b.name == f.backend; });
    if (it == std::end(kBackendNames))
      throw UsageError(quoted("--backend", f.backend) + ": expected " + join_list(backend_names()));
    o.backend = it->choice;
  }
  if (!f.placement.empty()) {
    if (f.placement == "out") o.placement = Placement::Out;
    else if (f.placement == "in") o.placement = Placement::In;
    else if (f.placement == "both") o.placement = Placement::Both;
    else throw UsageError(quoted("--placement", f.placement) + ": expected in, out or both");
  }
  if (!f.colls.empty()) o.colls = parse_colls(f.colls);
  if (!f.split_mode.empty()) {
    const auto sp = parse_split(f.split_mode);
    if (!sp) throw UsageError(quoted("--split", f.split_mode) + ": expected rail, node, mod:K (K >= 1), nodes:A+B,C+D "
                                                                "(node indices, each at most once) or none");
    o.split = *sp;
  }
  if (!f.fidelity.empty()) {
    if (f.fidelity != "packet" && f.fidelity != "flow")
      throw UsageError(quoted("--fidelity", f.fidelity) + ": expected packet or flow");
    o.sim_fidelity = f.fidelity;
  }
}

/// --backend sim and its flags: the sim flags need it, it needs a cluster, and the flags of one
/// process per rank or of real devices do not apply to one process that simulates every rank.
/// `fidelity_given`: --fidelity was on the command line.
void check_sim_flags(const BenchOptions& o, bool fidelity_given) {
  const bool sim = o.backend == BackendChoice::Sim;
  if (!sim) {
    const auto only_sim = [](const std::string& flag) {
      return UsageError(flag + ": only with --backend sim (it describes the simulated cluster)");
    };
    if (!o.sim_cluster.empty()) throw only_sim(quoted("--sim-cluster", o.sim_cluster));
    if (fidelity_given) throw only_sim(quoted("--fidelity", o.sim_fidelity));
    if (!o.sim_sets.empty()) throw only_sim(quoted("--sim-set", o.sim_sets.front()));
    return;
  }
  if (o.sim_cluster.empty())
    throw UsageError("--backend sim: needs --sim-cluster CLUSTER.yaml (the cluster to simulate; sim/examples/ has some)");
  const std::string why = ": the sim backend simulates every GPU of --sim-cluster as one rank of one process";
  if (o.gpus_per_process != 1)
    throw UsageError(quoted("-g/--ngpus", std::to_string(o.gpus_per_process)) + why + " (the cluster sets the ranks)");
  if (o.graph_launches > 0)
    throw UsageError(quoted("-G/--cudagraph", std::to_string(o.graph_launches)) +
                     ": CUDA graphs are not simulated (--backend sim)");
  if (o.sync)
    throw UsageError("--sync with --backend sim: every simulated iteration is already its own simulation of one "
                     "collective on an idle cluster, timed by the simulator, not the host clock");
  if (o.split.mode != SplitMode::None)
    throw UsageError(quoted("--split", std::string(split_name(o.split))) + why + " (no concurrent groups)");
  if (o.device) throw UsageError(quoted("--device", std::to_string(*o.device)) + why + " (no real GPU)");
  if (o.nonblocking) throw UsageError("--nonblocking" + why + " (no NCCL communicator to poll)");
  if (o.ranks_per_node > 0)
    throw UsageError(quoted("--ranks-per-node", std::to_string(o.ranks_per_node)) + why +
                     " (the cluster's gpus_per_node sets the nodes)");
  if (o.inject_stall_rank)
    throw UsageError(quoted("--inject-stall", std::to_string(*o.inject_stall_rank)) +
                     ": fire drills act on processes and the host clock; the sim backend's times are simulated");
  if (!o.inject_delays.empty())
    throw UsageError(quoted("--inject-delay-us", std::to_string(o.inject_delays.front().rank) + ":" +
                                                     std::to_string(o.inject_delays.front().delay_us)) +
                     ": fire drills act on processes and the host clock; the sim backend's times are simulated");
}

/// The fire drills: --inject-stall RANK, --inject-delay-us RANK:US.
void interpret_drills(const RawFlags& f, BenchOptions& o) {
  if (!f.stall.empty()) o.inject_stall_rank = static_cast<int>(parse_int("--inject-stall", f.stall, 0, kMaxInt));
  for (const std::string& d : f.delays) {
    const auto colon = d.find(':');
    if (colon == std::string::npos) throw UsageError(quoted("--inject-delay-us", d) + ": expected RANK:US");
    InjectDelay x;
    x.rank = static_cast<int>(parse_int("--inject-delay-us", d.substr(0, colon), 0, kMaxInt));
    x.delay_us = static_cast<std::uint64_t>(parse_int("--inject-delay-us", d.substr(colon + 1), 0, 3'600'000'000LL));
    o.inject_delays.push_back(x);
  }
}

/// A flag given an empty value (`-d ''`, `-b ''`) is refused: it would otherwise run with the
/// default as if the flag were absent. --label may be empty.
void refuse_empty_values(const CLI::App& app) {
  for (const CLI::Option* opt : app.get_options()) {
    if (opt->count() == 0 || opt->get_type_size() == 0 || opt->check_lname("label")) continue;
    for (const std::string& v : opt->results())
      if (v.empty()) {
        std::string name;
        for (const auto& sn : opt->get_snames()) name += (name.empty() ? "-" : "/-") + sn;
        for (const auto& ln : opt->get_lnames()) name += (name.empty() ? "--" : "/--") + ln;
        throw UsageError(name + " '': an empty value; give one, or leave the flag out for its default");
      }
  }
}

}  // namespace

std::vector<Coll> parse_colls(const std::string& list) {
  std::vector<Coll> out;
  const std::vector<std::string> names = split(list, ',');
  for (std::size_t k = 0; k < names.size(); ++k) {
    const std::string& name = names[k];
    if (name.empty() && k + 1 == names.size()) continue;  // "a,b," names a and b
    std::vector<Coll> named;
    if (name == "all") {
      for (const auto& ci : all_colls()) named.push_back(ci.coll);
    } else {
      const auto c = parse_coll(name);
      if (!c)
        throw UsageError(quoted("--coll", name) +
                         ": unknown collective (" + collective_names(" ") + " all)");
      named.push_back(*c);
    }
    for (const Coll c : named) {  // twice would measure and record it twice
      if (std::find(out.begin(), out.end(), c) != out.end())
        throw UsageError(quoted("--coll", list) + ": " + std::string(info(c).name) + " is named twice");
      out.push_back(c);
    }
  }
  if (out.empty()) throw UsageError(quoted("--coll", list) + ": no collective named");
  return out;
}

ParsedCli parse_cli(int argc, const char* const* argv, std::string& help_text) {
  ParsedCli r;
  BenchOptions& o = r.options;
  for (int i = 0; i < argc; ++i) o.argv.emplace_back(argv[i]);

  CLI::App app{"railkit-bench: collective benchmark (nccl-tests flags), one process per rank under mpirun/srun "
               "(--backend sim: one process simulating every rank of a cluster file)",
               "railkit-bench"};
  RawFlags f;
  define_cli(app, f, o);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    help_text = app.help();
    r.exit_now = true;
    return r;
  } catch (const CLI::ParseError& e) {
    throw UsageError(e.what());
  }
  refuse_empty_values(app);
  if (f.version) {
    r.show_version = true;
    r.exit_now = true;
    return r;
  }
  interpret_numbers(f, o);
  interpret_names(f, o);
  interpret_drills(f, o);
  check_sim_flags(o, !f.fidelity.empty());
  validate(o, 0);
  return r;
}

void validate(const BenchOptions& o, int nranks) {
  const auto bytes = [](std::uint64_t b) { return std::to_string(b); };
  if (o.min_bytes > o.max_bytes)
    throw UsageError("-b/--minbytes '" + bytes(o.min_bytes) + "' is larger than -e/--maxbytes '" + bytes(o.max_bytes) + "'");
  if (o.min_bytes < o.max_bytes && o.step_factor <= 1 && o.step_bytes == 0)
    throw UsageError("-i/--stepbytes '0' with -f/--stepfactor '1': the size never grows from -b to -e");
  if (o.sync && o.graph_launches > 0)
    throw UsageError("--sync with -G/--cudagraph '" + std::to_string(o.graph_launches) +
                     "': a CUDA graph replays its -n launches back to back, with no barrier between them");
  if (o.inject_stall_rank && o.timeout_s <= 0)
    throw UsageError("--inject-stall '" + std::to_string(*o.inject_stall_rank) +
                     "' needs -T/--timeout, or the run would hang forever");
  if (nranks > 0 && o.backend != BackendChoice::Sim) {
    const int data_ranks = nranks * o.gpus_per_process;
    if (o.root >= data_ranks)
      throw UsageError("-r/--root '" + std::to_string(o.root) + "': only " + std::to_string(data_ranks) + " ranks");
    if (o.inject_stall_rank && *o.inject_stall_rank >= nranks)
      throw UsageError("--inject-stall '" + std::to_string(*o.inject_stall_rank) + "': only " + std::to_string(nranks) + " ranks");
    for (const auto& d : o.inject_delays)
      if (d.rank >= nranks)
        throw UsageError("--inject-delay-us '" + std::to_string(d.rank) + ":" + std::to_string(d.delay_us) + "': only " +
                         std::to_string(nranks) + " ranks");
  }
}

std::vector<CliFlag> cli_flags() {
  CLI::App app{"", "railkit-bench"};
  RawFlags f;
  BenchOptions o;
  define_cli(app, f, o);
  std::vector<CliFlag> out;
  for (const CLI::Option* opt : app.get_options()) {
    CliFlag c{opt->get_snames(), {}, opt->get_fnames(), opt->get_expected_min() != 0};
    for (const std::string& n : opt->get_lnames())
      if (std::find(c.negations.begin(), c.negations.end(), n) == c.negations.end()) c.long_names.push_back(n);
    out.push_back(std::move(c));
  }
  return out;
}

}  // namespace railkit::bench
