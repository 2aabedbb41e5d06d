// `railkit report --html` (report/html_report.hpp): the page of an accept run: its verdict, the
// nodes failing first, the checks with their rules, the stages and a bar chart of the bandwidths.
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "core/strings.hpp"
#include "report/html_parts.hpp"

namespace railkit::report {
using namespace html_parts;
using json = nlohmann::json;

namespace {

/// The entities (nodes, cluster) of a list, failing first: fail, reported, skipped, explained, pass.
std::vector<const json*> entities_failing_first(const json& list) {
  std::vector<const json*> out;
  if (list.is_array())
    for (const auto& e : list) out.push_back(&e);
  std::stable_sort(out.begin(), out.end(), [](const json* a, const json* b) {
    return verdict_rank(str_of(*a, "verdict")) < verdict_rank(str_of(*b, "verdict"));
  });
  return out;
}

std::vector<std::vector<Cell>> check_rows(const std::vector<const json*>& entities) {
  std::vector<std::vector<Cell>> rows;
  for (const json* e : entities)
    for (const auto& c : e->value("checks", json::array())) {
      const std::string v = str_of(c, "verdict");
      rows.push_back({Cell{str_of(*e, "name")}, Cell{str_of(c, "check")},
                      Cell{str_of(c, "measured"), num_of(c, "busbw_GBps")}, Cell{str_of(c, "expected")},
                      Cell{str_of(c, "rule"), {}, "rule"},
                      Cell{v == "reported" ? "reported (no rule judged it: not a pass)" : v, double(verdict_rank(v)),
                           verdict_class(v)},
                      Cell{str_of(c, "evidence")}});
    }
  return rows;
}

}  // namespace

std::string accept_bars_svg(const json& accept) {
  struct Bar {
    std::string check, node, verdict;
    double v;
  };
  std::vector<Bar> bars;
  const json node_list = accept.value("nodes", json::array());  // the pointers below point into it
  for (const json* e : entities_failing_first(node_list))
    for (const auto& c : e->value("checks", json::array()))
      if (const auto v = num_of(c, "busbw_GBps"); v && std::isfinite(*v) && *v >= 0)
        bars.push_back({str_of(c, "check"), str_of(*e, "name"), str_of(c, "verdict"), *v});
  if (bars.empty()) return "";
  std::stable_sort(bars.begin(), bars.end(), [](const Bar& a, const Bar& b) { return a.check < b.check; });
  double max_v = 0;
  for (const auto& b : bars) max_v = std::max(max_v, b.v);
  if (max_v <= 0) max_v = 1;
  const int label_w = 300, plot_w = 520, row_h = 18, top = 30;
  int groups = 0;
  for (std::size_t i = 0; i < bars.size(); ++i) groups += (i == 0 || bars[i].check != bars[i - 1].check);
  const int height = top + int(bars.size()) * row_h + groups * 8 + 20;
  const int width = label_w + plot_w + 90;
  std::string s = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" viewBox=\"0 0 {0} {1}\" "
      "font-family=\"sans-serif\" font-size=\"12\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
      "<text x=\"8\" y=\"18\" font-size=\"14\" font-weight=\"bold\">measured busbw (GB/s) per check and node; red: "
      "failed, amber: reported (no rule)</text>\n",
      width, height);
  int y = top;
  for (std::size_t i = 0; i < bars.size(); ++i) {
    if (i > 0 && bars[i].check != bars[i - 1].check) y += 8;
    const Bar& b = bars[i];
    const std::string fill = b.verdict == "fail" ? "#c62828" : b.verdict == "reported" ? "#d4a000"
                           : b.verdict == "pass" ? "#2e7d32" : "#607d8b";
    const double w = std::max(1.0, plot_w * b.v / max_v);
    s += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>", label_w - 6, y + 13,
                     html_escape(b.check + "  " + b.node));
    s += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{:.1f}\" height=\"{}\" fill=\"{}\"/>", label_w, y + 2, w, row_h - 4, fill);
    s += fmt::format("<text x=\"{:.1f}\" y=\"{}\">{:.4g}</text>\n", label_w + w + 4, y + 13, b.v);
    y += row_h;
  }
  return s + "</svg>\n";
}

