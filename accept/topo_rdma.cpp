#include "accept/topo_rdma.hpp"

#include <algorithm>
#include <fstream>
#include <map>
#include <ostream>

#include <fmt/format.h>

#include "accept/runner.hpp"
#include "core/atomic_file.hpp"
#include "core/env.hpp"
#include "core/error.hpp"
#include "core/json_text.hpp"
#include "core/strings.hpp"
#include "fabric/rdma_loopback.hpp"
#include "launch/bench_run.hpp"

namespace railkit::accept {
namespace fs = std::filesystem;
using nlohmann::json;

json read_json_or_null(const fs::path& path) {
  try {
    return parse_json(read_file(path));
  } catch (const json::exception&) {
    return json();
  } catch (const Error&) {
    return json();
  }
}

LaunchSpec node_tool_spec(const NodeTools& t, const AcceptNode& n, const std::string& dir, const std::string& stem,
                          const std::vector<std::string>& cmd) {
  LaunchSpec spec;
  spec.argv = launch::one_host_argv(t.launcher, t.emulated ? "" : n.host, cmd);
  spec.stdout_path = t.out_dir / dir / (stem + ".json");
  spec.stderr_path = t.out_dir / dir / (stem + ".stderr.txt");
  return spec;
}

namespace {

json read_json(const fs::path& path) { return read_json_or_null(path); }

CommandRecord command(const std::string& stage, const LaunchSpec& spec, const LaunchResult& lr) {
  return CommandRecord{stage, spec.argv, lr.describe(), lr.elapsed_s};
}

/// A node-local tool on node `n`: argv through the launcher, stdout and stderr in out_dir/<dir>/.
LaunchSpec tool_spec(const NodeTools& t, const AcceptNode& n, const std::string& dir, const std::vector<std::string>& cmd) {
  return node_tool_spec(t, n, dir, slug(n.name), cmd);
}

}  // namespace

// ---------------------------------------------------------------------------- topo

AcceptCheck lint_check(const std::string& topo_root, const std::optional<json>& doc, const LaunchResult& lr,
                       const std::string& stderr_line) {
  AcceptCheck c{"topo.lint", "", std::nullopt, "no error finding", "lint", Verdict::Pass, ""};
  if (!doc) {
    c.measured = "no document";
    c.verdict = Verdict::Fail;
    c.evidence = fmt::format("railkit topo --root {}: {}: {}", topo_root, lr.describe(), stderr_line);
    return c;
  }
  std::vector<std::string> errors;
  int warnings = 0;
  try {
    const std::string src = fmt::format("railkit topo --root {}", topo_root);
    const json findings = field_or(*doc, "findings", json::array(), src);
    if (!findings.is_array()) throw UsageError(fmt::format("{}: findings must be an array, not {}", src, findings.type_name()));
    for (std::size_t i = 0; i < findings.size(); ++i) {
      const json& f = findings[i];
      const std::string where = fmt::format("{}: findings[{}]", src, i);
      const std::string sev = field_or(f, "severity", "", where);
      if (sev == "error")
        errors.push_back(field_or(f, "check", "", where) + " " + field_or(f, "subject", "", where) + ": " +
                         field_or(f, "message", "", where));
      else if (sev == "warning")
        ++warnings;
    }
  } catch (const UsageError& e) {  // a malformed document fails this check; the other checks go on
    c.measured = "malformed document";
    c.verdict = Verdict::Fail;
    c.evidence = e.what();
    return c;
  }
  c.measured = fmt::format("{} error{}, {} warning{}", errors.size(), errors.size() == 1 ? "" : "s", warnings,
                           warnings == 1 ? "" : "s");
  const bool ran = lr.ok() || lr.exit_code == exit_code(ErrorCode::CheckFailed);
  c.verdict = errors.empty() && ran ? Verdict::Pass : Verdict::Fail;
  c.evidence = errors.empty() ? fmt::format("root {}", topo_root) : fmt::format("root {}: {}", topo_root, join(errors, "; "));
  return c;
}

std::vector<AcceptCheck> homogeneity_checks(const std::vector<topo::NodeFacts>& facts) {
  std::vector<AcceptCheck> out;
  if (facts.size() < 2) return out;
  const topo::CompareReport rep = topo::compare_nodes(facts);
  for (const topo::NodeFacts& f : facts) {
    AcceptCheck c{"topo.homogeneity", "same as the majority", std::nullopt,
                  fmt::format("fingerprint {}", rep.majority_hash.substr(0, 12)), "majority", Verdict::Pass, ""};
    const bool odd = std::find(rep.odd_nodes.begin(), rep.odd_nodes.end(), f.node) != rep.odd_nodes.end();
    if (odd && !rep.tie) {
      std::vector<std::string> what;
      for (const auto& d : rep.diffs)
        for (const auto& [who, val] : d.nodes)
          if (who == f.node) what.push_back(fmt::format("{} = {} (majority {})", d.fact, val, d.majority));
      c.measured = "differs";
      c.verdict = Verdict::Fail;
      c.evidence = what.empty() ? "fingerprint differs from the majority" : join(what, "; ");
    } else if (rep.tie) {
      c.measured = "no majority";
      c.expected = "-";
      c.rule = "none";
      c.verdict = Verdict::Reported;
      c.evidence = "fingerprints tie: no majority to compare with";
    }
    out.push_back(std::move(c));
  }
  return out;
}

std::vector<std::string> nic_names(const json& doc) {
  std::vector<std::string> nics;
  try {
    const json list = field_or(doc, "nics", json::array(), "railkit topo");
    for (std::size_t i = 0; i < list.size() && list.is_array(); ++i)
      nics.push_back(field_or(list[i], "name", "?", fmt::format("railkit topo: nics[{}]", i)));
  } catch (const UsageError&) {  // names as far as they could be read
  }
  return nics;
}

std::vector<RailNic> rail_nics(const json& doc) {
  std::vector<RailNic> out;
  if (!doc.is_object() || !doc.contains("nics") || !doc["nics"].is_array()) return out;
  std::map<std::string, int> gpu_index;
  if (doc.contains("gpus") && doc["gpus"].is_array())
    for (const json& g : doc["gpus"])
      if (g.is_object() && g.contains("name") && g["name"].is_string() && g.contains("index") && g["index"].is_number_integer())
        gpu_index[g["name"].get<std::string>()] = g["index"].get<int>();
  int other = 0;
  for (const json& n : doc["nics"]) {
    if (!n.is_object() || !n.contains("name") || !n["name"].is_string()) continue;
    std::optional<int> lowest;
    if (n.contains("gpus") && n["gpus"].is_array())
      for (const json& g : n["gpus"])
        if (g.is_string() && gpu_index.count(g.get<std::string>())) {
          const int i = gpu_index.at(g.get<std::string>());
          lowest = lowest ? std::min(*lowest, i) : i;
        }
    bool usable = false;
    if (n.contains("ports") && n["ports"].is_array())
      for (const json& p : n["ports"]) {
        if (!p.is_object() || !p.contains("state") || p["state"] != "ACTIVE") continue;
        usable = !(p.contains("link_layer") && p["link_layer"] == "Ethernet") ||
                 (p.contains("recommended_gid_index") && p["recommended_gid_index"].is_number_integer());
        break;  // the port used for traffic: the first ACTIVE one
      }
    out.push_back(RailNic{lowest ? fmt::format("GPU{}", *lowest) : fmt::format("NIC{}", other++),
                          n["name"].get<std::string>(), usable});
  }
  return out;
}

std::vector<RailNic> named_rail_nics(const std::vector<std::string>& names) {
  std::vector<RailNic> out;
  for (const std::string& n : names) out.push_back(RailNic{n, n});
  return out;
}

TopoStage topo_stage(const NodeTools& t, const std::vector<AcceptNode>& nodes) {
  fs::create_directories(t.out_dir / "topo");
  TopoStage out;
  std::vector<topo::NodeFacts> facts;
  std::vector<std::size_t> fact_node;
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    const AcceptNode& n = nodes[i];
    LaunchSpec spec = tool_spec(t, n, "topo", {t.railkit, "topo", "--root", n.topo_root, "--format", "json", "--lint"});
    spec.timeout_s = std::min(t.timeout_s, 120.0);
    const LaunchResult lr = run_process(spec, t.envp);
    out.commands.push_back(command("topo", spec, lr));
    const json doc = read_json(spec.stdout_path);
    out.nics.push_back(nic_names(doc));
    out.rail_nics.push_back(rail_nics(doc));
    const bool have_doc = doc.is_object() && doc.contains("findings");
    out.node_checks.emplace_back(i, lint_check(n.topo_root, have_doc ? std::optional<json>(doc) : std::nullopt, lr,
                                               launch::telling_stderr_line(file_tail(spec.stderr_path, 20))));
    if (!have_doc) continue;
    try {
      topo::NodeFacts nf = topo::node_facts_from_json(json_dump(doc), spec.stdout_path.string());
      nf.node = n.name;
      facts.push_back(std::move(nf));
      fact_node.push_back(i);
    } catch (const Error&) {
    }
  }
  // Homogeneity: the fingerprint of each node against the majority (`railkit topo --compare`).
  std::vector<AcceptCheck> homog = homogeneity_checks(facts);
  for (std::size_t k = 0; k < homog.size(); ++k) out.node_checks.emplace_back(fact_node[k], std::move(homog[k]));
  return out;
}

