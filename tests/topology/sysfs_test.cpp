#include "topology/sysfs.hpp"

#include <sys/stat.h>
#include "test_util.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <random>

namespace railkit::topo {
namespace {
namespace fs = std::filesystem;

class TopoSysfs : public ::testing::Test {
 protected:
  void SetUp() override {
    fs::create_directories(dir_ / "sys/devices/a/b");
    std::ofstream(dir_ / "sys/devices/a/b/value") << "42\n";
    fs::create_directories(dir_ / "sys/class/x");
  }
  railkit::test::TempDir tmp_{"railkit-sysfs"};
  const fs::path dir_ = tmp_.path;
};

TEST_F(TopoSysfs, RelativeAndAbsoluteLinksStayInsideTheRoot) {
  fs::create_symlink("../../devices/a/b", dir_ / "sys/class/x/rel");
  fs::create_symlink("/sys/devices/a/b", dir_ / "sys/class/x/abs");  // absolute: re-rooted
  SysfsReader rd(SysRoot{dir_});
  EXPECT_EQ(rd.resolve("sys/class/x/rel")->string(), "sys/devices/a/b");
  EXPECT_EQ(rd.resolve("sys/class/x/abs")->string(), "sys/devices/a/b");
  EXPECT_EQ(*rd.text("sys/class/x/abs/value"), "42");
}

TEST_F(TopoSysfs, AFifoInTheTreeIsUnknownAndNeverBlocks) {
  ASSERT_EQ(::mkfifo((dir_ / "sys/devices/a/b/fifo").c_str(), 0644), 0);
  fs::create_symlink("fifo", dir_ / "sys/devices/a/b/to_fifo");
  SysfsReader rd(SysRoot{dir_});
  EXPECT_FALSE(rd.text("sys/devices/a/b/fifo").has_value());
  EXPECT_FALSE(rd.text("sys/devices/a/b/to_fifo").has_value());
  EXPECT_EQ(*rd.text("sys/devices/a/b/value"), "42");
}

TEST_F(TopoSysfs, DotDotNeverClimbsAboveTheRoot) {
  fs::create_symlink("../../../../../../sys/devices/a", dir_ / "sys/class/x/up");
  SysfsReader rd(SysRoot{dir_});
  EXPECT_EQ(rd.resolve("sys/class/x/up")->string(), "sys/devices/a");
}

TEST_F(TopoSysfs, LoopsAndMissingFilesAreUnknown) {
  fs::create_symlink("loop2", dir_ / "sys/class/x/loop1");
  fs::create_symlink("loop1", dir_ / "sys/class/x/loop2");
  SysfsReader rd(SysRoot{dir_});
  EXPECT_FALSE(rd.resolve("sys/class/x/loop1"));
  EXPECT_FALSE(rd.text("sys/class/x/missing"));
  EXPECT_TRUE(rd.list("sys/nothing").empty());
  rd.problem("sys/class/x/missing", "dev0", true, "");
  ASSERT_EQ(rd.problems().size(), 1u);
  EXPECT_EQ(rd.problems()[0].check, "input.unreadable");
  EXPECT_NE(rd.problems()[0].message.find("sys/class/x/missing"), std::string::npos);
}

TEST_F(TopoSysfs, ProblemsShowTheFileContentEscapedAndCut) {
  // A garbled file's content (NUL, an escape sequence, a megabyte line) quoted in the finding
  // would reach the terminal as is (issue 14): escaped and cut instead.
  SysfsReader rd(SysRoot{dir_});
  const std::string content = std::string("8.0 GT\0/s\x1b[2J", 13) + std::string(1 << 20, 'z');
  rd.problem("sys/class/x/speed", "dev0", false, "expected '<n> GT/s', got '" + content + "'");
  ASSERT_EQ(rd.problems().size(), 1u);
  const std::string& m = rd.problems()[0].message;
  EXPECT_NE(m.find("got '8.0 GT\\x00/s\\x1b[2Jzzz"), std::string::npos) << m.substr(0, 300);
  EXPECT_NE(m.find("... (1048616 bytes)); the value is reported as unknown"), std::string::npos) << m.substr(0, 300);
  EXPECT_LT(m.size(), 400u);
}

TEST_F(TopoSysfs, ListIsInNaturalOrder) {
  for (const char* n : {"mlx5_10", "mlx5_2", "mlx5_1"}) fs::create_directories(dir_ / "sys/class/x" / n);
  SysfsReader rd(SysRoot{dir_});
  EXPECT_EQ(rd.list("sys/class/x"), (std::vector<std::string>{"mlx5_1", "mlx5_2", "mlx5_10"}));
}

}  // namespace
}  // namespace railkit::topo
