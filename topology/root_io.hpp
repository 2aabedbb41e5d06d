#pragma once
// Strict file access under a root directory (a live "/" or a --root tree) for the reads and
// writes that must never leave it (`railkit dcqcn apply` and `restore`): no symlink anywhere below
// the root is followed and ".." is refused, so a link planted in the tree cannot redirect a write.
// Every directory on the way is opened with O_NOFOLLOW relative to the one before, so a link
// planted after a check cannot redirect it either. The probe's lenient reader, which resolves
// links inside the root as a captured tree needs, is SysfsReader (topology/sysfs.hpp).
#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace railkit::topo {

/// Why a file under a root could not be read, written or resolved.
struct RootIoFailure {
  std::string reason;   ///< one line: "rpg_gd is a symlink (not followed)", "'..' in the path", a strerror text
  bool denied = false;  ///< the system refused the open, write or close (EACCES or EPERM)
};

/// What read_under_root read: the raw content, or why not (`failure` is set when `data` is nullopt).
struct RootRead {
  std::optional<std::string> data;
  RootIoFailure failure;
};

/// Reads the regular file `rel` (relative to `root`; "" = the working directory) without following
/// a symlink below the root and refusing "..": until end of file or more than `max_bytes` (then
/// `data` is longer than max_bytes by at most one buffer, as core's read_fd). A FIFO or device is
/// refused ("not a regular file") without blocking.
RootRead read_under_root(const std::filesystem::path& root, const std::filesystem::path& rel, std::size_t max_bytes);

/// Writes `data` in place into the existing regular file `rel` under `root` (truncated first) with
/// one write(), as sysfs takes an attribute, by the rules of read_under_root. nullopt on success;
/// "short write" when the file took less.
std::optional<RootIoFailure> write_under_root(const std::filesystem::path& root, const std::filesystem::path& rel,
                                              std::string_view data);

/// Whether `rel` stays inside a root by its spelling alone: not empty, not absolute, no "..".
bool inside_root_lexically(const std::filesystem::path& rel);

/// What resolve_under_root found: the path relative to the root, or why not.
struct RootResolved {
  std::optional<std::filesystem::path> path;
  std::string reason;  ///< "'..' above the root", "symlink a -> /x leaves the root", a loop
};

/// Resolves `rel` under the absolute root `root_abs` one component at a time (lstat), following
/// symlinks as the kernel would (an absolute target from the real /, a relative one from the
/// link's directory), refusing a link or ".." that leads out of the root. A missing component ends
/// the resolution (the rest is kept as given). Under "/" nothing can leave the root.
RootResolved resolve_under_root(const std::filesystem::path& root_abs, const std::filesystem::path& rel);

}  // namespace railkit::topo
