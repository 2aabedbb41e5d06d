#include "bench/options.hpp"

#include <charconv>
#include <sstream>

#include <CLI/CLI.hpp>

#include "core/error.hpp"
#include "core/units.hpp"

namespace railkit::bench {
namespace {

std::string quoted(const std::string& flag, const std::string& value) { return flag + " '" + value + "'"; }

long long parse_int(const std::string& flag, const std::string& value, long long lo, long long hi) {
  long long v = 0;
  const auto [p, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
  if (ec != std::errc() || p != value.data() + value.size())
    throw UsageError(quoted(flag, value) + ": expected an integer");
  if (v < lo || v > hi)
    throw UsageError(quoted(flag, value) + ": must be between " + std::to_string(lo) + " and " + std::to_string(hi));
  return v;
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::string item;
  std::istringstream ss(s);
  while (std::getline(ss, item, sep)) out.push_back(item);
  return out;
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

ParsedCli parse_cli(int argc, const char* const* argv, std::string& help_text) {
  ParsedCli r;
  BenchOptions& o = r.options;
  for (int i = 0; i < argc; ++i) o.argv.emplace_back(argv[i]);

  CLI::App app{"railkit-bench: collective benchmark (nccl-tests flags), one process per rank under mpirun/srun",
               "railkit-bench"};
  app.set_help_flag("-h,--help", "Print this help and exit");
  std::string minb, maxb, stepf, stepb, iters, warm, check, dtype, op, root, avg, cycles, timeout, colls, backend,
      placement, stall, split_mode, rpn, device, gpus, graphs;
  std::vector<std::string> delays;
  bool version = false;
  app.add_option("-b,--minbytes", minb, "Smallest size in bytes (K/M/G binary suffixes; default 32M)");
  app.add_option("-e,--maxbytes", maxb, "Largest size in bytes (default 32M)");
  app.add_option("-f,--stepfactor", stepf, "Multiply the size by this factor between sizes (default 1: use -i)");
  app.add_option("-i,--stepbytes", stepb, "Add this many bytes between sizes when -f is 1 (default 1M)");
  app.add_option("-n,--iters", iters, "Timed iterations per size (default 20)");
  app.add_option("-w,--warmup_iters", warm, "Untimed warm-up iterations per size (default 5)");
  app.add_option("-c,--check", check, "Data-check passes per size, 0 = off (default 1)");
  app.add_option("-d,--datatype", dtype, "int8 uint8 int32 uint32 int64 uint64 float double (half bfloat16: nccl)");
  app.add_option("-o,--op", op, "Reduction: sum prod min max (avg: nccl only); default sum");
  app.add_option("-r,--root", root, "Root rank of broadcast and reduce (default 0)");
  app.add_option("-a,--average", avg, "Per-op time across ranks: 0 rank 0, 1 avg, 2 min, 3 max (default 1)");
  app.add_option("-N,--run_cycles", cycles, "Run the whole benchmark this many times (default 1)");
  app.add_option("-T,--timeout", timeout, "Watchdog: end the run when an operation takes longer than this (s)");
  app.add_option("-J,--output_file", o.output_file, "Write the results document (JSON) to this file");
  app.add_option("--backend", backend, "mpi | nccl | auto (default auto: nccl when built and a GPU is usable)");
  app.add_option("--coll", colls,
                 "Collectives, comma separated: all_reduce all_gather reduce_scatter broadcast reduce alltoall "
                 "sendrecv, or all (default all_reduce)");
  app.add_option("--label", o.label, "Free text stored in the results document");
  app.add_option("--placement", placement, "in | out | both (default both): in-place, out-of-place or both");
  app.add_option("--split", split_mode,
                 "Concurrent groups, one communicator each: rail (same node-local index across nodes), node, "
                 "mod:K (rank % K), nodes:0+3,1+2 (groups of nodes; the others sit out), none");
  app.add_option("--ranks-per-node", rpn, "Ranks [kK, (k+1)K) form node k (default: from the launcher)");
  app.add_option("--device", device, "nccl: GPU index for this rank (default: node-local rank)");
  app.add_option("-g,--ngpus", gpus,
                 "nccl: GPUs driven by each process (ranks = processes x N; the mpi backend takes only 1)");
  app.add_option("-G,--cudagraph", graphs,
                 "nccl: capture the -n launches of each size in a CUDA graph and replay it this many times (0 = off)");
  app.add_flag("--observe,!--no-observe", o.observe,
               "nccl: record what NCCL did (NICs, PXN, GDR) from its INFO log (default on)");
  app.add_flag("--nonblocking", o.nonblocking,
               "nccl: non-blocking communicators (every call returns at once and is polled; each ncclGroupEnd then "
               "costs a thread, which shows in small-message times). Default: blocking, as nccl-tests");
  app.add_option("--inject-stall", stall,
                 "Fire drill: this rank skips its first timed collective and stops there (needs -T)");
  app.add_option("--inject-delay-us", delays,
                 "Fire drill RANK:US: that rank sleeps US microseconds before each timed collective (repeatable)");
  app.add_flag("--version", version, "Print the version and the backends compiled in");

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    help_text = app.help();
    r.exit_now = true;
    return r;
  } catch (const CLI::ParseError& e) {
    throw UsageError(e.what());
  }
  if (version) {
    r.show_version = true;
    r.exit_now = true;
    return r;
  }

  constexpr long long kMaxInt = 1'000'000'000;
  if (!minb.empty()) o.min_bytes = parse_size_bytes(minb, "-b/--minbytes");
  if (!maxb.empty()) o.max_bytes = parse_size_bytes(maxb, "-e/--maxbytes");
  if (!stepb.empty()) o.step_bytes = parse_size_bytes(stepb, "-i/--stepbytes");
  if (!stepf.empty()) o.step_factor = static_cast<std::uint64_t>(parse_int("-f/--stepfactor", stepf, 1, 1 << 20));
  if (!iters.empty()) o.iters = static_cast<int>(parse_int("-n/--iters", iters, 1, kMaxInt));
  if (!warm.empty()) o.warmup_iters = static_cast<int>(parse_int("-w/--warmup_iters", warm, 0, kMaxInt));
  if (!check.empty()) o.check_passes = static_cast<int>(parse_int("-c/--check", check, 0, 1000));
  if (!root.empty()) o.root = static_cast<int>(parse_int("-r/--root", root, 0, kMaxInt));
  if (!avg.empty()) o.average = static_cast<Average>(parse_int("-a/--average", avg, 0, 3));
  if (!cycles.empty()) o.run_cycles = static_cast<int>(parse_int("-N/--run_cycles", cycles, 1, kMaxInt));
  if (!timeout.empty()) {
    const long long t = parse_int("-T/--timeout", timeout, 0, 7 * 24 * 3600);
    o.timeout_s = static_cast<double>(t);
  }
  if (minb == "0" || (!minb.empty() && o.min_bytes == 0))
    throw UsageError(quoted("-b/--minbytes", minb) + ": sizes must be at least 1 byte");
  if (!maxb.empty() && o.max_bytes == 0)
    throw UsageError(quoted("-e/--maxbytes", maxb) + ": sizes must be at least 1 byte");
  if (!dtype.empty()) {
    const auto t = parse_dtype(dtype);
    if (!t) throw UsageError(quoted("-d/--datatype", dtype) + ": unknown datatype (int8 uint8 int32 uint32 int64 uint64 half bfloat16 float double)");
    o.dtype = *t;
  }
  if (!op.empty()) {
    const auto x = parse_redop(op);
    if (!x) throw UsageError(quoted("-o/--op", op) + ": unknown reduction (sum prod min max avg)");
    o.redop = *x;
  }
  if (!backend.empty()) {
    if (backend == "mpi") o.backend = BackendChoice::Mpi;
    else if (backend == "nccl") o.backend = BackendChoice::Nccl;
    else if (backend == "auto") o.backend = BackendChoice::Auto;
    else throw UsageError(quoted("--backend", backend) + ": expected mpi, nccl or auto");
  }
  if (!placement.empty()) {
    if (placement == "out") o.placement = Placement::Out;
    else if (placement == "in") o.placement = Placement::In;
    else if (placement == "both") o.placement = Placement::Both;
    else throw UsageError(quoted("--placement", placement) + ": expected in, out or both");
  }
  if (!colls.empty()) {
    o.colls.clear();
    for (const std::string& name : split(colls, ',')) {
      if (name == "all") {
        for (const auto& ci : all_colls()) o.colls.push_back(ci.coll);
        continue;
      }
      const auto c = parse_coll(name);
      if (!c)
        throw UsageError(quoted("--coll", name) +
                         ": unknown collective (all_reduce all_gather reduce_scatter broadcast reduce alltoall sendrecv all)");
      o.colls.push_back(*c);
    }
    if (o.colls.empty()) throw UsageError(quoted("--coll", colls) + ": no collective named");
  }
  if (!split_mode.empty()) {
    const auto sp = parse_split(split_mode);
    if (!sp) throw UsageError(quoted("--split", split_mode) + ": expected rail, node, mod:K (K >= 1), nodes:A+B,C+D "
                                                              "(node indices, each at most once) or none");
    o.split = *sp;
  }
  if (!rpn.empty()) o.ranks_per_node = static_cast<int>(parse_int("--ranks-per-node", rpn, 1, kMaxInt));
  if (!device.empty()) o.device = static_cast<int>(parse_int("--device", device, 0, 1023));
  if (!gpus.empty()) o.gpus_per_process = static_cast<int>(parse_int("-g/--ngpus", gpus, 1, 64));
  if (!graphs.empty()) o.graph_launches = static_cast<int>(parse_int("-G/--cudagraph", graphs, 0, 1'000'000));
  if (!stall.empty()) o.inject_stall_rank = static_cast<int>(parse_int("--inject-stall", stall, 0, kMaxInt));
  for (const std::string& d : delays) {
    const auto colon = d.find(':');
    if (colon == std::string::npos) throw UsageError(quoted("--inject-delay-us", d) + ": expected RANK:US");
    InjectDelay x;
    x.rank = static_cast<int>(parse_int("--inject-delay-us", d.substr(0, colon), 0, kMaxInt));
    x.delay_us = static_cast<std::uint64_t>(parse_int("--inject-delay-us", d.substr(colon + 1), 0, 3'600'000'000LL));
    o.inject_delays.push_back(x);
  }
  validate(o, 0);
  return r;
}

void validate(const BenchOptions& o, int nranks) {
  const auto bytes = [](std::uint64_t b) { return std::to_string(b); };
  if (o.min_bytes > o.max_bytes)
    throw UsageError("-b/--minbytes '" + bytes(o.min_bytes) + "' is larger than -e/--maxbytes '" + bytes(o.max_bytes) + "'");
  if (o.min_bytes < o.max_bytes && o.step_factor <= 1 && o.step_bytes == 0)
    throw UsageError("-i/--stepbytes '0' with -f/--stepfactor '1': the size never grows from -b to -e");
  if (o.inject_stall_rank && o.timeout_s <= 0)
    throw UsageError("--inject-stall '" + std::to_string(*o.inject_stall_rank) +
                     "' needs -T/--timeout, or the run would hang forever");
  if (nranks > 0) {
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

}  // namespace railkit::bench
