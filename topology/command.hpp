#pragma once
// `railkit topo`: probe a node (or compare captured documents) and print the result.
#include <filesystem>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

namespace railkit::topo {

/// Options of `railkit topo`, filled by the CLI.
struct TopoOptions {
  std::filesystem::path root{"/"};
  std::string format{"table"};  ///< table | json | nccl-xml
  int priority = 3;             ///< RoCE priority for the ECN/PFC checks (0-7)
  std::optional<std::filesystem::path> nvidia_smi_topo;
  std::vector<std::filesystem::path> compare;  ///< JSON documents to compare (>= 2)
  bool lint = false;  ///< exit 10 when a finding is an error
};

/// Runs the command, writing the output to `out`. Returns the exit code: 0, or 10 (CheckFailed)
/// with --lint and an error finding, or with --compare when the nodes differ.
/// Throws UsageError (exit 6) for bad options, a missing root or unreadable input documents.
int run_topo(const TopoOptions& opts, std::ostream& out);

}  // namespace railkit::topo
