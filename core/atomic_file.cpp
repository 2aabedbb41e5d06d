#include "core/atomic_file.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <random>
#include <sstream>
#include <string>

#include <fmt/format.h>

#include "core/error.hpp"

namespace railkit {
namespace fs = std::filesystem;

namespace {

std::string errno_text() { return std::strerror(errno); }

std::string temp_prefix(const fs::path& path) { return "." + path.filename().string() + ".tmp."; }

/// Creates a fresh temporary sibling of `target`, `.NAME.tmp.<pid>.<random>`, for writing: never
/// an entry that is already there, and never through a symlink (O_EXCL|O_NOFOLLOW; a link planted
/// at a predictable name in a shared directory made a root writer overwrite the link's target).
/// Returns the descriptor and sets `tmp`; -1 with errno set when none could be created.
int create_temp(const fs::path& target, fs::path& tmp) {
  fs::path dir = target.parent_path();
  if (dir.empty()) dir = ".";
  std::random_device rng;
  for (int attempt = 0; attempt < 64; ++attempt) {
    tmp = dir / fmt::format("{}{}.{:08x}", temp_prefix(target), ::getpid(), rng());
    const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd >= 0 || errno != EEXIST) return fd;
  }
  return -1;  // errno: EEXIST
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
/// behind (`.NAME.tmp.<pid>.<random>`, or an older railkit's `.NAME.tmp.<pid>`, whose process is
/// gone). A symlink of that name is removed, never followed.
void remove_stale_temps(const fs::path& target) {
  const fs::path dir = target.parent_path().empty() ? fs::path(".") : target.parent_path();
  const std::string prefix = temp_prefix(target);
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.rfind(prefix, 0) != 0) continue;
    const std::string rest = name.substr(prefix.size());
    const std::string pid_text = rest.substr(0, rest.find('.'));
    const std::string suffix = rest.size() > pid_text.size() ? rest.substr(pid_text.size() + 1) : "";
    if (pid_text.empty() || pid_text.find_first_not_of("0123456789") != std::string::npos || pid_text.size() > 9) continue;
    if (rest.size() > pid_text.size() &&
        (suffix.empty() || suffix.size() > 16 || suffix.find_first_not_of("0123456789abcdef") != std::string::npos))
      continue;
    const pid_t pid = static_cast<pid_t>(std::stol(pid_text));
    if (pid == ::getpid() || ::kill(pid, 0) == 0 || errno == EPERM) continue;  // its writer may still run
    std::error_code rm;
    fs::remove(it->path(), rm);
  }
}

/// Whether write_target writes through the symlink `path` (its lstat `st`): only a link of this
/// user or of root. Another user's link (planted in /tmp or in a directory that user owns, say)
/// would make a root writer overwrite whatever file the link names.
bool own_link(const struct stat& st) { return st.st_uid == ::geteuid() || st.st_uid == 0; }

}  // namespace

fs::path write_target(const fs::path& path) {
  fs::path target = path;
  struct stat st {};
  if (::lstat(path.c_str(), &st) == 0 && S_ISLNK(st.st_mode)) {
    if (!own_link(st))
      throw UsageError(fmt::format("{}: a symlink of another user (uid {}); railkit writes only through its own "
                                   "links: remove it, or give the file it points to",
                                   path.string(), st.st_uid));
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
  fs::path tmp;
  const int fd = create_temp(target, tmp);
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
  fs::path tmp;
  const int fd = create_temp(target, tmp);
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

namespace {

/// Reads the open `fd` of `path` to its end (at most `max_bytes`) and closes it.
std::string read_and_close(int fd, const fs::path& path, std::uint64_t max_bytes) {
  std::string data;
  const int err = read_fd(fd, max_bytes, data);
  ::close(fd);
  if (err != 0) throw IoError("cannot read " + path.string() + ": " + std::strerror(err));
  if (data.size() > max_bytes)
    throw UsageError(fmt::format("{}: more than {} MiB; not a file railkit reads", path.string(), max_bytes >> 20));
  return data;
}

}  // namespace

std::string read_file(const fs::path& path, std::uint64_t max_bytes) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw IoError("cannot read " + path.string() + ": " + errno_text());
  struct stat st {};
  if (::fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
    ::close(fd);
    throw IoError("cannot read " + path.string() + ": it is a directory");
  }
  return read_and_close(fd, path, max_bytes);
}

std::string read_input_file(const fs::path& path, std::string_view what, std::uint64_t max_bytes) {
  // O_NONBLOCK: opening a FIFO that no one writes would wait for a writer forever.
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) throw IoError("cannot read " + path.string() + ": " + errno_text());
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    const std::string kind = kind_of(st.st_mode);
    throw UsageError(fmt::format("{} '{}': {}", what, path.string(),
                                 kind == "not a regular file" ? kind : "is " + kind + ", not a regular file"));
  }
  if (const int flags = ::fcntl(fd, F_GETFL); flags >= 0) ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
  return read_and_close(fd, path, max_bytes);
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
