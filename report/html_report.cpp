// `railkit report --html` (report/html_report.hpp): which page the inputs ask for, reading them,
// drawing the plots and writing the file. The pages: html_comparison.cpp, html_tune.cpp,
// html_accept.cpp; what they share: html_common.cpp.
#include "report/html_report.hpp"

#include <stdlib.h>
#include <pwd.h>
#include <unistd.h>

#include <algorithm>
#include <map>
#include <ostream>

#include "core/atomic_file.hpp"
#include "core/clock.hpp"
#include "core/error.hpp"
#include "core/json_text.hpp"
#include "core/strings.hpp"
#include "report/html_parts.hpp"
#include "sweep/inputs.hpp"

namespace railkit::report {
using namespace sweep;  // the comparison and sweep documents it renders
using namespace html_parts;
namespace fs = std::filesystem;
using json = nlohmann::json;

// ---------------------------------------------------------------------------- the command

HtmlInputKind classify_html_inputs(const std::vector<std::string>& inputs) {
  if (inputs.empty()) throw UsageError("report --html: give results documents, sweep, tune or accept directories");
  int tune = 0, accept = 0;
  for (const auto& path : inputs) {
    std::error_code ec;
    if (fs::is_directory(path, ec)) {
      const fs::path d(path);
      if (fs::exists(d / "sweep.json", ec)) continue;
      if (fs::exists(d / "journal.jsonl", ec)) { ++tune; continue; }
      if (fs::exists(d / "accept.json", ec)) { ++accept; continue; }
      throw UsageError(path + ": not a sweep (sweep.json), tune session (journal.jsonl) or accept run (accept.json) directory");
    }
    if (!fs::exists(path, ec)) throw UsageError(path + ": no such file or directory");
  }
  if ((tune || accept) && inputs.size() > 1)
    throw UsageError("report --html: a tune session or accept run directory must be the only input");
  return tune ? HtmlInputKind::Tune : accept ? HtmlInputKind::Accept : HtmlInputKind::Results;
}

namespace {

HtmlMeta make_meta(const ReportOptions& o, char* const* envp) {
  HtmlMeta m;
  m.generated_at = utc_now_iso();
  for (char* const* e = envp; e && *e; ++e) {
    const std::string_view kv(*e);
    if (kv.starts_with("USER=") && m.user.empty()) m.user = std::string(kv.substr(5));
    if (kv.starts_with("LOGNAME=") && m.user.empty()) m.user = std::string(kv.substr(8));
  }
  if (m.user.empty())
    if (const struct passwd* pw = ::getpwuid(::geteuid()); pw && pw->pw_name) m.user = pw->pw_name;
  char host[256] = {};
  if (::gethostname(host, sizeof host - 1) == 0) m.host = host;
  m.inputs = o.inputs;
  return m;
}

/// Draws the comparison through the plot script into a temporary .svg and returns its text, or
/// the reason it could not be drawn.
HtmlPlot draw(const Comparison& c, const ReportOptions& o, char* const* envp, std::string title) {
  HtmlPlot p;
  p.title = std::move(title);
  std::string tmpl = (fs::temp_directory_path() / "railkit-html-XXXXXX").string();
  if (!::mkdtemp(tmpl.data())) {
    p.unavailable = "cannot create a temporary directory in " + fs::temp_directory_path().string();
    return p;
  }
  const fs::path dir = tmpl;
  try {
    const PlotTool tool = find_plot_tool(o);
    write_plot(c, dir / "plot.svg", tool, envp);
    p.svg = read_file(dir / "plot.svg");
    if (const auto at = p.svg.find("<svg"); at == std::string::npos) p.unavailable = "the plot script wrote no SVG";
  } catch (const Error& e) {
    p.unavailable = e.what();
  }
  std::error_code ec;
  fs::remove_all(dir, ec);
  return p;
}

std::vector<json> read_journal_lines(const fs::path& file) {
  const std::string text = read_file(file);
  std::vector<json> out;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t nl = text.find('\n', start);
    if (nl == std::string::npos) break;  // a last line cut short by a crash
    const std::string_view line(text.data() + start, nl - start);
    start = nl + 1;
    if (trim(line).empty()) continue;
    json j = parse_json_or_discarded(line);
    if (j.is_discarded() || !j.is_object())
      throw UsageError(file.string() + ": a line that is not a JSON object (not a railkit tuning journal)");
    out.push_back(std::move(j));
  }
  if (out.empty() || str_of(out.front(), "type") != "session")
    throw UsageError(file.string() + ": the first line is not a session line (not a railkit tuning journal)");
  return out;
}

/// The validation runs of a tune session as a comparison: baseline and candidates, paired by round.
std::optional<Comparison> tune_validation(const fs::path& dir, const std::vector<json>& journal, Metric metric,
                                          std::vector<std::string>& notes) {
  std::vector<CompareInput> inputs;
  const std::string series = fs::absolute(dir).lexically_normal().string();
  for (const auto& j : journal) {
    if (str_of(j, "type") != "validation" || str_of(j, "status") != "ok" || str_of(j, "results").empty()) continue;
    const std::string role = str_of(j, "role");
    auto it = std::find_if(inputs.begin(), inputs.end(), [&](const CompareInput& in) { return in.name == role; });
    if (it == inputs.end()) {
      CompareInput in;
      in.name = role;
      in.series = series;
      std::map<std::string, std::string> env;
      if (j.contains("env") && j["env"].is_object())
        for (const auto& [k, v] : j["env"].items()) env[k] = json_text(v);
      in.env = env;
      inputs.push_back(std::move(in));
      it = inputs.end() - 1;
    }
    const fs::path rel = str_of(j, "results");
    if (rel.is_absolute() || rel.lexically_normal().string().starts_with("..")) {
      notes.push_back("validation " + role + ": results path " + rel.string() + " leaves the session directory; skipped");
      continue;
    }
    try {
      it->rounds.push_back(RoundDoc{int(num_of(j, "round").value_or(1)), load_results((dir / rel).string())});
    } catch (const Error& e) {
      notes.push_back("validation " + role + ": " + e.what());
    }
  }
  std::erase_if(inputs, [](const CompareInput& in) { return in.rounds.empty(); });
  if (inputs.empty()) return std::nullopt;
  for (auto& in : inputs) in.doc = in.rounds.front().doc;
  CompareOptions co;
  co.metric = metric;
  co.baseline = std::any_of(inputs.begin(), inputs.end(), [](const CompareInput& in) { return in.name == "baseline"; })
                    ? "baseline" : "";
  co.allow_sim_vs_measured = true;
  try {
    return compare(std::move(inputs), co);
  } catch (const Error& e) {
    notes.push_back(std::string("validation not compared: ") + e.what());
    return std::nullopt;
  }
}

}  // namespace

