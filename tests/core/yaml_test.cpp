#include "core/yaml.hpp"

#include <gtest/gtest.h>

#include "core/error.hpp"

namespace railkit {
namespace {

using json = nlohmann::json;

TEST(Yaml, TypesPlainScalarsLikeTheCoreSchema) {
  const json j = parse_yaml("a: ~\nb: null\nc:\nd: true\ne: false\nf: 42\ng: -7\nh: 2.5\ni: Ring\nj: '42'\nk: \"true\"\n", "t.yaml");
  EXPECT_TRUE(j["a"].is_null());
  EXPECT_TRUE(j["b"].is_null());
  EXPECT_TRUE(j["c"].is_null());
  EXPECT_EQ(j["d"], true);
  EXPECT_EQ(j["e"], false);
  EXPECT_EQ(j["f"], 42);
  EXPECT_EQ(j["g"], -7);
  EXPECT_DOUBLE_EQ(j["h"].get<double>(), 2.5);
  EXPECT_EQ(j["i"], "Ring");
  EXPECT_EQ(j["j"], "42");    // quoted: a string
  EXPECT_EQ(j["k"], "true");  // quoted: a string
}

TEST(Yaml, NestedSequencesAndMappingsBothStyles) {
  const json j = parse_yaml("knobs:\n  - name: X\n    values: [~, 1, two]\n  - {name: Y, values: [a]}\n", "t.yaml");
  ASSERT_TRUE(j["knobs"].is_array());
  ASSERT_EQ(j["knobs"].size(), 2u);
  EXPECT_EQ(j["knobs"][0]["values"], json::parse(R"([null, 1, "two"])"));
  EXPECT_EQ(j["knobs"][1]["name"], "Y");
}

TEST(Yaml, ErrorsNameSourceLineAndColumn) {
  auto message = [](const std::string& text) {
    try {
      (void)parse_yaml(text, "s.yaml");
    } catch (const UsageError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message("a: [1, 2\n").find("s.yaml:"), std::string::npos);
  EXPECT_NE(message("a: &x 1\nb: *x\n").find("s.yaml:2:"), std::string::npos);
  EXPECT_NE(message("a: 1\na: 2\n").find("appears twice"), std::string::npos);
  // A key with an escape sequence is shown escaped, never sent to the terminal (issue 14).
  EXPECT_NE(message("\"\\e[2Jk\": 1\n\"\\e[2Jk\": 2\n").find("key '\\x1b[2Jk' appears twice"), std::string::npos);
  EXPECT_NE(message("a: 1\n---\nb: 2\n").find("more than one"), std::string::npos);
  EXPECT_NE(message("? [1, 2]\n: x\n").find("key"), std::string::npos);
}

TEST(Yaml, EmptyDocumentIsNull) { EXPECT_TRUE(parse_yaml("", "e.yaml").is_null()); }

TEST(Yaml, RecognisesYamlPaths) {
  EXPECT_TRUE(is_yaml_path("a/space.yaml"));
  EXPECT_TRUE(is_yaml_path("SPACE.YML"));
  EXPECT_FALSE(is_yaml_path("space.json"));
  EXPECT_FALSE(is_yaml_path("yaml"));
}

}  // namespace
}  // namespace railkit

TEST(Yaml, NestingBeyondTheBoundIsRefusedWithTheLine) {
  // 50 000 levels overflowed the stack of `railkit tune --space`; now one line names where.
  std::string deep;
  for (int i = 0; i < 50000; ++i) deep += "- ";
  deep += "1\n";
  try {
    railkit::parse_yaml(deep, "deep.yaml");
    ADD_FAILURE() << "a 50000-level YAML document parsed";
  } catch (const railkit::UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("deep.yaml:1:"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("nested deeper than 128 levels"), std::string::npos) << e.what();
  }
  std::string flow(200, '[');
  flow += std::string(200, ']');
  EXPECT_THROW(railkit::parse_yaml(flow, "flow.yaml"), railkit::UsageError);
  std::string ok(100, '[');
  ok += std::string(100, ']');
  EXPECT_NO_THROW(railkit::parse_yaml(ok, "ok.yaml"));
}

