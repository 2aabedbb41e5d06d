#include "core/atomic_file.hpp"

#include <fcntl.h>
#include <signal.h>
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

std::string temp_prefix(const fs::path& path) { return "." + path.filename().string() + ".tmp."; }

fs::path temp_sibling(const fs::path& path) {
  fs::path dir = path.parent_path();
  if (dir.empty()) dir = ".";
  return dir / (temp_prefix(path) + std::to_string(::getpid()));
}

/// What a file of this mode is, for messages ("a character device").
std::string kind_of(mode_t m) {
  if (S_ISDIR(m)) return "a directory";
  if (S_ISCHR(m)) return "a character device";
  if (S_ISBLK(m)) return "a block device";
  if (S_ISFIFO(m)) return "a FIFO";
  if (S_ISSOCK(m)) return "a socket";
  return "not a regular file";
}

/// Removes the temporary siblings of `target` that a writer killed before its rename left
/// behind (`.NAME.tmp.<pid>` whose process is gone).
void remove_stale_temps(const fs::path& target) {
  const fs::path dir = target.parent_path().empty() ? fs::path(".") : target.parent_path();
  const std::string prefix = temp_prefix(target);
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.rfind(prefix, 0) != 0) continue;
    const std::string pid_text = name.substr(prefix.size());
    if (pid_text.empty() || pid_text.find_first_not_of("0123456789") != std::string::npos || pid_text.size() > 9) continue;
    const pid_t pid = static_cast<pid_t>(std::stol(pid_text));
    if (pid == ::getpid() || ::kill(pid, 0) == 0 || errno == EPERM) continue;  // its writer may still run
    std::error_code rm;
    fs::remove(it->path(), rm);
  }
}

}  // namespace

fs::path write_target(const fs::path& path) {
  fs::path target = path;
  struct stat st {};
  if (::lstat(path.c_str(), &st) == 0 && S_ISLNK(st.st_mode)) {
    std::error_code ec;
    const fs::path to = fs::read_symlink(path, ec);
    if (ec) throw IoError("cannot read the link " + path.string() + ": " + ec.message());
    target = to.is_absolute() ? to : path.parent_path() / to;
    if (::lstat(target.c_str(), &st) == 0 && S_ISLNK(st.st_mode))
      throw UsageError(path.string() + ": a link to a link (" + target.string() + "); give the file itself");
  }
  if (::lstat(target.c_str(), &st) == 0 && !S_ISREG(st.st_mode))
    throw UsageError(path.string() + (target == path ? "" : " (a link to " + target.string() + ")") + " is " +
                     kind_of(st.st_mode) + ": railkit writes only regular files (it replaces them whole)");
  return target;
}

void write_file_atomic(const fs::path& path, std::string_view content) {
  const fs::path target = write_target(path);
  remove_stale_temps(target);
  const fs::path tmp = temp_sibling(target);
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
  if (::rename(tmp.c_str(), target.c_str()) != 0) {
    const std::string why = errno_text();
    ::unlink(tmp.c_str());
    throw IoError("cannot rename into " + path.string() + ": " + why);
  }
}

void check_writable(const fs::path& path, std::string_view what) {
  std::error_code ec;
  if (fs::is_directory(path, ec))
    throw UsageError(std::string(what) + " '" + path.string() + "' is a directory, not a file");
  fs::path target;
  try {
    target = write_target(path);
  } catch (const Error& e) {
    throw UsageError(std::string(what) + " " + e.what());
  }
  const fs::path tmp = temp_sibling(target);
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0)
    throw UsageError(std::string(what) + " '" + path.string() + "' cannot be written: " + errno_text());
  ::close(fd);
  ::unlink(tmp.c_str());
}

int read_fd(int fd, std::uint64_t max_bytes, std::string& out) {
  char buf[65536];
  const std::size_t start = out.size();
  while (out.size() - start <= max_bytes) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    if (n == 0) break;
    out.append(buf, static_cast<std::size_t>(n));
  }
  return 0;
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
  const int err = read_fd(fd, max_bytes, data);
  ::close(fd);
  if (err != 0) throw IoError("cannot read " + path.string() + ": " + std::strerror(err));
  if (data.size() > max_bytes)
    throw UsageError(fmt::format("{}: more than {} MiB; not a file railkit reads", path.string(), max_bytes >> 20));
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
  const int err = read_fd(fd, max_bytes, data);
  ::close(fd);
  if (err != 0) return std::nullopt;
  if (data.size() > max_bytes) data.resize(max_bytes);
  return data;
}

}  // namespace railkit
