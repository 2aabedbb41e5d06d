#pragma once
// Prometheus text exposition, as node_exporter's textfile collector reads it: label values
// escaped, `# HELP` / `# TYPE` lines. Used by `railkit accept` (accept.prom) and railkit-bench --prom.
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/results.hpp"

namespace railkit {

/// A Prometheus label value: backslash, double quote and newline escaped, bytes that are not UTF-8
/// replaced by U+FFFD (replace_invalid_utf8).
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

/// One record of a results document as Prometheus labels and values.
struct PromResultSample {
  std::vector<std::pair<std::string, std::string>> labels;  ///< raw values (prom_labels escapes them)
  double busbw_GBps = 0;  ///< GB/s (1e9 B/s)
  double time_us = 0;     ///< the record's time_us.avg, microseconds
};

/// Which labels prom_result_samples adds besides the record's own.
struct PromSampleOptions {
  /// Labels put first on every sample (`railkit sweep --prom`: config, round).
  std::vector<std::pair<std::string, std::string>> leading;
  bool run_label = true;       ///< label = run.label
  bool timing_method = false;  ///< timing_method = run.timing_method (back_to_back | barrier_separated)
};

/// The samples of a results document, one per record, ordered by op, group, bytes, placement (out
/// first) and cycle. Labels in order: `leading`, op, bytes, size ("1MiB"), placement
/// (out_of_place | in_place), group (--split runs only), cycle (only when the document holds more
/// than one -N cycle), backend, label (run_label), timing_method (when asked), simulated="true"
/// (a simulated document only). Values are copied as they are, not finite ones included.
std::vector<PromResultSample> prom_result_samples(const ResultsDocument& doc, const PromSampleOptions& opts = {});

}  // namespace railkit
