#include "monitor/node/rates.hpp"

#include "core/stats.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <stdexcept>
#include <unordered_map>

namespace railkit::monitor {
namespace {

struct PauseAgg {
  double worst_ratio = -1, worst_frames_per_s = -1;
  std::string ratio_where, frames_where;
};

struct PortAgg {
  std::optional<double> cnp_per_s, retransmit_per_s;
};

// RDMA counters summed into the retransmit signal, and those of the CNP signal (either).
const char* const kRetransmitCounters[] = {"out_of_sequence", "packet_seq_err", "local_ack_timeout_err"};
const char* const kCnpCounters[] = {"np_cnp_sent", "rp_cnp_handled"};

template <class Names>
bool among(const Names& names, const std::string& s) {
  return std::any_of(std::begin(names), std::end(names), [&](const char* n) { return s == n; });
}

void pause_signals(const IntervalRates& r, const SignalThresholds& t, std::vector<Signal>& out) {
  std::map<std::string, PauseAgg> by_netdev;
  for (const auto& x : r.rates) {
    const bool dur = x.metric == kPauseDuration, frames = x.metric == kPauseFrames;
    if (!dur && !frames) continue;
    PauseAgg& a = by_netdev[label_value(x.labels, "netdev")];
    const std::string where =
        fmt::format("prio{} {}", label_value(x.labels, "priority"), label_value(x.labels, "direction"));
    double& worst = dur ? a.worst_ratio : a.worst_frames_per_s;
    if (x.rate_per_s > worst) {
      worst = x.rate_per_s;
      (dur ? a.ratio_where : a.frames_where) = where;
    }
  }
  for (const auto& [nd, a] : by_netdev) {
    const bool by_ratio = a.worst_ratio > t.pause_ratio, by_frames = a.worst_frames_per_s > t.pause_frames_per_s;
    std::string ev;
    if (a.worst_ratio >= 0) ev = fmt::format("{} paused {:.1f}% of the interval", a.ratio_where, 100 * a.worst_ratio);
    if (a.worst_frames_per_s >= 0 && (by_frames || ev.empty()))
      ev += fmt::format("{}{} {:.0f} pause frames/s", ev.empty() ? "" : "; ", a.frames_where, a.worst_frames_per_s);
    out.push_back({"pause_storm", nd, by_ratio || by_frames, ev});
  }
}

void port_signals(const IntervalRates& r, const SignalThresholds& t, std::vector<Signal>& out) {
  std::map<std::string, PortAgg> by_port;
  for (const auto& x : r.rates) {
    if (x.metric != kRdmaCounter) continue;
    const std::string& c = label_value(x.labels, "counter");
    const std::string subject = label_value(x.labels, "device") + "/" + label_value(x.labels, "port");
    if (among(kCnpCounters, c)) {
      auto& v = by_port[subject].cnp_per_s;
      v = std::max(v.value_or(0), x.rate_per_s);
    } else if (among(kRetransmitCounters, c)) {
      auto& v = by_port[subject].retransmit_per_s;
      v = v.value_or(0) + x.rate_per_s;
    }
  }
  for (const auto& [subject, a] : by_port) {
    if (a.cnp_per_s)
      out.push_back({"cnp_surge", subject, *a.cnp_per_s > t.cnp_per_s, fmt::format("{:.0f} CNP/s", *a.cnp_per_s)});
    if (a.retransmit_per_s)
      out.push_back({"retransmit_surge", subject, *a.retransmit_per_s > t.retransmit_per_s,
                     fmt::format("{:.1f} out-of-sequence/sequence-error/ack-timeout per s", *a.retransmit_per_s)});
  }
}

void flap_signals(const IntervalRates& r, std::vector<Signal>& out) {
  for (const auto& x : r.rates)
    if (x.metric == kCarrierChanges)
      out.push_back({"link_flap", label_value(x.labels, "netdev"), x.delta > 0,
                     fmt::format("carrier changed {:.0f} time(s) in {:.1f} s", x.delta, r.interval_s)});
}

void rail_signals(const IntervalRates& r, const SignalThresholds& t, std::vector<Signal>& out) {
  std::vector<PortRate> tx;
  for (auto& p : port_byte_rates(r))
    if (p.direction == "tx") tx.push_back(std::move(p));
  if (tx.size() < 2) return;  // no peers to compare with
  std::vector<double> v;
  for (const auto& p : tx) v.push_back(p.bytes_per_s);
  const double med = railkit::median(v);
  const bool busy = med * 8 / 1e9 > t.rail_min_Gbps;
  for (const auto& p : tx)
    out.push_back({"rail_rate_outlier", p.device + "/" + p.port, busy && p.bytes_per_s < t.rail_fraction * med,
                   fmt::format("tx {:.2f} Gb/s, median of {} ports {:.2f} Gb/s", p.bytes_per_s * 8 / 1e9, tx.size(),
                               med * 8 / 1e9)});
}

}  // namespace

const RateReading* IntervalRates::find(std::string_view metric, const Labels& labels) const {
  for (const auto& r : rates)
    if (r.metric == metric && r.labels == labels) return &r;
  return nullptr;
}

IntervalRates compute_rates(const NodeSample& prev, const NodeSample& cur) {
  IntervalRates out;
  out.interval_s = cur.mono_s - prev.mono_s;
  if (!(out.interval_s > 0)) throw std::invalid_argument("compute_rates: the interval is not positive");
  std::unordered_map<std::string, const CounterReading*> before;
  for (const auto& c : prev.counters) before.emplace(series_key(c.metric, c.labels), &c);
  for (const auto& c : cur.counters) {
    const std::string key = series_key(c.metric, c.labels);
    auto it = before.find(key);
    if (it == before.end()) continue;  // new this interval: a rate from the next one
    if (c.raw < it->second->raw) {
      out.notes.push_back(fmt::format("{} went backwards ({} -> {}: reset or wrap); no rate this interval", key,
                                      it->second->raw, c.raw));
      continue;
    }
    const double delta = static_cast<double>(c.raw - it->second->raw) / c.divisor;
    out.rates.push_back({c.metric, c.labels, delta, delta / out.interval_s});
  }
  return out;
}

std::vector<PortRate> port_byte_rates(const IntervalRates& rates) {
  std::vector<PortRate> out;
  for (const auto& x : rates.rates) {
    if (x.metric != kRdmaCounter) continue;
    const std::string& c = label_value(x.labels, "counter");
    const char* dir = c == "port_xmit_data" ? "tx" : c == "port_rcv_data" ? "rx" : nullptr;
    if (dir)
      out.push_back({label_value(x.labels, "device"), label_value(x.labels, "port"), dir, x.rate_per_s * 4});
  }
  return out;
}

bool link_downtrained(const PcieLink& l) {
  const bool speed = l.role != "gpu" && l.speed_GTps && l.max_speed_GTps && *l.speed_GTps < *l.max_speed_GTps;
  const bool width = l.width && l.max_width && *l.width < *l.max_width;
  return speed || width;
}

bool link_judged(const PcieLink& l) {
  return (l.role != "gpu" && l.speed_GTps && l.max_speed_GTps) || (l.width && l.max_width);
}

std::vector<Signal> derive_signals(const NodeSample& cur, const IntervalRates* rates, const SignalThresholds& t) {
  std::vector<Signal> out;
  if (rates) {
    pause_signals(*rates, t, out);
    port_signals(*rates, t, out);
    flap_signals(*rates, out);
    rail_signals(*rates, t, out);
  }
  for (const auto& l : cur.links)
    if (link_judged(l))
      out.push_back({"pcie_downtrained", l.bdf, link_downtrained(l),
                     fmt::format("{} x{} of {} x{}", l.speed, l.width.value_or(0), l.max_speed, l.max_width.value_or(0))});
  return out;
}

}  // namespace railkit::monitor
