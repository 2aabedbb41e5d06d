#pragma once
// YAML input files (space files, suites) read into the same JSON values the JSON readers take,
// through libyaml (Debian libyaml-dev). Plain scalars are typed as YAML 1.2's core schema does:
// null, ~ and empty -> null; true/false -> booleans; decimal integers and floats -> numbers;
// anything else, and every quoted scalar, -> a string. Anchors and aliases are refused.
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace railkit {

/// Parses one YAML document. Throws UsageError "<source>:<line>:<column>: <problem>" for a
/// syntax error, several documents, an alias, or a mapping key that is not a scalar.
nlohmann::json parse_yaml(std::string_view text, const std::string& source);

/// True when `path` ends in .yaml or .yml (case-insensitive).
bool is_yaml_path(std::string_view path);

}  // namespace railkit
