#pragma once
// Private to report/: what the HTML pages of `railkit report --html` share (html_common.cpp):
// table cells and tables, the page frame, plots and notes, values read from JSON documents, and
// the comparison's sections (html_comparison.cpp) that the tune page's validation reuses.
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "report/html_report.hpp"

namespace railkit::report::html_parts {

/// html_escape.
std::string esc(std::string_view s);

/// A table cell: its text (escaped when written), an optional sort key and a class.
struct Cell {
  Cell(std::string t, std::optional<double> s = std::nullopt, std::string c = {})
      : text(std::move(t)), sort(s), cls(std::move(c)) {}
  std::string text;
  std::optional<double> sort;
  std::string cls;
  bool raw = false;  ///< `text` is HTML already (built from escaped pieces)
};
using Rows = std::vector<std::vector<Cell>>;
using KvRows = std::vector<std::pair<std::string, std::string>>;

/// A number cell ("{:.4g}", sorted by value; "-" when unset or not finite), class "num" plus `cls`.
Cell num_cell(std::optional<double> v, std::string_view cls = "");
/// A ratio cell: "1.200 [1.1, 1.3]" when the interval is known, else as num_cell.
Cell ratio_cell(std::optional<double> ratio, std::optional<double> lo, std::optional<double> hi);
std::string upper(std::string s);

/// A sortable table (class "sortable": the inline script sorts it by the header clicked); a
/// paragraph saying "none" when there is no row.
std::string table_html(std::string_view id, std::string_view caption, const std::vector<std::string>& head,
                       const Rows& rows);
/// A two-column table of what/value pairs (the header).
std::string kv_html(std::string_view id, const KvRows& rows);

/// The class of an accept verdict's cell: v-pass, v-fail, v-reported, v-explained, else v-skipped.
std::string verdict_class(std::string_view v);
/// Failing first: fail 0, reported 1, skipped 2, explained 3, pass 4; unknown 1 (not a pass).
int verdict_rank(std::string_view v);

/// The pages' Content-Security-Policy: nothing fetched, images as data: URIs, inline style, the
/// one inline script (the sorter) allowed by its SHA-256 ('sha256-BASE64', no 'unsafe-inline'),
/// base-uri and form-action 'none'.
std::string content_security_policy();
/// The whole document: head (CSP, style), `body`, the footer and the sort script.
std::string page(std::string_view title, const std::string& body, const HtmlMeta& meta);
/// The rows every header starts with: who made the report, where, when, from what.
KvRows meta_rows(const HtmlMeta& m);
/// The plots section ("" without plots); a plot not drawn says why.
std::string plots_html(const std::vector<HtmlPlot>& plots);
/// The notes section ("" without notes); notes that mention SIMULATED are marked.
std::string notes_html(const std::vector<std::string>& notes);
/// "K=V K=V" in key order.
std::string env_text(const std::map<std::string, std::string>& env);

/// A JSON value as text: a string as is, null as "-", anything else as compact JSON.
std::string json_text(const nlohmann::json& v);
/// obj[key] as json_text; "" when obj is not an object, or the key is missing or null.
std::string str_of(const nlohmann::json& obj, std::string_view key);
/// obj[key] when it is a number.
std::optional<double> num_of(const nlohmann::json& obj, std::string_view key);

/// The configurations, the winners and a table per collective (no header, no plots): the body of
/// the comparison page and the tune page's validation section. `id` prefixes element ids, `h` is
/// the heading level of its sections.
std::string comparison_body(const Comparison& c, std::string_view id, std::string_view h = "h2");

}  // namespace railkit::report::html_parts
