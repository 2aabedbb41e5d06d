// JSON from outside with bounded nesting (core/json_text): as deep as allowed parses, one level
// deeper is a parse error, and a 200 000-level document (which overflowed the stack in readers
// that recurse per level) is refused while it is read.
#include "core/json_text.hpp"

#include <string>

#include <gtest/gtest.h>

namespace railkit {
namespace {

std::string nested(int levels, char open = '[', char close = ']') {
  return std::string(static_cast<std::size_t>(levels), open) + std::string(static_cast<std::size_t>(levels), close);
}

TEST(JsonText, ParsesAsNlohmannDoes) {
  const auto j = parse_json(R"({"a": [1, 2, {"b": "c"}], "d": null})");
  EXPECT_EQ(j["a"][2]["b"], "c");
  EXPECT_THROW(parse_json("{\"a\": "), nlohmann::json::parse_error);
  EXPECT_TRUE(parse_json_or_discarded("not json").is_discarded());
}

TEST(JsonText, NestingBeyondTheBoundIsAParseError) {
  EXPECT_NO_THROW(parse_json(nested(kMaxJsonDepth)));
  EXPECT_THROW(parse_json(nested(kMaxJsonDepth + 1)), nlohmann::json::parse_error);
  try {
    parse_json(nested(200000));
    ADD_FAILURE() << "a 200000-level document parsed";
  } catch (const nlohmann::json::parse_error& e) {
    EXPECT_EQ(json_error_text(e), "parse error: nested deeper than 128 levels (refused before it is built)");
  }
  // Objects count as arrays do; a deep value under a key too.
  std::string obj;
  for (int i = 0; i < kMaxJsonDepth + 1; ++i) obj += "{\"k\":";
  obj += "1" + std::string(kMaxJsonDepth + 1, '}');
  EXPECT_THROW(parse_json(obj), nlohmann::json::parse_error);
  EXPECT_TRUE(parse_json_or_discarded(nested(200000)).is_discarded());
  EXPECT_NO_THROW(parse_json(nested(10), 10));
  EXPECT_THROW(parse_json(nested(11), 10), nlohmann::json::parse_error);
}

TEST(JsonText, ErrorTextWithoutNlohmannsPrefix) {
  try {
    parse_json("[1,");
  } catch (const nlohmann::json::parse_error& e) {
    const std::string t = json_error_text(e);
    EXPECT_EQ(t.find("[json.exception"), std::string::npos) << t;
    EXPECT_NE(t.find("parse error at line 1, column 4"), std::string::npos) << t;
  }
  EXPECT_EQ(json_error_text(std::runtime_error("plain")), "plain");
}

}  // namespace
}  // namespace railkit
