#include "core/error.hpp"

namespace railkit {

std::string_view error_code_name(ErrorCode c) noexcept {
  switch (c) {
    case ErrorCode::Internal: return "internal";
    case ErrorCode::Cuda: return "cuda";
    case ErrorCode::Nccl: return "nccl";
    case ErrorCode::Timeout: return "timeout";
    case ErrorCode::Unavailable: return "unavailable";
    case ErrorCode::Usage: return "usage";
    case ErrorCode::DataError: return "data";
    case ErrorCode::Mpi: return "mpi";
    case ErrorCode::Io: return "io";
    case ErrorCode::CheckFailed: return "check-failed";
  }
  return "unknown";
}

}  // namespace railkit
