// `railkit profile show`: the summary of a profile. Every number of a decision's row comes from
// one source (its evidence row, else the decision itself), so baseline, tuned and ratio agree.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/units.hpp"
#include "profiles/consume.hpp"

namespace railkit::profiles {
namespace {

/// Relative difference above which two ratios are not the same number (the table prints 3 decimals).
constexpr double kRatioSlack = 1e-3;

std::string join(const std::vector<std::string>& v) {
  if (v.empty()) return "-";
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : ", ") + display(x);
  return s;
}

/// GB/s with at least three significant digits below 10 (0.134, 1.25, 12.3, 400.0).
std::string gbps(double x) {
  if (x >= 10) return fmt::format("{:.1f}", x);
  if (x >= 1) return fmt::format("{:.2f}", x);
  return fmt::format("{:.3f}", x);
}

/// A fraction as a percentage rounded to 0.1 ("5%", "19.2%").
std::string percent(double fraction) {
  const double pct = std::round(fraction * 1000) / 10;
  if (pct == 0 && fraction > 0) return "<0.1%";
  std::string s = fmt::format("{:.1f}", pct);
  if (s.size() > 2 && s.compare(s.size() - 2, 2, ".0") == 0) s.resize(s.size() - 2);
  return s + "%";
}

/// A size range, both ends inclusive: "64 KiB" (one size), "4 KiB..<16 KiB" (max + 1 is a round
/// size), "64 KiB..1 MiB", ">= 1 MiB" (no upper end).
std::string byte_range(std::uint64_t lo, std::uint64_t hi) {
  if (lo == hi) return format_bytes(lo);
  if (hi == std::numeric_limits<std::uint64_t>::max()) return ">= " + format_bytes(lo);
  const std::uint64_t next = hi + 1;
  if (next % 1024 == 0 && hi % 1024 != 0) return format_bytes(lo) + "..<" + format_bytes(next);
  return format_bytes(lo) + ".." + format_bytes(hi);
}

std::string ratio_text(double ratio, std::optional<std::pair<double, double>> interval) {
  if (!interval) return fmt::format("{:.3f} (no interval)", ratio);
  return fmt::format("{:.3f} [{:.3f}, {:.3f}]", ratio, interval->first, interval->second);
}

/// Geometric mean; nullopt for no values or any value that is not > 0.
std::optional<double> geomean(const std::vector<double>& v) {
  if (v.empty()) return std::nullopt;
  double sum = 0;
  for (double x : v) {
    if (!(x > 0)) return std::nullopt;
    sum += std::log(x);
  }
  return std::exp(sum / static_cast<double>(v.size()));
}

bool same_ratio(double a, double b) { return std::abs(a - b) <= kRatioSlack * std::max(std::abs(a), std::abs(b)); }

std::string env_text(const std::map<std::string, std::string>& env) {
  if (env.empty()) return "(defaults)";
  std::string s;
  for (const auto& [k, v] : env) s += (s.empty() ? "" : " ") + k + "=" + display(v);
  return s;
}

/// Left-aligned columns, two spaces apart.
std::string table(const std::vector<std::vector<std::string>>& rows, const std::string& indent = "  ") {
  std::vector<std::size_t> w;
  for (const auto& r : rows)
    for (std::size_t i = 0; i < r.size(); ++i) {
      if (w.size() <= i) w.push_back(0);
      w[i] = std::max(w[i], r[i].size());
    }
  std::string s;
  for (const auto& r : rows) {
    std::string line = indent;
    for (std::size_t i = 0; i < r.size(); ++i)
      line += i + 1 == r.size() ? r[i] : fmt::format("{:<{}}  ", r[i], w[i]);
    while (!line.empty() && line.back() == ' ') line.pop_back();
    s += line + "\n";
  }
  return s;
}

/// One A/B comparison as shown: baseline and tuned GB/s and the ratio they give.
struct AB {
  std::string baseline, tuned, ratio;
};

/// An evidence row as shown. Baseline and tuned are the geometric means of the pairs, so their
/// quotient is the paired ratio; a stored ratio that the pairs do not give is warned about.
AB row_ab(const ProfileEvidenceRow& r, std::size_t index, std::vector<std::string>& warnings) {
  const auto b = geomean(r.baseline_busbw_GBps), t = geomean(r.tuned_busbw_GBps);
  const std::pair<double, double> interval{r.ratio_lo, r.ratio_hi};
  if (!b || !t) {  // no pairs, or a zero busbw: the means say nothing; the stored ratio stands alone
    warnings.push_back(fmt::format("evidence.rows[{}] ({} {}): {}; its ratio cannot be checked against them", index,
                                   r.coll, format_bytes(r.bytes),
                                   r.baseline_busbw_GBps.empty() ? "no A/B pairs" : "a busbw of 0 among its pairs"));
    return {"-", "-", ratio_text(r.ratio, interval)};
  }
  const double given = *t / *b;
  if (!same_ratio(given, r.ratio))
    warnings.push_back(fmt::format("evidence.rows[{}] ({} {}): the stored ratio {:.3f} is not what its pairs give "
                                   "({:.3f}); show prints {:.3f}",
                                   index, r.coll, format_bytes(r.bytes), r.ratio, given, given));
  return {gbps(*b), gbps(*t), ratio_text(given, interval)};
}

/// The evidence row of a decision: its collective at its min_bytes, else the first inside its range.
std::optional<std::size_t> row_of(const ProfileDecision& d, const std::vector<ProfileEvidenceRow>& rows) {
  std::optional<std::size_t> inside;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    if (rows[i].coll != d.coll || rows[i].bytes < d.min_bytes || rows[i].bytes > d.max_bytes) continue;
    if (rows[i].bytes == d.min_bytes) return i;
    if (!inside) inside = i;
  }
  return inside;
}

