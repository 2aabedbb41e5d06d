#pragma once
// Shared by the tests: a scratch directory removed with everything in it, and the message of a
// UsageError a call throws.
#include <stdexcept>
#include <string>

#include <gtest/gtest.h>

#include "core/error.hpp"
#include "temp_dir.hpp"

namespace railkit::test {

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
