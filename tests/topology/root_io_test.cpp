#include "topology/root_io.hpp"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>

#include <gtest/gtest.h>

#include "test_util.hpp"

namespace railkit::topo {
namespace {
namespace fs = std::filesystem;

/// A root with sys/a/value ("1\n") and, beside the root, a file that must never change.
class TopoRootIo : public ::testing::Test {
 protected:
  void SetUp() override {
    fs::create_directories(root_ / "sys/a");
    tmp_.write("root/sys/a/value", "1\n");
    fs::create_directories(tmp_.path / "outside");
    outside_ = tmp_.write("outside/value", "outside\n");
  }
  std::string outside_text() const { return read_under_root(tmp_.path, "outside/value", 100).data.value_or("?"); }

  railkit::test::TempDir tmp_{"railkit-rootio"};
  const fs::path root_ = tmp_.path / "root";
  fs::path outside_;
};

TEST_F(TopoRootIo, WritesInPlaceAndReadsBack) {
  EXPECT_FALSE(write_under_root(root_, "sys/a/value", "42\n"));
  const auto r = read_under_root(root_, "sys/a/value", 100);
  ASSERT_TRUE(r.data) << r.failure.reason;
  EXPECT_EQ(*r.data, "42\n");
  EXPECT_EQ(read_under_root(root_, "/sys/./a/value", 100).data, "42\n");  // relative to the root either way
}

TEST_F(TopoRootIo, NeverCreatesAFile) {
  const auto failed = write_under_root(root_, "sys/a/new", "1\n");
  ASSERT_TRUE(failed);
  EXPECT_EQ(failed->reason, std::strerror(ENOENT));
  EXPECT_FALSE(fs::exists(root_ / "sys/a/new"));
}

TEST_F(TopoRootIo, ASymlinkOutOfTheRootIsNotFollowed) {
  fs::create_symlink(tmp_.path / "outside", root_ / "sys/dir_link");  // a directory on the way
  fs::create_symlink(outside_, root_ / "sys/a/file_link");            // the file itself
  const auto dir = write_under_root(root_, "sys/dir_link/value", "0\n");
  ASSERT_TRUE(dir);
  EXPECT_EQ(dir->reason, "dir_link is a symlink (not followed)");
  const auto file = write_under_root(root_, "sys/a/file_link", "0\n");
  ASSERT_TRUE(file);
  EXPECT_EQ(file->reason, "file_link is a symlink (not followed)");
  EXPECT_FALSE(read_under_root(root_, "sys/a/file_link", 100).data);
  EXPECT_EQ(outside_text(), "outside\n");
}

TEST_F(TopoRootIo, DotDotIsRefused) {
  for (const char* rel : {"../outside/value", "sys/../../outside/value", "sys/a/.."}) {
    const auto failed = write_under_root(root_, rel, "0\n");
    ASSERT_TRUE(failed) << rel;
    EXPECT_EQ(failed->reason, "'..' in the path") << rel;
    EXPECT_EQ(read_under_root(root_, rel, 100).failure.reason, "'..' in the path") << rel;
  }
  EXPECT_EQ(outside_text(), "outside\n");
}

TEST_F(TopoRootIo, AFifoIsNotARegularFileAndNeverBlocks) {
  ASSERT_EQ(::mkfifo((root_ / "sys/a/fifo").c_str(), 0644), 0);
  EXPECT_EQ(read_under_root(root_, "sys/a/fifo", 100).failure.reason, "not a regular file");
  EXPECT_TRUE(write_under_root(root_, "sys/a/fifo", "1\n"));  // no reader: ENXIO, else not a regular file
}

TEST_F(TopoRootIo, LexicalContainment) {
  EXPECT_TRUE(inside_root_lexically("sys/a/value"));
  EXPECT_FALSE(inside_root_lexically(""));
  EXPECT_FALSE(inside_root_lexically("/sys/a/value"));
  EXPECT_FALSE(inside_root_lexically("sys/../a"));
}

TEST_F(TopoRootIo, ResolvesLinksInsideTheRootAndRefusesTheWayOut) {
  fs::create_symlink("a", root_ / "sys/rel");
  fs::create_symlink(root_ / "sys/a", root_ / "sys/abs");
  fs::create_symlink("../../outside", root_ / "sys/out");
  EXPECT_EQ(resolve_under_root(root_, "sys/rel/value").path, fs::path("sys/a/value"));
  EXPECT_EQ(resolve_under_root(root_, "sys/abs/value").path, fs::path("sys/a/value"));
  EXPECT_EQ(resolve_under_root(root_, "sys/a/missing/x").path, fs::path("sys/a/missing/x"));
  const auto out = resolve_under_root(root_, "sys/out/value");
  EXPECT_FALSE(out.path);
  EXPECT_EQ(out.reason, "symlink sys/out -> ../../outside leaves the root");
  EXPECT_EQ(resolve_under_root(root_, "sys/../../x").reason, "'..' above the root");
}

}  // namespace
}  // namespace railkit::topo
