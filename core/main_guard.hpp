#pragma once
// The one place a main turns exceptions into a line on stderr and an exit code.
#include <exception>
#include <functional>
#include <iostream>
#include <string_view>

#include "core/error.hpp"

namespace railkit {

/// Runs `body`; a railkit::Error prints "<program>: error: <message>" and returns its exit code,
/// an InterruptedError prints "<program>: <message>" and returns 128 + signal, any other
/// exception returns exit_code(ErrorCode::Internal). `quiet` suppresses the line (for ranks
/// other than the one that reports).
inline int guarded_main(std::string_view program, const std::function<int()>& body, bool quiet = false) {
  try {
    return body();
  } catch (const InterruptedError& e) {
    if (!quiet) std::cerr << program << ": " << e.what() << std::endl;
    return e.exit_status();
  } catch (const Error& e) {
    if (!quiet) std::cerr << program << ": error: " << e.what() << std::endl;
    return exit_code(e.code());
  } catch (const std::exception& e) {
    if (!quiet) std::cerr << program << ": internal error: " << e.what() << std::endl;
    return exit_code(ErrorCode::Internal);
  }
}

}  // namespace railkit
