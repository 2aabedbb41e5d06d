// `railkit report --html` (report/html_report.hpp): what every page shares (report/html_parts.hpp):
// escaping, base64, table cells and tables, the page frame with its style and sort script, and
// values read from JSON documents.
#include <cctype>
#include <cmath>
#include <cstdint>

#include <fmt/format.h>

#include "core/enums.hpp"
#include "core/json_text.hpp"
#include "core/sha256.hpp"
#include "core/strings.hpp"
#include "core/version.hpp"
#include "report/html_parts.hpp"

namespace railkit::report {

// ---------------------------------------------------------------------------- escaping

std::string html_escape(std::string_view s) {
  std::string out;
  out.reserve(s.size() + s.size() / 8);
  static constexpr const char* kReplacement = "\xEF\xBF\xBD";  // U+FFFD
  for (std::size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      switch (c) {
        case '&': out += "&amp;"; break;
        case '<': out += "&lt;"; break;
        case '>': out += "&gt;"; break;
        case '"': out += "&quot;"; break;
        case '\'': out += "&#39;"; break;
        case '\t': case '\n': case '\r': out += static_cast<char>(c); break;
        default:
          if (c < 0x20 || c == 0x7f)
            out += kReplacement;
          else
            out += static_cast<char>(c);
      }
      ++i;
      continue;
    }
    // A UTF-8 sequence: its length from the lead byte, continuation bytes checked; overlong
    // forms, surrogates and code points above U+10FFFF are invalid.
    std::size_t len = 0;
    std::uint32_t cp = 0;
    if (c >= 0xC2 && c <= 0xDF) { len = 2; cp = c & 0x1F; }
    else if (c >= 0xE0 && c <= 0xEF) { len = 3; cp = c & 0x0F; }
    else if (c >= 0xF0 && c <= 0xF4) { len = 4; cp = c & 0x07; }
    bool ok = len > 0 && i + len <= s.size();
    for (std::size_t k = 1; ok && k < len; ++k) {
      const auto b = static_cast<unsigned char>(s[i + k]);
      ok = (b & 0xC0) == 0x80;
      cp = (cp << 6) | (b & 0x3F);
    }
    if (ok && len == 3) ok = cp >= 0x800 && !(cp >= 0xD800 && cp <= 0xDFFF);
    if (ok && len == 4) ok = cp >= 0x10000 && cp <= 0x10FFFF;
    if (ok && cp >= 0x80 && cp <= 0x9F) ok = false;  // C1 controls
    if (!ok) {
      out += kReplacement;
      ++i;
      continue;
    }
    out.append(s.substr(i, len));
    i += len;
  }
  return out;
}

std::string base64(std::string_view bytes) {
  static constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  std::size_t i = 0;
  for (; i + 3 <= bytes.size(); i += 3) {
    const std::uint32_t v = (std::uint32_t(static_cast<unsigned char>(bytes[i])) << 16) |
                            (std::uint32_t(static_cast<unsigned char>(bytes[i + 1])) << 8) |
                            std::uint32_t(static_cast<unsigned char>(bytes[i + 2]));
    out += kAlphabet[(v >> 18) & 63];
    out += kAlphabet[(v >> 12) & 63];
    out += kAlphabet[(v >> 6) & 63];
    out += kAlphabet[v & 63];
  }
  if (const std::size_t rest = bytes.size() - i; rest > 0) {
    std::uint32_t v = std::uint32_t(static_cast<unsigned char>(bytes[i])) << 16;
    if (rest == 2) v |= std::uint32_t(static_cast<unsigned char>(bytes[i + 1])) << 8;
    out += kAlphabet[(v >> 18) & 63];
    out += kAlphabet[(v >> 12) & 63];
    out += rest == 2 ? kAlphabet[(v >> 6) & 63] : '=';
    out += '=';
  }
  return out;
}