// ---------------------------------------------------------------------------- rdma

std::vector<std::vector<std::string>> sysfs_nics(const std::vector<AcceptNode>& nodes) {
  std::vector<std::vector<std::string>> out;
  for (const AcceptNode& n : nodes) {
    std::vector<std::string> nics;
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(fs::path(n.topo_root) / "sys/class/infiniband", ec))
      nics.push_back(e.path().filename().string());
    out.push_back(std::move(nics));
  }
  return out;
}

namespace {

/// The check of one NIC of a `railkit.rdma-loopback/1` document against `f` x its line rate.
AcceptCheck nic_check(const json& x, double f, const std::string& at) {
  const std::string nic = field_or(x, "name", "?", at);
  AcceptCheck c{"rdma.loopback." + nic, "", std::nullopt, "", "line rate", Verdict::Pass, ""};
  const std::string status = field_or(x, "status", "", at);
  const auto num = [&](const char* k) {
    return x.contains(k) && x[k].is_number() ? std::optional<double>(x[k].get<double>()) : std::nullopt;
  };
  const std::optional<double> rate = num("line_rate_Gbps"), got = num("measured_Gbps");
  const std::string where =
      fmt::format("{} port {}, NUMA {}, {}", nic, field_or(x, "port", 1, at),
                  x.contains("numa") && x["numa"].is_number() ? std::to_string(x["numa"].get<int>()) : "-",
                  x.contains("gpu") && x["gpu"].is_number() ? fmt::format("GPU{} memory", x["gpu"].get<int>())
                                                            : std::string("host memory"));
  c.expected = rate ? fmt::format(">= {:.1f} Gb/s ({:g} x line rate {:g} Gb/s)", f * *rate, f, *rate) : "line rate unknown";
  if (status == "skipped") {
    c.measured = "skipped";
    c.verdict = Verdict::Skipped;
    c.evidence = fmt::format("{}: {}", nic, field_or(x, "error", "", at));
  } else if (status != "ok" || !got) {
    c.measured = "failed";
    c.verdict = Verdict::Fail;
    c.evidence = fmt::format("ib_write_bw loopback on {} failed: {}", where, field_or(x, "error", "", at));
  } else if (!rate) {
    c.measured = fmt::format("{:.2f} Gb/s", *got);
    c.rule = "none";
    c.verdict = Verdict::Reported;
    c.evidence = fmt::format("ib_write_bw loopback on {}: {:.2f} Gb/s; the port's line rate is unknown", where, *got);
  } else {
    c.measured = fmt::format("{:.2f} Gb/s", *got);
    c.verdict = *got >= f * *rate ? Verdict::Pass : Verdict::Fail;
    c.evidence = fmt::format("ib_write_bw loopback on {}: {:.2f} of {:g} Gb/s line rate ({:.2f}){}", where, *got, *rate,
                             *got / *rate, c.verdict == Verdict::Fail ? fmt::format(", below {:g} x line rate", f) : "");
  }
  return c;
}

/// Runs the loopback specs: emulated nodes one after the other (stopping at an interruption),
/// real nodes at once.
std::vector<LaunchResult> run_loopbacks(const NodeTools& t, const std::vector<LaunchSpec>& specs) {
  if (!t.emulated) return fabric::run_concurrently(specs, t.envp);
  std::vector<LaunchResult> results;
  for (const LaunchSpec& spec : specs) {
    results.push_back(run_process(spec, t.envp));
    if (results.back().end == LaunchResult::End::Interrupted) break;
  }
  return results;
}

}  // namespace

