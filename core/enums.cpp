#include "core/enums.hpp"

#include <array>
#include <utility>
#include <vector>

#include "core/strings.hpp"

namespace railkit {
namespace {

constexpr std::array<std::pair<TrialStatus, std::string_view>, 4> kStatuses{{
    {TrialStatus::Ok, "ok"},
    {TrialStatus::Failed, "failed"},
    {TrialStatus::Timeout, "timeout"},
    {TrialStatus::Interrupted, "interrupted"},
}};

constexpr std::array<std::pair<Verdict, std::string_view>, 5> kVerdicts{{
    {Verdict::Pass, "pass"},
    {Verdict::Fail, "fail"},
    {Verdict::Skipped, "skipped"},
    {Verdict::Explained, "explained"},
    {Verdict::Reported, "reported"},
}};

template <typename E, std::size_t N>
std::string_view name_in(const std::array<std::pair<E, std::string_view>, N>& table, E e) noexcept {
  for (const auto& [k, v] : table)
    if (k == e) return v;
  return "?";
}

template <typename E, std::size_t N>
std::optional<E> parse_in(const std::array<std::pair<E, std::string_view>, N>& table, std::string_view s) noexcept {
  for (const auto& [k, v] : table)
    if (v == s) return k;
  return std::nullopt;
}

}  // namespace

std::string_view name(TrialStatus s) noexcept { return name_in(kStatuses, s); }
std::string_view name(Verdict v) noexcept { return name_in(kVerdicts, v); }
std::optional<TrialStatus> parse_trial_status(std::string_view s) noexcept { return parse_in(kStatuses, s); }
std::optional<Verdict> parse_verdict(std::string_view s) noexcept { return parse_in(kVerdicts, s); }

std::string verdict_names() {
  std::vector<std::string_view> names;
  for (const auto& [v, n] : kVerdicts) names.push_back(n);
  return join_list(names);
}

}  // namespace railkit
