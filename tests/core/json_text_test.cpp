// JSON from outside with bounded nesting (core/json_text): as deep as allowed parses, one level
// deeper is a parse error, and a 200 000-level document (which overflowed the stack in readers
// that recurse per level) is refused while it is read. Dumps store bytes that are not UTF-8 as
// U+FFFD instead of throwing type_error 316.
#include "core/json_text.hpp"

#include "core/results.hpp"

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

TEST(JsonText, DumpReplacesBytesThatAreNotUtf8) {
  const nlohmann::json j = {{"label", "a\xff\xfe" "b"}, {"ok", "caf\xc3\xa9"}};
  EXPECT_THROW((void)j.dump(), nlohmann::json::type_error);  // what json_dump exists for
  const std::string text = json_dump(j);
  EXPECT_EQ(text, "{\"label\":\"a\xef\xbf\xbd\xef\xbf\xbd" "b\",\"ok\":\"caf\xc3\xa9\"}");
  EXPECT_EQ(parse_json(text)["label"], "a\xef\xbf\xbd\xef\xbf\xbd" "b");
  EXPECT_EQ(json_dump(j, 2).find("\n  \"label\""), 1u);
  const nlohmann::ordered_json o = {{"z", "\x80"}, {"a", 1}};
  EXPECT_EQ(json_dump(o), "{\"z\":\"\xef\xbf\xbd\",\"a\":1}");
}

TEST(JsonText, ResultsDocumentWithBadBytesIsWritten) {
  // A label, a host, an NCCL_* value and observed text that are not UTF-8 (issue 14).
  ResultsDocument d;
  d.run.label = "\xff\xfe";
  d.run.hosts = {"node\xff"};
  d.run.env = {{"NCCL_FOO", "\xff"}};
  d.run.options = {{"axis", "\xc3"}};
  d.observed["backend"] = {{"device", "mlx5_\xff"}};
  d.error = ErrorRecord{"internal", 1, "bad \xff", {{"host", "\xfe"}}};
  std::string text;
  ASSERT_NO_THROW(text = dump_results(d));
  const auto back = parse_json(text);
  const std::string fffd = "\xef\xbf\xbd";
  EXPECT_EQ(back["run"]["label"], fffd + fffd);
  EXPECT_EQ(back["run"]["hosts"][0], "node" + fffd);
  EXPECT_EQ(back["run"]["env"]["NCCL_FOO"], fffd);
  EXPECT_EQ(back["run"]["options"]["axis"], fffd);
  EXPECT_EQ(back["observed"]["backend"]["device"], "mlx5_" + fffd);
  EXPECT_EQ(back["error"]["detail"]["host"], fffd);
}

}  // namespace
}  // namespace railkit
