#pragma once
// The environment variables that shape a run, read from an explicit source (never a global).
#include <map>
#include <span>
#include <string>
#include <string_view>

namespace railkit {

/// Prefixes of variables recorded in results documents: NCCL_*, OMPI_MCA_*, UCX_*, RAILKIT_*.
inline constexpr std::string_view kRecordedEnvPrefixes[] = {"NCCL_", "OMPI_MCA_", "UCX_", "RAILKIT_"};

/// Returns NAME -> value for every "NAME=value" entry of `envp` (a null-terminated array
/// such as main's third argument or `environ`) whose name starts with one of `prefixes`.
std::map<std::string, std::string> capture_env(char* const* envp, std::span<const std::string_view> prefixes);

/// Value of NAME in `envp`, or empty when unset.
std::string env_value(char* const* envp, std::string_view name);

/// The file NCCL opens for NCCL_DEBUG_FILE=`pattern` (src/debug.cc): `%h` is the host name up to its
/// first '.', `%p` the pid, `%%` one '%'; any other `%x` stays as it is.
std::string expand_nccl_debug_file(std::string_view pattern, std::string_view hostname, long pid);

}  // namespace railkit
