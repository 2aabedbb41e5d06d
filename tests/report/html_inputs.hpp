#pragma once
// Inputs the HTML page tests share (html_report_test.cpp, html_golden_test.cpp).
#include <string>

#include "report/html_report.hpp"

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

}  // namespace railkit::report::html_inputs
