#pragma once
// Files are never half-written: content goes to a temporary file in the same
// directory, is flushed, then renamed over the target.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace railkit {

/// The file write_file_atomic replaces for `path`: `path` itself, or, when `path` is a symlink,
/// the file it points to (the link stays). Throws UsageError when that exists and is not a
/// regular file (a directory, device, FIFO or socket: renaming over /dev/null would replace the
/// device), or is itself a link; and when `path` is a symlink of another user than this one and
/// root (written through, it would let that user choose the file a root run overwrites).
std::filesystem::path write_target(const std::filesystem::path& path);

/// Writes `content` to write_target(path) atomically (a new temp file `.NAME.tmp.<pid>.<random>`,
/// created with O_EXCL|O_NOFOLLOW, + fsync + rename), first removing such temp files that a killed
/// writer left. Throws IoError, or UsageError for a target that is not a regular file.
void write_file_atomic(const std::filesystem::path& path, std::string_view content);

/// Throws UsageError naming `path` unless a file can be created at `path`
/// (the directory exists and is writable). Creates and removes a probe file; does not touch `path`.
void check_writable(const std::filesystem::path& path, std::string_view what);

/// The most an input file given to railkit may hold (results documents, profiles, logs of a run).
inline constexpr std::uint64_t kMaxInputBytes = std::uint64_t{64} << 20;

/// Reads a whole file given by the user (a FIFO or /dev/stdin is read as given). Throws IoError
/// naming the file when it cannot be read or is a directory, UsageError when it holds more than
/// `max_bytes` (a device such as /dev/zero never ends).
std::string read_file(const std::filesystem::path& path, std::uint64_t max_bytes = kMaxInputBytes);

/// Reads a whole input file named by the user that must be a regular file (`railkit import`'s
/// logs, `history add`'s documents, `accept --hostfile`, `--sim-cluster`): opened without blocking,
/// so a FIFO no one writes is refused at once instead of waiting for a writer. Throws UsageError
/// "<what> 'PATH': is a FIFO, not a regular file" for a FIFO, device, socket or directory (and
/// over `max_bytes`), IoError naming the file when it cannot be opened or read.
std::string read_input_file(const std::filesystem::path& path, std::string_view what,
                            std::uint64_t max_bytes = kMaxInputBytes);

/// The one read loop of railkit's file readers: appends what `fd` holds to `out` until end of
/// file, or until more than `max_bytes` were read (then `out` is longer than max_bytes, by at most
/// one buffer). `fd` stays open. Returns 0, or the errno of a read that failed (EINTR is retried).
int read_fd(int fd, std::uint64_t max_bytes, std::string& out);

/// A file of the machine (sysfs, procfs, debugfs, or the same under a --root tree): opened
/// without blocking and read only when it is a regular file, at most `max_bytes`. nullopt when
/// it cannot be opened or is anything else (a FIFO planted in a tree would block a read
/// forever); with `nofollow` a final symlink is not followed and sets *is_link.
std::optional<std::string> read_machine_file(const std::filesystem::path& path, std::size_t max_bytes,
                                             bool nofollow = false, bool* is_link = nullptr);

}  // namespace railkit
