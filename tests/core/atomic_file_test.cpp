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
  const auto stale_random = dir_ / (".out.json.tmp." + std::to_string(child) + ".0123abcd");  // this railkit's names
  write_file_atomic(stale_random, "half");
  const auto live = dir_ / (".out.json.tmp." + std::to_string(::getppid()));  // a running process's
  write_file_atomic(live, "in progress");
  write_file_atomic(dir_ / "out.json", "whole");
  EXPECT_FALSE(std::filesystem::exists(stale));
  EXPECT_FALSE(std::filesystem::exists(stale_random));
  EXPECT_TRUE(std::filesystem::exists(live));
  EXPECT_EQ(read_file(dir_ / "out.json"), "whole");
}

TEST_F(AtomicFile, ALinkPlantedAtTheTemporaryNameIsNeverWrittenThrough) {
  // Issue 32: the temporary `.NAME.tmp.<pid>` was opened with O_CREAT|O_TRUNC, following a link
  // that another user planted for a future pid: a root run wrote into the file the link named.
  const fs::path victim = dir_ / "victim";
  write_file_atomic(victim, "precious");
  for (const char* name : {"out.json", "link-target.json"}) {
    const fs::path planted = dir_ / (std::string(".") + name + ".tmp." + std::to_string(::getpid()));
    fs::create_symlink(victim, planted);
  }
  write_file_atomic(dir_ / "out.json", "document");
  EXPECT_EQ(read_file(victim), "precious");
  EXPECT_FALSE(fs::is_symlink(dir_ / "out.json"));
  EXPECT_EQ(read_file(dir_ / "out.json"), "document");
  // The probe of an output path does not trip over the planted link either, nor write through it.
  EXPECT_NO_THROW(railkit::check_writable(dir_ / "link-target.json", "--out"));
  EXPECT_EQ(read_file(victim), "precious");
  EXPECT_FALSE(fs::exists(dir_ / "link-target.json"));
}

TEST_F(AtomicFile, AnotherUsersLinkAtTheTargetIsRefused) {
  // A link of this user is written through (ASymlinkIsWrittenThroughAndKept); one that another
  // user planted in a world-writable directory would make a root run overwrite the file it names.
  if (::geteuid() != 0) GTEST_SKIP() << "making a link of another user needs root";
  const fs::path shared = dir_ / "shared";
  fs::create_directory(shared);
  ASSERT_EQ(::chmod(shared.c_str(), 01777), 0);
  const fs::path victim = dir_ / "victim";
  write_file_atomic(victim, "precious");
  const fs::path planted = shared / "out.json";
  fs::create_symlink(victim, planted);
  ASSERT_EQ(::lchown(planted.c_str(), 65534, 65534), 0);
  try {
    write_file_atomic(planted, "document");
    ADD_FAILURE() << "wrote through another user's link";
  } catch (const railkit::UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("a symlink of another user (uid 65534)"), std::string::npos) << e.what();
  }
  EXPECT_THROW(railkit::check_writable(planted, "--out"), railkit::UsageError);
  EXPECT_EQ(read_file(victim), "precious");
  EXPECT_TRUE(fs::is_symlink(planted));
}

TEST_F(AtomicFile, InputFilesMustBeRegularAndAFifoNeverBlocks) {
  // Issue 32: `railkit import FIFO` waited in open() for a writer forever.
  write_file_atomic(dir_ / "log.txt", "line\n");
  EXPECT_EQ(railkit::read_input_file(dir_ / "log.txt", "input"), "line\n");
  ASSERT_EQ(::mkfifo((dir_ / "fifo").c_str(), 0644), 0);
  const auto refused = [](const fs::path& p) {
    return railkit::test::usage_error_of([&] { railkit::read_input_file(p, "--hostfile"); });
  };
  EXPECT_EQ(refused(dir_ / "fifo"), "--hostfile '" + (dir_ / "fifo").string() + "': is a FIFO, not a regular file");
  EXPECT_EQ(refused(dir_), "--hostfile '" + dir_.string() + "': is a directory, not a regular file");
  EXPECT_EQ(refused("/dev/zero"), "--hostfile '/dev/zero': is a character device, not a regular file");
  EXPECT_THROW(railkit::read_input_file(dir_ / "absent", "input"), railkit::IoError);
  fs::create_symlink(dir_ / "log.txt", dir_ / "link.txt");  // a link to a regular file is read
  EXPECT_EQ(railkit::read_input_file(dir_ / "link.txt", "input"), "line\n");
}
