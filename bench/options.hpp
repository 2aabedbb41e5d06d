#pragma once
// railkit-bench's options: a plain struct filled by the CLI (CLI11) and checked by validate().
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "bench/split.hpp"
#include "bench/types.hpp"

namespace railkit::bench {

enum class Placement { Out, In, Both };
enum class Average { Rank0 = 0, Avg = 1, Min = 2, Max = 3 };
enum class BackendChoice { Auto, Mpi, Nccl, Sim };

/// --backend's names, in the order help and errors list them (bench/backends.cpp has each
/// backend's entry under the same name).
struct BackendName {
  std::string_view name;
  BackendChoice choice;
};
inline constexpr BackendName kBackendNames[] = {
    {"mpi", BackendChoice::Mpi}, {"nccl", BackendChoice::Nccl}, {"sim", BackendChoice::Sim}, {"auto", BackendChoice::Auto}};

/// --inject-delay-us RANK:US
struct InjectDelay {
  int rank = 0;
  std::uint64_t delay_us = 0;
};

struct BenchOptions {
  std::uint64_t min_bytes = 32ull << 20;   ///< -b (nccl-tests default 32M)
  std::uint64_t max_bytes = 32ull << 20;   ///< -e
  std::uint64_t step_factor = 1;           ///< -f; > 1 multiplies
  std::uint64_t step_bytes = 1ull << 20;   ///< -i; used when step_factor == 1
  int iters = 20;                          ///< -n
  int warmup_iters = 5;                    ///< -w
  int check_passes = 1;                    ///< -c, 0 = off
  DType dtype = DType::Float;              ///< -d
  RedOp redop = RedOp::Sum;                ///< -o
  int root = 0;                            ///< -r
  Average average = Average::Avg;          ///< -a
  int run_cycles = 1;                      ///< -N
  double timeout_s = 0;                    ///< -T, 0 = no watchdog
  std::string output_file;                 ///< -J, empty = none
  std::string prom_file;                   ///< --prom: node_exporter textfile, empty = none
  BackendChoice backend = BackendChoice::Auto;
  std::vector<Coll> colls{Coll::AllReduce};
  std::string label;
  Placement placement = Placement::Both;
  SplitSpec split;                         ///< --split
  int ranks_per_node = 0;                  ///< --ranks-per-node, 0 = from the launcher
  std::optional<int> device;               ///< --device: GPU index (nccl), default node-local rank
  int gpus_per_process = 1;                ///< -g (nccl): GPU ranks per process; ranks = processes x this
  int graph_launches = 0;                  ///< -G (nccl): replays of a CUDA graph of -n launches, 0 = off
  bool observe = true;                     ///< --observe / --no-observe (nccl): read NCCL's log
  bool nonblocking = false;                ///< --nonblocking (nccl): non-blocking communicators (config.blocking = 0)
  /// --sync: a barrier (not timed) before each timed iteration and only the operation timed, as
  /// IMB-MPI1 and the OSU benchmarks (run.timing_method barrier_separated); false: back to back
  bool sync = false;
  std::optional<int> inject_stall_rank;
  std::vector<InjectDelay> inject_delays;
  std::string sim_cluster;                 ///< --sim-cluster (sim): the cluster file to simulate
  std::string sim_fidelity = "packet";     ///< --fidelity (sim): packet | flow
  std::vector<std::string> sim_sets;       ///< --sim-set key.path=value (sim), in order
  std::vector<std::string> argv;           ///< the command line, for the results document
};

/// Outcome of parsing: either options to run, or an exit (help, version) already printed.
struct ParsedCli {
  BenchOptions options;
  bool exit_now = false;
  int exit_code = 0;
  bool show_version = false;
};

/// Parses --coll's comma list (names of all_colls(), or `all`). Throws UsageError naming the
/// unknown name, or the list when it names none.
std::vector<Coll> parse_colls(const std::string& list);

/// Parses argv. Prints --help itself; throws UsageError (one line naming the flag and value)
/// on any bad flag or value. Does not touch MPI or the machine.
ParsedCli parse_cli(int argc, const char* const* argv, std::string& help_text);

/// Checks relations between options that do not need the machine (min <= max, a growing step,
/// root within nranks x -g and injected ranks within nranks when nranks > 0; `nranks` counts
/// processes, and fire drills name processes; the sim flags only with --backend sim and the
/// flags the sim backend refuses). With --backend sim the root is checked against the cluster
/// later (its GPUs are the ranks). Throws UsageError.
void validate(const BenchOptions& o, int nranks);

/// One flag as railkit-bench's CLI11 parser defines it (names without their dashes).
struct CliFlag {
  std::vector<std::string> short_names, long_names;
  std::vector<std::string> negations;  ///< the names that turn a switch off ("no-observe")
  bool takes_value = false;
};
/// Every flag of the parser parse_cli uses, in definition order: for the test that holds them to
/// core's bench_flags(), from which parse_cli builds them.
std::vector<CliFlag> cli_flags();

/// Name of -a's mode: rank0|avg|min|max.
std::string_view average_name(Average a);
std::string_view placement_name(Placement p);

}  // namespace railkit::bench
