// run_topo end to end (what `railkit topo` calls), with exit codes.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "core/error.hpp"
#include "fixture_util.hpp"
#include "topology/command.hpp"
#include "test_util.hpp"

namespace railkit::topo {
namespace {

TopoOptions on(const std::string& fixture) {
  TopoOptions o;
  o.root = testing::fixture(fixture);
  return o;
}

TEST(TopoCommand, LintExitsTenOnErrorsJsonDoesNot) {
  std::ostringstream out;
  auto o = on("dgx-acs");
  o.format = "json";
  EXPECT_EQ(run_topo(o, out), 0);
  o.lint = true;
  EXPECT_EQ(run_topo(o, out), 10);
  o.format = "table";
  EXPECT_EQ(run_topo(o, out), 10);
  EXPECT_EQ(run_topo(on("dgx-h100"), out), 0);
  auto clean = on("dgx-mtu-low");  // warnings only
  clean.lint = true;
  EXPECT_EQ(run_topo(clean, out), 0);
}

TEST(TopoCommand, UsageErrors) {
  std::ostringstream out;
  auto o = on("dgx-h100");
  o.format = "yaml";
  EXPECT_THROW(run_topo(o, out), UsageError);
  o = on("dgx-h100");
  o.priority = 8;
  EXPECT_THROW(run_topo(o, out), UsageError);
  EXPECT_THROW(run_topo(on("missing-fixture"), out), UsageError);
  o = on("dgx-h100");
  o.compare = {testing::fixture("one.json")};
  EXPECT_THROW(run_topo(o, out), UsageError);
}

TEST(TopoCommand, CompareDocumentsFromFiles) {
  const railkit::test::TempDir tmp{"railkit-compare"};
  const auto& dir = tmp.path;
  std::vector<std::filesystem::path> files;
  for (const char* f : {"dgx-h100", "dgx-h100", "dgx-rate-mismatch"}) {
    std::ostringstream doc;
    auto o = on(f);
    o.format = "json";
    ASSERT_EQ(run_topo(o, doc), 0);
    files.push_back(dir / (std::to_string(files.size()) + ".json"));
    std::ofstream(files.back()) << doc.str();
  }
  TopoOptions c;
  c.compare = files;
  std::ostringstream out;
  EXPECT_EQ(run_topo(c, out), 10);
  // All three documents say host dgx-h100-01: the duplicates are named by their file.
  EXPECT_NE(out.str().find(files[2].string()), std::string::npos);
  EXPECT_NE(out.str().find("mlx5_9.rate_Gbps"), std::string::npos);
  c.compare = {files[0], files[1]};
  EXPECT_EQ(run_topo(c, out), 0);
  std::ofstream(dir / "bad.json") << "[1,2";
  c.compare = {files[0], dir / "bad.json"};
  EXPECT_THROW(run_topo(c, out), UsageError);
}

TEST(TopoCommand, CompareNamesEveryNodeTheSameWay) {
  // Two documents from one host (as captures of one fixture are): every node is named by its
  // file, the first one too, in the table and in the JSON.
  const railkit::test::TempDir tmp{"railkit-compare-names"};
  std::vector<std::filesystem::path> files;
  for (const char* f : {"dgx-h100", "dgx-rate-mismatch"}) {
    std::ostringstream doc;
    auto o = on(f);
    o.format = "json";
    ASSERT_EQ(run_topo(o, doc), 0);
    files.push_back(tmp.path / (std::string(f) + ".json"));
    std::ofstream(files.back()) << doc.str();
  }
  TopoOptions c;
  c.compare = files;
  std::ostringstream out;
  EXPECT_EQ(run_topo(c, out), 10);
  EXPECT_NE(out.str().find("    " + files[0].string() + ": 400\n"), std::string::npos) << out.str();
  EXPECT_NE(out.str().find("    " + files[1].string() + ": 200\n"), std::string::npos) << out.str();
  EXPECT_EQ(out.str().find("dgx-h100-01"), std::string::npos) << out.str();
}

TEST(TopoCommand, LintNamesTheMissingRailNic) {
  auto o = on("dgx-missing-nic");
  o.lint = true;
  std::ostringstream out;
  EXPECT_EQ(run_topo(o, out), 10);
  EXPECT_NE(out.str().find("rail.nic_missing"), std::string::npos) << out.str();
  EXPECT_NE(out.str().find("GPU0 has no NIC behind its PCIe switch"), std::string::npos) << out.str();
}

}  // namespace
}  // namespace railkit::topo
