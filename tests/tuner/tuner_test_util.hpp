#pragma once
// Helpers for the tuner tests: space knobs built in code (results documents: tests/lib/results_util.hpp).
#include <cstddef>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/tunables.hpp"
#include "results_util.hpp"
#include "tuner/space.hpp"

namespace railkit::tuner::test {

using railkit::test::make_doc;
using railkit::test::Rec;

/// A knob of the tunable `name` (looked up in the table) with the values searched.
inline Knob make_knob(const std::string& name, std::vector<std::string> values, std::size_t baseline, bool numeric,
                      std::optional<Condition> when = std::nullopt) {
  Knob k;
  k.name = name;
  k.tunable = find_tunable(name);
  k.values = std::move(values);
  k.baseline = baseline;
  k.numeric = numeric;
  k.when = std::move(when);
  return k;
}

}  // namespace railkit::tuner::test
