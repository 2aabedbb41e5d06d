#pragma once
// The one place that knows about NCCL version differences (built against 2.28.9 here).
// Everything else uses these names.
#include <nccl.h>

#include <string>

#include <fmt/format.h>

namespace railkit::bench::nccl {

inline constexpr int kBuiltVersion = NCCL_VERSION_CODE;

/// "2.28.9" from ncclGetVersion's code (2.9+ encoding: major*10000 + minor*100 + patch).
inline std::string version_string(int code) {
  return code >= 10000 ? fmt::format("{}.{}.{}", code / 10000, (code % 10000) / 100, code % 100)
                       : fmt::format("{}.{}.{}", code / 1000, (code % 1000) / 100, code % 100);
}

/// A non-blocking communicator configuration (config.blocking = 0, NCCL >= 2.14).
inline ncclConfig_t nonblocking_config() {
  ncclConfig_t c = NCCL_CONFIG_INITIALIZER;
  c.blocking = 0;
  return c;
}

}  // namespace railkit::bench::nccl
