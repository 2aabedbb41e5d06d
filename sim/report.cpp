#include "sim/report.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "core/clock.hpp"
#include "core/version.hpp"
#include "sim/quantity.hpp"

namespace railkit::sim {
namespace {

using ojson = nlohmann::ordered_json;

template <class T>
ojson per_priority(const std::array<T, kPriorities>& a) {
  ojson j = ojson::array();
  for (const auto& v : a) j.push_back(v);
  return j;
}

/// The resolved parameters: every default filled in, in canonical units.
ojson parameters(const Scenario& s) {
  ojson p;
  const TopologySpec& t = s.topology;
  p["topology"] = {{"hosts", t.host_count()},
                   {"link_rate_Gbps", t.link_rate_bps / 1e9},
                   {"link_delay_us", ps_to_us(t.link_delay_ps)},
                   {"fabric_rate_Gbps", t.fabric_rate_bps / 1e9},
                   {"fabric_delay_us", ps_to_us(std::max<std::int64_t>(t.fabric_delay_ps, 0))},
                   {"mtu_bytes", t.mtu_bytes}};
  if (t.kind != TopologyKind::SingleSwitch) {
    p["topology"]["spines"] = t.spines;
    p["topology"]["oversubscription"] = t.spines > 0 ? ojson(t.oversubscription) : ojson(nullptr);
  }
  ojson nic = {{"cc", cc_name(s.nic.cc)}, {"priority", s.nic.data_priority}, {"ack_every_packets", s.nic.ack_every_packets},
               {"retransmit_timeout_us", ps_to_us(s.nic.retransmit_timeout_ps)}};
  if (s.nic.cc == CcKind::DcqcnNvidia) {
    ojson a;
    for (const auto& f : nvidia_fields()) a[std::string(f.name)] = s.nic.nvidia.*f.member;
    nic["dcqcn"] = a;
    nic["byte_reset_unit_bytes"] = s.nic.byte_reset_unit_bytes;
  } else if (s.nic.cc == CcKind::DcqcnPaper) {
    const PaperDcqcn& q = s.nic.paper;
    nic["paper"] = {{"cnp_interval_us", ps_to_us(q.cnp_interval_ps)}, {"alpha_timer_us", ps_to_us(q.alpha_timer_ps)},
                    {"rate_timer_us", ps_to_us(q.rate_timer_ps)}, {"byte_counter_bytes", q.byte_counter_bytes},
                    {"f", q.f}, {"ai_rate_Mbps", q.ai_rate_bps / 1e6}, {"hai_rate_Mbps", q.hai_rate_bps / 1e6},
                    {"g", q.g}, {"min_rate_Mbps", q.min_rate_bps / 1e6}, {"cnp_priority", q.cnp_priority}};
  }
  p["nic"] = nic;
  ojson ecn = ojson::object();
  for (std::size_t q = 0; q < kPriorities; ++q) {
    const EcnSpec& e = s.sw.ecn[q];
    if (!e.enabled) continue;
    ecn[std::to_string(q)] = e.preset != EcnPreset::Given ? ojson(ecn_preset_description(e.preset))
                                                          : ojson{{"kmin_bytes", e.thresholds.kmin_bytes}, {"kmax_bytes", e.thresholds.kmax_bytes}, {"pmax", e.thresholds.pmax}};
  }
  ojson pfc_prios = ojson::array();
  for (std::size_t q = 0; q < kPriorities; ++q)
    if (s.sw.pfc[q]) pfc_prios.push_back(q);
  p["switch"] = {{"buffer_bytes", s.sw.buffer_bytes},
                 {"scheduler", s.sw.scheduler == SchedulerKind::Strict ? "strict" : "dwrr"},
                 {"ecn", ecn},
                 {"pfc", {{"enabled", s.sw.pfc_enabled}, {"priorities", pfc_prios},
                          {"headroom_bytes", s.sw.headroom_bytes >= 0 ? ojson(s.sw.headroom_bytes) : ojson("mlx5 formula per port")},
                          {"threshold", s.sw.xoff_bytes >= 0 ? ojson(s.sw.xoff_bytes) : ojson(fmt::format("dynamic, alpha {}", s.sw.threshold_alpha))},
                          {"pause_quanta", s.sw.pause_quanta}}},
                 {"ecmp_seed", s.sw.ecmp_seed}};
  p["flows"] = s.flows.size();
  return p;
}

ojson flow_json(const FlowResult& f) {
  return {{"id", f.id}, {"src", f.src}, {"dst", f.dst}, {"priority", f.priority}, {"start_us", f.start_us},
          {"bytes", f.bytes == 0 ? ojson(nullptr) : ojson(f.bytes)}, {"delivered_bytes", f.delivered_bytes},
          {"throughput_Gbps", f.throughput_Gbps}, {"steady_throughput_Gbps", f.steady_throughput_Gbps},
          {"fair_share_Gbps", f.fair_share_Gbps}, {"fct_us", f.fct_us ? ojson(*f.fct_us) : ojson(nullptr)},
          {"sent_packets", f.sent_packets}, {"retransmitted_packets", f.retransmitted_packets},
          {"out_of_sequence", f.out_of_sequence}, {"timeouts", f.timeouts}, {"ecn_marked", f.ecn_marked},
          {"cnps_sent", f.cnps_sent}, {"cnps_received", f.cnps_received}, {"rate_cuts", f.rate_cuts}, {"rate_increases", f.rate_increases},
          {"final_rate_Gbps", f.final_rate_Gbps}, {"final_target_Gbps", f.final_target_Gbps}, {"final_alpha", f.final_alpha}};
}

ojson port_json(const PortResult& p) {
  ojson paused = ojson::array();
  for (double v : p.paused_us) paused.push_back(v);
  return {{"node", p.node}, {"port", p.port}, {"peer", p.peer}, {"host", p.host}, {"rate_Gbps", p.rate_Gbps},
          {"tx_bytes", p.tx_bytes}, {"tx_packets", p.tx_packets}, {"utilisation", p.utilisation},
          {"steady_utilisation", p.steady_utilisation},
          {"queue", {{"max_bytes", p.queue_max_bytes}, {"mean_bytes", p.queue_mean_bytes}, {"steady_mean_bytes", p.steady_queue_mean_bytes}}},
          {"steady_tx_packets", p.steady_tx_packets}, {"ecn_marked", p.ecn_marked}, {"steady_ecn_marked", p.steady_ecn_marked}, {"drops", p.drops},
          {"pfc", {{"pause_sent", per_priority(p.pause_tx)}, {"resume_sent", per_priority(p.resume_tx)},
                   {"pause_received", per_priority(p.pause_rx)}, {"resume_received", per_priority(p.resume_rx)},
                   {"paused_us", paused}, {"steady_pause_sent", p.steady_pause_tx}}}};
}

ojson deadlock_json(const std::optional<DeadlockFinding>& d) {
  if (!d) return nullptr;
  return {{"kind", d->kind}, {"at_us", ps_to_us(d->at_ps)}, {"since_us", ps_to_us(d->since_ps)}, {"ports", d->ports},
          {"detail", d->detail}};
}

ojson series_json(const SimSeries& s) {
  ojson flows = ojson::array();
  for (std::size_t i = 0; i < s.flow_names.size(); ++i)
    flows.push_back({{"name", s.flow_names[i]}, {"goodput_Gbps", s.flow_Gbps[i]}, {"dcqcn_rate_Gbps", s.flow_cc_Gbps[i]}});
  ojson ports = ojson::array();
  for (std::size_t i = 0; i < s.port_names.size(); ++i)
    ports.push_back({{"name", s.port_names[i]}, {"queue_mean_bytes", s.port_queue_bytes[i]},
                     {"pause_sent", s.port_pause_tx[i]}, {"pause_received", s.port_pause_rx[i]}});
  return {{"t_us", s.t_us}, {"flows", flows}, {"ports", ports}};
}

}  // namespace

nlohmann::ordered_json sim_document(const Scenario& s, const SimResult& r) {
  ojson d;
  d["schema"] = kSimSchema;
  d["simulated"] = true;
  d["railkit_version"] = kVersion;
#ifdef RAILKIT_NS3_VERSION
  d["ns3_version"] = RAILKIT_NS3_VERSION;
#endif
  d["created"] = utc_now_iso();
  d["scenario"] = s.source;
  d["parameters"] = parameters(s);
  const double sim_s = static_cast<double>(r.duration_ps) * 1e-12;
  d["run"] = {{"name", r.name}, {"seed", r.seed}, {"duration_us", ps_to_us(r.duration_ps)},
              {"steady_from_us", ps_to_us(r.steady_from_ps)}, {"events", r.events}, {"packet_hops", r.totals.packet_hops},
              {"wall_s", r.wall_s}, {"packet_hops_per_wall_s", r.wall_s > 0 ? static_cast<double>(r.totals.packet_hops) / r.wall_s : 0.0},
              {"wall_s_per_simulated_ms", sim_s > 0 ? r.wall_s / (sim_s * 1e3) : 0.0}};
  d["deadlock"] = deadlock_json(r.deadlock);
  const SimTotals& t = r.totals;
  d["totals"] = {{"goodput_Gbps", t.goodput_Gbps}, {"steady_goodput_Gbps", t.steady_goodput_Gbps}, {"jain_steady", t.jain_steady},
                 {"drops", t.drops}, {"ecn_marked", t.ecn_marked}, {"cnps", t.cnps}, {"pause_sent", t.pause_tx},
                 {"resume_sent", t.resume_tx}, {"steady_pause_sent", t.steady_pause_tx},
                 {"retransmitted_packets", t.retransmitted_packets}, {"timeouts", t.timeouts}};
  d["flows"] = ojson::array();
  for (const auto& f : r.flows) d["flows"].push_back(flow_json(f));
  d["ports"] = ojson::array();
  for (const auto& p : r.ports) d["ports"].push_back(port_json(p));
  d["series"] = series_json(r.series);
  return d;
}

std::string flows_csv(const SimResult& r) {
  std::string out = "t_us";
  for (const auto& n : r.series.flow_names) out += fmt::format(",{} goodput_Gbps,{} dcqcn_rate_Gbps", n, n);
  out += "\n";
  for (std::size_t k = 0; k < r.series.t_us.size(); ++k) {
    out += fmt::format("{}", r.series.t_us[k]);
    for (std::size_t i = 0; i < r.series.flow_names.size(); ++i)
      out += fmt::format(",{:.4f},{:.4f}", r.series.flow_Gbps[i][k], r.series.flow_cc_Gbps[i][k]);
    out += "\n";
  }
  return out;
}

std::string ports_csv(const SimResult& r) {
  std::string out = "t_us";
  for (const auto& n : r.series.port_names) out += fmt::format(",{} queue_bytes,{} pause_sent,{} pause_received", n, n, n);
  out += "\n";
  for (std::size_t k = 0; k < r.series.t_us.size(); ++k) {
    out += fmt::format("{}", r.series.t_us[k]);
    for (std::size_t i = 0; i < r.series.port_names.size(); ++i)
      out += fmt::format(",{:.0f},{:.0f},{:.0f}", r.series.port_queue_bytes[i][k], r.series.port_pause_tx[i][k], r.series.port_pause_rx[i][k]);
    out += "\n";
  }
  return out;
}

std::string summary_text(const SimResult& r) {
  const SimTotals& t = r.totals;
  std::string out = fmt::format("# simulated (ns-3): {} | {} us simulated in {:.2f} s wall | {} events | {} packet-hops ({:.2f} M/s)\n",
                                r.name, ps_to_us(r.duration_ps), r.wall_s, r.events, t.packet_hops,
                                r.wall_s > 0 ? static_cast<double>(t.packet_hops) / r.wall_s / 1e6 : 0.0);
  out += fmt::format("# goodput {:.2f} Gb/s (steady {:.2f}), Jain {:.3f}, pauses {} (steady {}), CNPs {}, ECN marks {}, drops {}, "
                     "retransmitted {}\n",
                     t.goodput_Gbps, t.steady_goodput_Gbps, t.jain_steady, t.pause_tx, t.steady_pause_tx, t.cnps, t.ecn_marked,
                     t.drops, t.retransmitted_packets);
  out += fmt::format("# {:>5} {:>8} {:>8} {:>12} {:>12} {:>10} {:>10}\n", "flow", "src", "dst", "steady_Gbps", "fair_Gbps", "fct_us", "cnps");
  const std::size_t shown = std::min<std::size_t>(r.flows.size(), 32);
  for (std::size_t i = 0; i < shown; ++i) {
    const FlowResult& f = r.flows[i];
    out += fmt::format("  {:>5} {:>8} {:>8} {:>12.3f} {:>12.3f} {:>10} {:>10}\n", f.id, f.src, f.dst, f.steady_throughput_Gbps,
                       f.fair_share_Gbps, f.fct_us ? fmt::format("{:.1f}", *f.fct_us) : "-", f.cnps_received);
  }
  if (shown < r.flows.size()) out += fmt::format("  ... {} more flows in the document\n", r.flows.size() - shown);
  if (r.deadlock) out += "# " + deadlock_text(*r.deadlock) + "\n";
  return out;
}

std::string deadlock_text(const DeadlockFinding& d) {
  constexpr std::size_t kNamed = 8;
  const bool cycle = d.kind == kDeadlockCycle;
  std::string ports;
  for (std::size_t i = 0; i < d.ports.size() && i < kNamed; ++i) ports += (i == 0 ? "" : cycle ? " -> " : ", ") + d.ports[i];
  if (d.ports.size() > kNamed) ports += fmt::format(" (and {} more in the document)", d.ports.size() - kNamed);
  if (cycle) {
    if (!d.ports.empty()) ports += " -> back to " + d.ports.front();
    return fmt::format("deadlock at {:.1f} us simulated (a cycle of PFC pauses): {}", ps_to_us(d.at_ps), ports);
  }
  return fmt::format("deadlock at {:.1f} us simulated (PFC pauses that never clear): {}: {}", ps_to_us(d.at_ps), ports, d.detail);
}

}  // namespace railkit::sim
