// The simulator feeding the profiler plugin the event stream NCCL would: for each rank of a simulated
// 2-node cluster, each collective NCCL's cost model picks on it (algorithm, protocol, channels from
// sim::simulate_collective) is reported as NCCL 2.28 reports it, with the simulated kernel time as
// the GPU timer's start and stop. The plugin's windows must carry the simulator's numbers exactly
// (time, busbw as nccl-tests computes it, algorithm, protocol, channels) and say "simulated".
// What the simulator cannot give (per-rank arrival, proxy and NIC activity) is not fed.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include "plugin_drive.hpp"
#include "sim/collective.hpp"

namespace {

namespace fs = std::filesystem;
namespace pd = railkit::plugin_drive;
namespace rs = railkit::sim;

void quiet_log(railkit::nccl_prof_abi::LogLevel, unsigned long, const char*, int, const char*, ...) {}

/// ncclAlgoToString / ncclProtoToString spelling of the simulator's choice.
const char* nccl_algo(rs::Algo a) { return a == rs::Algo::Tree ? "TREE" : "RING"; }
const char* nccl_proto(rs::Proto p) {
  return p == rs::Proto::LL ? "LL" : p == rs::Proto::LL128 ? "LL128" : "SIMPLE";
}

struct Simulated {
  std::uint64_t bytes;
  rs::CollOutcome outcome;
};

TEST(MonitorSimFeed, PluginWindowsCarryTheSimulatorsNumbersMarkedSimulated) {
  const rs::ClusterSpec cluster =
      rs::load_cluster(fs::path(RAILKIT_SIM_EXAMPLES) / "cluster-4x8-1to1.yaml", {"topology.nodes=2"});
  const int nranks = cluster.gpus();
  std::vector<Simulated> sims;
  for (const std::uint64_t bytes : {std::uint64_t{1} << 20, std::uint64_t{64} << 20})
    sims.push_back({bytes, rs::simulate_collective(cluster, rs::NcclSettings{}, {rs::CollKind::AllReduce, bytes},
                                                   rs::Fidelity::Flow)});

  const fs::path dir = fs::temp_directory_path() / ("railkit-sim-feed-" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  setenv("RAILKIT_MONITOR_DIR", dir.c_str(), 1);
  setenv("RAILKIT_MONITOR_SOURCE", "simulated", 1);
  setenv("RAILKIT_MONITOR_WINDOW_S", "60", 1);  // one window, flushed at finalize
  {
    pd::Plugin plugin(RAILKIT_PROFILER_PLUGIN_PATH, "v5");
    constexpr int kIters = 4;
    for (int rank = 0; rank < nranks; ++rank) {
      void* ctx = nullptr;
      int mask = 0;
      ASSERT_EQ(plugin.init(&ctx, 0x5151, &mask, "sim", cluster.nodes(), nranks, rank, quiet_log), 0);
      std::uint64_t seq = 0, gpu_ns = 1'000'000;
      for (const Simulated& s : sims)
        for (int i = 0; i < kIters; ++i) {
          const auto& plan = s.outcome.plan;
          const auto kernel_ns = static_cast<std::uint64_t>(std::llround(s.outcome.time_us * 1e3));
          pd::kernel_collective(plugin, ctx, rank,
                                {"AllReduce", s.bytes / 4, "ncclFloat32", seq++, plan.channels, nccl_algo(plan.algo),
                                 nccl_proto(plan.proto), gpu_ns, gpu_ns + kernel_ns});
          gpu_ns += kernel_ns + 10'000;
        }
      plugin.finalize(ctx);
    }
  }
  unsetenv("RAILKIT_MONITOR_SOURCE");

  int lines = 0;
  std::map<std::uint64_t, int> buckets_seen;
  for (const auto& f : fs::directory_iterator(dir)) {
    if (f.path().extension() != ".jsonl") continue;
    std::ifstream in(f.path());
    for (std::string line; std::getline(in, line);) {
      const auto w = nlohmann::json::parse(line);
      ++lines;
      EXPECT_EQ(w["source"], "simulated") << line;
      EXPECT_EQ(w["nranks"], nranks);
      for (const auto& c : w["colls"]) {
        if (c["count"].get<int>() == 0) continue;
        const auto bytes = c["bytes"].get<std::uint64_t>();
        const auto it = std::find_if(sims.begin(), sims.end(), [&](const Simulated& s) { return s.bytes == bytes; });
        ASSERT_NE(it, sims.end()) << "a size nobody fed: " << c.dump();
        ++buckets_seen[bytes];
        const auto& plan = it->outcome.plan;
        EXPECT_EQ(c["op"], "AllReduce");
        EXPECT_EQ(c["algo"], nccl_algo(plan.algo)) << c.dump();
        EXPECT_EQ(c["proto"], nccl_proto(plan.proto)) << c.dump();
        EXPECT_EQ(c["channels"], plan.channels);
        EXPECT_EQ(c["timing"], "kernel");
        EXPECT_EQ(c["count"], 4);
        const double t_us = it->outcome.time_us;
        EXPECT_NEAR(c["time_us"]["p50"].get<double>(), t_us, 1e-3 + 1e-6 * t_us) << c.dump();
        // nccl-tests: algbw = bytes / time; busbw = algbw x 2(n-1)/n for all_reduce.
        const double busbw = double(bytes) / (t_us * 1e3) * 2.0 * (nranks - 1) / nranks;
        EXPECT_NEAR(c["busbw_GBps"]["p50"].get<double>(), busbw, 1e-3 * busbw) << c.dump();
      }
    }
  }
  EXPECT_EQ(lines, nranks);
  for (const Simulated& s : sims) EXPECT_EQ(buckets_seen[s.bytes], nranks) << s.bytes << " B";
  fs::remove_all(dir);
}

}  // namespace