std::vector<AcceptCheck> rdma_checks(const std::string& topo_root, double f, const json& doc, const LaunchResult& lr,
                                     const std::string& err, std::string& unavailable) {
  if (lr.end == LaunchResult::End::Exited && lr.exit_code == exit_code(ErrorCode::Unavailable)) {
    std::string reason = err;
    try {
      if (doc.is_object()) reason = field_or(doc, "reason", err, fmt::format("railkit rdma-loopback --root {}", topo_root));
    } catch (const UsageError& e) {
      reason = e.what();
    }
    unavailable = reason.empty() ? "exit 5" : reason;
    return {AcceptCheck{"rdma.loopback", "skipped", std::nullopt, "line rate", "none", Verdict::Skipped, reason}};
  }
  if (!lr.ok() || !doc.is_object() || !doc.contains("nics") || !doc["nics"].is_array())
    return {AcceptCheck{"rdma.loopback", "no document", std::nullopt, "line rate", "line rate", Verdict::Fail,
                        fmt::format("railkit rdma-loopback --root {}: {}{}", topo_root, lr.describe(),
                                    err.empty() ? "" : ": " + err)}};
  std::vector<AcceptCheck> out;
  for (std::size_t i = 0; i < doc["nics"].size(); ++i) {
    const std::string at = fmt::format("railkit rdma-loopback --root {}: nics[{}]", topo_root, i);
    try {
      out.push_back(nic_check(doc["nics"][i], f, at));
    } catch (const UsageError& e) {  // a malformed entry fails its check; the other NICs go on
      out.push_back(AcceptCheck{"rdma.loopback", "malformed document", std::nullopt, "line rate", "line rate", Verdict::Fail,
                                e.what()});
    }
  }
  return out;
}

