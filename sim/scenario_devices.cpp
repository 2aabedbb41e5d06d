// nic.* and switch.* of a scenario, and DCQCN attributes from profiles and `railkit dcqcn show`.
#include <algorithm>
#include <array>
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
namespace {

using detail::Ctx;
using detail::Field;
using detail::json;

std::string scalar_text(const json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_boolean()) return v.get<bool>() ? "1" : "0";
  return json_dump(v);
}

bool all_digit_keys(const json& j) {
  if (!j.is_object() || j.empty()) return false;
  for (auto it = j.begin(); it != j.end(); ++it)
    if (it.key().size() != 1 || it.key()[0] < '0' || it.key()[0] > '7') return false;
  return true;
}

/// A flat map of attribute name -> value (nulls skipped: `dcqcn show` writes null when absent).
void apply_flat(const json& j, NvidiaDcqcn& d, const std::string& where) {
  if (!j.is_object()) throw UsageError(where + ": expected a mapping of DCQCN attributes (roce_rp.rpg_ai_rate: 5, ...)");
  for (auto it = j.begin(); it != j.end(); ++it) {
    if (it->is_null()) continue;
    if (!it->is_primitive()) throw UsageError(where + "." + it.key() + ": expected a value");
    set_nvidia_attribute(d, it.key(), scalar_text(*it), where + "." + it.key());
  }
}

constexpr std::array kCcKinds = {CcKind::None, CcKind::DcqcnNvidia, CcKind::DcqcnPaper};

constexpr std::array kPaperFields = {
    Field{"cnp_interval", [](const json& v, const std::string& k, const Ctx& c, Scenario& s) { s.nic.paper.cnp_interval_ps = parse_time_ps(v, c.where(k)); }},
    Field{"alpha_timer",
          [](const json& v, const std::string& k, const Ctx& c, Scenario& s) {
            s.nic.paper.alpha_timer_ps = parse_time_ps(v, c.where(k));
            if (s.nic.paper.alpha_timer_ps <= 0) throw UsageError(c.where(k) + ": must be positive");
          }},
    Field{"rate_timer",
          [](const json& v, const std::string& k, const Ctx& c, Scenario& s) {
            s.nic.paper.rate_timer_ps = parse_time_ps(v, c.where(k));
            if (s.nic.paper.rate_timer_ps <= 0) throw UsageError(c.where(k) + ": must be positive");
          }},
    Field{"byte_counter", [](const json& v, const std::string& k, const Ctx& c, Scenario& s) { s.nic.paper.byte_counter_bytes = parse_bytes(v, c.where(k)); }},
    Field{"f", [](const json& v, const std::string& k, const Ctx& c, Scenario& s) { s.nic.paper.f = static_cast<int>(detail::read_int(v, k, c, 0, 64)); }},
    Field{"ai_rate", [](const json& v, const std::string& k, const Ctx& c, Scenario& s) { s.nic.paper.ai_rate_bps = parse_rate_bps(v, c.where(k)); }},
    Field{"hai_rate", [](const json& v, const std::string& k, const Ctx& c, Scenario& s) { s.nic.paper.hai_rate_bps = parse_rate_bps(v, c.where(k)); }},
    Field{"g", [](const json& v, const std::string& k, const Ctx& c, Scenario& s) { s.nic.paper.g = detail::read_number(v, k, c, 1e-9, 1); }},
    Field{"min_rate", [](const json& v, const std::string& k, const Ctx& c, Scenario& s) { s.nic.paper.min_rate_bps = parse_rate_bps(v, c.where(k)); }},
    Field{"cnp_priority",
          [](const json& v, const std::string& k, const Ctx& c, Scenario& s) { s.nic.paper.cnp_priority = static_cast<int>(detail::read_int(v, k, c, 0, 7)); }},
};

