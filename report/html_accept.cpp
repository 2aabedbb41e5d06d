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

using accept::AcceptCheck;
using accept::AcceptEntity;

/// The entities (nodes, cluster) of a list, failing first: fail, reported, skipped, explained, pass.
std::vector<const AcceptEntity*> entities_failing_first(const std::vector<AcceptEntity>& list) {
  std::vector<const AcceptEntity*> out;
  for (const auto& e : list) out.push_back(&e);
  std::stable_sort(out.begin(), out.end(), [](const AcceptEntity* a, const AcceptEntity* b) {
    return verdict_rank(name(a->verdict())) < verdict_rank(name(b->verdict()));
  });
  return out;
}

std::vector<std::vector<Cell>> check_rows(const std::vector<const AcceptEntity*>& entities) {
  std::vector<std::vector<Cell>> rows;
  for (const AcceptEntity* e : entities)
    for (const AcceptCheck& c : e->checks) {
      const std::string v(name(c.verdict));
      rows.push_back({Cell{e->name}, Cell{c.check}, Cell{c.measured, c.busbw_GBps}, Cell{c.expected},
                      Cell{c.rule, {}, "rule"},
                      Cell{v == "reported" ? "reported (no rule judged it: not a pass)" : v, double(verdict_rank(v)),
                           verdict_class(v)},
                      Cell{c.evidence}});
    }
  return rows;
}

/// The node table: each node's verdict, its failed checks (with their rules) and reported ones.
std::vector<std::vector<Cell>> node_rows(const std::vector<const AcceptEntity*>& nodes) {
  std::vector<std::vector<Cell>> rows;
  for (const AcceptEntity* e : nodes) {
    std::vector<std::string> failed, reported;
    for (const AcceptCheck& c : e->checks) {
      if (c.verdict == Verdict::Fail) failed.push_back(c.check + " (rule " + c.rule + ")");
      if (c.verdict == Verdict::Reported) reported.push_back(c.check);
    }
    const std::string v(name(e->verdict()));
    rows.push_back({Cell{e->name}, Cell{v, double(verdict_rank(v)), verdict_class(v)}, Cell{join(failed, ", ")},
                    Cell{join(reported, ", ")}});
  }
  return rows;
}

}  // namespace

std::string accept_bars_svg(const accept::AcceptReport& accept) {
  struct Bar {
    std::string check, node, verdict;
    double v;
  };
  std::vector<Bar> bars;
  for (const AcceptEntity* e : entities_failing_first(accept.nodes))
    for (const AcceptCheck& c : e->checks)
      if (const auto v = c.busbw_GBps; v && std::isfinite(*v) && *v >= 0)
        bars.push_back({c.check, e->name, std::string(name(c.verdict)), *v});
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

std::string render_html_accept(const accept::AcceptDocument& accept, const std::optional<ResultsDocument>& run,
                               const HtmlMeta& meta) {
  const accept::AcceptReport& r = accept.report;
  const std::string verdict(name(r.verdict()));
  std::string body = "<h1>railkit report: accept run</h1>\n";
  if (run && run->simulated)
    body += "<div class=\"banner sim\" id=\"simulated\">SIMULATED: the benches ran on railkit-bench --backend sim</div>\n";
  body += fmt::format("<div class=\"banner {}\" id=\"verdict\">verdict: {} ({})</div>\n", verdict_class(verdict),
                      esc(verdict == "reported" ? "REPORTED, not a pass" : upper(verdict)), esc(r.verdict_reason()));
  auto kv = meta_rows(meta);
  kv.emplace_back("accept run finished", accept.created);
  kv.emplace_back("railkit (run)", accept.railkit_version);
  if (run) {
    kv.emplace_back("backend", run->run.backend + (run->run.backend_version.empty() ? "" : " (" + run->run.backend_version + ")"));
    kv.emplace_back("hosts", join(run->run.hosts, " "));
    kv.emplace_back("ranks, nodes", fmt::format("{}, {}", run->run.nranks, run->run.nnodes));
    kv.emplace_back("bench started (UTC)", run->run.start_time);
  }
  std::vector<std::string> counts;
  for (const auto& [k, v] : r.counts()) counts.push_back(fmt::format("{} {}", k, v));
  kv.emplace_back("checks", join(counts, ", "));
  body += kv_html("header", kv);

  const auto nodes = entities_failing_first(r.nodes);
  body += "<h2 id=\"nodes-title\">Nodes (failing first)</h2>\n";
  body += table_html("nodes", "", {"node", "verdict", "failed checks (rule)", "reported (no rule: not a pass)"}, node_rows(nodes));
  const std::vector<std::string> check_head{"node", "check", "measured", "expected", "rule", "verdict", "evidence"};
  body += "<h2 id=\"checks-title\">Checks of the nodes, failing nodes first</h2>\n";
  body += table_html("checks", "", check_head, check_rows(nodes));
  const auto cluster = entities_failing_first(r.cluster);
  if (!cluster.empty()) {
    body += "<h2 id=\"cluster\">Checks of the cluster (rails, the whole set), failing first</h2>\n";
    body += table_html("cluster-checks", "", check_head, check_rows(cluster));
  }
  std::vector<std::pair<std::string, std::string>> rules;
  const json rule_obj(r.rules);  // keys in name order, as the page always showed them
  for (const auto& [k, v] : rule_obj.items()) rules.emplace_back(k, json_text(v));
  body += "<h2 id=\"rules-title\">Rules</h2>\n<p>Each check names the rule that judged it; a check no rule judged is "
          "reported, never a pass. The parameters of the rules:</p>\n";
  body += kv_html("rules", rules);
  body += notes_html(r.notes);
  std::vector<std::vector<Cell>> rows;
  for (const json st : r.stages)
    rows.push_back({Cell{str_of(st, "stage")}, Cell{str_of(st, "status")}, num_cell(num_of(st, "launches")),
                    num_cell(num_of(st, "seconds")), Cell{str_of(st, "reason")}});
  body += "<h2 id=\"stages-title\">Stages</h2>\n";
  body += table_html("stages", "", {"stage", "status", "launches", "seconds", "reason"}, rows);
  if (const std::string svg = accept_bars_svg(r); !svg.empty())
    body += plots_html({HtmlPlot{"measured busbw per check and node", svg, ""}});
  return page("railkit report: accept run", body, meta);
}

}  // namespace railkit::report
