#include "core/yaml.hpp"

#include <yaml.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <memory>
#include <vector>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/json_text.hpp"
#include "core/strings.hpp"

namespace railkit {
namespace {

using json = nlohmann::json;

json plain_scalar(const std::string& s) {
  if (s.empty() || s == "~" || s == "null" || s == "Null" || s == "NULL") return nullptr;
  if (s == "true" || s == "True" || s == "TRUE") return true;
  if (s == "false" || s == "False" || s == "FALSE") return false;
  {
    long long v = 0;
    const char* b = s.data();
    const char* e = s.data() + s.size();
    if (*b == '+') ++b;
    auto [p, ec] = std::from_chars(b, e, v);
    if (ec == std::errc() && p == e && b != e) return v;
  }
  const bool floaty = std::all_of(s.begin(), s.end(), [](char c) {
    return std::isdigit(static_cast<unsigned char>(c)) || c == '.' || c == 'e' || c == 'E' || c == '-' || c == '+';
  });
  if (floaty && std::any_of(s.begin(), s.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); })) {
    try {
      size_t used = 0;
      const double d = std::stod(s, &used);
      if (used == s.size()) return d;
    } catch (const std::exception&) {
    }
  }
  return s;
}

/// Builds JSON from libyaml's event stream.
class Builder {
 public:
  Builder(yaml_parser_t* p, const std::string& source) : p_(p), source_(source) {}

  json document() {
    yaml_event_t ev;
    int docs = 0;
    json out = nullptr;
    for (;;) {
      next(ev);
      const yaml_event_type_t t = ev.type;
      if (t == YAML_STREAM_END_EVENT) {
        yaml_event_delete(&ev);
        break;
      }
      if (t == YAML_DOCUMENT_START_EVENT) {
        yaml_event_delete(&ev);
        if (++docs > 1) fail(ev, "more than one YAML document");
        out = value();
        continue;
      }
      yaml_event_delete(&ev);
    }
    return out;
  }

 private:
  [[noreturn]] void fail(const yaml_event_t& ev, const std::string& what) const {
    throw UsageError(fmt::format("{}:{}:{}: {}", source_, ev.start_mark.line + 1, ev.start_mark.column + 1, what));
  }

  void next(yaml_event_t& ev) {
    if (!yaml_parser_parse(p_, &ev))
      throw UsageError(fmt::format("{}:{}:{}: {}", source_, p_->problem_mark.line + 1, p_->problem_mark.column + 1,
                                   p_->problem ? p_->problem : "YAML syntax error"));
  }

  json value(int depth = 0) {
    yaml_event_t ev;
    next(ev);
    json v;
    try {
      v = from_event(ev, depth);
    } catch (...) {
      yaml_event_delete(&ev);
      throw;
    }
    yaml_event_delete(&ev);
    return v;
  }

  /// `depth`: the collections around ev. Deeper than kMaxJsonDepth is refused: this recursion,
  /// and the readers of what it returns, would overflow the stack.
  json from_event(yaml_event_t& ev, int depth) {
    if ((ev.type == YAML_SEQUENCE_START_EVENT || ev.type == YAML_MAPPING_START_EVENT) && depth >= kMaxJsonDepth)
      fail(ev, fmt::format("nested deeper than {} levels", kMaxJsonDepth));
    switch (ev.type) {
      case YAML_SCALAR_EVENT: {
        std::string s(reinterpret_cast<const char*>(ev.data.scalar.value), ev.data.scalar.length);
        return ev.data.scalar.style == YAML_PLAIN_SCALAR_STYLE ? plain_scalar(s) : json(s);
      }
      case YAML_SEQUENCE_START_EVENT: {
        json a = json::array();
        for (;;) {
          yaml_event_t e;
          next(e);
          if (e.type == YAML_SEQUENCE_END_EVENT) {
            yaml_event_delete(&e);
            return a;
          }
          try {
            a.push_back(from_event(e, depth + 1));
          } catch (...) {
            yaml_event_delete(&e);
            throw;
          }
          yaml_event_delete(&e);
        }
      }
      case YAML_MAPPING_START_EVENT: {
        json o = json::object();
        for (;;) {
          yaml_event_t k;
          next(k);
          if (k.type == YAML_MAPPING_END_EVENT) {
            yaml_event_delete(&k);
            return o;
          }
          if (k.type != YAML_SCALAR_EVENT) {
            yaml_event_delete(&k);
            fail(k, "a mapping key must be a plain string");
          }
          const std::string key(reinterpret_cast<const char*>(k.data.scalar.value), k.data.scalar.length);
          if (o.contains(key)) {
            yaml_event_delete(&k);
            fail(k, "key '" + printable(key) + "' appears twice");
          }
          yaml_event_delete(&k);
          o[key] = value(depth + 1);
        }
      }
      case YAML_ALIAS_EVENT:
        fail(ev, "aliases (*name) are not supported");
      default:
        fail(ev, "unexpected YAML event");
    }
  }

  yaml_parser_t* p_;
  const std::string& source_;
};

}  // namespace

json parse_yaml(std::string_view text, const std::string& source) {
  yaml_parser_t parser;
  if (!yaml_parser_initialize(&parser)) throw Error(ErrorCode::Internal, "libyaml: cannot initialise a parser");
  std::unique_ptr<yaml_parser_t, void (*)(yaml_parser_t*)> guard(&parser, yaml_parser_delete);
  yaml_parser_set_input_string(&parser, reinterpret_cast<const unsigned char*>(text.data()), text.size());
  Builder b(&parser, source);
  return b.document();
}

bool is_yaml_path(std::string_view path) {
  std::string p(path);
  std::transform(p.begin(), p.end(), p.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  auto ends = [&](std::string_view suf) { return p.size() >= suf.size() && p.compare(p.size() - suf.size(), suf.size(), suf) == 0; };
  return ends(".yaml") || ends(".yml");
}

}  // namespace railkit