constexpr std::array kNicFields = {
    Field{"cc",
          [](const json& v, const std::string& k, const Ctx& c, Scenario& s) {
            const std::string name = detail::read_string(v, k, c);
            for (CcKind kind : kCcKinds)
              if (cc_name(kind) == name) {
                s.nic.cc = kind;
                return;
              }
            throw UsageError(c.where(k) + ": '" + name + "': expected dcqcn_nvidia, dcqcn_paper or none");
          }},
    Field{"priority",
          [](const json& v, const std::string& k, const Ctx& c, Scenario& s) { s.nic.data_priority = static_cast<int>(detail::read_int(v, k, c, 0, 7)); }},
    Field{"dcqcn_file",
          [](const json& v, const std::string& k, const Ctx& c, Scenario& s) {
            const std::filesystem::path p = c.base_dir / detail::read_string(v, k, c);
            std::string text;
            try {
              text = read_input_file(p, c.where(k));
            } catch (const IoError& e) {
              throw UsageError(c.where(k) + ": " + e.what());
            }
            json doc;
            if (is_yaml_path(p.string())) {
              doc = parse_yaml(text, p.string());
            } else {
              try {
                doc = parse_json(text);
              } catch (const json::parse_error& e) {
                throw UsageError(c.where(k) + ": " + p.string() + ": not valid JSON: " + json_error_text(e));
              }
            }
            load_dcqcn_attributes(doc, s.nic.data_priority, s.nic.nvidia, p.string());
          }},
    Field{"dcqcn",
          [](const json& v, const std::string& k, const Ctx& c, Scenario& s) {
            load_dcqcn_attributes(v, s.nic.data_priority, s.nic.nvidia, c.where(k));
          }},
    Field{"byte_reset_unit_bytes",
          [](const json& v, const std::string& k, const Ctx& c, Scenario& s) {
            s.nic.byte_reset_unit_bytes = static_cast<std::uint64_t>(detail::read_int(v, k, c, 1, 1 << 20));
          }},
    Field{"paper", [](const json& v, const std::string& k, const Ctx& c, Scenario& s) { detail::read_object(v, k, kPaperFields, c, s); }},
    Field{"ack_every_packets",
          [](const json& v, const std::string& k, const Ctx& c, Scenario& s) {
            s.nic.ack_every_packets = static_cast<std::uint32_t>(detail::read_int(v, k, c, 1, 1 << 20));
          }},
    Field{"retransmit_timeout",
          [](const json& v, const std::string& k, const Ctx& c, Scenario& s) {
            s.nic.retransmit_timeout_ps = parse_time_ps(v, c.where(k));
            if (s.nic.retransmit_timeout_ps <= 0) throw UsageError(c.where(k) + ": must be positive");
          }},
};

/// kmin_bytes, kmax_bytes and pmax of one ECN setting, given together.
EcnThresholds read_thresholds(const json& v, const std::string& key, const Ctx& c) {
  static constexpr std::array<std::string_view, 3> kKeys = {"kmin_bytes", "kmax_bytes", "pmax"};
  for (auto k : kKeys)
    if (!v.contains(std::string(k))) throw UsageError(c.where(key) + ": give kmin_bytes, kmax_bytes and pmax together");
  EcnThresholds t;
  t.kmin_bytes = parse_bytes(v["kmin_bytes"], c.where(key + ".kmin_bytes"));
  t.kmax_bytes = parse_bytes(v["kmax_bytes"], c.where(key + ".kmax_bytes"));
  t.pmax = detail::read_number(v["pmax"], key + ".pmax", c, 0, 1);
  if (t.kmax_bytes < t.kmin_bytes) throw UsageError(c.where(key + ".kmax_bytes") + ": below kmin_bytes");
  return t;
}

