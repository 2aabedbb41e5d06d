#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "bench/options.hpp"
#include "core/bench_flags.hpp"
#include "core/collectives.hpp"
#include "core/error.hpp"

using namespace railkit::bench;

namespace {

ParsedCli parse(std::vector<std::string> args) {
  args.insert(args.begin(), "railkit-bench");
  std::vector<const char*> argv;
  for (auto& a : args) argv.push_back(a.c_str());
  std::string help;
  return parse_cli(static_cast<int>(argv.size()), argv.data(), help);
}

/// Expects a UsageError whose message names `needle`.
void expect_usage(std::vector<std::string> args, const std::string& needle) {
  try {
    parse(args);
    ADD_FAILURE() << "accepted: " << ::testing::PrintToString(args);
  } catch (const railkit::UsageError& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos) << "more than one line: " << e.what();
  }
}

}  // namespace

TEST(Options, DefaultsFollowNcclTests) {
  const BenchOptions o = parse({}).options;
  EXPECT_EQ(o.min_bytes, 32u << 20);
  EXPECT_EQ(o.max_bytes, 32u << 20);
  EXPECT_EQ(o.iters, 20);
  EXPECT_EQ(o.check_passes, 1);
  EXPECT_EQ(o.dtype, DType::Float);
  EXPECT_EQ(o.redop, RedOp::Sum);
  EXPECT_EQ(o.average, Average::Avg);
  EXPECT_EQ(o.placement, Placement::Both);
  EXPECT_EQ(o.colls, std::vector<Coll>{Coll::AllReduce});
}

TEST(Options, ShortAndLongFlags) {
  const BenchOptions o = parse({"-b", "8", "-e", "64M", "-f", "2", "-n", "5", "-w", "0", "-c", "2", "-d", "int8", "-o",
                                "max", "-r", "1", "-a", "3", "-N", "2", "-T", "10", "-J", "x.json", "--coll",
                                "all_reduce,alltoall", "--label", "L", "--placement", "in", "--inject-delay-us", "1:300",
                                "--inject-delay-us", "0:5"})
                             .options;
  EXPECT_EQ(o.min_bytes, 8u);
  EXPECT_EQ(o.max_bytes, 64u << 20);
  EXPECT_EQ(o.step_factor, 2u);
  EXPECT_EQ(o.iters, 5);
  EXPECT_EQ(o.warmup_iters, 0);
  EXPECT_EQ(o.check_passes, 2);
  EXPECT_EQ(o.dtype, DType::Int8);
  EXPECT_EQ(o.redop, RedOp::Max);
  EXPECT_EQ(o.root, 1);
  EXPECT_EQ(o.average, Average::Max);
  EXPECT_EQ(o.run_cycles, 2);
  EXPECT_DOUBLE_EQ(o.timeout_s, 10);
  EXPECT_EQ(o.output_file, "x.json");
  EXPECT_EQ(o.colls, (std::vector<Coll>{Coll::AllReduce, Coll::AllToAll}));
  EXPECT_EQ(o.placement, Placement::In);
  ASSERT_EQ(o.inject_delays.size(), 2u);
  EXPECT_EQ(o.inject_delays[0].rank, 1);
  EXPECT_EQ(o.inject_delays[0].delay_us, 300u);
  const BenchOptions l = parse({"--minbytes", "1K", "--maxbytes", "1M", "--stepfactor", "4", "--datatype", "double",
                                "--op", "prod", "--coll", "all"})
                             .options;
  EXPECT_EQ(l.min_bytes, 1024u);
  EXPECT_EQ(l.colls.size(), 7u);
}

TEST(Options, BadInputNamesTheFlagAndValue) {
  expect_usage({"-b", "64M", "-e", "1M"}, "-b/--minbytes '67108864' is larger than -e/--maxbytes '1048576'");
  expect_usage({"--coll", "all_reduce,allreduce"}, "--coll 'allreduce'");
  expect_usage({"-d", "float8"}, "-d/--datatype 'float8'");
  expect_usage({"-o", "xor"}, "-o/--op 'xor'");
  expect_usage({"-b", "0"}, "-b/--minbytes '0'");
  expect_usage({"-e", "-5"}, "-e/--maxbytes '-5'");
  expect_usage({"-b", "8", "-e", "64", "-f", "1", "-i", "0"}, "never grows");
  expect_usage({"-f", "0"}, "-f/--stepfactor '0'");
  expect_usage({"-n", "0"}, "-n/--iters '0'");
  expect_usage({"-a", "4"}, "-a/--average '4'");
  expect_usage({"-N", "0"}, "-N/--run_cycles '0'");
  expect_usage({"-T", "x"}, "-T/--timeout 'x'");
  expect_usage({"--placement", "sideways"}, "--placement 'sideways'");
  expect_usage({"--backend", "gloo"}, "--backend 'gloo'");
  expect_usage({"--inject-stall", "1"}, "--inject-stall '1' needs -T/--timeout");
  expect_usage({"--inject-delay-us", "3"}, "--inject-delay-us '3'");
  expect_usage({"--no-such-flag"}, "--no-such-flag");
}

