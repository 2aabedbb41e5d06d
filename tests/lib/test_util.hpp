#pragma once
// Shared by the tests: a scratch directory removed with everything in it, and the message of a
// UsageError a call throws.
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>

#include <gtest/gtest.h>

#include "core/error.hpp"

namespace railkit::test {

/// A fresh directory under the system temp directory, removed with everything in it.
struct TempDir {
  std::filesystem::path path;
  explicit TempDir(const std::string& prefix = "railkit-test") {
    std::string t = (std::filesystem::temp_directory_path() / (prefix + "-XXXXXX")).string();
    if (::mkdtemp(t.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    path = t;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  /// Writes `text` to `name` in the directory and returns its path.
  std::filesystem::path write(const std::string& name, const std::string& text) const {
    const std::filesystem::path p = path / name;
    std::ofstream(p, std::ios::binary) << text;
    return p;
  }
};

/// The message of the UsageError `f` throws ("" and a test failure when it throws nothing or
/// something else).
template <class F>
std::string usage_error_of(F&& f) {
  try {
    f();
  } catch (const UsageError& e) {
    return e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "expected UsageError, got: " << e.what();
    return "";
  }
  ADD_FAILURE() << "expected UsageError, nothing thrown";
  return "";
}

}  // namespace railkit::test