namespace html_parts {

using json = nlohmann::json;

std::string esc(std::string_view s) { return html_escape(s); }

// ---------------------------------------------------------------------------- page pieces

Cell num_cell(std::optional<double> v, std::string_view cls) {
  const std::string c = cls.empty() ? "num" : "num " + std::string(cls);
  if (!v || !std::isfinite(*v)) return Cell{"-", std::nullopt, c};
  return Cell{fmt::format("{:.4g}", *v), *v, c};
}

Cell ratio_cell(std::optional<double> ratio, std::optional<double> lo, std::optional<double> hi) {
  Cell rc = num_cell(ratio);
  if (ratio && lo && hi) rc.text = fmt::format("{:.3f} [{:.3g}, {:.3g}]", *ratio, *lo, *hi);
  return rc;
}

std::string upper(std::string s) {
  for (char& ch : s) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  return s;
}

std::string table_html(std::string_view id, std::string_view caption, const std::vector<std::string>& head,
                       const Rows& rows) {
  if (rows.empty())  // no empty table: a reader (and the browser test) sees every table hold rows
    return fmt::format("<p class=\"none\" id=\"{}\">{}none</p>\n", esc(id), caption.empty() ? "" : esc(caption) + ": ");
  std::string o = fmt::format("<table class=\"sortable\" id=\"{}\">", esc(id));
  if (!caption.empty()) o += "<caption>" + esc(caption) + "</caption>";
  o += "<thead><tr>";
  for (const auto& h : head) o += "<th title=\"click to sort\">" + esc(h) + "</th>";
  o += "</tr></thead><tbody>\n";
  for (const auto& row : rows) {
    o += "<tr>";
    for (const auto& c : row) {
      o += "<td";
      if (!c.cls.empty()) o += " class=\"" + esc(c.cls) + "\"";
      if (c.sort) o += fmt::format(" data-v=\"{}\"", *c.sort);
      o += ">" + (c.raw ? c.text : esc(c.text)) + "</td>";
    }
    o += "</tr>\n";
  }
  return o + "</tbody></table>\n";
}

std::string kv_html(std::string_view id, const KvRows& rows) {
  if (rows.empty()) return fmt::format("<p class=\"none\" id=\"{}\">none</p>\n", esc(id));
  std::string o = fmt::format("<table class=\"kv\" id=\"{}\"><tbody>\n", esc(id));
  for (const auto& [k, v] : rows) o += "<tr><th>" + esc(k) + "</th><td>" + esc(v) + "</td></tr>\n";
  return o + "</tbody></table>\n";
}

namespace {

/// How an accept verdict is shown: its cell's class, and its place when failing ones come first.
struct VerdictLook {
  Verdict verdict;
  std::string_view css;
  int rank;
};
constexpr VerdictLook kVerdictLooks[] = {
    {Verdict::Fail, "v-fail", 0},           {Verdict::Reported, "v-reported", 1}, {Verdict::Skipped, "v-skipped", 2},
    {Verdict::Explained, "v-explained", 3}, {Verdict::Pass, "v-pass", 4},
};

const VerdictLook* look_of(std::string_view v) {
  const auto parsed = parse_verdict(v);
  for (const auto& l : kVerdictLooks)
    if (parsed && l.verdict == *parsed) return &l;
  return nullptr;
}

constexpr const char* kStyle = R"(
body{font-family:sans-serif;margin:1.5em;color:#222;background:#fff;font-size:14px}
h1{font-size:1.5em;margin:.2em 0}h3{font-size:1.05em;margin-top:1.2em}h2{font-size:1.2em;margin-top:1.6em;border-bottom:1px solid #ccc}
table{border-collapse:collapse;margin:.6em 0;max-width:100%}
td,th{border:1px solid #ccc;padding:3px 7px;text-align:left;vertical-align:top}
table.sortable th{background:#eef;cursor:pointer;white-space:nowrap}
table.sortable th[data-dir=asc]::after{content:" \25B2"}table.sortable th[data-dir=desc]::after{content:" \25BC"}
table.kv th{background:#f4f4f4;font-weight:normal;color:#555}
td.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
td.mono{max-width:32em}summary{cursor:pointer;font-family:sans-serif;white-space:nowrap;word-break:normal}
caption{text-align:left;font-weight:bold;padding:.3em 0}
.banner{padding:.6em 1em;margin:.8em 0;font-weight:bold;border-radius:4px}
.sim{background:#fde7c8;color:#7a4100;border:2px dashed #c77700}
.v-pass{background:#dff3df;color:#135e13}.v-fail{background:#fbdada;color:#8b0000;font-weight:bold}
.v-reported{background:#fff3c4;color:#6b5200}.v-skipped{background:#eee;color:#555}.v-explained{background:#dde8fb;color:#1c3f7a}
.warn{color:#8b0000}.mono{font-family:monospace;white-space:pre-wrap;word-break:break-all}
figure{margin:1em 0}figure img{max-width:100%;border:1px solid #ddd}
footer{margin-top:2em;color:#777;font-size:.9em}
)";

// Sorts a table by the column clicked: numbers by data-v, else text; a second click reverses.
constexpr const char* kSortScript = R"(
(function(){
document.querySelectorAll('table.sortable').forEach(function(t){
  var heads=t.tHead?t.tHead.rows[0].cells:[];
  Array.prototype.forEach.call(heads,function(th,i){
    th.addEventListener('click',function(){
      var asc=th.getAttribute('data-dir')!=='asc';
      Array.prototype.forEach.call(heads,function(h){h.removeAttribute('data-dir');});
      th.setAttribute('data-dir',asc?'asc':'desc');
      var tb=t.tBodies[0],rows=Array.prototype.slice.call(tb.rows);
      function key(r){var c=r.cells[i];if(!c)return '';var v=c.getAttribute('data-v');return v!==null?parseFloat(v):c.textContent.trim();}
      rows.sort(function(a,b){var x=key(a),y=key(b);
        var d=(typeof x==='number'&&typeof y==='number')?x-y:String(x).localeCompare(String(y),undefined,{numeric:true});
        return asc?d:-d;});
      rows.forEach(function(r){tb.appendChild(r);});
    });
  });
});
})();
)";

}  // namespace

std::string verdict_class(std::string_view v) {
  const VerdictLook* l = look_of(v);
  return std::string(l ? l->css : "v-skipped");
}

int verdict_rank(std::string_view v) {
  const VerdictLook* l = look_of(v);
  return l ? l->rank : 1;  // unknown: not a pass
}

std::string content_security_policy() {
  // Self-contained: nothing may be fetched; images are data: URIs, style inline; the one script
  // runs by its hash, so no script a document smuggled into the page could (nor a <base> or a form).
  static const std::string policy = [] {
    const auto digest = sha256(kSortScript);
    return "default-src 'none'; img-src data:; style-src 'unsafe-inline'; script-src 'sha256-" +
           base64(std::string_view(reinterpret_cast<const char*>(digest.data()), digest.size())) +
           "'; base-uri 'none'; form-action 'none'";
  }();
  return policy;
}

std::string page(std::string_view title, const std::string& body, const HtmlMeta& meta) {
  std::string o = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
                  "<meta http-equiv=\"Content-Security-Policy\" content=\"" +
                  content_security_policy() +
                  "\">\n"
                  "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n";
  o += "<title>" + esc(title) + "</title>\n<style>" + kStyle + "</style>\n</head>\n<body>\n";
  o += body;
  o += "<footer>generated by railkit " + esc(kVersion) + " (railkit report --html) at " + esc(meta.generated_at) +
       "</footer>\n";
  o += std::string("<script>") + kSortScript + "</script>\n</body>\n</html>\n";
  return o;
}

KvRows meta_rows(const HtmlMeta& m) {
  return {{"report generated", m.generated_at + " by " + (m.user.empty() ? std::string("?") : m.user) + "@" +
                                   (m.host.empty() ? std::string("?") : m.host)},
          {"railkit (report)", kVersion},
          {"inputs", join(m.inputs, " ")}};
}

std::string plots_html(const std::vector<HtmlPlot>& plots) {
  if (plots.empty()) return "";
  std::string o = "<h2 id=\"plots\">Plots</h2>\n";
  for (const auto& p : plots) {
    if (!p.unavailable.empty()) {
      o += "<p class=\"warn plot-missing\">" + esc(p.title) + ": plot not drawn: " + esc(p.unavailable) + "</p>\n";
      continue;
    }
    o += "<figure><img alt=\"" + esc(p.title) + "\" src=\"data:image/svg+xml;base64," + base64(p.svg) +
         "\"><figcaption>" + esc(p.title) + "</figcaption></figure>\n";
  }
  return o;
}

std::string notes_html(const std::vector<std::string>& notes) {
  if (notes.empty()) return "";
  std::string o = "<h2 id=\"notes\">Notes</h2>\n<ul class=\"notes\">\n";
  for (const auto& n : notes) o += "<li" + std::string(n.find("SIMULATED") != std::string::npos ? " class=\"sim\"" : "") +
                                   ">" + esc(n) + "</li>\n";
  return o + "</ul>\n";
}

std::string env_text(const std::map<std::string, std::string>& env) {
  std::vector<std::string> kv;
  for (const auto& [k, v] : env) kv.push_back(k + "=" + v);
  return join(kv, " ");
}

std::string json_text(const json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_null()) return "-";
  return json_dump(v);
}

std::string str_of(const json& obj, std::string_view key) {
  if (!obj.is_object()) return "";
  const auto it = obj.find(std::string(key));
  if (it == obj.end() || it->is_null()) return "";
  return json_text(*it);
}

std::optional<double> num_of(const json& obj, std::string_view key) {
  if (!obj.is_object()) return std::nullopt;
  const auto it = obj.find(std::string(key));
  if (it == obj.end() || !it->is_number()) return std::nullopt;
  return it->get<double>();
}

}  // namespace html_parts
}  // namespace railkit::report