/// A decision's A/B numbers: its evidence row's, else its own (busbw against baseline_busbw).
AB decision_ab(const ProfileDecision& d, std::size_t index, const ProfileEvidence& ev, std::vector<std::string>& warnings) {
  if (const auto ri = row_of(d, ev.rows)) {
    std::vector<std::string> ignored;  // the evidence table warns about the row itself
    AB ab = row_ab(ev.rows[*ri], *ri, ignored);
    if (!same_ratio(d.ratio, ev.rows[*ri].ratio))
      warnings.push_back(fmt::format("decisions[{}] ({} {}): its ratio {:.3f} is not its evidence row's ({:.3f}); show "
                                     "prints the row's",
                                     index, d.coll, byte_range(d.min_bytes, d.max_bytes), d.ratio, ev.rows[*ri].ratio));
    return ab;
  }
  if (!(d.baseline_busbw_GBps > 0))
    return {gbps(d.baseline_busbw_GBps), gbps(d.busbw_GBps), "- (no evidence row)"};
  const double given = d.busbw_GBps / d.baseline_busbw_GBps;
  if (same_ratio(given, d.ratio))
    return {gbps(d.baseline_busbw_GBps), gbps(d.busbw_GBps), ratio_text(d.ratio, std::pair{d.ratio_lo, d.ratio_hi})};
  warnings.push_back(fmt::format("decisions[{}] ({} {}): its ratio {:.3f} is not busbw / baseline_busbw ({:.3f}) and no "
                                 "evidence row measures it; show prints {:.3f} without an interval",
                                 index, d.coll, byte_range(d.min_bytes, d.max_bytes), d.ratio, given, given));
  return {gbps(d.baseline_busbw_GBps), gbps(d.busbw_GBps), ratio_text(given, std::nullopt)};
}

std::string cluster_section(const ProfileCluster& c) {
  std::string fp = c.fingerprint.empty() ? "(not recorded)" : display(c.fingerprint);
  fp += c.fingerprint_facts.empty()
            ? " (hash only: `profile check` cannot name the facts that differ)"
            : fmt::format(" ({} facts recorded)", c.fingerprint_facts.size());
  return "\ncluster\n" +
         table({
             {"fingerprint", fp},
             {"nodes", fmt::format("{} ({} ranks, {} per node)", c.nodes, c.ranks, c.ranks_per_node)},
             {"backend", fmt::format("{} {}", display(c.backend), display(c.backend_version))},
             {"hosts", join(c.hosts)},
             {"GPU models", join(c.gpu_models)},
             {"NIC models", join(c.nic_models)},
             {"extra", c.extra.empty() ? "-" : c.extra.dump(-1, ' ', true, nlohmann::json::error_handler_t::replace)},
         });
}

std::string settings_section(const ProfileDocument& p) {
  std::string s = fmt::format("\nsettings.env ({})\n", p.env.size());
  for (const auto& [k, v] : p.env) s += fmt::format("  {}={}\n", k, display(v));
  std::size_t nd = 0;
  for (const auto& [_, attrs] : p.dcqcn) nd += attrs.size();
  s += fmt::format("settings.dcqcn ({})\n", nd);
  for (const auto& [prio, attrs] : p.dcqcn)
    for (const auto& [k, v] : attrs) s += fmt::format("  priority {}: {}={}\n", prio, k, display(v));
  if (!p.switch_ecn.empty()) {  // optional: advice found on the simulator
    s += fmt::format("settings.switch_ecn ({}): advice for the switches' RoCE queues; railkit never applies it\n",
                     p.switch_ecn.size());
    for (const auto& [k, v] : p.switch_ecn) s += fmt::format("  {}={}\n", k, display(v));
  }
  return s;
}

