#include "tuner/space.hpp"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <utility>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/strings.hpp"

namespace railkit::tuner {
namespace {

constexpr std::size_t kSizeMax = std::numeric_limits<std::size_t>::max();

std::size_t sat_add(std::size_t a, std::size_t b) { return a > kSizeMax - b ? kSizeMax : a + b; }

std::size_t sat_mul(std::size_t a, std::size_t b) {
  if (a == 0 || b == 0) return 0;
  return a > kSizeMax / b ? kSizeMax : a * b;
}

void check_config(const Space& s, const Config& c) {
  if (c.size() != s.knobs.size())
    throw UsageError(fmt::format("space '{}': a configuration of {} values for {} knobs", s.name, c.size(), s.knobs.size()));
  for (std::size_t k = 0; k < c.size(); ++k)
    if (c[k] >= s.knobs[k].values.size())
      throw UsageError(fmt::format("space '{}': value index {} out of range for knob {} ({} values)", s.name, c[k],
                                   s.knobs[k].name, s.knobs[k].values.size()));
}

void check_space(const Space& s) {
  for (const auto& k : s.knobs)
    if (k.baseline >= k.values.size())
      throw UsageError(fmt::format("space '{}': knob {} has baseline index {} but {} values", s.name, k.name, k.baseline,
                                   k.values.size()));
}

/// The index of the knob a condition of knob k names; it must be an earlier knob.
std::size_t condition_knob(const Space& s, std::size_t k) {
  const Condition& w = *s.knobs[k].when;
  for (std::size_t j = 0; j < k; ++j)
    if (s.knobs[j].name == w.knob) return j;
  throw UsageError(fmt::format("space '{}': the condition of knob {} names {}, which is not an earlier knob", s.name,
                               s.knobs[k].name, w.knob));
}

/// A value as a number: the tunable's integer when it has one, else the whole text as a double.
std::optional<double> as_number(const Tunable* t, const std::string& v) {
  if (v.empty()) return std::nullopt;
  if (t != nullptr)
    if (const auto i = tunable_int(*t, v)) return static_cast<double>(*i);
  return to_double(v);
}

/// Equality of a knob's value and a condition's value: "" only equals "", numbers compare as
/// numbers, enum names case-insensitively.
bool value_equal(const Tunable* t, const std::string& a, const std::string& b) {
  if (a.empty() || b.empty()) return a == b;
  const auto x = as_number(t, a);
  const auto y = as_number(t, b);
  if (x && y) return *x == *y;
  if (t != nullptr && (t->type == TunableType::Enum || t->type == TunableType::EnumList)) return to_lower(a) == to_lower(b);
  return a == b;
}

bool condition_holds(const Space& s, const Knob& on, const std::string& v, const Condition& w, std::size_t k) {
  const auto one = [&]() -> const std::string& {
    if (w.values.size() != 1)
      throw UsageError(fmt::format("space '{}': the condition of knob {} ('{}') takes one value, not {}", s.name,
                                   s.knobs[k].name, w.op, w.values.size()));
    return w.values.front();
  };
  const auto in = [&] {
    return std::any_of(w.values.begin(), w.values.end(), [&](const std::string& x) { return value_equal(on.tunable, v, x); });
  };
  if (w.op == "==") return value_equal(on.tunable, v, one());
  if (w.op == "!=") return !value_equal(on.tunable, v, one());
  if (w.op == "in") return in();
  if (w.op == "not-in") return !in();

  using Cmp = bool (*)(double, double);
  static constexpr std::pair<std::string_view, Cmp> kNumeric[] = {
      {">", [](double a, double b) { return a > b; }},  {">=", [](double a, double b) { return a >= b; }},
      {"<", [](double a, double b) { return a < b; }},  {"<=", [](double a, double b) { return a <= b; }},
  };
  for (const auto& [op, cmp] : kNumeric) {
    if (w.op != op) continue;
    const std::string& ref = one();
    if (v.empty() || ref.empty()) return false;  // unset compares with nothing
    const auto x = as_number(on.tunable, v);
    const auto y = as_number(on.tunable, ref);
    if (!x || !y)
      throw UsageError(fmt::format("space '{}': the condition of knob {} compares {}='{}' {} '{}', which are not both numbers",
                                   s.name, s.knobs[k].name, on.name, v, w.op, ref));
    return cmp(*x, *y);
  }
  throw UsageError(fmt::format("space '{}': the condition of knob {} has an unknown operator '{}'", s.name, s.knobs[k].name,
                               w.op));
}

/// Counts the canonical configurations of knobs k.. given the values of knobs 0..k-1 in `c`
/// (later knobs held at their baseline). Knobs no condition names only multiply the count, so
/// the memo is keyed by the values of the named ones alone.
class Counter {
 public:
  explicit Counter(const Space& s) : s_(s), named_(s.knobs.size(), false), c_(baseline_config(s)) {
    for (std::size_t k = 0; k < s.knobs.size(); ++k)
      if (s.knobs[k].when) named_[condition_knob(s, k)] = true;
  }

  std::size_t count(std::size_t k) {
    if (k == s_.knobs.size()) return 1;
    std::pair<std::size_t, Config> key{k, {}};
    for (std::size_t j = 0; j < k; ++j)
      if (named_[j]) key.second.push_back(c_[j]);
    if (const auto it = memo_.find(key); it != memo_.end()) return it->second;
    const Knob& knob = s_.knobs[k];
    std::size_t n = 0;
    if (!knob_active(s_, c_, k)) {
      n = count(k + 1);
    } else if (!named_[k]) {
      n = sat_mul(knob.values.size(), count(k + 1));
    } else {
      for (std::size_t v = 0; v < knob.values.size(); ++v) {
        c_[k] = v;
        n = sat_add(n, count(k + 1));
      }
      c_[k] = knob.baseline;
    }
    memo_.emplace(std::move(key), n);
    return n;
  }

