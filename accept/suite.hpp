#pragma once
// What `railkit accept` is asked to run: the nodes under test, the suite file
// (`railkit.accept-suite/1`, accept/README.md) and the railkit-bench arguments every stage starts from.
#include <cstdint>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace railkit::accept {

inline constexpr const char* kAcceptSuiteSchema = "railkit.accept-suite/1";

/// One node under test.
struct AcceptNode {
  std::string name;       ///< host name, or `<hostname>:<i>` for an emulated node
  std::string host;       ///< where its processes run (the launcher's host)
  std::vector<int> ranks; ///< its world ranks
  std::string topo_root = "/";  ///< what `railkit topo --root` probes for it
};

/// Emulated nodes: np / k nodes, node i = ranks [ik, (i+1)k), named "<hostname>:<i>".
/// Throws UsageError when k < 1 or np is not a multiple of k (or np / k < 1).
std::vector<AcceptNode> emulated_nodes(const std::string& hostname, int np, int k);

/// Nodes from a hostfile's text ("host [slots=N]" per line, '#' comments): one node per distinct
/// host in order, `ppn` ranks each (ranks in node order, as mpirun -N places them).
/// Throws UsageError for an empty hostfile or ppn < 1.
std::vector<AcceptNode> hostfile_nodes(const std::string& text, int ppn);

/// The nodes' names, in node order.
std::vector<std::string> node_names(const std::vector<AcceptNode>& nodes);

/// An absolute threshold of the suite: busbw of `coll` at `bytes` in `stage` (node, rail, pair,
/// all; "" = every stage).
struct SuiteThreshold {
  std::string stage;
  std::string coll;
  std::uint64_t bytes = 0;
  double busbw_GBps = 0;
};

/// The suite file (`railkit.accept-suite/1`, accept/README.md).
struct AcceptSuite {
  std::set<std::string> skip;            ///< stages not to run
  double peer_fraction = 0.9;            ///< below this fraction of the peers' median is suspect
  /// Used instead of peer_fraction when the ranks oversubscribe the CPUs of one machine (emulated
  /// nodes with more ranks than CPUs), where scheduling noise alone spreads groups several-fold.
  double oversubscribed_peer_fraction = 0.25;
  bool peer_fraction_set = false;        ///< the suite gave peer_fraction: it wins even when oversubscribed
  /// Which time the judged busbw comes from: "p50" (median iteration: robust to OS noise; a slow
  /// link slows every iteration) or "avg" (the loop time, as nccl-tests; also catches intermittent slowness).
  std::string statistic = "p50";
  std::vector<SuiteThreshold> thresholds;
  std::map<std::string, std::string> topo_roots;  ///< node name -> root for `railkit topo --root`
  double rdma_fraction = 0.9;  ///< a NIC's loopback below this fraction of its line rate fails
  int rdma_duration_s = 5;     ///< seconds of each ib_write_bw (`railkit rdma-loopback --duration-s`)
  /// ib_write_bw path on the nodes ("" = $RAILKIT_IB_WRITE_BW of accept's environment, else PATH).
  std::string ib_write_bw;
  /// node name -> the address its rdma-pair server is reached at (perftest's TCP handshake); a
  /// node not named: its host name.
  std::map<std::string, std::string> rdma_addresses;
  std::vector<std::string> colls{"all_reduce", "all_gather"};
  bool runs(std::string_view stage) const { return skip.count(std::string(stage)) == 0; }
};

/// Parses and validates a suite document; `source` names it in errors. Throws UsageError.
AcceptSuite suite_from_json(const nlohmann::json& j, const std::string& source);
/// Reads a suite file. Throws UsageError naming the file.
AcceptSuite load_suite(const std::filesystem::path& path);

/// The collective the pair stage and bisection judge: all_reduce when the suite measures it,
/// else the suite's first collective.
std::string pair_coll(const AcceptSuite& suite);

/// The bench arguments every stage starts from: the defaults (real nodes: -b 16M -e 256M -f 4 -n 20
/// -w 5 --placement out; emulated: -b 4K -e 16K -f 4 -n 10 -w 3 --placement out) unless `user`
/// sets the same flag, then `user`. Throws UsageError when `user` sets what accept sets itself
/// (--split, --ranks-per-node, -J, --label, -N).
std::vector<std::string> merge_bench_args(const std::vector<std::string>& user, bool emulated);

/// merge_bench_args, preceded by `--coll` with the suite's collectives unless `user` sets --coll.
std::vector<std::string> stage_bench_args(const std::vector<std::string>& user, bool emulated,
                                          const std::vector<std::string>& colls);

/// The common arguments of a launch whose own arguments `own` set sizes or collectives (-b, -e,
/// -f, -i, --coll, in any spelling: "-b 4K", "-b4K", "-b=4K", "--minbytes 4K", "--minbytes=4K"):
/// `common` without those flags and their values, so that `own` (appended after) replaces them
/// (railkit-bench refuses a flag given twice).
std::vector<std::string> without_overridden(const std::vector<std::string>& common, const std::vector<std::string>& own);

}  // namespace railkit::accept
