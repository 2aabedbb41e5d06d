#pragma once
// A generator of the profiler plugin's windows (`railkit.monitor.window/1`, monitor/README.md
// section 1) for the judge's tests: ranks of one communicator that run the same collectives,
// each finishing when the last rank has arrived, so a late rank waits least, as on a real ring.
#include <algorithm>
#include <cstdint>
#include <map>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "temp_dir.hpp"

namespace railkit::test {

/// One communicator of one job over some windows.
struct GenJob {
  std::string job = "1234", comm = "0x1f2e3d4c5b6a7988", source = "nccl", op = "AllReduce";
  int nranks = 8, ranks_per_host = 4, windows = 3, colls_per_window = 16;
  double window_s = 10, t0_unix_s = 1764780000.0, time_us = 1000, jitter_us = 20;
  std::map<int, double> late_us;         ///< rank -> how much later it arrives, every collective (us)
  std::map<std::string, double> clock_offset_us;  ///< host -> its clock's offset (us)
  std::map<std::pair<int, int>, double> nic_rate_GBps;  ///< (host index, NIC) -> rate; default 20
  int nics_per_host = 2;
  bool with_samples = true, with_nics = true;
  // Hang: the ranks of `stuck_ranks` have the collective after the last sample in flight at their last
  // window, `stuck_age_s` old; the ranks of `silent_ranks` write `silent_windows_missing` fewer windows.
  std::vector<int> stuck_ranks;
  double stuck_age_s = 0;
  std::vector<int> silent_ranks;
  int silent_windows_missing = 0;
  unsigned seed = 7;

  std::string host(int rank) const { return "node" + std::to_string(rank / ranks_per_host + 1); }
  /// The end of the last window: "now" for a live job.
  double end_unix_s() const { return t0_unix_s + windows * window_s; }
};

/// The windows of one rank, one JSON line each.
inline std::vector<std::string> gen_rank_lines(const GenJob& g, int rank) {
  std::mt19937 rng(g.seed * 1000u + static_cast<unsigned>(rank));
  std::uniform_real_distribution<double> jit(-g.jitter_us, g.jitter_us);
  std::vector<std::string> out;
  const int last = g.windows - (std::count(g.silent_ranks.begin(), g.silent_ranks.end(), rank) ? g.silent_windows_missing : 0);
  std::uint64_t seq = 100;
  for (int w = 0; w < last; ++w) {
    const double ws = g.t0_unix_s + w * g.window_s;
    nlohmann::ordered_json samples = nlohmann::ordered_json::array();
    for (int k = 0; k < g.colls_per_window; ++k, ++seq) {
      const double base_us = (ws - g.t0_unix_s) * 1e6 + 1000.0 + k * 50000.0;
      double latest_us = 0;  // when the last rank arrives (true time)
      for (int r = 0; r < g.nranks; ++r) latest_us = std::max(latest_us, base_us + (g.late_us.count(r) ? g.late_us.at(r) : 0));
      const double arrive_us = base_us + (g.late_us.count(rank) ? g.late_us.at(rank) : 0) + jit(rng);
      const double time_us = latest_us + g.time_us - arrive_us + jit(rng);
      const double offset_us = g.clock_offset_us.count(g.host(rank)) ? g.clock_offset_us.at(g.host(rank)) : 0;
      const auto start_ns = static_cast<std::int64_t>(g.t0_unix_s * 1e9) + static_cast<std::int64_t>((arrive_us + offset_us) * 1e3);
      samples.push_back({{"op", g.op}, {"seq", seq}, {"bytes", 1048576}, {"start_unix_ns", start_ns}, {"time_us", time_us}});
    }
    nlohmann::ordered_json nics = nlohmann::ordered_json::array();
    const int hi = rank / g.ranks_per_host;
    const int nic = (rank % g.ranks_per_host) % g.nics_per_host;
    if (g.with_nics) {
      const double rate = g.nic_rate_GBps.count({hi, nic}) ? g.nic_rate_GBps.at({hi, nic}) : 20.0;
      const double bytes = 4e9;
      nics.push_back({{"device", nic}, {"name", "mlx5_" + std::to_string(nic)}, {"bytes", bytes},
                      {"busy_us", bytes / rate / 1e3}, {"wrs", 1000}});
    }
    const bool stuck = w == last - 1 && std::count(g.stuck_ranks.begin(), g.stuck_ranks.end(), rank);
    nlohmann::ordered_json j = {
        {"schema", "railkit.monitor.window/1"}, {"source", g.source}, {"job", g.job}, {"host", g.host(rank)},
        {"pid", 4000 + rank}, {"rank", rank}, {"nranks", g.nranks}, {"nnodes", (g.nranks + g.ranks_per_host - 1) / g.ranks_per_host},
        {"comm", g.comm}, {"comm_name", ""}, {"abi", "v5"}, {"gpu", std::to_string(rank % g.ranks_per_host)},
        {"local_rank", rank % g.ranks_per_host},
        {"window", {{"index", w}, {"start_unix_s", ws}, {"end_unix_s", ws + g.window_s}}},
        {"colls", {{{"op", g.op}, {"bytes", 1048576}, {"algo", "RING"}, {"proto", "SIMPLE"}, {"channels", 16},
                    {"timing", "kernel"}, {"count", g.colls_per_window},
                    {"time_us", {{"p50", g.time_us}, {"min", g.time_us}, {"max", g.time_us}, {"sum", g.time_us * g.colls_per_window}}},
                    {"busbw_GBps", {{"p50", 15.2}, {"min", 4.5}}}}}},
        {"p2p", nlohmann::ordered_json::array()},
        {"samples", g.with_samples ? samples : nlohmann::ordered_json::array()},
        {"proxy", nlohmann::ordered_json::array()},
        {"nics", nics},
        {"inflight", {{"count", stuck ? 1 : 0}, {"oldest_seq", stuck ? seq : 0}, {"oldest_op", stuck ? g.op : ""},
                      {"oldest_age_s", stuck ? g.stuck_age_s : 0.0}}},
        {"last_completion_unix_s", ws + g.window_s - 0.1},
        {"dropped", {{"events", 0}, {"samples", 0}}},
        {"callbacks", 25000}};
    out.push_back(j.dump());
  }
  return out;
}

/// Writes every rank's windows to `<dir>/railkit-nccl-<host>-<pid>.jsonl`, as the plugin names them.
inline void gen_write(const GenJob& g, const TempDir& dir, const std::string& suffix = "") {
  for (int r = 0; r < g.nranks; ++r) {
    std::string text;
    for (const std::string& l : gen_rank_lines(g, r)) text += l + "\n";
    dir.write("railkit-nccl-" + g.host(r) + "-" + std::to_string(4000 + r) + suffix + ".jsonl", text);
  }
}

}  // namespace railkit::test
