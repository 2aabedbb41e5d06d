#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <filesystem>

#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "test_util.hpp"

namespace fs = std::filesystem;

class AtomicFile : public ::testing::Test {
 protected:
  railkit::test::TempDir tmp_{"railkit-atomic"};
  const fs::path dir_ = tmp_.path;
};

TEST_F(AtomicFile, WritesAndReplacesLeavingNoTemporary) {
  const fs::path f = dir_ / "doc.json";
  railkit::write_file_atomic(f, "first");
  railkit::write_file_atomic(f, "second");
  EXPECT_EQ(railkit::read_file(f), "second");
  int entries = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir_)) ++entries;
  EXPECT_EQ(entries, 1);
}

TEST_F(AtomicFile, MissingDirectoryIsAnIoError) {
  EXPECT_THROW(railkit::write_file_atomic(dir_ / "no" / "such" / "x.json", "x"), railkit::IoError);
  EXPECT_THROW(railkit::read_file(dir_ / "absent"), railkit::IoError);
}

TEST_F(AtomicFile, CheckWritableNamesTheInput) {
  EXPECT_NO_THROW(railkit::check_writable(dir_ / "ok.json", "-J/--output_file"));
  EXPECT_FALSE(fs::exists(dir_ / "ok.json"));
  try {
    railkit::check_writable(dir_ / "missing" / "x.json", "-J/--output_file");
    FAIL();
  } catch (const railkit::UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("-J/--output_file"), std::string::npos);
  }
  EXPECT_THROW(railkit::check_writable(dir_, "-J/--output_file"), railkit::UsageError);
}

using railkit::read_file;
using railkit::read_machine_file;
using railkit::write_file_atomic;

TEST_F(AtomicFile, ReadFileStopsAtItsCapAndRefusesDirectories) {
  write_file_atomic(dir_ / "small.txt", "hello");
  EXPECT_EQ(read_file(dir_ / "small.txt"), "hello");
  // /dev/zero never ends: once grew `topo --compare /dev/zero` to gigabytes; now one line.
  try {
    read_file("/dev/zero", 1 << 20);
    ADD_FAILURE() << "read /dev/zero to its end";
  } catch (const railkit::UsageError& e) {
    EXPECT_EQ(std::string(e.what()), "/dev/zero: more than 1 MiB; not a file railkit reads");
  }
  EXPECT_THROW(read_file(dir_), railkit::IoError);
  EXPECT_THROW(read_file(dir_ / "absent"), railkit::IoError);
}

TEST_F(AtomicFile, MachineFilesAreReadOnlyWhenRegularAndNeverBlock) {
  write_file_atomic(dir_ / "attr", "42\n");
  EXPECT_EQ(read_machine_file(dir_ / "attr", 1024), "42\n");
  EXPECT_EQ(read_machine_file(dir_ / "attr", 2), "42");  // at most max_bytes (rounded to a read)
  // A FIFO planted in a --root tree blocked topo, profile check and dcqcn show forever.
  ASSERT_EQ(::mkfifo((dir_ / "fifo").c_str(), 0644), 0);
  EXPECT_FALSE(read_machine_file(dir_ / "fifo", 1024).has_value());
  EXPECT_FALSE(read_machine_file(dir_, 1024).has_value());
  EXPECT_FALSE(read_machine_file("/dev/zero", 1024).has_value());
  EXPECT_FALSE(read_machine_file(dir_ / "absent", 1024).has_value());
  std::filesystem::create_symlink(dir_ / "attr", dir_ / "link");
  bool is_link = false;
  EXPECT_FALSE(read_machine_file(dir_ / "link", 1024, true, &is_link).has_value());
  EXPECT_TRUE(is_link);
  EXPECT_EQ(read_machine_file(dir_ / "link", 1024), "42\n");
}

TEST_F(AtomicFile, OnlyRegularFilesAreReplaced) {
  // Renaming over a device, FIFO or directory replaced it with a regular file (`-J /dev/full`).
  for (const char* dev : {"/dev/full", "/dev/null"}) {
    try {
      write_file_atomic(dev, "x");
      ADD_FAILURE() << dev << " was written";
    } catch (const railkit::UsageError& e) {
      EXPECT_EQ(std::string(e.what()), std::string(dev) +
                                           " is a character device: railkit writes only regular files (it replaces "
                                           "them whole)");
    }
  }
  struct stat st {};
  ASSERT_EQ(::stat("/dev/null", &st), 0);
  EXPECT_TRUE(S_ISCHR(st.st_mode));
  ASSERT_EQ(::mkfifo((dir_ / "fifo").c_str(), 0644), 0);
  EXPECT_THROW(write_file_atomic(dir_ / "fifo", "x"), railkit::UsageError);
  std::filesystem::create_directory(dir_ / "d");
  EXPECT_THROW(write_file_atomic(dir_ / "d", "x"), railkit::UsageError);
  EXPECT_THROW(railkit::check_writable("/dev/full", "-J"), railkit::UsageError);
  EXPECT_THROW(railkit::check_writable(dir_ / "fifo", "-J"), railkit::UsageError);
}

TEST_F(AtomicFile, ASymlinkIsWrittenThroughAndKept) {
  write_file_atomic(dir_ / "real.json", "old");
  std::filesystem::create_symlink("real.json", dir_ / "link.json");
  EXPECT_EQ(railkit::write_target(dir_ / "link.json"), dir_ / "real.json");
  write_file_atomic(dir_ / "link.json", "new");
  EXPECT_TRUE(std::filesystem::is_symlink(dir_ / "link.json"));
  EXPECT_EQ(read_file(dir_ / "real.json"), "new");
  std::filesystem::create_symlink("/dev/null", dir_ / "to-null");
  EXPECT_THROW(write_file_atomic(dir_ / "to-null", "x"), railkit::UsageError);
  std::filesystem::create_symlink("link.json", dir_ / "link2.json");
  EXPECT_THROW(write_file_atomic(dir_ / "link2.json", "x"), railkit::UsageError);
}

TEST_F(AtomicFile, TemporaryFilesOfAKilledWriterAreRemovedOnTheNextWrite) {
  // A pid that no process has: fork a child that exits at once, and wait for it.
  const pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  ASSERT_GT(child, 0);
  int status = 0;
  ::waitpid(child, &status, 0);
  const auto stale = dir_ / (".out.json.tmp." + std::to_string(child));
  write_file_atomic(stale, "half");
  const auto live = dir_ / (".out.json.tmp." + std::to_string(::getppid()));  // a running process's
  write_file_atomic(live, "in progress");
  write_file_atomic(dir_ / "out.json", "whole");
  EXPECT_FALSE(std::filesystem::exists(stale));
  EXPECT_TRUE(std::filesystem::exists(live));
  EXPECT_EQ(read_file(dir_ / "out.json"), "whole");
}
