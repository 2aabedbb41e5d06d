#pragma once
// `railkit accept`: pre-flight acceptance of a set of nodes. Stages (each skippable in the suite
// file): topo lint and homogeneity per node, RDMA loopback per NIC, per-node busbw (--split node),
// per-rail busbw (--split rail), pairs by the circle method (--split nodes:...), the whole set, and
// isolation (pair evidence or bisection) naming the guilty node(s) or link(s). Documented in
// accept/README.md; reports: a table, accept.json (`railkit.accept/1`), JUnit XML,
// a Prometheus textfile and good-hosts.
#include <cstdint>
#include <filesystem>
#include <iosfwd>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/profile.hpp"
#include "launch/bench_run.hpp"

namespace railkit::accept {

using launch::LauncherKind;
using launch::LauncherOptions;

inline constexpr const char* kAcceptSchema = "railkit.accept/1";
inline constexpr const char* kAcceptSuiteSchema = "railkit.accept-suite/1";

/// Stage names, in run order, as the suite's `skip` spells them.
inline constexpr std::string_view kAcceptStages[] = {"topo", "rdma", "node", "rail", "pair", "all", "isolate"};

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
  std::vector<std::string> colls{"all_reduce", "all_gather"};
  bool runs(std::string_view stage) const { return skip.count(std::string(stage)) == 0; }
};

/// Parses and validates a suite document; `source` names it in errors. Throws UsageError.
AcceptSuite suite_from_json(const nlohmann::json& j, const std::string& source);
/// Reads a suite file. Throws UsageError naming the file.
AcceptSuite load_suite(const std::filesystem::path& path);

/// SuperBench's circle method: n - 1 rounds (n even; odd n gets a bye, node -1, whose pairs are
/// dropped: n rounds), each round a set of disjoint pairs (a < b), every pair exactly once.
/// n < 2 gives no round.
std::vector<std::vector<std::pair<int, int>>> circle_rounds(int n);

/// Median of the values (mean of the middle two for an even count); 0 when empty.
double median(std::vector<double> v);

/// How one measurement was judged.
struct Judgement {
  bool pass = true;
  std::string rule;       ///< "profile" | "suite" | "peers" | "none (reported)"
  std::string expected;   ///< ">= 12.30 GB/s (0.9 x peers' median 13.67)"
  std::optional<double> expected_GBps;
};

/// Against the suite's threshold for (stage, coll, bytes) when there is one, else against the
/// median of `peers` (below fraction x median fails), else no rule (passes, "none (reported)").
Judgement judge(const AcceptSuite& suite, std::string_view stage, std::string_view coll, std::uint64_t bytes,
                double measured_GBps, const std::vector<double>& peers);

/// Against a profile expectation: passes at or above busbw x (1 - tolerance).
Judgement judge_expectation(const ProfileExpectation& e, double measured_GBps);

/// One pair of the pair stage.
struct PairResult {
  int a = 0, b = 0;
  double busbw_GBps = 0;
  bool suspect = false;
};

/// What the isolation concluded.
struct Isolation {
  std::vector<int> guilty_nodes;                  ///< ascending
  std::vector<std::pair<int, int>> guilty_links;  ///< suspect pairs no guilty node explains
  std::map<int, std::string> evidence;            ///< per guilty node: what convicted it
};

/// From pair results: a node is guilty when it took part in >= 2 pairs and every one of them was
/// suspect, or when it is in >= 2 suspect pairs whose partners pass all their other pairs.
/// Suspect pairs that no guilty node explains are named as links. `names` label the evidence.
Isolation isolate_pairs(const std::vector<PairResult>& pairs, const std::vector<std::string>& names);

/// XML text with & < > " ' escaped, and characters XML 1.0 cannot carry replaced by '?'.
std::string xml_escape(std::string_view s);
/// A Prometheus label value: backslash, double quote and newline escaped.
std::string prom_escape(std::string_view s);

