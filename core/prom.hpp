#pragma once
// Prometheus text exposition, as node_exporter's textfile collector reads it: label values
// escaped, `# HELP` / `# TYPE` lines. Used by `railkit accept` (accept.prom) and railkit-bench --prom.
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace railkit {

/// A Prometheus label value: backslash, double quote and newline escaped.
std::string prom_escape(std::string_view s);
/// A Prometheus label value without white space: a space after a digit is dropped ("16 KiB" ->
/// "16KiB"), any other white space becomes '_'; then prom_escape.
std::string prom_label_value(std::string_view s);

/// `# HELP name help` and `# TYPE name type` (backslash and newline in `help` escaped, as the
/// format asks), each ending in a newline.
std::string prom_help_type(std::string_view name, std::string_view help, std::string_view type = "gauge");

/// Labels as they go between the braces: `k1="v1",k2="v2"`, in the given order, each value
/// through prom_label_value. Names must already be valid label names.
std::string prom_labels(const std::vector<std::pair<std::string, std::string>>& labels);

}  // namespace railkit
