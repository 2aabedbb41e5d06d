#pragma once
// What `railkit accept` found, and its printers: the table, accept.json (`railkit.accept/1`),
// JUnit XML, a Prometheus textfile and good-hosts. No stage prints a report; these do.
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/enums.hpp"
#include "core/prom.hpp"

namespace railkit::accept {

inline constexpr const char* kAcceptSchema = "railkit.accept/1";

/// One check of one node (or of the cluster: a rail, the whole set).
struct AcceptCheck {
  std::string check;     ///< "topo.lint", "node.all_reduce", "pair.all_reduce", "isolation" ...
  std::string measured;  ///< text: "12.34 GB/s", "2 errors", "skipped"
  std::optional<double> busbw_GBps;
  std::string expected;
  std::string rule;      ///< "profile" | "suite" | "peers" | "lint" | "majority" | "isolation" | "none" ...
  /// Written as name(verdict): pass | fail | skipped | explained | reported (measured, no rule
  /// judged it: never a pass).
  Verdict verdict = Verdict::Pass;
  std::string evidence;
};

/// The verdict of a set of checks (a node's, a cluster entity's, the whole run's):
/// - fail: a check failed;
/// - pass: something was judged (pass or explained) and nothing failed, and when bandwidth was
///   measured (a check is reported) some measurement was judged too: the topology checks
///   (`topo.*`, configuration) alone never make measurements that no rule judged a pass;
/// - reported: checks were measured but none of the measurements was judged;
/// - skipped: nothing ran (no check, or every check skipped).
Verdict overall_verdict(const std::vector<const AcceptCheck*>& checks);

struct AcceptEntity {
  std::string name;
  std::vector<AcceptCheck> checks;
  /// overall_verdict of its checks.
  Verdict verdict() const;
};

/// One command a stage ran: an entry of accept.json's `commands`.
struct CommandRecord {
  std::string stage;
  std::vector<std::string> argv;
  std::string result;  ///< LaunchResult::describe(): "exit code 0", "timed out (limit 10 s)" ...
  double elapsed_s = 0;
};

/// Everything the reports show.
struct AcceptReport {
  std::vector<AcceptEntity> nodes;    ///< one per node, in node order
  std::vector<AcceptEntity> cluster;  ///< rails ("rail0"), the whole set ("all"), failed launches ("stage:pair")
  nlohmann::ordered_json stages = nlohmann::ordered_json::array();  ///< per stage: status, launches, seconds
  std::vector<CommandRecord> commands;                              ///< every command run, in order
  nlohmann::ordered_json pairs = nlohmann::ordered_json::array();   ///< pair results with rounds
  nlohmann::ordered_json isolation = nlohmann::ordered_json::object();
  nlohmann::ordered_json rules = nlohmann::ordered_json::object();  ///< peer fraction, statistic, profile and why
  std::vector<std::string> notes;  ///< what a reader must know to read the verdicts (scale, stages that could not apply)
  double finished_unix_s = 0;      ///< when the run finished (Unix time, s); 0 = not recorded
  /// The nodes were emulated (ranks of one machine named `<hostname>:<i>`): the drain and cordon
  /// scripts name none of them.
  bool emulated = false;
  nlohmann::ordered_json rdma_pairs = nlohmann::ordered_json::array();  ///< the rdma-pair stage's runs
  nlohmann::ordered_json rdma_isolation = nlohmann::ordered_json::object();  ///< what it concluded
  /// overall_verdict of every check of every node and cluster entity.
  Verdict verdict() const;
  /// verdict() == Pass.
  bool passed() const;
  /// Checks per verdict name (pass, fail, skipped, explained, reported), every name present.
  std::map<std::string, int> counts() const;
  /// One line saying why the run has its verdict: "2 checks failed", "12 checks judged, all
  /// passed; 2 reported without a rule", "nothing judged: ..." (reported or skipped).
  std::string verdict_reason() const;
  /// The cluster entity `name`, added at the end when there is none yet.
  AcceptEntity& cluster_entity(const std::string& name);
};

/// XML text with & < > " ' escaped, and characters XML 1.0 cannot carry replaced by '?'.
std::string xml_escape(std::string_view s);
// Prometheus label values: core/prom.hpp.
using railkit::prom_escape;
using railkit::prom_label_value;

/// The table: node | check | measured | expected | verdict | rule, then `node: PASS|FAIL|REPORTED|SKIPPED`
/// per node, the notes (`note: ...`) and `verdict: PASS|... (reason)`.
std::string render_accept_table(const AcceptReport& r);
/// accept.json.
nlohmann::ordered_json to_json(const AcceptReport& r);

/// accept.json read back (accept_from_json): the report, and what to_json writes beside it.
struct AcceptDocument {
  AcceptReport report;
  std::string created;          ///< when accept.json was written, UTC ISO 8601
  std::string railkit_version;  ///< the railkit that wrote it
};

/// Reads accept.json (`railkit.accept/1`) back: everything to_json writes from the report (the
/// entities and their checks, notes, stages, commands, pairs, isolation, rdma_pairs,
/// rdma_isolation, rules), created and railkit_version. What to_json derives (verdict,
/// verdict_reason, counts, each entity's verdict) is not read: the report's methods give it again.
/// finished_unix_s and emulated are not in the document: they stay 0 and false. A malformed
/// document is a UsageError of one line naming `source` and the field ("accept.json: nodes[1].checks[0]:
/// verdict must be a string, not null").
AcceptDocument accept_from_json(const nlohmann::json& j, std::string_view source);
/// JUnit XML: one testsuite, one testcase per node (and cluster entity) and check, classname =
/// node; failed checks carry <failure message="...">, skipped checks <skipped message="..."/>,
/// reported checks <skipped message="reported: ..."/> (measured but judged by no rule: not a pass).
std::string render_junit(const AcceptReport& r);
/// Prometheus textfile (accept/README.md#reports): railkit_accept_check_pass (1 pass, 0 fail;
/// judged checks only), railkit_accept_check_verdict (1, the verdict in a label),
/// railkit_accept_busbw_gbps and railkit_accept_last_run_timestamp_seconds. Labels: `node` for a
/// node's checks, `rail` for a rail's, `check`; no white space in label values.
std::string render_prometheus(const AcceptReport& r);
/// good-hosts: one line per node that passed (its hostfile line: the host, or the emulated name);
/// a node whose measurements no rule judged (reported) is not listed.
std::string render_good_hosts(const AcceptReport& r);

/// bad-hosts: one line per node that failed, `node<TAB>check,check` (its failed checks in report
/// order); emulated runs start with a comment line and end each line with `<TAB>emulated`. Tabs,
/// commas and control characters inside a name become '_'. Empty (no line) when no node failed.
std::string render_bad_hosts(const AcceptReport& r);

/// drain-slurm.sh: a bash script (`set -euo pipefail`) with `scontrol update NodeName=<node>
/// State=DRAIN Reason='railkit: <checks>'` per failed node, every word shell-quoted. railkit never
/// runs it. Emulated runs: comments only (no node name), it does nothing.
std::string render_drain_slurm(const AcceptReport& r);

/// cordon-k8s.sh: as drain-slurm.sh, with `kubectl cordon <node>` and `kubectl taint nodes <node>
/// railkit.io/accept=failed:NoSchedule --overwrite` per failed node.
std::string render_cordon_k8s(const AcceptReport& r);

/// `s` as one POSIX shell word: unchanged when it holds only characters no shell interprets
/// (letters, digits, `_ . : / = @ % + , -`) and is not empty, else in single quotes (' as '\'').
std::string shell_word(std::string_view s);

}  // namespace railkit::accept
