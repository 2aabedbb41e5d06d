#pragma once
// Inputs the HTML page tests share (html_report_test.cpp, html_golden_test.cpp).
#include <string>

#include "report/html_report.hpp"
#include "results_util.hpp"
#include "sweep/compare.hpp"

namespace railkit::report::html_inputs {

/// Text that must come out escaped wherever a page shows it.
inline const std::string kEvil = "<script>alert('x')</script>&\"<img src=http://evil/x>";

/// Fixed values: no date, user, host or path of the machine that runs the test.
inline HtmlMeta meta() {
  HtmlMeta m;
  m.generated_at = "2026-01-01T00:00:00Z";
  m.user = "u<b>";
  m.host = "h";
  m.inputs = {"in<1>.json"};
  return m;
}

/// Two configurations of two sizes, names, hosts and environment full of markup; the second
/// simulated when asked.
inline sweep::Comparison two_runs(bool second_simulated) {
  std::vector<sweep::CompareInput> in(2);
  in[0].name = "base" + kEvil;
  in[0].doc = test::make_doc("label" + kEvil, {{"all_reduce", 1024, false, 1.0}, {"all_reduce", 4096, false, 2.0}});
  in[0].doc->run.hosts = {"node<1>", "node\"2"};
  in[0].doc->run.env = {{"NCCL_X", kEvil}};
  in[1].name = "other";
  in[1].doc = test::make_doc("other", {{"all_reduce", 1024, false, 1.5}, {"all_reduce", 4096, false, 2.5}});
  in[1].doc->simulated = second_simulated;
  if (second_simulated) in[1].doc->run.timing = "simulated";
  sweep::CompareOptions o;
  o.allow_sim_vs_measured = true;
  o.notes = {"note " + kEvil};
  return sweep::compare(std::move(in), o);
}

}  // namespace railkit::report::html_inputs
