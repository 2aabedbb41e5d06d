#pragma once
// Typed errors with documented exit codes. Deep code throws; each main catches once
// (see core/main_guard.hpp), prints one line and returns exit_code(e.code()).
#include <stdexcept>
#include <string>
#include <string_view>

namespace railkit {

/// Error categories. The numeric exit code of each is documented in README.md
/// ("Exit codes") and aligned with nccl-tests where the meaning overlaps.
enum class ErrorCode : int {
  Internal = 1,        ///< a bug or an unexpected system failure
  Cuda = 2,            ///< CUDA runtime/driver error (nccl-tests: 2)
  Nccl = 3,            ///< NCCL error (nccl-tests: 3)
  Timeout = 4,         ///< the watchdog ended the run (nccl-tests: 4)
  Unavailable = 5,     ///< backend or feature not built/usable here (nccl-tests: 5, not implemented)
  Usage = 6,           ///< invalid flags, values or input files (nccl-tests: 6)
  DataError = 7,       ///< wrong values in a data check (nccl-tests: 7)
  Mpi = 8,             ///< MPI reported an error
  Io = 9,              ///< a file could not be read or written at run time
  CheckFailed = 10,    ///< a check ran and found a problem (lint errors, acceptance failures)
};

/// Process exit code for an error category.
constexpr int exit_code(ErrorCode c) noexcept { return static_cast<int>(c); }

/// Short stable name of a category ("usage", "timeout", ...), used in documents.
std::string_view error_code_name(ErrorCode c) noexcept;

/// Base of every railkit exception: a message plus its category.
class Error : public std::runtime_error {
 public:
  Error(ErrorCode code, const std::string& message) : std::runtime_error(message), code_(code) {}
  ErrorCode code() const noexcept { return code_; }

 private:
  ErrorCode code_;
};

/// Bad flag, value or input file; the message names the input.
class UsageError : public Error {
 public:
  explicit UsageError(const std::string& m) : Error(ErrorCode::Usage, m) {}
};

/// A file could not be read or written.
class IoError : public Error {
 public:
  explicit IoError(const std::string& m) : Error(ErrorCode::Io, m) {}
};

/// The watchdog ended an operation that did not complete in time.
class TimeoutError : public Error {
 public:
  explicit TimeoutError(const std::string& m) : Error(ErrorCode::Timeout, m) {}
};

/// MPI returned an error code.
class MpiError : public Error {
 public:
  explicit MpiError(const std::string& m) : Error(ErrorCode::Mpi, m) {}
};

/// A data check found wrong values.
class DataError : public Error {
 public:
  explicit DataError(const std::string& m) : Error(ErrorCode::DataError, m) {}
};

/// A CUDA runtime call failed.
class CudaError : public Error {
 public:
  explicit CudaError(const std::string& m) : Error(ErrorCode::Cuda, m) {}
};

/// An NCCL call failed.
class NcclError : public Error {
 public:
  explicit NcclError(const std::string& m) : Error(ErrorCode::Nccl, m) {}
};

/// A signal (SIGINT, SIGTERM, SIGHUP) stopped the work after what was finished had been saved.
/// The one way every command reports an interruption: thrown where it is seen, caught once by
/// guarded_main, which prints the message (what was kept, how to continue) and exits with
/// 128 + signal, as a shell reports a process killed by that signal.
class InterruptedError : public std::exception {
 public:
  InterruptedError(int signal, std::string message) : signal_(signal), message_(std::move(message)) {}
  int signal() const noexcept { return signal_; }
  /// 128 + signal.
  int exit_status() const noexcept { return 128 + signal_; }
  const char* what() const noexcept override { return message_.c_str(); }

 private:
  int signal_;
  std::string message_;
};

/// A backend or capability that is not compiled in or not usable on this machine.
class UnavailableError : public Error {
 public:
  explicit UnavailableError(const std::string& m) : Error(ErrorCode::Unavailable, m) {}
};

}  // namespace railkit
