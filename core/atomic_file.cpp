#include "core/atomic_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>

#include <fmt/format.h>

#include "core/error.hpp"

namespace railkit {
namespace fs = std::filesystem;

namespace {

std::string errno_text() { return std::strerror(errno); }

fs::path temp_sibling(const fs::path& path) {
  fs::path dir = path.parent_path();
  if (dir.empty()) dir = ".";
  return dir / ("." + path.filename().string() + ".tmp." + std::to_string(::getpid()));
}

}  // namespace

void write_file_atomic(const fs::path& path, std::string_view content) {
  const fs::path tmp = temp_sibling(path);
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) throw IoError("cannot write " + path.string() + ": " + errno_text());
  const char* p = content.data();
  size_t left = content.size();
  while (left > 0) {
    const ssize_t n = ::write(fd, p, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      const std::string why = errno_text();
      ::close(fd);
      ::unlink(tmp.c_str());
      throw IoError("cannot write " + path.string() + ": " + why);
    }
    p += n;
    left -= static_cast<size_t>(n);
  }
  if (::fsync(fd) != 0 || ::close(fd) != 0) {
    const std::string why = errno_text();
    ::unlink(tmp.c_str());
    throw IoError("cannot write " + path.string() + ": " + why);
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    const std::string why = errno_text();
    ::unlink(tmp.c_str());
    throw IoError("cannot rename into " + path.string() + ": " + why);
  }
}

void check_writable(const fs::path& path, std::string_view what) {
  std::error_code ec;
  if (fs::is_directory(path, ec))
    throw UsageError(std::string(what) + " '" + path.string() + "' is a directory, not a file");
  const fs::path tmp = temp_sibling(path);
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0)
    throw UsageError(std::string(what) + " '" + path.string() + "' cannot be written: " + errno_text());
  ::close(fd);
  ::unlink(tmp.c_str());
}

std::string read_file(const fs::path& path, std::uint64_t max_bytes) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw IoError("cannot read " + path.string() + ": " + errno_text());
  struct stat st {};
  if (::fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
    ::close(fd);
    throw IoError("cannot read " + path.string() + ": it is a directory");
  }
  std::string data;
  char buf[65536];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      const std::string why = errno_text();
      ::close(fd);
      throw IoError("cannot read " + path.string() + ": " + why);
    }
    if (n == 0) break;
    data.append(buf, static_cast<std::size_t>(n));
    if (data.size() > max_bytes) {
      ::close(fd);
      throw UsageError(fmt::format("{}: more than {} MiB; not a file railkit reads", path.string(), max_bytes >> 20));
    }
  }
  ::close(fd);
  return data;
}

std::optional<std::string> read_machine_file(const fs::path& path, std::size_t max_bytes, bool nofollow,
                                             bool* is_link) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | (nofollow ? O_NOFOLLOW : 0));
  if (fd < 0) {
    if (is_link) *is_link = errno == ELOOP;
    return std::nullopt;
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return std::nullopt;
  }
  std::string data;
  char buf[4096];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      ::close(fd);
      return std::nullopt;
    }
    if (n == 0) break;
    data.append(buf, static_cast<std::size_t>(n));
    if (data.size() >= max_bytes) break;
  }
  ::close(fd);
  if (data.size() > max_bytes) data.resize(max_bytes);
  return data;
}

}  // namespace railkit