void read_ecn(const json& v, const std::string& key, const Ctx& c, Scenario& s) {
  if (!v.is_object()) throw UsageError(c.where(key) + ": expected a mapping (priorities, preset, kmin_bytes, kmax_bytes, pmax, per_priority, mark_on)");
  static constexpr std::array<std::string_view, 7> kKeys = {"priorities", "preset", "kmin_bytes", "kmax_bytes", "pmax", "per_priority", "mark_on"};
  for (auto it = v.begin(); it != v.end(); ++it)
    if (std::find(kKeys.begin(), kKeys.end(), it.key()) == kKeys.end())
      throw UsageError(c.where(key + "." + it.key()) + ": unknown key (expected one of: priorities, preset, kmin_bytes, kmax_bytes, pmax, per_priority, mark_on)");
  if (v.contains("mark_on")) {
    const std::string m = detail::read_string(v["mark_on"], key + ".mark_on", c);
    if (m != "dequeue" && m != "enqueue") throw UsageError(c.where(key + ".mark_on") + ": '" + m + "': expected dequeue or enqueue");
    s.sw.ecn_on_dequeue = m == "dequeue";
  }
  std::array<bool, kPriorities> on{};
  for (std::size_t p = 0; p < kPriorities; ++p) on[p] = s.sw.ecn[p].enabled;
  if (v.contains("priorities")) on = detail::read_priorities(v["priorities"], key + ".priorities", c);
  EcnPreset preset = EcnPreset::DcqcnPaper;
  if (v.contains("preset")) {
    const std::string name = detail::read_string(v["preset"], key + ".preset", c);
    const auto p = ecn_preset_from_name(name);
    if (!p) throw UsageError(c.where(key + ".preset") + ": '" + name + "': expected dcqcn_paper, hpcc or sonic");
    preset = *p;
  }
  const bool given = v.contains("kmin_bytes") || v.contains("kmax_bytes") || v.contains("pmax");
  if (given && v.contains("preset")) throw UsageError(c.where(key + ".preset") + ": give a preset or kmin_bytes, kmax_bytes and pmax, not both");
  if (given) preset = EcnPreset::Given;
  const EcnThresholds t = given ? read_thresholds(v, key, c) : kDcqcnPaperEcn;
  for (std::size_t p = 0; p < kPriorities; ++p) s.sw.ecn[p] = {on[p], preset, t};
  if (!v.contains("per_priority")) return;
  const json& per = v["per_priority"];
  if (!all_digit_keys(per)) throw UsageError(c.where(key + ".per_priority") + ": expected a mapping of priorities 0..7");
  for (auto it = per.begin(); it != per.end(); ++it) {
    const auto p = static_cast<std::size_t>(it.key()[0] - '0');
    s.sw.ecn[p] = {true, EcnPreset::Given, read_thresholds(*it, key + ".per_priority." + it.key(), c)};
  }
}

constexpr std::array kPfcFields = {
    Field{"enabled", [](const json& v, const std::string& k, const Ctx& c, Scenario& s) { s.sw.pfc_enabled = detail::read_bool(v, k, c); }},
    Field{"priorities", [](const json& v, const std::string& k, const Ctx& c, Scenario& s) { s.sw.pfc = detail::read_priorities(v, k, c); }},
    Field{"headroom_bytes",
          [](const json& v, const std::string& k, const Ctx& c, Scenario& s) {
            s.sw.headroom_bytes = v.is_string() && v.get<std::string>() == "auto" ? -1 : static_cast<std::int64_t>(parse_bytes(v, c.where(k)));
          }},
    Field{"threshold_alpha", [](const json& v, const std::string& k, const Ctx& c, Scenario& s) { s.sw.threshold_alpha = detail::read_number(v, k, c, 1.0 / 1024, 1024); }},
    Field{"xoff_bytes",
          [](const json& v, const std::string& k, const Ctx& c, Scenario& s) {
            s.sw.xoff_bytes = v.is_string() && v.get<std::string>() == "dynamic" ? -1 : static_cast<std::int64_t>(parse_bytes(v, c.where(k)));
          }},
    Field{"xon_offset_bytes",
          [](const json& v, const std::string& k, const Ctx& c, Scenario& s) {
            s.sw.xon_offset_bytes = v.is_string() && v.get<std::string>() == "auto" ? -1 : static_cast<std::int64_t>(parse_bytes(v, c.where(k)));
          }},
    Field{"pause_quanta",
          [](const json& v, const std::string& k, const Ctx& c, Scenario& s) { s.sw.pause_quanta = static_cast<std::uint32_t>(detail::read_int(v, k, c, 1, 65535)); }},
};

