#pragma once
// `railkit report --html OUT.html`: one self-contained HTML file (no network, no external script,
// style or font: a Content-Security-Policy forbids any) for a run or sweep (results documents and
// sweep directories), a tune session directory or an accept run directory. It shows the header
// (who, where, what, when, railkit and backend versions), the tables (sortable by clicking a
// header, a small inline script), the plots as SVG images (data: URIs), and every verdict with the
// rule that judged it; for accept the failing nodes first. Every string from a document is
// escaped. accept.json is read by accept/'s reader (accept::accept_from_json) and the page drawn
// from the typed report; tune journals are still read as JSON documents: tuner's typed journal
// reader needs the session's search space.
#include <filesystem>
#include <iosfwd>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "accept/reports.hpp"
#include "core/results.hpp"
#include "report/report.hpp"

namespace railkit::report {

/// What `railkit report --html` was given.
enum class HtmlInputKind {
  Results,  ///< results documents and sweep directories (any number)
  Tune,     ///< one `railkit tune --out` directory (journal.jsonl)
  Accept,   ///< one `railkit accept --out` directory (accept.json)
};

/// Classifies the inputs by their files: a directory with sweep.json is a sweep, with
/// journal.jsonl a tune session, with accept.json an accept run; anything else that is a file is a
/// results document. A tune or accept directory must be the only input. Throws UsageError (one
/// line naming the path) for a directory that is none of these, a missing path, or a mix.
HtmlInputKind classify_html_inputs(const std::vector<std::string>& inputs);

/// Text for HTML element content and quoted attribute values: & < > " ' escaped, control
/// characters other than tab, newline and carriage return replaced by U+FFFD, invalid UTF-8 bytes too.
std::string html_escape(std::string_view s);

/// Standard base64 (with padding) of `bytes`, for data: URIs.
std::string base64(std::string_view bytes);

/// A plot to embed: SVG text (as scripts/plot_results.py writes it) or, when it could not be
/// drawn, why (shown in its place).
struct HtmlPlot {
  std::string title;
  std::string svg;
  std::string unavailable;  ///< non-empty: no plot, this reason instead
};

/// Who made the report, where and when: shown in the header.
struct HtmlMeta {
  std::string generated_at;  ///< UTC ISO 8601
  std::string user;          ///< $USER or $LOGNAME; "" when unknown
  std::string host;          ///< where the report was generated
  std::vector<std::string> inputs;
};

/// The page of a comparison (results documents, sweep directories): header with one row per
/// configuration (label, backend and version, railkit version, ranks, nodes, hosts, start, timing,
/// command; SIMULATED marked), notes, the winners with their rule, a table per collective, plots.
std::string render_html_comparison(const Comparison& c, const std::vector<HtmlPlot>& plots, const HtmlMeta& meta);

/// The page of a tune session: `journal` is its journal.jsonl lines, `profile` its profile.json
/// (null when none was written), `validation` the comparison of the validation runs (baseline and
/// candidates by round; unset when none finished).
std::string render_html_tune(const std::vector<nlohmann::json>& journal, const nlohmann::json& profile,
                             const std::optional<Comparison>& validation, const std::vector<HtmlPlot>& plots,
                             const HtmlMeta& meta);

/// The page of an accept run: `accept` is its accept.json (`railkit.accept/1`) as
/// accept::accept_from_json read it, `run` a results document of one of its bench stages for the
/// header (backend, hosts), when one was readable. Verdicts and counts are the report's own
/// (AcceptReport::verdict, counts ...). Nodes that failed come first (then reported, skipped,
/// explained, passed); a bar chart of the measured bandwidths per check and node is drawn as
/// inline-generated SVG.
std::string render_html_accept(const accept::AcceptDocument& accept, const std::optional<ResultsDocument>& run,
                               const HtmlMeta& meta);

/// The SVG bar chart of render_html_accept (measured busbw per check and node, failed bars
/// marked); "" when no check carries busbw_GBps.
std::string accept_bars_svg(const accept::AcceptReport& accept);

/// Runs `railkit report --html`: classifies the inputs, renders the page (plots through
/// scripts/plot_results.py to a temporary .svg; a plot that cannot be drawn is replaced by its
/// reason) and writes o.html atomically; o.plot, when set, is written as without --html (results
/// and sweeps only). Prints one line naming the file to `out`. Returns 0. Throws UsageError
/// (exit 6) for inputs it cannot read, and for --plot with a tune or accept directory.
int run_html_report(const ReportOptions& o, char* const* envp, std::ostream& out);

}  // namespace railkit::report
