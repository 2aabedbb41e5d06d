#include "core/prom.hpp"

#include <algorithm>
#include <cctype>
#include <tuple>

#include "core/strings.hpp"
#include "core/units.hpp"

namespace railkit {

std::string prom_escape(std::string_view s) {
  std::string out;
  for (char ch : replace_invalid_utf8(s)) {  // the exposition is UTF-8: promtool refuses the whole file otherwise
    if (ch == '\\') out += "\\\\";
    else if (ch == '"') out += "\\\"";
    else if (ch == '\n') out += "\\n";
    else out += ch;
  }
  return out;
}

std::string prom_label_value(std::string_view s) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (!std::isspace(static_cast<unsigned char>(s[i]))) {
      out += s[i];
      continue;
    }
    const bool after_digit = i > 0 && std::isdigit(static_cast<unsigned char>(s[i - 1]));
    if (!after_digit) out += '_';
  }
  return prom_escape(out);
}

std::string prom_help_type(std::string_view name, std::string_view help, std::string_view type) {
  std::string h;
  for (char ch : replace_invalid_utf8(help)) {
    if (ch == '\\') h += "\\\\";
    else if (ch == '\n') h += "\\n";
    else h += ch;
  }
  std::string out;
  out.append("# HELP ").append(name).append(" ").append(h).append("\n");
  out.append("# TYPE ").append(name).append(" ").append(type).append("\n");
  return out;
}

std::string prom_labels(const std::vector<std::pair<std::string, std::string>>& labels) {
  std::string out;
  for (const auto& [k, v] : labels) {
    if (!out.empty()) out += ',';
    out += k + "=\"" + prom_label_value(v) + "\"";
  }
  return out;
}

std::vector<PromResultSample> prom_result_samples(const ResultsDocument& doc, const PromSampleOptions& opts) {
  std::vector<const ResultRecord*> recs;
  for (const ResultRecord& r : doc.results) recs.push_back(&r);
  const auto key = [](const ResultRecord* r) {
    return std::tuple(r->op, r->group.value_or(""), r->bytes, r->in_place, r->cycle);
  };
  std::stable_sort(recs.begin(), recs.end(), [&](const auto* a, const auto* b) { return key(a) < key(b); });
  const bool cycles = std::any_of(recs.begin(), recs.end(), [](const auto* r) { return r->cycle != 0; });
  std::vector<PromResultSample> out;
  for (const ResultRecord* r : recs) {
    PromResultSample s;
    s.labels = opts.leading;
    s.labels.emplace_back("op", r->op);
    s.labels.emplace_back("bytes", std::to_string(r->bytes));
    s.labels.emplace_back("size", format_bytes(r->bytes));
    s.labels.emplace_back("placement", r->in_place ? "in_place" : "out_of_place");
    if (r->group) s.labels.emplace_back("group", *r->group);
    if (cycles) s.labels.emplace_back("cycle", std::to_string(r->cycle));
    s.labels.emplace_back("backend", doc.run.backend);
    if (opts.run_label) s.labels.emplace_back("label", doc.run.label);
    if (opts.timing_method) s.labels.emplace_back("timing_method", doc.run.timing_method);
    if (doc.simulated) s.labels.emplace_back("simulated", "true");  // never mistaken for a measurement
    s.busbw_GBps = r->busbw_GBps;
    s.time_us = r->time_us.avg;
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace railkit