constexpr std::array kSwitchFields = {
    Field{"buffer_bytes",
          [](const json& v, const std::string& k, const Ctx& c, Scenario& s) {
            s.sw.buffer_bytes = parse_bytes(v, c.where(k));
            if (s.sw.buffer_bytes == 0) throw UsageError(c.where(k) + ": a switch needs a buffer");
          }},
    Field{"scheduler",
          [](const json& v, const std::string& k, const Ctx& c, Scenario& s) {
            const std::string name = detail::read_string(v, k, c);
            if (name != "strict" && name != "dwrr") throw UsageError(c.where(k) + ": '" + name + "': expected strict or dwrr");
            s.sw.scheduler = name == "strict" ? SchedulerKind::Strict : SchedulerKind::Dwrr;
          }},
    Field{"dwrr_weights",
          [](const json& v, const std::string& k, const Ctx& c, Scenario& s) {
            if (!v.is_array() || v.size() != kPriorities) throw UsageError(c.where(k) + ": expected 8 weights, one per priority");
            for (std::size_t p = 0; p < kPriorities; ++p)
              s.sw.dwrr_weights[p] = static_cast<std::uint32_t>(detail::read_int(v[p], k, c, 1, 1000));
          }},
    Field{"strict_priorities", [](const json& v, const std::string& k, const Ctx& c, Scenario& s) { s.sw.strict = detail::read_priorities(v, k, c); }},
    Field{"ecn", read_ecn},
    Field{"pfc", [](const json& v, const std::string& k, const Ctx& c, Scenario& s) { detail::read_object(v, k, kPfcFields, c, s); }},
    Field{"ecmp_seed",
          [](const json& v, const std::string& k, const Ctx& c, Scenario& s) {
            s.sw.ecmp_seed = static_cast<std::uint64_t>(detail::read_int(v, k, c, 1, std::int64_t{1} << 40));
          }},
};

}  // namespace

namespace detail {
std::span<const Field> nic_fields() noexcept { return kNicFields; }
std::span<const Field> switch_fields() noexcept { return kSwitchFields; }
}  // namespace detail

void load_dcqcn_attributes(const nlohmann::json& j, int priority, NvidiaDcqcn& d, const std::string& where) {
  const std::string schema = j.is_object() && j.contains("schema") && j["schema"].is_string() ? j["schema"].get<std::string>() : "";
  if (schema.rfind("railkit.dcqcn/", 0) == 0) {  // `railkit dcqcn show --format json`
    if (!j.contains("netdevs") || !j["netdevs"].is_array() || j["netdevs"].empty())
      throw UsageError(where + ": a railkit.dcqcn document without netdevs");
    apply_flat(j["netdevs"][0].value("attributes", json::object()), d, where + ": netdevs[0].attributes");
    return;
  }
  if (schema.rfind("railkit.profile/", 0) == 0) {  // a profile: settings.dcqcn.<priority>
    const json settings = j.value("settings", json::object());
    const json dcqcn = settings.is_object() ? settings.value("dcqcn", json::object()) : json::object();
    const std::string p = std::to_string(priority);
    if (!dcqcn.is_object() || !dcqcn.contains(p))
      throw UsageError(where + ": settings.dcqcn has no entry for priority " + p + " (nic.priority)");
    apply_flat(dcqcn[p], d, where + ": settings.dcqcn." + p);
    return;
  }
  if (!schema.empty()) throw UsageError(where + ": schema '" + schema + "': expected railkit.profile/1 or railkit.dcqcn/1");
  if (all_digit_keys(j)) {  // settings.dcqcn as in a profile: priority -> attributes
    const std::string p = std::to_string(priority);
    if (!j.contains(p)) throw UsageError(where + ": no entry for priority " + p + " (nic.priority)");
    apply_flat(j[p], d, where + "." + p);
    return;
  }
  apply_flat(j, d, where);
}

std::string_view cc_name(CcKind k) noexcept {
  switch (k) {
    case CcKind::None: return "none";
    case CcKind::DcqcnNvidia: return "dcqcn_nvidia";
    case CcKind::DcqcnPaper: return "dcqcn_paper";
  }
  return "?";
}

}  // namespace railkit::sim
