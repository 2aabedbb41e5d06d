// Cluster files of railkit-bench --backend sim, and the NCCL settings the simulated NCCL reads.
#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/strings.hpp"
#include "sim/collective.hpp"
#include "sim/quantity.hpp"

namespace railkit::sim {
namespace {

using json = nlohmann::json;

void read_nvlink(const json& v, const std::string& source, ClusterSpec& c) {
  if (!v.is_object()) throw UsageError(source + ": nvlink: expected a mapping (rate, delay)");
  for (const auto& [key, value] : v.items()) {
    if (key == "rate") {
      c.nvlink_rate_bps = parse_rate_bps(value, source + ": nvlink.rate");
    } else if (key == "delay") {
      c.nvlink_delay_ps = parse_time_ps(value, source + ": nvlink.delay");
    } else {
      throw UsageError(source + ": nvlink." + key + ": unknown key (nvlink has rate and delay)");
    }
  }
}

}  // namespace

ClusterSpec parse_cluster(const json& doc, const std::string& source, const std::filesystem::path& base_dir) {
  if (!doc.is_object()) throw UsageError(source + ": a cluster is a mapping (name, topology, nvlink, nic, switch)");
  for (const char* key : {"duration", "flows", "output"})
    if (doc.contains(key))
      throw UsageError(fmt::format("{}: {}: belongs to railkit-sim scenarios, not to a cluster (the collectives "
                                   "railkit-bench runs are its traffic)",
                                   source, key));
  if (!doc.contains("topology")) throw UsageError(source + ": topology: missing");
  ClusterSpec c;
  json scenario = doc;
  scenario.erase("nvlink");
  json& topo = scenario["topology"];
  if (!topo.is_object()) throw UsageError(source + ": topology: expected a mapping");
  if (!topo.contains("kind")) topo["kind"] = "rail_optimized";
  if (topo["kind"] != "rail_optimized")
    throw UsageError(source + ": topology.kind: a cluster is rail_optimized (nodes x gpus_per_node, one NIC per GPU)");
  // Only the fabric's keys are read; the run length and traffic come from the collectives.
  scenario["duration"] = "1s";
  scenario["flows"] = json::array({json{{"src", 0}, {"dst", "all"}}});
  try {
    c.fabric = parse_scenario(scenario, source, base_dir);
  } catch (const UsageError& e) {
    if (std::string_view(e.what()).find(": flows") != std::string_view::npos)
      throw UsageError(source + ": topology: a cluster needs at least 2 GPUs (nodes x gpus_per_node)");
    throw;
  }
  c.fabric.flows.clear();
  c.fabric.source = doc;
  c.source = doc;
  if (doc.contains("nvlink")) read_nvlink(doc["nvlink"], source, c);
  if (c.gpus() < 2) throw UsageError(source + ": topology: a cluster needs at least 2 GPUs (nodes x gpus_per_node)");
  return c;
}

ClusterSpec load_cluster(const std::filesystem::path& path, const std::vector<std::string>& overrides) {
  return parse_cluster(read_document(path, overrides, "--sim-cluster"), path.filename().string(), path.parent_path());
}

namespace {

/// NCCL_ALGO / NCCL_PROTO: "Ring,Tree", "^Tree" (exclusion), any case. Returns the allowed
/// subset of `all` in its order; `modelled` names what the simulator has, `known` what NCCL has.
template <typename T>
std::vector<T> read_choice_list(const std::string& name, const std::string& value, const std::vector<std::pair<std::string, T>>& modelled,
                                const std::set<std::string>& known_other) {
  std::string text(trim(value));
  const bool exclude = !text.empty() && text.front() == '^';
  if (exclude) text.erase(0, 1);
  std::set<T> listed;
  for (const std::string& raw : split(text, ',')) {
    const std::string item = to_lower(trim(raw));
    if (item.empty()) continue;
    bool found = false;
    for (const auto& [n, v] : modelled)
      if (to_lower(n) == item) {
        listed.insert(v);
        found = true;
      }
    if (found) continue;
    if (!known_other.count(item)) throw UsageError(fmt::format("{} '{}': unknown name '{}'", name, value, raw));
  }
  std::vector<T> allowed;
  for (const auto& [n, v] : modelled)
    if (exclude != static_cast<bool>(listed.count(v))) allowed.push_back(v);
  if (allowed.empty()) {
    std::string names;
    for (const auto& [n, v] : modelled) names += (names.empty() ? "" : " and ") + n;
    throw UsageError(fmt::format("{} '{}': leaves nothing the simulator models (it models {} only)", name, value, names));
  }
  return allowed;
}

int read_int_setting(const std::string& name, const std::string& value, int lo, int hi) {
  return static_cast<int>(parse_int(name, trim(value), lo, hi));
}

}  // namespace

NcclSettings read_nccl_settings(const std::vector<std::pair<std::string, std::string>>& env) {
  NcclSettings s;
  for (const auto& [name, value] : env) {
    if (name.rfind("NCCL_", 0) != 0) continue;
    bool honoured = true;
    if (name == "NCCL_ALGO") {
      if (value.find(':') != std::string::npos || value.find(';') != std::string::npos) {
        honoured = false;  // per-collective lists are not modelled: reported inert
      } else {
        s.algos = read_choice_list<Algo>(name, value, {{"Ring", Algo::Ring}, {"Tree", Algo::Tree}},
                                         {"nvls", "nvlstree", "collnetdirect", "collnetchain", "collnet", "pat"});
      }
    } else if (name == "NCCL_PROTO") {
      if (value.find(':') != std::string::npos || value.find(';') != std::string::npos) {
        honoured = false;
      } else {
        s.protos = read_choice_list<Proto>(name, value, {{"LL", Proto::LL}, {"LL128", Proto::LL128}, {"Simple", Proto::Simple}}, {});
      }
    } else if (name == "NCCL_PXN_DISABLE") {
      s.pxn_disable = read_int_setting(name, value, 0, 1) == 1;
    } else if (name == "NCCL_P2P_PXN_LEVEL") {
      s.p2p_pxn_level = read_int_setting(name, value, 0, 2);
    } else if (name == "NCCL_CROSS_NIC") {
      s.cross_nic = read_int_setting(name, value, 0, 2);
    } else if (name == "NCCL_MIN_NCHANNELS" || name == "NCCL_MIN_CTAS") {
      s.min_channels = read_int_setting(name, value, 0, 64);
    } else if (name == "NCCL_MAX_NCHANNELS" || name == "NCCL_MAX_CTAS") {
      s.max_channels = read_int_setting(name, value, 1, 64);
    } else if (name == "NCCL_NCHANNELS_PER_NET_PEER") {
      s.channels_per_net_peer = read_int_setting(name, value, 1, 64);
    } else if (name == "NCCL_IB_QPS_PER_CONNECTION") {
      s.qps_per_connection = read_int_setting(name, value, 1, 128);
    } else if (name == "NCCL_IB_TC") {
      s.ib_tc = read_int_setting(name, value, 0, 255);
    } else {
      honoured = false;
    }
    if (honoured) s.honoured.emplace_back(name, value);
    else s.inert.push_back(name);
  }
  if (s.min_channels > s.max_channels)
    throw UsageError(fmt::format("NCCL_MIN_NCHANNELS {} is above NCCL_MAX_NCHANNELS {}", s.min_channels, s.max_channels));
  return s;
}

}  // namespace railkit::sim