TEST(Options, EmptyValuesAndRepeatedCollectivesAreRefused) {
  // `-d ''` ran float, `-b ''` complained about 33554432, `--coll a,a` recorded every size twice.
  for (const char* flag : {"-d", "-o", "--coll", "-b", "-e", "--backend", "--placement", "-n"})
    expect_usage({flag, ""}, "'': an empty value");
  expect_usage({"-d", ""}, "-d/--datatype '': an empty value");
  expect_usage({"--coll", "all_reduce,all_reduce"}, "--coll 'all_reduce,all_reduce': all_reduce is named twice");
  expect_usage({"--coll", "all,broadcast"}, "broadcast is named twice");
  EXPECT_EQ(parse({"--label", ""}).options.label, "");  // free text may be empty
  // Control characters would break the table's header line (issue 14); text that is not UTF-8 is
  // stored with U+FFFD instead.
  expect_usage({"--label", "a\nb"}, "--label 'a\\x0ab': control characters");
  expect_usage({"--label", "\x1b[31mred"}, "--label '\\x1b[31mred'");
  EXPECT_EQ(parse({"--label", "\xff\xfe"}).options.label, "\xff\xfe");
  EXPECT_EQ(parse({"--coll", "all_reduce,broadcast,"}).options.colls.size(), 2u);
}

TEST(Options, ValidateAgainstRankCount) {
  BenchOptions o;
  o.root = 4;
  EXPECT_THROW(validate(o, 4), railkit::UsageError);
  EXPECT_NO_THROW(validate(o, 5));
  o.root = 0;
  o.inject_delays.push_back({7, 10});
  EXPECT_THROW(validate(o, 4), railkit::UsageError);
}

TEST(Options, GpusPerProcess) {
  EXPECT_EQ(parse({}).options.gpus_per_process, 1);
  EXPECT_EQ(parse({"-g", "8"}).options.gpus_per_process, 8);  // which backend may take it is decided at run time
  EXPECT_EQ(parse({"--ngpus", "2"}).options.gpus_per_process, 2);
  expect_usage({"-g", "0"}, "-g/--ngpus '0'");
  expect_usage({"-g", "65"}, "-g/--ngpus '65'");
  expect_usage({"-g", "two"}, "-g/--ngpus 'two'");
}

TEST(Options, RootCountsEveryGpuRankButFireDrillsNameProcesses) {
  BenchOptions o;
  o.gpus_per_process = 4;
  o.root = 7;  // 2 processes x 4 GPUs: ranks 0..7
  EXPECT_NO_THROW(validate(o, 2));
  o.root = 8;
  EXPECT_THROW(validate(o, 2), railkit::UsageError);
  o.root = 0;
  o.inject_delays.push_back({2, 10});  // process 2 of 2 does not exist
  EXPECT_THROW(validate(o, 2), railkit::UsageError);
}

TEST(Options, HelpAndVersionExitEarly) {
  EXPECT_TRUE(parse({"--help"}).exit_now);
  const ParsedCli v = parse({"--version"});
  EXPECT_TRUE(v.exit_now);
  EXPECT_TRUE(v.show_version);
}

