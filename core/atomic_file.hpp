#pragma once
// Files are never half-written: content goes to a temporary file in the same
// directory, is flushed, then renamed over the target.
#include <filesystem>
#include <string_view>

namespace railkit {

/// Writes `content` to `path` atomically (temp file + fsync + rename). Throws IoError.
void write_file_atomic(const std::filesystem::path& path, std::string_view content);

/// Throws UsageError naming `path` unless a file can be created at `path`
/// (the directory exists and is writable). Creates and removes a probe file; does not touch `path`.
void check_writable(const std::filesystem::path& path, std::string_view what);

/// Reads a whole file. Throws IoError naming the file.
std::string read_file(const std::filesystem::path& path);

}  // namespace railkit
