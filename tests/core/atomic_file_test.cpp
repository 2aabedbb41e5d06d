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
