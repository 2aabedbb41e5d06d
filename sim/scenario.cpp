#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <string>

#include <fmt/format.h>

#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "core/json_text.hpp"
#include "core/yaml.hpp"
#include "sim/quantity.hpp"
#include "sim/scenario.hpp"
#include "sim/scenario_read.hpp"

namespace railkit::sim {
namespace detail {

std::string join_key(const std::string& path, std::string_view key) {
  return path.empty() ? std::string(key) : path + "." + std::string(key);
}

void read_object(const json& j, const std::string& path, std::span<const Field> fields, const Ctx& ctx, Scenario& s) {
  if (!j.is_object()) throw UsageError(ctx.where(path.empty() ? "scenario" : path) + ": expected a mapping of keys");
  for (const auto& f : fields) {
    auto it = j.find(std::string(f.key));
    if (it != j.end()) f.read(*it, join_key(path, f.key), ctx, s);
  }
  for (auto it = j.begin(); it != j.end(); ++it) {
    const bool known = std::any_of(fields.begin(), fields.end(), [&](const Field& f) { return f.key == it.key(); });
    if (known) continue;
    std::string names;
    for (const auto& f : fields) names += (names.empty() ? "" : ", ") + std::string(f.key);
    throw UsageError(ctx.where(join_key(path, it.key())) + ": unknown key (expected one of: " + names + ")");
  }
}

std::int64_t read_int(const json& v, const std::string& key, const Ctx& ctx, std::int64_t lo, std::int64_t hi) {
  std::int64_t x = 0;
  if (v.is_number_integer()) {
    x = v.get<std::int64_t>();
  } else if (v.is_number_float() && std::floor(v.get<double>()) == v.get<double>() && std::abs(v.get<double>()) < 9e18) {
    x = static_cast<std::int64_t>(v.get<double>());
  } else {
    throw UsageError(fmt::format("{}: '{}': expected an integer", ctx.where(key), json_dump(v)));
  }
  if (x < lo || x > hi) throw UsageError(fmt::format("{}: {}: outside {}..{}", ctx.where(key), x, lo, hi));
  return x;
}

double read_number(const json& v, const std::string& key, const Ctx& ctx, double lo, double hi) {
  if (!v.is_number()) throw UsageError(fmt::format("{}: '{}': expected a number", ctx.where(key), json_dump(v)));
  const double x = v.get<double>();
  if (!std::isfinite(x) || x < lo || x > hi) throw UsageError(fmt::format("{}: {}: outside {}..{}", ctx.where(key), x, lo, hi));
  return x;
}

bool read_bool(const json& v, const std::string& key, const Ctx& ctx) {
  if (!v.is_boolean()) throw UsageError(fmt::format("{}: '{}': expected true or false", ctx.where(key), json_dump(v)));
  return v.get<bool>();
}

std::string read_string(const json& v, const std::string& key, const Ctx& ctx) {
  if (!v.is_string()) throw UsageError(fmt::format("{}: '{}': expected a string", ctx.where(key), json_dump(v)));
  return v.get<std::string>();
}

std::array<bool, kPriorities> read_priorities(const json& v, const std::string& key, const Ctx& ctx) {
  std::array<bool, kPriorities> set{};
  const json list = v.is_array() ? v : json::array({v});
  for (const auto& p : list) set[static_cast<size_t>(read_int(p, key, ctx, 0, kPriorities - 1))] = true;
  return set;
}

}  // namespace detail

namespace {

using detail::Ctx;
using detail::Field;
using detail::json;

struct KindRow {
  std::string_view name;
  TopologyKind kind;
  std::array<std::string_view, 6> keys;  ///< the shape keys this kind takes
};

constexpr std::array kKinds = {
    KindRow{"single_switch", TopologyKind::SingleSwitch, {"hosts"}},
    KindRow{"leaf_spine", TopologyKind::LeafSpine,
            {"leaves", "hosts_per_leaf", "spines", "oversubscription", "fabric_rate", "fabric_delay"}},
    KindRow{"rail_optimized", TopologyKind::RailOptimized,
            {"nodes", "gpus_per_node", "spines", "oversubscription", "fabric_rate", "fabric_delay"}},
};

constexpr std::array<std::string_view, 8> kShapeKeys = {"hosts", "leaves", "hosts_per_leaf", "nodes",
                                                        "gpus_per_node", "spines", "oversubscription", "fabric_rate"};

const KindRow& kind_row(TopologyKind k) {
  for (const auto& r : kKinds)
    if (r.kind == k) return r;
  return kKinds[0];
}

int count(const json& v, const std::string& key, const Ctx& ctx) {
  return static_cast<int>(detail::read_int(v, key, ctx, 0, 1 << 20));
}

constexpr std::array kTopologyFields = {
    Field{"kind",
          [](const json& v, const std::string& key, const Ctx& ctx, Scenario& s) {
            const std::string k = detail::read_string(v, key, ctx);
            for (const auto& r : kKinds)
              if (r.name == k) {
                s.topology.kind = r.kind;
                return;
              }
            throw UsageError(ctx.where(key) + ": '" + k + "': expected single_switch, leaf_spine or rail_optimized");
          }},
    Field{"hosts", [](const json& v, const std::string& k, const Ctx& c, Scenario& s) { s.topology.hosts = count(v, k, c); }},
    Field{"leaves", [](const json& v, const std::string& k, const Ctx& c, Scenario& s) { s.topology.leaves = count(v, k, c); }},
    Field{"hosts_per_leaf",
          [](const json& v, const std::string& k, const Ctx& c, Scenario& s) { s.topology.hosts_per_leaf = count(v, k, c); }},
    Field{"nodes", [](const json& v, const std::string& k, const Ctx& c, Scenario& s) { s.topology.nodes = count(v, k, c); }},
    Field{"gpus_per_node",
          [](const json& v, const std::string& k, const Ctx& c, Scenario& s) { s.topology.gpus_per_node = count(v, k, c); }},
    Field{"spines", [](const json& v, const std::string& k, const Ctx& c, Scenario& s) { s.topology.spines = count(v, k, c); }},
    Field{"oversubscription",
          [](const json& v, const std::string& k, const Ctx& c, Scenario& s) {
            s.topology.oversubscription = detail::read_number(v, k, c, 1e-3, 1e3);
          }},
    Field{"link_rate",
          [](const json& v, const std::string& k, const Ctx& c, Scenario& s) { s.topology.link_rate_bps = parse_rate_bps(v, c.where(k)); }},
    Field{"link_delay",
          [](const json& v, const std::string& k, const Ctx& c, Scenario& s) { s.topology.link_delay_ps = parse_time_ps(v, c.where(k)); }},
    Field{"fabric_rate",
          [](const json& v, const std::string& k, const Ctx& c, Scenario& s) { s.topology.fabric_rate_bps = parse_rate_bps(v, c.where(k)); }},
    Field{"fabric_delay",
          [](const json& v, const std::string& k, const Ctx& c, Scenario& s) { s.topology.fabric_delay_ps = parse_time_ps(v, c.where(k)); }},
    Field{"mtu_bytes",
          [](const json& v, const std::string& k, const Ctx& c, Scenario& s) {
            const auto m = detail::read_int(v, k, c, 0, 1 << 20);
            if (m != 256 && m != 512 && m != 1024 && m != 2048 && m != 4096)
              throw UsageError(fmt::format("{}: {}: a RoCE MTU is 256, 512, 1024, 2048 or 4096", c.where(k), m));
            s.topology.mtu_bytes = static_cast<std::uint32_t>(m);
          }},
};

/// Two tiers: `spines` is the count and `fabric_rate` the speed of one leaf-spine link (default:
/// link_rate); the oversubscription (host bandwidth / uplink bandwidth of a leaf) follows from
/// them. A given `oversubscription` sets the spine count where `spines` is absent; given with
/// `spines`, it must agree with them.
void resolve_spines(const json& j, const Ctx& ctx, TopologySpec& t, int per_leaf, int leaves) {
  const bool has_spines = j.contains("spines");
  const bool has_over = j.contains("oversubscription");
  if (t.fabric_rate_bps <= 0) t.fabric_rate_bps = t.link_rate_bps;
  const double host_bps = per_leaf * t.link_rate_bps;
  const auto rate = [](double bps) { return fmt::format("{:g} Gb/s", bps / 1e9); };
  if (!has_spines && has_over) {
    const double want = host_bps / (t.oversubscription * t.fabric_rate_bps);
    const double n = std::round(want);
    if (n < 1 || std::abs(want - n) > 1e-6 * want)
      throw UsageError(fmt::format("{}: {:g}: {} hosts per leaf x {} over {}:1 needs {:.4g} spines at {} each "
                                   "(topology.fabric_rate), not a whole number >= 1; give topology.spines instead",
                                   ctx.where("topology.oversubscription"), t.oversubscription, per_leaf,
                                   rate(t.link_rate_bps), t.oversubscription, want, rate(t.fabric_rate_bps)));
    t.spines = static_cast<int>(n);
  }
  const std::string why = t.kind == TopologyKind::LeafSpine ? "several leaves need at least 1 spine" : "several rails need at least 1 spine";
  if (t.spines < (leaves > 1 ? 1 : 0))
    throw UsageError(fmt::format("{}: {}: {}", ctx.where("topology.spines"), t.spines, why));
  if (t.spines == 0) return;  // one leaf, no uplinks: no oversubscription
  const double derived = host_bps / (t.spines * t.fabric_rate_bps);
  if (has_spines && has_over && std::abs(derived - t.oversubscription) > 1e-6 * t.oversubscription)
    throw UsageError(fmt::format("{}, topology.oversubscription: {} spines x {} (topology.fabric_rate) under {} hosts per leaf x "
                                 "{} is {:g}:1, not {:g}:1; give one of topology.spines and topology.oversubscription",
                                 ctx.where("topology.spines"), t.spines, rate(t.fabric_rate_bps), per_leaf,
                                 rate(t.link_rate_bps), derived, t.oversubscription));
  t.oversubscription = derived;
}

/// Checks the shape: only the kind's keys, enough of everything, a link rate.
void check_topology(const json& j, const Ctx& ctx, TopologySpec& t) {
  const KindRow& row = kind_row(t.kind);
  for (auto key : kShapeKeys)
    if (j.contains(std::string(key)) && std::find(row.keys.begin(), row.keys.end(), key) == row.keys.end())
      throw UsageError(fmt::format("{}: not a key of kind {}", ctx.where("topology." + std::string(key)), row.name));
  if (!j.contains("kind")) throw UsageError(ctx.where("topology.kind") + ": missing (single_switch, leaf_spine or rail_optimized)");
  if (t.link_rate_bps <= 0) throw UsageError(ctx.where("topology.link_rate") + ": missing (a rate such as 100Gbps)");
  const auto need = [&](int v, int min, std::string_view key, std::string_view why) {
    if (v < min) throw UsageError(fmt::format("{}: {}: {}", ctx.where("topology." + std::string(key)), v, why));
  };
  // At most kMaxHosts, each count alone and their product (in 64 bits), before anything is built.
  const auto at_most = [&](std::int64_t hosts, std::string_view key, std::string_view what) {
    if (hosts > kMaxHosts)
      throw UsageError(fmt::format("{}: {} hosts ({}): more than railkit-sim builds (at most {})",
                                   ctx.where("topology." + std::string(key)), hosts, what, kMaxHosts));
  };
  int per_leaf = 0;
  int leaves = 0;
  switch (t.kind) {
    case TopologyKind::SingleSwitch:
      need(t.hosts, 2, "hosts", "a single switch needs at least 2 hosts");
      at_most(t.hosts, "hosts", "on one switch");
      return;
    case TopologyKind::LeafSpine:
      need(t.leaves, 1, "leaves", "at least 1 leaf");
      need(t.hosts_per_leaf, 1, "hosts_per_leaf", "at least 1 host per leaf");
      at_most(std::int64_t{t.leaves} * t.hosts_per_leaf, "hosts_per_leaf", "leaves x hosts_per_leaf");
      need(t.leaves * t.hosts_per_leaf, 2, "hosts_per_leaf", "the fabric needs at least 2 hosts");
      per_leaf = t.hosts_per_leaf;
      leaves = t.leaves;
      break;
    case TopologyKind::RailOptimized:
      need(t.nodes, 1, "nodes", "at least 1 node");
      need(t.gpus_per_node, 1, "gpus_per_node", "at least 1 GPU per node");
      at_most(std::int64_t{t.nodes} * t.gpus_per_node, "nodes", "nodes x gpus_per_node");
      need(t.nodes * t.gpus_per_node, 2, "nodes", "the cluster needs at least 2 GPUs");
      per_leaf = t.nodes;
      leaves = t.gpus_per_node;
      break;
  }
  if (t.spines > kMaxHosts)
    throw UsageError(fmt::format("{}: {}: more spines than railkit-sim builds (at most {})", ctx.where("topology.spines"),
                                 t.spines, kMaxHosts));
  if (t.fabric_delay_ps < 0) t.fabric_delay_ps = t.link_delay_ps;
  resolve_spines(j, ctx, t, per_leaf, leaves);
}

/// Hosts named by one spec: an index, "h12", "n1g3", "n*g0", "h0-h15", or "all".
void add_hosts(const json& v, const std::string& key, const Ctx& ctx, const TopologySpec& t, std::vector<int>& out) {
  const int n = t.host_count();
  const auto bad = [&](const std::string& why) {
    return UsageError(fmt::format("{}: '{}': {}", ctx.where(key), v.is_string() ? v.get<std::string>() : json_dump(v), why));
  };
  if (v.is_array()) {
    for (const auto& e : v) {
      add_hosts(e, key, ctx, t, out);
      if (static_cast<std::int64_t>(out.size()) > kMaxFlows)  // each host at least one flow
        throw UsageError(fmt::format("{}: names more than {} hosts (at most {} flows in all)", ctx.where(key), kMaxFlows,
                                     kMaxFlows));
    }
    return;
  }
  if (v.is_number_integer()) {
    const auto i = v.get<std::int64_t>();
    if (i < 0 || i >= n) throw bad(fmt::format("no such host (the topology has {}: 0..{})", n, n - 1));
    out.push_back(static_cast<int>(i));
    return;
  }
  if (!v.is_string()) throw bad("expected a host index, a name (h3, n1g2) or a range (h0-h15)");
  const std::string s = v.get<std::string>();
  if (s == "all") {
    for (int i = 0; i < n; ++i) out.push_back(i);
    return;
  }
  const auto parse_one = [&](std::string_view x, bool wild_ok, int& node, int& gpu) -> bool {
    // Returns true for a rail name nXgY (node or gpu may be '*' when wild_ok: -1).
    node = gpu = -1;
    auto num = [&](std::string_view d, int& val) {
      if (wild_ok && d == "*") return true;
      auto [p, ec] = std::from_chars(d.data(), d.data() + d.size(), val);
      return ec == std::errc() && p == d.data() + d.size() && !d.empty();
    };
    if (x.size() > 1 && x[0] == 'n' && x.find('g') != std::string_view::npos && t.kind == TopologyKind::RailOptimized) {
      const auto gpos = x.find('g');
      if (!num(x.substr(1, gpos - 1), node) || !num(x.substr(gpos + 1), gpu)) throw bad("expected nNODEgGPU (n1g3)");
      if ((node >= t.nodes) || (gpu >= t.gpus_per_node)) throw bad("no such node or GPU");
      return true;
    }
    if (!x.empty() && x[0] == 'h') x.remove_prefix(1);
    if (!num(x, node) || node < 0 || node >= n) throw bad(fmt::format("no such host (the topology has {}: h0..h{})", n, n - 1));
    return false;
  };
  const auto dash = s.find('-');
  int a_node = 0;
  int a_gpu = 0;
  if (dash == std::string::npos) {
    if (!parse_one(s, true, a_node, a_gpu)) {
      out.push_back(a_node);
      return;
    }
    for (int nd = 0; nd < t.nodes; ++nd)
      for (int g = 0; g < t.gpus_per_node; ++g)
        if ((a_node < 0 || a_node == nd) && (a_gpu < 0 || a_gpu == g)) out.push_back(nd * t.gpus_per_node + g);
    return;
  }
  int b_node = 0;
  int b_gpu = 0;
  const bool ra = parse_one(std::string_view(s).substr(0, dash), false, a_node, a_gpu);
  const bool rb = parse_one(std::string_view(s).substr(dash + 1), false, b_node, b_gpu);
  const int lo = ra ? a_node * t.gpus_per_node + a_gpu : a_node;
  const int hi = rb ? b_node * t.gpus_per_node + b_gpu : b_node;
  if (hi < lo) throw bad("an empty range");
  for (int i = lo; i <= hi; ++i) out.push_back(i);
}

void read_flow(const json& f, const std::string& key, const Ctx& ctx, Scenario& s) {
  if (!f.is_object()) throw UsageError(ctx.where(key) + ": expected a mapping (src, dst, start, bytes, priority)");
  static constexpr std::array<std::string_view, 5> kKeys = {"src", "dst", "start", "bytes", "priority"};
  for (auto it = f.begin(); it != f.end(); ++it)
    if (std::find(kKeys.begin(), kKeys.end(), it.key()) == kKeys.end())
      throw UsageError(ctx.where(key + "." + it.key()) + ": unknown key (expected one of: src, dst, start, bytes, priority)");
  for (auto k : {"src", "dst"})
    if (!f.contains(k)) throw UsageError(ctx.where(key + "." + k) + ": missing");
  std::vector<int> src;
  std::vector<int> dst;
  add_hosts(f["src"], key + ".src", ctx, s.topology, src);
  add_hosts(f["dst"], key + ".dst", ctx, s.topology, dst);
  FlowSpec base;
  base.priority = s.nic.data_priority;
  if (f.contains("start")) base.start_ps = parse_time_ps(f["start"], ctx.where(key + ".start"));
  if (f.contains("bytes") && !f["bytes"].is_null()) {
    base.bytes = parse_bytes(f["bytes"], ctx.where(key + ".bytes"));
    if (base.bytes == 0) throw UsageError(ctx.where(key + ".bytes") + ": 0: a flow needs bytes (null: long-lived)");
  }
  if (f.contains("priority")) base.priority = static_cast<int>(detail::read_int(f["priority"], key + ".priority", ctx, 0, 7));
  const std::size_t before = s.flows.size();
  // Refused before any is made: src x dst, less the pairs of a host with itself, beyond kMaxFlows.
  const auto pairs = static_cast<std::int64_t>(src.size()) * static_cast<std::int64_t>(dst.size());
  if (static_cast<std::int64_t>(before) + pairs > kMaxFlows) {
    std::vector<std::int64_t> in_dst(static_cast<std::size_t>(s.topology.host_count()), 0);
    for (int b : dst) ++in_dst[static_cast<std::size_t>(b)];
    std::int64_t n = 0;
    for (int a : src) n += static_cast<std::int64_t>(dst.size()) - in_dst[static_cast<std::size_t>(a)];
    if (static_cast<std::int64_t>(before) + n > kMaxFlows)
      throw UsageError(fmt::format("{}: {} flows ({} src x {} dst{}): more than railkit-sim runs (at most {} in all)",
                                   ctx.where(key), n, src.size(), dst.size(),
                                   before > 0 ? fmt::format(", after {} before it", before) : "", kMaxFlows));
  }
  for (int a : src)
    for (int b : dst) {
      if (a == b) continue;
      FlowSpec fl = base;
      fl.src = a;
      fl.dst = b;
      s.flows.push_back(fl);
    }
  if (s.flows.size() == before) throw UsageError(ctx.where(key) + ": no flow (every src equals its dst)");
}

constexpr std::array kOutputFields = {
    Field{"sample_interval",
          [](const json& v, const std::string& k, const Ctx& c, Scenario& s) {
            s.output.sample_interval_ps = parse_time_ps(v, c.where(k));
            if (s.output.sample_interval_ps <= 0) throw UsageError(c.where(k) + ": must be positive");
          }},
    Field{"steady_from",
          [](const json& v, const std::string& k, const Ctx& c, Scenario& s) { s.output.steady_from_ps = parse_time_ps(v, c.where(k)); }},
    Field{"max_series_ports",
          [](const json& v, const std::string& k, const Ctx& c, Scenario& s) {
            s.output.max_series_ports = static_cast<int>(detail::read_int(v, k, c, 0, 100000));
          }},
    Field{"max_series_flows",
          [](const json& v, const std::string& k, const Ctx& c, Scenario& s) {
            s.output.max_series_flows = static_cast<int>(detail::read_int(v, k, c, 0, 100000));
          }},
};

constexpr std::array<std::string_view, 5> kEventSchedulers = {"priority_queue", "heap", "map", "calendar", "list"};

constexpr std::array kTopFields = {
    Field{"name", [](const json& v, const std::string& k, const Ctx& c, Scenario& s) { s.name = detail::read_string(v, k, c); }},
    Field{"seed",
          [](const json& v, const std::string& k, const Ctx& c, Scenario& s) {
            s.seed = static_cast<std::uint64_t>(detail::read_int(v, k, c, 1, std::int64_t{1} << 31));
          }},
    Field{"duration",
          [](const json& v, const std::string& k, const Ctx& c, Scenario& s) {
            s.duration_ps = parse_time_ps(v, c.where(k));
            if (s.duration_ps <= 0) throw UsageError(c.where(k) + ": must be positive");
          }},
    Field{"event_scheduler",
          [](const json& v, const std::string& k, const Ctx& c, Scenario& s) {
            s.event_scheduler = detail::read_string(v, k, c);
            if (std::find(kEventSchedulers.begin(), kEventSchedulers.end(), s.event_scheduler) == kEventSchedulers.end())
              throw UsageError(c.where(k) + ": '" + s.event_scheduler + "': expected priority_queue, heap, map, calendar or list");
          }},
    Field{"topology",
          [](const json& v, const std::string& k, const Ctx& c, Scenario& s) {
            detail::read_object(v, k, kTopologyFields, c, s);
            check_topology(v, c, s.topology);
          }},
    Field{"nic", [](const json& v, const std::string& k, const Ctx& c, Scenario& s) { detail::read_object(v, k, detail::nic_fields(), c, s); }},
    Field{"switch",
          [](const json& v, const std::string& k, const Ctx& c, Scenario& s) { detail::read_object(v, k, detail::switch_fields(), c, s); }},
    Field{"flows",
          [](const json& v, const std::string& k, const Ctx& c, Scenario& s) {
            if (!v.is_array() || v.empty()) throw UsageError(c.where(k) + ": expected a list of flows");
            for (std::size_t i = 0; i < v.size(); ++i) read_flow(v[i], fmt::format("{}[{}]", k, i), c, s);
          }},
    Field{"output", [](const json& v, const std::string& k, const Ctx& c, Scenario& s) { detail::read_object(v, k, kOutputFields, c, s); }},
};

}  // namespace

int TopologySpec::host_count() const noexcept {
  switch (kind) {
    case TopologyKind::SingleSwitch: return hosts;
    case TopologyKind::LeafSpine: return leaves * hosts_per_leaf;
    case TopologyKind::RailOptimized: return nodes * gpus_per_node;
  }
  return 0;
}

std::int64_t Scenario::steady_from() const noexcept {
  return output.steady_from_ps >= 0 ? output.steady_from_ps : duration_ps / 2;
}

std::int64_t Scenario::sample_interval() const noexcept {
  if (output.sample_interval_ps > 0) return output.sample_interval_ps;
  return std::max<std::int64_t>(1'000'000, duration_ps / 1000);
}

std::string host_name(const TopologySpec& t, int i) {
  if (t.kind == TopologyKind::RailOptimized) return fmt::format("n{}g{}", i / t.gpus_per_node, i % t.gpus_per_node);
  return fmt::format("h{}", i);
}

Scenario parse_scenario(const nlohmann::json& doc, const std::string& source, const std::filesystem::path& base_dir) {
  const Ctx ctx{source, base_dir};
  Scenario s;
  s.source = doc;
  if (!doc.is_object()) throw UsageError(source + ": a scenario is a mapping (name, duration, topology, flows, ...)");
  for (auto key : {"duration", "topology", "flows"})
    if (!doc.contains(key)) throw UsageError(ctx.where(key) + ": missing");
  detail::read_object(doc, "", kTopFields, ctx, s);
  if (s.name.empty()) s.name = std::filesystem::path(source).stem().string();
  if (s.sw.ecmp_seed == 0) s.sw.ecmp_seed = s.seed;
  if (s.output.steady_from_ps >= s.duration_ps)
    throw UsageError(ctx.where("output.steady_from") + ": not before the end of the run (duration)");
  return s;
}

void apply_override(nlohmann::json& doc, const std::string& assignment) {
  const auto eq = assignment.find('=');
  if (eq == std::string::npos || eq == 0) throw UsageError("--set '" + assignment + "': expected key.path=value");
  std::vector<std::string> parts;
  for (std::size_t start = 0;;) {
    const auto dot = assignment.find('.', start);
    if (dot == std::string::npos || dot > eq) {
      parts.push_back(assignment.substr(start, eq - start));
      break;
    }
    parts.push_back(assignment.substr(start, dot - start));
    start = dot + 1;
  }
  // DCQCN attribute names keep their one dot: nic.dcqcn.roce_rp.rpg_ai_rate.
  for (std::size_t i = 0; i + 1 < parts.size(); ++i)
    if (parts[i] == "roce_rp" || parts[i] == "roce_np") {
      parts[i] += "." + parts[i + 1];
      parts.erase(parts.begin() + static_cast<std::ptrdiff_t>(i) + 1);
    }
  json value = parse_yaml(assignment.substr(eq + 1), "--set " + assignment.substr(0, eq));
  json* node = &doc;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    const std::string& part = parts[i];
    if (part.empty()) throw UsageError("--set '" + assignment + "': empty key in the path");
    if (node->is_array()) {
      std::size_t k = 0;
      auto [p, ec] = std::from_chars(part.data(), part.data() + part.size(), k);
      if (ec != std::errc() || p != part.data() + part.size() || k >= node->size())
        throw UsageError("--set '" + assignment + "': '" + part + "' is not an index of the list");
      node = &(*node)[k];
    } else if (node->is_object() || node->is_null()) {
      node = &(*node)[part];
    } else {
      throw UsageError("--set '" + assignment + "': '" + part + "' is inside a value");
    }
  }
  *node = std::move(value);
}

nlohmann::json read_document(const std::filesystem::path& path, const std::vector<std::string>& overrides, const std::string& what) {
  std::string text;
  try {
    text = read_input_file(path, what);  // a FIFO is refused, never waited on
  } catch (const IoError& e) {
    throw UsageError(what + ": " + e.what());
  }
  json doc;
  if (is_yaml_path(path.string())) {
    doc = parse_yaml(text, path.string());
  } else {
    try {
      doc = parse_json(text);
    } catch (const json::parse_error& e) {
      throw UsageError(path.string() + ": not valid JSON: " + json_error_text(e));
    }
  }
  for (const auto& o : overrides) apply_override(doc, o);
  return doc;
}

Scenario load_scenario(const std::filesystem::path& path, const std::vector<std::string>& overrides) {
  return parse_scenario(read_document(path, overrides, "scenario"), path.filename().string(), path.parent_path());
}

}  // namespace railkit::sim
