#include "topology/sysfs.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <deque>
#include <system_error>

#include "topology/parse.hpp"

namespace railkit::topo {
namespace fs = std::filesystem;

namespace {
constexpr int kMaxSymlinks = 40;
constexpr std::size_t kMaxFileBytes = 1 << 20;
}  // namespace

SysfsReader::SysfsReader(SysRoot root) : root_(std::move(root)) {}

std::optional<fs::path> SysfsReader::resolve(const fs::path& rel) const {
  std::vector<std::string> done;
  std::deque<std::string> todo;
  for (const auto& c : rel.relative_path()) todo.push_back(c.string());
  int links = 0;
  fs::path cur = root_.dir;
  while (!todo.empty()) {
    std::string c = std::move(todo.front());
    todo.pop_front();
    if (c.empty() || c == ".") continue;
    if (c == "..") {
      if (!done.empty()) {
        done.pop_back();
        cur = cur.parent_path();
      }
      continue;
    }
    const fs::path next = cur / c;
    std::error_code ec;
    const auto st = fs::symlink_status(next, ec);
    if (ec || st.type() == fs::file_type::not_found) return std::nullopt;
    if (st.type() == fs::file_type::symlink) {
      if (++links > kMaxSymlinks) return std::nullopt;
      const fs::path target = fs::read_symlink(next, ec);
      if (ec) return std::nullopt;
      std::vector<std::string> parts;
      for (const auto& p : target.relative_path()) parts.push_back(p.string());
      if (target.is_absolute()) {
        done.clear();
        cur = root_.dir;
      }
      todo.insert(todo.begin(), parts.begin(), parts.end());
    } else {
      done.push_back(c);
      cur = next;
    }
  }
  fs::path out;
  for (const auto& d : done) out /= d;
  return out;
}

namespace {

// Reads at most kMaxFileBytes of a file with plain POSIX calls (sysfs attributes are small).
std::optional<std::string> read_small(const fs::path& p) {
  const int fd = ::open(p.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
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
    data.append(buf, static_cast<size_t>(n));
    if (data.size() >= kMaxFileBytes) break;
  }
  ::close(fd);
  return data;
}

}  // namespace

std::optional<fs::path> SysfsReader::resolve_file(const fs::path& rel) const {
  const fs::path parent = rel.parent_path();
  auto it = dir_cache_.find(parent.native());
  if (it == dir_cache_.end()) it = dir_cache_.emplace(parent.native(), resolve(parent)).first;
  if (!it->second) return std::nullopt;
  const fs::path candidate = *it->second / rel.filename();
  std::error_code ec;
  const auto st = fs::symlink_status(abs(candidate), ec);
  if (ec || st.type() == fs::file_type::not_found) return std::nullopt;
  if (st.type() == fs::file_type::symlink) return resolve(candidate);
  return candidate;
}

std::optional<std::string> SysfsReader::text(const fs::path& rel) const {
  auto r = resolve_file(rel);
  if (!r) return std::nullopt;
  auto data = read_small(abs(*r));
  if (!data) return std::nullopt;
  return trim(*data);
}

std::optional<std::vector<std::uint8_t>> SysfsReader::bytes(const fs::path& rel) const {
  auto r = resolve_file(rel);
  if (!r) return std::nullopt;
  auto data = read_small(abs(*r));
  if (!data) return std::nullopt;
  return std::vector<std::uint8_t>(data->begin(), data->end());
}

std::vector<std::string> SysfsReader::list(const fs::path& rel) const {
  std::vector<std::string> out;
  auto r = resolve_file(rel);
  if (!r) return out;
  std::error_code ec;
  fs::directory_iterator it(abs(*r), ec);
  if (ec) return out;
  for (const auto& e : it) out.push_back(e.path().filename().string());
  std::sort(out.begin(), out.end(), [](const std::string& a, const std::string& b) { return natural_less(a, b); });
  return out;
}

bool SysfsReader::exists(const fs::path& rel) const { return resolve_file(rel).has_value(); }

void SysfsReader::problem(const fs::path& rel, std::string_view subject, bool missing, std::string_view what) {
  Finding f;
  f.check = missing ? "input.unreadable" : "input.garbled";
  f.severity = Severity::Warning;
  f.subject = std::string(subject);
  f.message = std::string(missing ? "cannot read " : "cannot parse ") + rel.string() +
              (what.empty() ? std::string() : " (" + std::string(what) + ")") + "; the value is reported as unknown";
  f.fix = missing ? "capture the file (scripts/capture-node.sh) or check permissions"
                  : "check the driver; the file content is not in the expected format";
  problems_.push_back(std::move(f));
}

}  // namespace railkit::topo