TEST(Options, SimBackendAndItsFlags) {
  const BenchOptions o = parse({"--backend", "sim", "--sim-cluster", "c.yaml", "--sim-set", "seed=3", "--sim-set",
                                "topology.spines=2", "--fidelity", "flow"})
                             .options;
  EXPECT_EQ(o.backend, BackendChoice::Sim);
  EXPECT_EQ(o.sim_cluster, "c.yaml");
  EXPECT_EQ(o.sim_fidelity, "flow");
  EXPECT_EQ(o.sim_sets, (std::vector<std::string>{"seed=3", "topology.spines=2"}));
  EXPECT_EQ(parse({"--backend", "sim", "--sim-cluster", "c.yaml"}).options.sim_fidelity, "packet");  // the default
  // The sim flags need --backend sim, and --backend sim needs a cluster.
  expect_usage({"--sim-cluster", "c.yaml"}, "--sim-cluster 'c.yaml': only with --backend sim");
  expect_usage({"--backend", "mpi", "--fidelity", "flow"}, "--fidelity 'flow': only with --backend sim");
  expect_usage({"--sim-set", "seed=2"}, "--sim-set 'seed=2': only with --backend sim");
  expect_usage({"--backend", "sim"}, "--backend sim: needs --sim-cluster");
  expect_usage({"--backend", "sim", "--sim-cluster", "c.yaml", "--fidelity", "fluid"}, "--fidelity 'fluid': expected packet or flow");
  expect_usage({"--backend", "sim", "--sim-cluster", ""}, "--sim-cluster '': an empty value");
  // What one process simulating every rank cannot honour is refused, never ignored.
  const std::vector<std::string> sim{"--backend", "sim", "--sim-cluster", "c.yaml"};
  const auto with = [&](std::vector<std::string> extra) {
    std::vector<std::string> a = sim;
    a.insert(a.end(), extra.begin(), extra.end());
    return a;
  };
  expect_usage(with({"-G", "2"}), "-G/--cudagraph '2': CUDA graphs are not simulated");
  expect_usage(with({"-g", "8"}), "-g/--ngpus '8': the sim backend simulates every GPU");
  expect_usage(with({"--split", "rail"}), "--split 'rail': the sim backend");
  expect_usage(with({"--device", "1"}), "--device '1': the sim backend");
  expect_usage(with({"--nonblocking"}), "--nonblocking: the sim backend");
  expect_usage(with({"--ranks-per-node", "4"}), "--ranks-per-node '4': the sim backend");
  expect_usage(with({"--inject-delay-us", "0:5"}), "--inject-delay-us '0:5': fire drills");
  expect_usage(with({"-T", "5", "--inject-stall", "1"}), "--inject-stall '1': fire drills");
  // The root counts the cluster's GPUs, known only once the cluster is read: not checked here.
  BenchOptions v = parse(with({"-r", "20"})).options;
  EXPECT_NO_THROW(validate(v, 1));
}

TEST(Options, SyncSeparatesIterationsByABarrier) {
  EXPECT_FALSE(parse({}).options.sync);  // back to back by default, as nccl-tests
  const BenchOptions o = parse({"--sync", "--backend", "nccl", "-g", "2", "--nonblocking", "-a", "3", "-N", "2"}).options;
  EXPECT_TRUE(o.sync);
  EXPECT_TRUE(o.nonblocking);
  EXPECT_TRUE(parse({"--sync", "--split", "mod:2", "-c", "0"}).options.sync);
  EXPECT_TRUE(parse({"--sync", "-G", "0"}).options.sync);  // -G 0 is off
  expect_usage({"--sync", "-G", "4"}, "--sync with -G/--cudagraph '4': a CUDA graph replays its -n launches back to back");
  expect_usage({"-G", "1", "--sync", "--backend", "nccl"}, "--sync with -G/--cudagraph '1'");
  expect_usage({"--backend", "sim", "--sim-cluster", "c.yaml", "--sync"}, "--sync with --backend sim:");
}

TEST(Options, HelpAndErrorsNameEveryCollectiveOfCoresTable) {
  const char* argv[] = {"railkit-bench", "--help"};
  std::string help;
  EXPECT_TRUE(parse_cli(2, argv, help).exit_now);
  EXPECT_NE(help.find(railkit::collective_names(" ") + ", or all"), std::string::npos) << help;
  expect_usage({"--coll", "nope"}, "unknown collective (" + railkit::collective_names(" ") + " all)");
}

TEST(Options, Cli11FlagsAreCoreBenchFlagsTable) {
  // The control plane finds and edits railkit-bench's flags over core's table (launch, tuner,
  // accept): a flag CLI11 spells otherwise, or reads as a switch where the table has an option,
  // would be misread there.
  const std::vector<CliFlag> cli = cli_flags();
  ASSERT_EQ(cli.size(), railkit::bench_flags().size());
  const auto bare = [](std::string_view n) {
    if (n.empty()) return std::vector<std::string>{};
    return std::vector<std::string>{std::string(n.substr(n[1] == '-' ? 2 : 1))};  // CLI11 keeps names bare
  };
  for (const railkit::BenchFlagSpec& s : railkit::bench_flags()) {
    const auto c =
        std::find_if(cli.begin(), cli.end(), [&](const CliFlag& x) { return x.long_names == bare(s.long_name); });
    ASSERT_NE(c, cli.end()) << s.long_name << " is in core's table but not railkit-bench's CLI";
    EXPECT_EQ(c->short_names, bare(s.short_name)) << s.long_name;
    EXPECT_EQ(c->negations, bare(s.negation)) << s.long_name;
    EXPECT_EQ(c->takes_value, s.takes_value) << s.long_name;
  }
}