/// One check of one node (or of the cluster: a rail, the whole set).
struct AcceptCheck {
  std::string check;     ///< "topo.lint", "node.all_reduce", "pair.all_reduce", "isolation" ...
  std::string measured;  ///< text: "12.34 GB/s", "2 errors", "skipped"
  std::optional<double> busbw_GBps;
  std::string expected;
  std::string rule;      ///< "profile" | "suite" | "peers" | "lint" | "majority" | "isolation" | "none (reported)"
  std::string verdict;   ///< "pass" | "fail" | "skipped" | "explained"
  std::string evidence;
};

struct AcceptEntity {
  std::string name;
  std::vector<AcceptCheck> checks;
  /// fail when a check failed, else pass.
  std::string verdict() const;
};

/// Everything the reports show.
struct AcceptReport {
  std::vector<AcceptEntity> nodes;    ///< one per node, in node order
  std::vector<AcceptEntity> cluster;  ///< rails ("rail0") and the whole set ("all")
  nlohmann::ordered_json stages = nlohmann::ordered_json::array();    ///< per stage: status, launches, seconds
  nlohmann::ordered_json commands = nlohmann::ordered_json::array();  ///< every command run
  nlohmann::ordered_json pairs = nlohmann::ordered_json::array();     ///< pair results with rounds
  nlohmann::ordered_json isolation = nlohmann::ordered_json::object();
  nlohmann::ordered_json rules = nlohmann::ordered_json::object();  ///< peer fraction, statistic and why
  bool passed() const;
};

/// The table: node | check | measured | expected | verdict | rule.
std::string render_accept_table(const AcceptReport& r);
/// accept.json.
nlohmann::ordered_json to_json(const AcceptReport& r);
/// JUnit XML: one testsuite, one testcase per node (and cluster entity) and check, classname =
/// node; failed checks carry <failure message="...">.
std::string render_junit(const AcceptReport& r);
/// Prometheus textfile: railkit_accept_check_pass and railkit_accept_busbw_gbps gauges.
std::string render_prometheus(const AcceptReport& r);
/// good-hosts: one line per node that passed (its hostfile line: the host, or the emulated name).
std::string render_good_hosts(const AcceptReport& r);

/// Everything `railkit accept` needs.
struct AcceptOptions {
  LauncherOptions launcher;
  std::vector<AcceptNode> nodes;
  int emulated_rpn = 0;          ///< > 0: nodes are emulated, railkit-bench gets --ranks-per-node
  std::string bench;             ///< railkit-bench path
  std::string railkit;           ///< railkit path (for `topo` on each node)
  std::vector<std::string> bench_args;  ///< user's, after the defaults (which they override)
  std::filesystem::path out_dir;
  std::string junit;             ///< "" = none
  std::optional<ProfileDocument> profile;
  AcceptSuite suite;
  std::filesystem::path sysfs_root{"/"};  ///< where RDMA devices are looked for (sys/class/infiniband)
  double timeout_s = 600;        ///< per launch
};

/// The bench arguments every stage starts from: the defaults (real nodes: -b 16M -e 256M -f 4 -n 20
/// -w 5 --placement out; emulated: -b 4K -e 16K -f 4 -n 10 -w 3 --placement out) unless `user`
/// sets the same flag, then `user`. Throws UsageError when `user` sets what accept sets itself
/// (--split, --ranks-per-node, -J, --label, -N).
std::vector<std::string> merge_bench_args(const std::vector<std::string>& user, bool emulated);

/// Runs the suite. Progress goes to `progress`, the table to `out`; reports land in out_dir (and
/// junit). Returns 0 when everything passed, 10 (CheckFailed) otherwise. Throws UsageError for
/// bad options, IoError when the reports cannot be written.
int run_accept(const AcceptOptions& o, char* const* envp, std::ostream& out, std::ostream& progress);

}  // namespace railkit::accept
