#include "tuner/fingerprint.hpp"

#include <map>
#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/atomic_file.hpp"
#include "core/clock.hpp"
#include "core/error.hpp"
#include "core/json_text.hpp"
#include "core/launch.hpp"
#include "core/strings.hpp"
#include "launch/bench_run.hpp"
#include "topology/analyze.hpp"
#include "topology/compare.hpp"
#include "topology/probe.hpp"

namespace railkit::tuner {

namespace fs = std::filesystem;

FingerprintVerdict judge(const FingerprintFacts& facts) {
  FingerprintVerdict v;
  std::set<std::string> nics;
  std::map<std::string, std::vector<std::string>> hosts_of;  // hash -> hosts
  std::vector<std::string> failed;
  for (const auto& n : facts.nodes) {
    if (n.hash.empty()) {
      failed.push_back(fmt::format("{}: {}", n.host.empty() ? "?" : n.host, n.error));
      continue;
    }
    hosts_of[n.hash].push_back(n.host);
    nics.insert(n.nic_models.begin(), n.nic_models.end());
  }
  v.nic_models.assign(nics.begin(), nics.end());
  if (facts.source == "sim") {
    v.problem = "a simulated session measures no node: its cluster is the --sim-cluster file";
  } else if (facts.nodes.empty()) {
    v.problem = "no node was probed";
  } else if (!failed.empty()) {
    v.problem = fmt::format("the topology probe failed on {} of {} nodes ({})", failed.size(), facts.nodes.size(),
                            join(failed, "; "));
  } else if (hosts_of.size() > 1) {
    std::vector<std::string> groups;
    for (const auto& [hash, hosts] : hosts_of) groups.push_back(fmt::format("{} on {}", hash, join(hosts, ", ")));
    v.problem = fmt::format("the measured nodes' topology fingerprints differ ({}); `railkit topo --compare` "
                            "their documents says how", join(groups, "; "));
  } else {
    v.hash = hosts_of.begin()->first;
  }
  return v;
}

NodeFingerprint node_fingerprint_from_json(const std::string& text, const std::string& source) {
  const topo::NodeFacts facts = topo::node_facts_from_json(text, source);
  NodeFingerprint n;
  n.host = facts.node;
  n.hash = facts.hash;
  n.facts = facts.facts;
  std::set<std::string> nics;
  const nlohmann::json doc = parse_json(text);  // valid: node_facts_from_json read it
  if (doc.contains("nics") && doc["nics"].is_array())
    for (const auto& nic : doc["nics"])
      if (nic.is_object() && nic.contains("model") && nic["model"].is_string()) nics.insert(nic["model"].get<std::string>());
  n.nic_models.assign(nics.begin(), nics.end());
  return n;
}

FingerprintFacts probe_topo_root(const std::string& root) {
  FingerprintFacts f;
  f.source = "topo-root";
  f.root = root;
  f.probed = utc_now_iso();
  NodeFingerprint n;
  try {
    topo::ProbeOptions po;
    po.root = root;
    std::error_code ec;
    po.live_queries = fs::equivalent(root, "/", ec);  // as `railkit topo --root` does
    topo::Topology t = topo::probe_node(po);
    topo::analyze(t, topo::LintOptions{});
    n.host = t.host;
    n.hash = t.fingerprint.hash;
    n.facts = t.fingerprint.facts;
    std::set<std::string> nics;
    for (const auto& nic : t.nics) nics.insert(nic.model);
    n.nic_models.assign(nics.begin(), nics.end());
  } catch (const Error& e) {
    n.error = e.what();
  }
  f.nodes.push_back(std::move(n));
  return f;
}

namespace {

/// Probes one host; a failure is recorded in the result.
NodeFingerprint probe_one(const NodeProbe& p, const std::string& host, char* const* envp) {
  NodeFingerprint n;
  n.host = host;
  const std::string base = "topology/" + slug(host.empty() ? "node" : host);
  LaunchSpec spec;
  spec.argv = launch::one_host_argv(p.launcher, host, {p.railkit, "topo", "--format", "json"});
  spec.stdout_path = p.dir / (base + ".json");
  spec.stderr_path = p.dir / (base + ".stderr.txt");
  spec.timeout_s = p.timeout_s;
  spec.kill_grace_s = p.kill_grace_s;
  const LaunchResult r = run_process(spec, envp);
  if (r.end == LaunchResult::End::Interrupted)
    throw InterruptedError(r.signal, fmt::format("topology probe interrupted by signal {}", r.signal));
  if (!r.ok()) {
    n.error = "railkit topo: " + r.describe() + ": " + launch::telling_stderr_line(file_tail(spec.stderr_path, 20));
    return n;
  }
  try {
    NodeFingerprint got = node_fingerprint_from_json(read_file(spec.stdout_path), spec.stdout_path.string());
    n.hash = std::move(got.hash);
    n.nic_models = std::move(got.nic_models);
    n.facts = std::move(got.facts);
    n.document = base + ".json";
  } catch (const Error& e) {
    n.error = e.what();
  }
  return n;
}

}  // namespace

FingerprintFacts probe_nodes(const NodeProbe& probe, const std::vector<std::string>& hosts, char* const* envp) {
  FingerprintFacts f;
  f.source = "nodes";
  f.probed = utc_now_iso();
  fs::create_directories(probe.dir / "topology");
  const std::vector<std::string> targets = hosts.empty() ? std::vector<std::string>{""} : hosts;
  for (const auto& h : targets) f.nodes.push_back(probe_one(probe, h, envp));
  return f;
}

}  // namespace railkit::tuner
