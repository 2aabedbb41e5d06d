// The series `railkit report --plot` draws (report/compare_render.hpp, plot_series): per table,
// configuration and group the points, their spread over rounds and latencies, the title block and
// the NIC reference line.
#include <algorithm>
#include <array>
#include <map>
#include <set>

#include <fmt/format.h>

#include "core/stats.hpp"
#include "core/strings.hpp"
#include "report/compare_render.hpp"

namespace railkit::report {
using namespace sweep;  // the comparison it draws

using json = nlohmann::json;

namespace {

/// Distinct values in order of first appearance.
template <class T>
void add_distinct(json& arr, const T& v) {
  if (std::find(arr.begin(), arr.end(), json(v)) == arr.end()) arr.push_back(v);
}

/// What the title of a plot says: per configuration with results, its runs' labels, backends,
/// ranks, nodes, hosts and dates (distinct values).
json plot_title_block(const Comparison& c) {
  json t = {{"configs", json::array()},   {"labels", json::array()}, {"backends", json::array()},
            {"backend_versions", json::array()}, {"nranks", json::array()}, {"nnodes", json::array()},
            {"hosts", json::array()},     {"dates", json::array()},  {"timing_methods", json::array()}};
  std::set<std::string> dates;
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    if (!c.has_results[i]) continue;
    t["configs"].push_back(c.inputs[i].name);
    for (const auto& rd : c.inputs[i].rounds) {
      const RunInfo& run = rd.doc.run;
      if (!run.label.empty()) add_distinct(t["labels"], run.label);
      if (!run.backend.empty()) add_distinct(t["backends"], run.backend);
      if (!run.backend_version.empty()) add_distinct(t["backend_versions"], run.backend_version);
      if (run.nranks > 0) add_distinct(t["nranks"], run.nranks);
      if (run.nnodes > 0) add_distinct(t["nnodes"], run.nnodes);
      for (const auto& h : run.hosts) add_distinct(t["hosts"], h);
      if (run.start_time.size() >= 10) dates.insert(run.start_time.substr(0, 10));
      add_distinct(t["timing_methods"], run.timing_method);
    }
  }
  for (const auto& d : dates) t["dates"].push_back(d);
  t["simulated"] = c.all_simulated() ? "all" : c.any_simulated() ? "some" : "none";
  return t;
}

/// The NIC reference line: NICs per node x line rate, from the context, else from the simulated
/// cluster (rail-optimized: one NIC per GPU) when every configuration is simulated on clusters of
/// one link rate and GPU count. Null when unknown or when a run stayed on one node: ring busbw
/// across nodes is bounded by what a node's NICs carry together, and a one-node run uses no NIC.
json plot_line_rate(const Comparison& c, const PlotContext& ctx) {
  std::optional<double> rate = ctx.line_rate_Gbps;
  int nics = ctx.nics_per_node;
  std::string source = ctx.line_rate_source;
  bool one_node = false;
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    if (!c.has_results[i]) continue;
    for (const auto& rd : c.inputs[i].rounds)
      if (rd.doc.run.nnodes <= 1) one_node = true;
  }
  if (one_node) return nullptr;
  if (!rate && c.all_simulated()) {
    std::set<std::pair<double, int>> shapes;
    std::set<std::string> clusters;
    bool all_known = true;
    for (size_t i = 0; i < c.inputs.size(); ++i) {
      if (!c.has_results[i]) continue;
      for (const auto& rd : c.inputs[i].rounds) {
        const json& sim = rd.doc.run.sim;
        const json* cl = sim.is_object() && sim.contains("cluster") && sim["cluster"].is_object() ? &sim["cluster"] : nullptr;
        if (!cl || !cl->contains("link_rate_Gbps") || !(*cl)["link_rate_Gbps"].is_number() ||
            !cl->contains("gpus_per_node") || !(*cl)["gpus_per_node"].is_number_integer()) {
          all_known = false;
          continue;
        }
        shapes.insert({(*cl)["link_rate_Gbps"].get<double>(), (*cl)["gpus_per_node"].get<int>()});
        if (cl->contains("name") && (*cl)["name"].is_string()) clusters.insert((*cl)["name"].get<std::string>());
      }
    }
    if (all_known && shapes.size() == 1) {
      rate = shapes.begin()->first;
      nics = shapes.begin()->second;  // rail-optimized: GPUs per node = NICs = rails
      source = "run.sim.cluster" +
               (clusters.empty() ? std::string() : " of " + join(std::vector<std::string>(clusters.begin(), clusters.end()), ", "));
    }
  }
  if (!rate || *rate <= 0 || nics <= 0) return nullptr;
  const double node_GBps = *rate * nics / 8;
  return json{{"Gbps", *rate},
              {"nics_per_node", nics},
              {"GBps", node_GBps},
              {"source", source},
              {"label", fmt::format("{} NICs x {:g} Gb/s per node = {:g} GB/s (bound of ring busbw across nodes)", nics,
                                    *rate, node_GBps)}};
}

/// Per (group, bytes) and round, one configuration's time_us p50 and p99 summed over the cycles
/// of one table, and the number of cycles.
using Latencies = std::map<std::pair<std::string, std::uint64_t>, std::map<int, std::array<double, 3>>>;

