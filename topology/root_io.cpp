#include "topology/root_io.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <vector>

#include <fmt/format.h>

#include "core/atomic_file.hpp"

namespace railkit::topo {
namespace fs = std::filesystem;

namespace {

/// The failure of a system call that failed with `err`.
RootIoFailure errno_failure(int err) { return {std::strerror(err), err == EACCES || err == EPERM}; }

/// Whether `fd` is a regular file (sysfs and debugfs attributes are; a FIFO or device planted in
/// a --root tree is not, and would block or swallow the write).
bool regular(int fd) {
  struct stat st {};
  return ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
}

/// An fd opened by open_under_root, or why not.
struct Opened {
  int fd = -1;
  RootIoFailure failure;
};

/// Why opening `name` in `dir` failed with `err`: a symlink there is named as such.
RootIoFailure open_failure(int dir, const fs::path& name, int err) {
  struct stat st {};
  if (::fstatat(dir, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode))
    return {fmt::format("{} is a symlink (not followed)", name.string()), false};
  return errno_failure(err);
}

/// Opens `rel` under `root` with `flags`: every directory with O_NOFOLLOW relative to the previous
/// one, then the file itself (O_NOFOLLOW, O_NONBLOCK), refusing "..".
Opened open_under_root(const fs::path& root, const fs::path& rel, int flags) {
  std::vector<fs::path> parts;
  for (const auto& c : rel.relative_path())
    if (!c.empty() && c != ".") parts.push_back(c);
  if (parts.empty()) return {-1, {"an empty path", false}};
  int dir = ::open(root.empty() ? "." : root.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (dir < 0) return {-1, {fmt::format("cannot open the root: {}", std::strerror(errno)), false}};
  for (std::size_t i = 0; i < parts.size(); ++i) {
    if (parts[i] == "..") {
      ::close(dir);
      return {-1, {"'..' in the path", false}};
    }
    const bool last = i + 1 == parts.size();
    const int next = last ? ::openat(dir, parts[i].c_str(), flags | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
                          : ::openat(dir, parts[i].c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (next < 0) {
      const int err = errno;
      Opened out{-1, open_failure(dir, parts[i], err)};
      ::close(dir);
      return out;
    }
    ::close(dir);
    dir = next;
  }
  return {dir, {}};
}

/// Pushes the components of `p` onto `todo` so that the first is resolved next (todo.back()).
void push_components(std::vector<fs::path>& todo, const fs::path& p) {
  std::vector<fs::path> parts(p.begin(), p.end());
  for (auto it = parts.rbegin(); it != parts.rend(); ++it) todo.push_back(*it);
}

}  // namespace

RootRead read_under_root(const fs::path& root, const fs::path& rel, std::size_t max_bytes) {
  Opened o = open_under_root(root, rel, O_RDONLY);
  if (o.fd < 0) return {std::nullopt, std::move(o.failure)};
  if (!regular(o.fd)) {
    ::close(o.fd);
    return {std::nullopt, {"not a regular file", false}};
  }
  std::string data;
  const int err = read_fd(o.fd, max_bytes, data);
  ::close(o.fd);
  if (err != 0) return {std::nullopt, {std::strerror(err), false}};
  return {std::move(data), {}};
}

std::optional<RootIoFailure> write_under_root(const fs::path& root, const fs::path& rel, std::string_view data) {
  Opened o = open_under_root(root, rel, O_WRONLY | O_TRUNC);
  if (o.fd < 0) return std::move(o.failure);
  if (!regular(o.fd)) {
    ::close(o.fd);
    return RootIoFailure{"not a regular file", false};
  }
  ssize_t n = 0;
  do {
    n = ::write(o.fd, data.data(), data.size());
  } while (n < 0 && errno == EINTR);
  int err = n < 0 ? errno : 0;
  if (::close(o.fd) != 0 && err == 0) err = errno;
  if (err != 0) return errno_failure(err);
  if (static_cast<std::size_t>(n) != data.size()) return RootIoFailure{"short write", false};
  return std::nullopt;
}

bool inside_root_lexically(const fs::path& rel) {
  if (rel.empty() || rel.is_absolute()) return false;
  return std::none_of(rel.begin(), rel.end(), [](const fs::path& c) { return c == ".."; });
}

RootResolved resolve_under_root(const fs::path& root_abs, const fs::path& rel) {
  constexpr int kMaxLinks = 40;
  const bool live = root_abs == root_abs.root_path();  // "/": nothing can leave it
  std::vector<fs::path> todo;                          // components still to resolve, the next last
  push_components(todo, rel);
  fs::path done;     // resolved so far, relative to the root, no symlink in it
  std::string link;  // the last link followed, for the message
  int links = 0;
  bool missing = false;
  while (!todo.empty()) {
    const fs::path c = todo.back();
    todo.pop_back();
    if (c.empty() || c == "." || c == "/") continue;
    if (c == "..") {
      if (!done.empty())
        done = done.parent_path();
      else if (!live)
        return {std::nullopt, link.empty() ? "'..' above the root" : fmt::format("symlink {} leaves the root", link)};
      continue;
    }
    const fs::path cand = done / c;
    struct stat st {};
    if (missing || ::lstat((root_abs / cand).c_str(), &st) != 0) {
      missing = true;
      done = cand;
      continue;
    }
    if (!S_ISLNK(st.st_mode)) {
      done = cand;
      continue;
    }
    std::error_code ec;
    const fs::path target = fs::read_symlink(root_abs / cand, ec);
    if (ec || ++links > kMaxLinks)
      return {std::nullopt,
              fmt::format("symlink {}: {}", cand.string(), ec ? ec.message() : "too many levels of symlinks")};
    link = fmt::format("{} -> {}", cand.string(), target.string());
    if (target.is_absolute()) {
      const fs::path r = target.lexically_normal().lexically_relative(root_abs);
      if (r.empty() || *r.begin() == "..") return {std::nullopt, fmt::format("symlink {} leaves the root", link)};
      done.clear();
      push_components(todo, r);
    } else {
      push_components(todo, target);
    }
  }
  return {done, ""};
}

}  // namespace railkit::topo
