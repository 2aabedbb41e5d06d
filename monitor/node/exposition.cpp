#include "monitor/node/exposition.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "core/prom.hpp"

namespace railkit::monitor {
namespace {

struct MetricDoc {
  std::string_view name, type, help;
};

// Every metric, in the order written (monitor/README.md section 3).
const MetricDoc kMetrics[] = {
    {kRdmaCounter, "counter", "RDMA port counter (hw_counters/ and counters/; port_*_data in 4-byte words)"},
    {"railkit_node_rdma_rate_per_second", "gauge", "RDMA port counter rate over the last interval"},
    {"railkit_node_port_bytes_per_second", "gauge", "RDMA port bytes per second (port_xmit_data, port_rcv_data x 4)"},
    {kPauseFrames, "counter", "pause (PFC) frames per priority, from the driver's ethtool statistics"},
    {kPauseDuration, "counter", "time paused per priority, seconds, from the driver's ethtool statistics"},
    {"railkit_node_pause_duration_ratio", "gauge", "fraction of the last interval a priority was paused"},
    {kNetdevEvents, "counter", "driver discard and pause-storm counters, from ethtool statistics"},
    {kCarrierChanges, "counter", "carrier changes of the netdev (link down/up)"},
    {kAerErrors, "counter", "PCIe AER errors reported by the function (TOTAL_ERR_*)"},
    {"railkit_node_pcie_link_downtrained", "gauge", "1 when the PCIe link trained below its capability"},
    {kGpuXid, "counter", "XID events seen since the monitor started (NVML)"},
    {kGpuEcc, "counter", "GPU memory ECC errors since the driver loaded (NVML, volatile)"},
    {kGpuNvlink, "counter", "NVLink error counters of active links (NVML)"},
    {"railkit_node_gpu_throttle_reasons", "gauge", "NVML clock event (throttle) reasons bitmask"},
    {"railkit_node_signal", "gauge", "1 when the derived signal holds now, 0 when judged clean"},
    {"railkit_node_sample_timestamp_seconds", "gauge", "Unix time of the sample"},
};

std::string num(double v) { return fmt::format("{}", v); }

std::string counter_value(const CounterReading& c) {
  return c.divisor == 1 ? std::to_string(c.raw) : num(static_cast<double>(c.raw) / c.divisor);
}

Labels link_labels(const PcieLink& l) {
  auto w = [](const std::optional<int>& x) { return x ? std::to_string(*x) : std::string(); };
  return {{"device", l.bdf}, {"speed", l.speed}, {"max_speed", l.max_speed}, {"width", w(l.width)},
          {"max_width", w(l.max_width)}};
}

// metric name -> its series lines, "name{labels} value\n".
using Lines = std::map<std::string_view, std::string>;

void add(Lines& out, std::string_view metric, const Labels& labels, const std::string& value) {
  if (labels.empty()) out[metric] += fmt::format("{} {}\n", metric, value);
  else out[metric] += fmt::format("{}{{{}}} {}\n", metric, prom_labels(labels), value);
}

void add_rates(Lines& out, const IntervalRates& r) {
  for (const auto& x : r.rates) {
    if (x.metric == kRdmaCounter) add(out, "railkit_node_rdma_rate_per_second", x.labels, num(x.rate_per_s));
    if (x.metric == kPauseDuration) add(out, "railkit_node_pause_duration_ratio", x.labels, num(x.rate_per_s));
  }
  for (const auto& p : port_byte_rates(r))
    add(out, "railkit_node_port_bytes_per_second", {{"device", p.device}, {"port", p.port}, {"direction", p.direction}},
        num(p.bytes_per_s));
}

}  // namespace

std::string render_exposition(const NodeSample& cur, const IntervalRates* rates, const std::vector<Signal>& signals) {
  Lines lines;
  for (const auto& c : cur.counters) add(lines, c.metric, c.labels, counter_value(c));
  for (const auto& g : cur.gauges) add(lines, g.metric, g.labels, num(g.value));
  for (const auto& l : cur.links)
    if (link_judged(l)) add(lines, "railkit_node_pcie_link_downtrained", link_labels(l), link_downtrained(l) ? "1" : "0");
  if (rates) add_rates(lines, *rates);
  for (const auto& s : signals)
    add(lines, "railkit_node_signal", {{"signal", s.signal}, {"subject", s.subject}}, s.holds ? "1" : "0");
  add(lines, "railkit_node_sample_timestamp_seconds", {}, fmt::format("{:.3f}", cur.unix_s));
  std::string out;
  for (const auto& m : kMetrics) {
    auto it = lines.find(m.name);
    if (it == lines.end()) continue;
    out += prom_help_type(m.name, m.help, m.type);
    out += it->second;
  }
  return out;
}

std::string render_node_table(int index, const NodeSample& cur, const IntervalRates* rates,
                              const std::vector<Signal>& signals, int top) {
  std::string out = fmt::format("sample {}", index);
  if (rates) out += fmt::format(" (interval {:.3f} s)", rates->interval_s);
  out += fmt::format(": {} counters, {} signal(s) judged\n", cur.counters.size(), signals.size());
  int clean = 0;
  for (const auto& s : signals) {
    if (!s.holds) {
      ++clean;
      continue;
    }
    out += fmt::format("  RAISED {:<18} {:<16} {}\n", s.signal, s.subject, s.evidence);
  }
  if (!signals.empty()) out += fmt::format("  {} judged clean\n", clean);
  if (!rates) return out + "  rates from the next sample on\n";
  int idle = 0;
  for (const auto& p : port_byte_rates(*rates)) {
    if (p.bytes_per_s > 0) out += fmt::format("  {}/{} {} {:.3f} Gb/s\n", p.device, p.port, p.direction, p.bytes_per_s * 8 / 1e9);
    else ++idle;
  }
  if (idle) out += fmt::format("  {} port direction(s) idle\n", idle);
  std::vector<const RateReading*> v;
  for (const auto& x : rates->rates) {
    const std::string& c = label_value(x.labels, "counter");
    if (x.rate_per_s > 0 && c != "port_xmit_data" && c != "port_rcv_data") v.push_back(&x);
  }
  std::sort(v.begin(), v.end(), [](auto* a, auto* b) { return a->rate_per_s > b->rate_per_s; });
  if (v.size() > static_cast<size_t>(top)) v.resize(top);
  for (const auto* x : v) out += fmt::format("  {:>14.1f}/s {}\n", x->rate_per_s, series_key(x->metric, x->labels));
  return out;
}

}  // namespace railkit::monitor