 private:
  const Space& s_;
  std::vector<bool> named_;
  Config c_;
  std::map<std::pair<std::size_t, Config>, std::size_t> memo_;
};

/// Appends every canonical configuration of knobs k.. (given knobs 0..k-1 in `c`) in
/// lexicographic order.
void enumerate(const Space& s, Config& c, std::size_t k, std::vector<Config>& out) {
  if (k == s.knobs.size()) {
    out.push_back(c);
    return;
  }
  if (!knob_active(s, c, k)) {
    c[k] = s.knobs[k].baseline;
    enumerate(s, c, k + 1, out);
    return;
  }
  for (std::size_t v = 0; v < s.knobs[k].values.size(); ++v) {
    c[k] = v;
    enumerate(s, c, k + 1, out);
  }
  c[k] = s.knobs[k].baseline;
}

std::string_view short_name(std::string_view name) {
  for (const std::string_view prefix :
       {std::string_view{"NCCL_"}, std::string_view{"OMPI_MCA_coll_tuned_"}, std::string_view{"switch.ecn."}})
    if (name.starts_with(prefix)) return name.substr(prefix.size());
  return name;
}

}  // namespace

Config baseline_config(const Space& s) {
  Config c;
  c.reserve(s.knobs.size());
  for (const auto& k : s.knobs) c.push_back(k.baseline);
  return c;
}

bool knob_active(const Space& s, const Config& c, std::size_t k) {
  if (k >= s.knobs.size() || c.size() != s.knobs.size())
    throw UsageError(fmt::format("space '{}': knob {} of a configuration of {} values ({} knobs)", s.name, k, c.size(),
                                 s.knobs.size()));
  const Knob& knob = s.knobs[k];
  if (!knob.when) return true;
  const std::size_t j = condition_knob(s, k);
  if (!knob_active(s, c, j)) return false;
  const Knob& on = s.knobs[j];
  if (c[j] >= on.values.size())
    throw UsageError(fmt::format("space '{}': value index {} out of range for knob {}", s.name, c[j], on.name));
  return condition_holds(s, on, on.values[c[j]], *knob.when, k);
}

Config canonical(const Space& s, Config c) {
  check_config(s, c);
  // Conditions name earlier knobs only, so one pass in order settles every knob.
  for (std::size_t k = 0; k < c.size(); ++k)
    if (!knob_active(s, c, k)) c[k] = s.knobs[k].baseline;
  return c;
}

std::size_t config_count(const Space& s) {
  check_space(s);
  return Counter(s).count(0);
}

std::vector<Config> all_configs(const Space& s, std::size_t limit) {
  const std::size_t n = config_count(s);
  if (n > limit)
    throw UsageError(fmt::format("space '{}' has {} configurations, more than the limit of {}", s.name, n, limit));
  std::vector<Config> lex;
  lex.reserve(n);
  Config c = baseline_config(s);
  enumerate(s, c, 0, lex);
  const Config base = canonical(s, baseline_config(s));
  std::vector<Config> out;
  out.reserve(lex.size());
  out.push_back(base);
  for (auto& x : lex)
    if (x != base) out.push_back(std::move(x));
  return out;
}

Settings settings_of(const Space& s, const Config& c) {
  check_config(s, c);
  Settings out;
  out.env = s.fixed_env;
  for (std::size_t k = 0; k < s.knobs.size(); ++k) {
    const Knob& knob = s.knobs[k];
    const std::string& v = knob.values[c[k]];
    if (v.empty() || !knob_active(s, c, k)) continue;
    const Tunable* t = knob.tunable != nullptr ? knob.tunable : find_tunable(knob.name);
    if (t == nullptr) throw UsageError(fmt::format("space '{}': knob {} is not a known tunable", s.name, knob.name));
    auto& into = t->scope == TunableScope::Dcqcn    ? out.dcqcn
                 : t->scope == TunableScope::Switch ? out.switch_settings
                                                    : out.env;
    into.insert_or_assign(knob.name, v);
  }
  return out;
}

std::string infeasible_reason(const Settings& s) {
  std::vector<std::string> given, missing;
  for (const auto n : kSwitchEcnKnobs) {
    if (s.switch_settings.count(std::string(n)) != 0) given.emplace_back(n);
    else missing.emplace_back(n);
  }
  if (!given.empty() && !missing.empty())
    return fmt::format("the simulator takes switch ECN Kmin, Kmax and Pmax together: {} set, {} unset", join(given, ", "),
                       join(missing, ", "));
  if (given.empty()) return "";
  const std::string& kmin = s.switch_settings.at(std::string(kSwitchEcnKnobs[0]));
  const std::string& kmax = s.switch_settings.at(std::string(kSwitchEcnKnobs[1]));
  const auto lo = to_int(kmin), hi = to_int(kmax);
  if (lo && hi && *lo >= *hi)
    return fmt::format("switch.ecn.kmin_bytes={} is not below switch.ecn.kmax_bytes={}", kmin, kmax);
  return "";
}

std::string config_label(const Space& s, const Config& c) {
  check_config(s, c);
  std::string out;
  for (std::size_t k = 0; k < s.knobs.size(); ++k) {
    const Knob& knob = s.knobs[k];
    if (c[k] == knob.baseline || !knob_active(s, c, k)) continue;
    const std::string& v = knob.values[c[k]];
    if (!out.empty()) out += ',';
    out += fmt::format("{}={}", short_name(knob.name), v.empty() ? std::string_view{"unset"} : std::string_view{v});
  }
  return out.empty() ? "defaults" : out;
}

}  // namespace railkit::tuner
