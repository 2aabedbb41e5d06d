#pragma once
// What `railkit accept` found, and its printers: the table, accept.json (`railkit.accept/1`),
// JUnit XML, a Prometheus textfile and good-hosts. No stage prints a report; these do.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/enums.hpp"

namespace railkit::accept {

inline constexpr const char* kAcceptSchema = "railkit.accept/1";

/// One check of one node (or of the cluster: a rail, the whole set).
struct AcceptCheck {
  std::string check;     ///< "topo.lint", "node.all_reduce", "pair.all_reduce", "isolation" ...
  std::string measured;  ///< text: "12.34 GB/s", "2 errors", "skipped"
  std::optional<double> busbw_GBps;
  std::string expected;
  std::string rule;      ///< "profile" | "suite" | "peers" | "lint" | "majority" | "isolation" | "none (reported)"
  Verdict verdict = Verdict::Pass;  ///< written as name(verdict): pass | fail | skipped | explained
  std::string evidence;
};

struct AcceptEntity {
  std::string name;
  std::vector<AcceptCheck> checks;
  /// Fail when a check failed, else Pass.
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
  nlohmann::ordered_json rules = nlohmann::ordered_json::object();  ///< peer fraction, statistic and why
  bool passed() const;
  /// The cluster entity `name`, added at the end when there is none yet.
  AcceptEntity& cluster_entity(const std::string& name);
};

/// XML text with & < > " ' escaped, and characters XML 1.0 cannot carry replaced by '?'.
std::string xml_escape(std::string_view s);
/// A Prometheus label value: backslash, double quote and newline escaped.
std::string prom_escape(std::string_view s);

/// The table: node | check | measured | expected | verdict | rule, then `node: PASS|FAIL`.
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

}  // namespace railkit::accept