int run_html_report(const ReportOptions& o, char* const* envp, std::ostream& out) {
  check_writable(o.html, "--html");
  const HtmlInputKind kind = classify_html_inputs(o.inputs);
  if (!o.plot.empty() && kind != HtmlInputKind::Results)
    throw UsageError("--plot with --html: only for results documents and sweep directories (the page of a tune "
                     "session or accept run embeds its plots)");
  std::optional<PlotTool> plot_file_tool;  // --plot beside --html: the file too, as without --html
  if (!o.plot.empty()) plot_file_tool = prepare_plot(o);
  const HtmlMeta meta = make_meta(o, envp);
  std::string html;
  if (kind == HtmlInputKind::Results) {
    const Comparison c = compare_inputs(o);
    html = render_html_comparison(c, {draw(c, o, envp, std::string(metric_title(c.metric)) + " against size")}, meta);
    if (plot_file_tool) write_plot(c, o.plot, *plot_file_tool, envp);
  } else if (kind == HtmlInputKind::Tune) {
    const fs::path dir = o.inputs.front();
    const auto journal = read_journal_lines(dir / "journal.jsonl");
    json profile;
    if (fs::exists(dir / "profile.json")) {
      profile = parse_json_or_discarded(read_file(dir / "profile.json"));
      if (profile.is_discarded() || !profile.is_object())
        throw UsageError((dir / "profile.json").string() + ": not a JSON object");
    }
    std::vector<std::string> notes;
    const auto validation = tune_validation(dir, journal, parse_metric(o.metric), notes);
    std::vector<HtmlPlot> plots;
    if (validation) plots.push_back(draw(*validation, o, envp, "validation: baseline and candidates by size"));
    html = render_html_tune(journal, profile, validation, plots, meta);
    for (const auto& n : notes) out << "note: " << n << "\n";
  } else {
    const fs::path dir = o.inputs.front();
    const std::string file = (dir / "accept.json").string();
    const json j = parse_json_or_discarded(read_file(file));
    if (j.is_discarded() || !j.is_object() || str_of(j, "schema") != accept::kAcceptSchema)
      throw UsageError(file + ": not a railkit.accept/1 document");
    const accept::AcceptDocument accept = accept::accept_from_json(j, file);
    std::optional<ResultsDocument> run;
    std::vector<fs::path> docs;
    std::error_code ec;
    if (fs::is_directory(dir / "bench", ec))
      for (const auto& e : fs::directory_iterator(dir / "bench", ec))
        if (e.path().extension() == ".json") docs.push_back(e.path());
    std::sort(docs.begin(), docs.end(), [](const fs::path& a, const fs::path& b) {
      return (a.filename() == "all.json") != (b.filename() == "all.json") ? a.filename() == "all.json" : a < b;
    });
    for (const auto& d : docs) {
      try {
        run = load_results(d.string());
        break;
      } catch (const Error&) {
      }
    }
    html = render_html_accept(accept, run, meta);
  }
  write_file_atomic(o.html, html);
  out << "html report: " << o.html << "\n" << std::flush;
  return 0;
}

}  // namespace railkit::report