StageResult rdma_stage(const NodeTools& t, const std::vector<AcceptNode>& nodes,
                       const std::vector<std::vector<std::string>>& nics, const AcceptSuite& suite,
                       std::ostream& progress) {
  fs::create_directories(t.out_dir / "rdma");
  StageResult out;
  std::string ib_write_bw = suite.ib_write_bw;
  if (ib_write_bw.empty()) ib_write_bw = env_value(t.envp, "RAILKIT_IB_WRITE_BW");
  std::vector<std::size_t> which;
  std::vector<LaunchSpec> specs;
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    if (i >= nics.size() || nics[i].empty()) {
      out.node_checks.emplace_back(i, AcceptCheck{"rdma.loopback", "skipped", std::nullopt, "line rate", "none",
                                                  Verdict::Skipped, "no RDMA device"});
      continue;
    }
    std::vector<std::string> cmd{t.railkit, "rdma-loopback", "--root", nodes[i].topo_root, "--duration-s",
                                 std::to_string(suite.rdma_duration_s)};
    if (!ib_write_bw.empty()) cmd.insert(cmd.end(), {"--ib-write-bw", ib_write_bw});
    LaunchSpec spec = tool_spec(t, nodes[i], "rdma", cmd);
    spec.timeout_s = std::min(t.timeout_s, suite.rdma_duration_s + 120.0);
    which.push_back(i);
    specs.push_back(std::move(spec));
  }
  if (specs.empty()) {
    out.skipped = "no RDMA device";
    return out;
  }
  progress << fmt::format("railkit accept: rdma: ib_write_bw loopback on {} node{} ({} s each{}) ...\n", specs.size(),
                          specs.size() == 1 ? "" : "s", suite.rdma_duration_s,
                          t.emulated ? ", one after the other: emulated nodes share this machine" : ", at once")
           << std::flush;
  const std::vector<LaunchResult> results = run_loopbacks(t, specs);
  out.launches = static_cast<int>(results.size());
  std::vector<std::string> unavailable;
  for (std::size_t k = 0; k < results.size(); ++k) {
    out.commands.push_back(command("rdma", specs[k], results[k]));
    if (results[k].end == LaunchResult::End::Interrupted) throw accept_interrupted(results[k].signal, t.out_dir);
    std::string reason;
    const std::string err = launch::telling_stderr_line(file_tail(specs[k].stderr_path, 20));
    for (AcceptCheck& c : rdma_checks(nodes[which[k]].topo_root, suite.rdma_fraction, read_json(specs[k].stdout_path),
                                      results[k], err, reason))
      out.node_checks.emplace_back(which[k], std::move(c));
    if (!reason.empty()) unavailable.push_back(reason);
  }
  if (unavailable.size() == specs.size()) out.skipped = "rdma-loopback unavailable: " + unavailable.front();
  return out;
}

}  // namespace railkit::accept