Latencies latencies(const CompareInput& in, const CompareTable& tab) {
  Latencies lat;
  for (const auto& rd : in.rounds)
    for (const auto& r : rd.doc.results) {
      if (r.op != tab.op || r.dtype != tab.dtype || r.redop != tab.redop || r.in_place != tab.in_place) continue;
      auto& acc = lat[{r.group.value_or(""), r.bytes}][rd.round];
      acc[0] += r.time_us.p50;
      acc[1] += r.time_us.p99;
      acc[2] += 1;
    }
  return lat;
}

/// p50 (which 0) or p99 (1) at a group and size: per round the mean over cycles, then the median
/// of the rounds; null when none.
json latency_at(const Latencies& lat, const std::string& g, std::uint64_t b, int which) {
  const auto it = lat.find({g, b});
  if (it == lat.end()) return nullptr;
  std::vector<double> v;
  for (const auto& [round, acc] : it->second)
    if (acc[which] > 0) v.push_back(acc[which] / acc[2]);
  if (v.empty()) return nullptr;
  return median(v);
}

/// The slowest group of configuration i in a table: the one slowest at the most sizes (the first
/// by name at a tie); "" without groups.
std::string slowest_group_of(const CompareTable& tab, size_t i) {
  std::map<std::string, int> slow_count;
  for (const auto& row : tab.rows)
    if (row.cells[i].slowest_group) ++slow_count[row.group];
  std::string slowest;
  for (const auto& [g, k] : slow_count)
    if (slowest.empty() || k > slow_count[slowest]) slowest = g;
  return slowest;
}

/// Configuration i's series of group g in a table; null when it has no point there.
json group_series(const Comparison& c, const CompareTable& tab, size_t i, const std::string& g, const std::string& slowest,
                  const Latencies& lat) {
  json bytes = json::array(), vals = json::array(), lo = json::array(), hi = json::array();
  json p50 = json::array(), p99 = json::array();
  bool spread = false;
  for (const auto& row : tab.rows) {
    if (row.group != g || !row.cells[i].value) continue;
    bytes.push_back(row.bytes);
    vals.push_back(*row.cells[i].value);
    double mn = *row.cells[i].value, mx = mn;
    for (const auto& [round, v] : row.cells[i].rounds) {
      mn = std::min(mn, v);
      mx = std::max(mx, v);
    }
    spread = spread || row.cells[i].rounds.size() > 1;
    lo.push_back(mn);
    hi.push_back(mx);
    p50.push_back(latency_at(lat, g, row.bytes, 0));
    p99.push_back(latency_at(lat, g, row.bytes, 1));
  }
  if (bytes.empty()) return nullptr;
  json s = {{"name", config_tag(i) + " " + c.inputs[i].name + (g.empty() ? "" : " " + g)},
            {"tag", config_tag(i)},
            {"config", c.inputs[i].name},
            {"group", g},
            {"baseline", c.baseline && *c.baseline == i},
            {"slowest", !g.empty() && g == slowest},
            {"inert", c.inert[i]},
            {"simulated", i < c.simulated.size() && c.simulated[i]},
            {"bytes", bytes},
            {"values", vals},
            {"time_us", {{"p50", p50}, {"p99", p99}}}};
  if (spread) {
    s["lo"] = lo;
    s["hi"] = hi;
  }
  return s;
}

/// The plot panel of one table: per configuration with results and per group, a series.
json table_panel(const Comparison& c, const CompareTable& tab) {
  std::vector<std::string> groups;
  std::set<std::uint64_t> sizes;
  for (const auto& row : tab.rows) {
    if (std::find(groups.begin(), groups.end(), row.group) == groups.end()) groups.push_back(row.group);
    sizes.insert(row.bytes);
  }
  std::sort(groups.begin(), groups.end(), natural_less);
  json series = json::array();
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    if (!c.has_results[i]) continue;
    const std::string slowest = slowest_group_of(tab, i);
    const Latencies lat = latencies(c.inputs[i], tab);
    for (const auto& g : groups)
      if (json s = group_series(c, tab, i, g, slowest, lat); !s.is_null()) series.push_back(std::move(s));
  }
  return {{"title", tab.title()},
          {"op", tab.op},
          {"dtype", tab.dtype},
          {"redop", tab.redop},
          {"placement", tab.in_place ? "in-place" : "out-of-place"},
          {"sizes", json(std::vector<std::uint64_t>(sizes.begin(), sizes.end()))},
          {"series", series}};
}

}  // namespace

json plot_series(const Comparison& c, const PlotContext& ctx) {
  json panels = json::array();
  std::set<std::uint64_t> all_sizes;
  for (const auto& tab : c.tables) {
    for (const auto& row : tab.rows) all_sizes.insert(row.bytes);
    panels.push_back(table_panel(c, tab));
  }
  return json{{"schema", "railkit.plot-series/1"},
              {"baseline", c.baseline_name},
              {"metric", metric_name(c.metric)},
              {"ylabel", metric_title(c.metric)},
              {"higher_is_better", higher_is_better(c.metric)},
              {"simulated", c.all_simulated() ? "all" : c.any_simulated() ? "some" : "none"},
              {"sizes", json(std::vector<std::uint64_t>(all_sizes.begin(), all_sizes.end()))},
              {"title", plot_title_block(c)},
              {"line_rate", plot_line_rate(c, ctx)},
              {"panels", panels}};
}

}  // namespace railkit::report
