// Every fixture of variants.json: the findings it must produce (and must not), and the --lint verdict.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "fixture_util.hpp"

namespace railkit::topo {
namespace {

nlohmann::json load_variants() {
  std::ifstream in(testing::fixture_src("variants.json"));
  return nlohmann::json::parse(in)["variants"];
}

std::vector<std::string> variant_names() {
  std::vector<std::string> out;
  for (const auto& v : load_variants()) out.push_back(v["name"].get<std::string>());
  return out;
}

nlohmann::json variant(const std::string& name) {
  for (const auto& v : load_variants())
    if (v["name"] == name) return v;
  return {};
}

class TopoVariant : public ::testing::TestWithParam<std::string> {};

TEST_P(TopoVariant, ProducesItsFindings) {
  const auto v = variant(GetParam());
  ASSERT_FALSE(v.is_null());
  const Topology t = testing::probe_fixture(GetParam());
  std::string all;
  for (const auto& f : t.findings) all += std::string(severity_name(f.severity)) + " " + f.check + " " + f.subject + "\n";
  SCOPED_TRACE("findings:\n" + all);
  for (const auto& e : v["expect"]) {
    const auto check = e["check"].get<std::string>();
    const auto subject = e["subject"].get<std::string>();
    const Finding* f = testing::find_finding(t, check, subject);
    ASSERT_NE(f, nullptr) << "missing " << check << " on " << subject;
    if (e.contains("severity")) {
      EXPECT_EQ(severity_name(f->severity), e["severity"].get<std::string>()) << check;
    }
    EXPECT_FALSE(f->message.empty());
    EXPECT_FALSE(f->fix.empty());
  }
  if (v.contains("absent")) {
    for (const auto& a : v["absent"]) {
      for (const auto& f : t.findings) {
        EXPECT_NE(f.check, a.get<std::string>()) << "unexpected " << f.check << " on " << f.subject;
      }
    }
  }
  EXPECT_EQ(has_errors(t.findings) ? 10 : 0, v["lint_exit"].get<int>());
}

INSTANTIATE_TEST_SUITE_P(Fixtures, TopoVariant, ::testing::ValuesIn(variant_names()),
                         [](const ::testing::TestParamInfo<std::string>& i) {
                           std::string n = i.param;
                           for (auto& c : n)
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           return n;
                         });

TEST(TopoLint, PriorityOptionMovesTheChecks) {
  // The ECN variant turns priority 3 off; probing for priority 5 sees ECN on.
  auto t5 = testing::probe_fixture("dgx-ecn-off", std::nullopt, 5);
  for (const auto& f : t5.findings) EXPECT_NE(f.check, "ecn.off");
  auto t3 = testing::probe_fixture("dgx-ecn-off", std::nullopt, 3);
  EXPECT_NE(testing::find_finding(t3, "ecn.off", "enp206s0np0"), nullptr);
  // PFC is on priority 3 only in the fixtures.
  auto p4 = testing::probe_fixture("dgx-h100", std::nullopt, 4);
  EXPECT_NE(testing::find_finding(p4, "qos.pfc_off", "enp24s0np0"), nullptr);
}

}  // namespace
}  // namespace railkit::topo
