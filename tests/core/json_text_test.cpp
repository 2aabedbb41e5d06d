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

// Found by fuzz_sweep_matrix: a number beyond a double's range is nlohmann's out_of_range 406,
// which readers catching parse_error let through as an internal error.
TEST(JsonText, NumberOverflowIsAParseError) {
  EXPECT_THROW(parse_json("[1e400]"), nlohmann::json::parse_error);
  EXPECT_THROW(parse_json("{\"x\": 2222222222222221.119999e20222}"), nlohmann::json::parse_error);
  EXPECT_TRUE(parse_json_or_discarded("-1e999").is_discarded());
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

// ---------------------------------------------------------------- typed field readers (issue 14)

/// The UsageError message of `f`, or "" when it does not throw one.
template <typename F>
std::string usage_message(F&& f) {
  try {
    f();
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

TEST(JsonFields, ReadsEachSupportedType) {
  const nlohmann::json j = nlohmann::json::parse(
      R"({"s":"x","b":true,"d":1.5,"i":-3,"u":18446744073709551615,"f":4.0,"a":["p","q"],"m":{"K":"v"},"o":{"z":1}})");
  EXPECT_EQ(field<std::string>(j, "s", "f.json"), "x");
  EXPECT_TRUE(field<bool>(j, "b", "f.json"));
  EXPECT_DOUBLE_EQ(field<double>(j, "d", "f.json"), 1.5);
  EXPECT_DOUBLE_EQ(field<double>(j, "i", "f.json"), -3.0);
  EXPECT_EQ(field<int>(j, "i", "f.json"), -3);
  EXPECT_EQ(field<long long>(j, "i", "f.json"), -3);
  EXPECT_EQ(field<std::int64_t>(j, "i", "f.json"), -3);
  EXPECT_EQ(field<std::uint64_t>(j, "u", "f.json"), UINT64_MAX);
  EXPECT_EQ(field<int>(j, "f", "f.json"), 4);  // a float with an integral value is that integer
  EXPECT_EQ(field<std::vector<std::string>>(j, "a", "f.json"), (std::vector<std::string>{"p", "q"}));
  EXPECT_EQ(field<JsonStringMap>(j, "m", "f.json"), (JsonStringMap{{"K", "v"}}));
  EXPECT_EQ(field<nlohmann::json>(j, "o", "f.json"), nlohmann::json({{"z", 1}}));
}

TEST(JsonFields, AbsentTakesTheFallbackButAnotherTypeIsAUsageError) {
  const nlohmann::json j = nlohmann::json::parse(R"({"name":null,"n":"7","flag":1})");
  EXPECT_EQ(field_or(j, "missing", "dflt", "space.json"), "dflt");
  EXPECT_EQ(field_or<int>(j, "missing", 5, "space.json"), 5);
  EXPECT_EQ(usage_message([&] { field_or(j, "name", "dflt", "space.json"); }),
            "space.json: name must be a string, not null");
  EXPECT_EQ(usage_message([&] { field_or<double>(j, "n", 0.0, "results.json: results[3]"); }),
            "results.json: results[3]: n must be a number, not string");
  EXPECT_EQ(usage_message([&] { field_or<bool>(j, "flag", false, "x.json"); }), "x.json: flag must be a boolean, not number");
  EXPECT_EQ(field_or<nlohmann::json>(j, "name", nlohmann::json::object(), "x.json"), nullptr);  // json takes anything
}

TEST(JsonFields, RequiredFieldsAndOptionalOnes) {
  const nlohmann::json j = nlohmann::json::parse(R"({"root":null,"host":"h","args":["a",3]})");
  EXPECT_EQ(usage_message([&] { field<std::string>(j, "kind", "journal.jsonl:1: launcher"); }),
            "journal.jsonl:1: launcher: kind is missing");
  EXPECT_EQ(usage_message([&] { field<std::string>(j, "root", "j"); }), "j: root must be a string, not null");
  EXPECT_EQ(field_opt<std::string>(j, "root", "j"), std::nullopt);
  EXPECT_EQ(field_opt<std::string>(j, "nothing", "j"), std::nullopt);
  EXPECT_EQ(field_opt<std::string>(j, "host", "j"), "h");
  EXPECT_EQ(usage_message([&] { field<std::vector<std::string>>(j, "args", "j"); }), "j: args[1] must be a string, not number");
}

TEST(JsonFields, IntegersRefuseFractionsAndValuesOutOfRange) {
  const nlohmann::json j = nlohmann::json::parse(R"({"half":1.5,"neg":-1,"big":4294967296,"huge":1e300,"inf":2e19})");
  EXPECT_EQ(usage_message([&] { field<int>(j, "half", "w"); }), "w: half must be an integer, not 1.5");
  EXPECT_EQ(usage_message([&] { field<std::uint64_t>(j, "neg", "w"); }),
            "w: neg must be an integer from 0 to 18446744073709551615, not -1");
  EXPECT_EQ(usage_message([&] { field<unsigned>(j, "neg", "w"); }), "w: neg must be an integer from 0 to 4294967295, not -1");
  EXPECT_EQ(usage_message([&] { field<int>(j, "big", "w"); }),
            "w: big must be an integer from -2147483648 to 2147483647, not 4294967296");
  EXPECT_NE(usage_message([&] { field<std::int64_t>(j, "huge", "w"); }), "");
  EXPECT_NE(usage_message([&] { field<std::uint64_t>(j, "inf", "w"); }), "");
  EXPECT_EQ(field<long long>(j, "big", "w"), 4294967296LL);
}

TEST(JsonFields, ANonObjectIsAUsageErrorNamingWhere) {
  for (const char* text : {"[1,2]", "\"s\"", "null", "3"}) {
    const nlohmann::json j = nlohmann::json::parse(text);
    EXPECT_EQ(usage_message([&] { field_or(j, "name", "x", "space.json"); }).rfind("space.json must be an object, not ", 0), 0u)
        << text;
    EXPECT_NE(usage_message([&] { field<int>(j, "n", "space.json"); }), "") << text;
    EXPECT_NE(usage_message([&] { field_opt<int>(j, "n", "space.json"); }), "") << text;
  }
}

TEST(JsonFields, WithJsonErrorsTurnsNlohmannExceptionsIntoUsageErrors) {
  const nlohmann::json j = nlohmann::json::parse(R"({"name":null})");
  EXPECT_EQ(usage_message([&] { with_json_errors("f.json", [&] { return j.at("name").get<std::string>(); }); }),
            "f.json: type must be string, but is null");
  EXPECT_EQ(with_json_errors("f.json", [] { return 3; }), 3);
}

}  // namespace
}  // namespace railkit