std::string decisions_section(const ProfileDocument& p, std::vector<std::string>& warnings) {
  std::string s = fmt::format("\ndecisions ({})\n", p.decisions.size());
  if (p.decisions.empty()) return s;
  std::vector<std::vector<std::string>> rows = {
      {"coll", "bytes", "config", "baseline GB/s", "tuned GB/s", "ratio [95% CI]", "significant", "env"}};
  bool with_row = false, without_row = false, kept_with_row = false;
  for (std::size_t i = 0; i < p.decisions.size(); ++i) {
    const ProfileDecision& d = p.decisions[i];
    const AB ab = decision_ab(d, i, p.evidence, warnings);
    const bool has_row = row_of(d, p.evidence.rows).has_value();
    with_row = with_row || has_row;
    without_row = without_row || !has_row;
    kept_with_row = kept_with_row || (!d.significant && has_row);
    rows.push_back({d.coll, byte_range(d.min_bytes, d.max_bytes), display(d.config), ab.baseline, ab.tuned, ab.ratio,
                    d.significant ? "yes" : "no", env_text(d.env)});
  }
  s += table(rows);
  if (with_row)
    s += "  (baseline, tuned and ratio from the decision's evidence row: geometric means of its A/B pairs)\n";
  if (without_row)
    s += "  (a decision without an evidence row shows its own busbw_GBps against baseline_busbw_GBps)\n";
  if (kept_with_row)
    s += "  (a decision that is not significant keeps the baseline; its tuned column is the candidate measured "
         "against it, not taken)\n";
  return s;
}

std::string expectations_section(const std::vector<ProfileExpectation>& expectations) {
  std::string s = fmt::format("\nexpectations ({})\n", expectations.size());
  if (expectations.empty()) return s;
  std::vector<std::vector<std::string>> rows = {
      {"coll", "bytes", "busbw GB/s", "tolerance", "passes at GB/s", "measured with"}};
  for (const auto& e : expectations)
    rows.push_back({e.coll, format_bytes(e.bytes), gbps(e.busbw_GBps), percent(e.tolerance),
                    ">= " + gbps(e.busbw_GBps * (1 - e.tolerance)),
                    e.env ? fmt::format("{} ({})", display(e.config), env_text(*e.env)) : "settings.env"});
  return s + table(rows);
}

std::string evidence_section(const ProfileEvidence& ev, std::vector<std::string>& warnings) {
  std::string s = "\nevidence\n";
  s += table({
      {"validated", ev.validated ? fmt::format("yes, at {}", display(ev.validated_at)) : "no"},
      {"measured by", fmt::format("railkit {}", display(ev.railkit_version))},
      {"search", fmt::format("strategy {}, space {}, {} trials", display(ev.strategy), display(ev.space), ev.trials)},
      {"A/B pairs", fmt::format("{} (max regression {})", ev.pairs, percent(ev.max_regression))},
      {"baseline env", env_text(ev.baseline_env)},
      {"tune dir", ev.tune_dir.empty() ? "-" : display(ev.tune_dir)},
  });
  s += fmt::format("\nevidence rows ({})\n", ev.rows.size());
  if (ev.rows.empty()) return s;
  std::vector<std::vector<std::string>> rows = {
      {"coll", "bytes", "pairs", "baseline GB/s (geo. mean)", "tuned GB/s (geo. mean)", "ratio [95% CI]"}};
  for (std::size_t i = 0; i < ev.rows.size(); ++i) {
    const ProfileEvidenceRow& r = ev.rows[i];
    const AB ab = row_ab(r, i, warnings);
    rows.push_back({r.coll, format_bytes(r.bytes), fmt::format("{}", r.baseline_busbw_GBps.size()), ab.baseline,
                    ab.tuned, ab.ratio});
  }
  return s + table(rows);
}

}  // namespace

Rendered show_profile(const ProfileDocument& p) {
  Rendered r;
  r.text = fmt::format("profile {} ({}), created {}\n", display(p.name), p.schema, display(p.created));
  if (p.cluster.backend == "sim")
    r.text += "SIMULATED: every figure of this profile comes from railkit-bench --backend sim, a model of a cluster, not a "
              "measurement; never validated\n";
  r.text += cluster_section(p.cluster);
  r.text += settings_section(p);
  r.text += decisions_section(p, r.warnings);
  r.text += expectations_section(p.expectations);
  r.text += evidence_section(p.evidence, r.warnings);
  return r;
}

}  // namespace railkit::profiles