std::string render_html_accept(const json& accept, const std::optional<ResultsDocument>& run, const HtmlMeta& meta) {
  const std::string verdict = str_of(accept, "verdict");
  std::string body = "<h1>railkit report: accept run</h1>\n";
  if (run && run->simulated)
    body += "<div class=\"banner sim\" id=\"simulated\">SIMULATED: the benches ran on railkit-bench --backend sim</div>\n";
  body += fmt::format("<div class=\"banner {}\" id=\"verdict\">verdict: {} ({})</div>\n", verdict_class(verdict),
                      esc(verdict == "reported" ? "REPORTED, not a pass" : upper(verdict)),
                      esc(str_of(accept, "verdict_reason")));
  auto kv = meta_rows(meta);
  kv.emplace_back("accept run finished", str_of(accept, "created"));
  kv.emplace_back("railkit (run)", str_of(accept, "railkit_version"));
  if (run) {
    kv.emplace_back("backend", run->run.backend + (run->run.backend_version.empty() ? "" : " (" + run->run.backend_version + ")"));
    kv.emplace_back("hosts", join(run->run.hosts, " "));
    kv.emplace_back("ranks, nodes", fmt::format("{}, {}", run->run.nranks, run->run.nnodes));
    kv.emplace_back("bench started (UTC)", run->run.start_time);
  }
  std::vector<std::string> counts;
  const json count_obj = accept.value("counts", json::object());
  for (const auto& [k, v] : count_obj.items()) counts.push_back(k + " " + json_text(v));
  kv.emplace_back("checks", join(counts, ", "));
  body += kv_html("header", kv);

  const json node_list = accept.value("nodes", json::array()), cluster_list = accept.value("cluster", json::array());
  const auto nodes = entities_failing_first(node_list);  // pointers into node_list
  std::vector<std::vector<Cell>> rows;
  for (const json* e : nodes) {
    std::vector<std::string> failed, reported;
    for (const auto& c : e->value("checks", json::array())) {
      if (str_of(c, "verdict") == "fail") failed.push_back(str_of(c, "check") + " (rule " + str_of(c, "rule") + ")");
      if (str_of(c, "verdict") == "reported") reported.push_back(str_of(c, "check"));
    }
    const std::string v = str_of(*e, "verdict");
    rows.push_back({Cell{str_of(*e, "name")}, Cell{v, double(verdict_rank(v)), verdict_class(v)}, Cell{join(failed, ", ")},
                    Cell{join(reported, ", ")}});
  }
  body += "<h2 id=\"nodes-title\">Nodes (failing first)</h2>\n";
  body += table_html("nodes", "", {"node", "verdict", "failed checks (rule)", "reported (no rule: not a pass)"}, rows);
  const std::vector<std::string> check_head{"node", "check", "measured", "expected", "rule", "verdict", "evidence"};
  body += "<h2 id=\"checks-title\">Checks of the nodes, failing nodes first</h2>\n";
  body += table_html("checks", "", check_head, check_rows(nodes));
  const auto cluster = entities_failing_first(cluster_list);
  if (!cluster.empty()) {
    body += "<h2 id=\"cluster\">Checks of the cluster (rails, the whole set), failing first</h2>\n";
    body += table_html("cluster-checks", "", check_head, check_rows(cluster));
  }
  std::vector<std::pair<std::string, std::string>> rules;
  const json rule_obj = accept.value("rules", json::object());
  for (const auto& [k, v] : rule_obj.items()) rules.emplace_back(k, json_text(v));
  body += "<h2 id=\"rules-title\">Rules</h2>\n<p>Each check names the rule that judged it; a check no rule judged is "
          "reported, never a pass. The parameters of the rules:</p>\n";
  body += kv_html("rules", rules);
  std::vector<std::string> notes;
  for (const auto& n : accept.value("notes", json::array())) notes.push_back(json_text(n));
  body += notes_html(notes);
  rows.clear();
  for (const auto& st : accept.value("stages", json::array()))
    rows.push_back({Cell{str_of(st, "stage")}, Cell{str_of(st, "status")}, num_cell(num_of(st, "launches")),
                    num_cell(num_of(st, "seconds")), Cell{str_of(st, "reason")}});
  body += "<h2 id=\"stages-title\">Stages</h2>\n";
  body += table_html("stages", "", {"stage", "status", "launches", "seconds", "reason"}, rows);
  if (const std::string svg = accept_bars_svg(accept); !svg.empty())
    body += plots_html({HtmlPlot{"measured busbw per check and node", svg, ""}});
  return page("railkit report: accept run", body, meta);
}

}  // namespace railkit::report
