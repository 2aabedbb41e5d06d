#include "topology/sysfs.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <system_error>

#include "core/atomic_file.hpp"
#include "core/strings.hpp"
#include "topology/parse.hpp"

namespace railkit::topo {
namespace fs = std::filesystem;

namespace {
constexpr int kMaxSymlinks = 40;
constexpr std::size_t kMaxFileBytes = 1 << 20;
}  // namespace

SysfsReader::SysfsReader(SysRoot root) : root_(std::move(root)) {}

std::optional<fs::path> SysfsReader::resolve(const fs::path& rel) const {
  int budget = kMaxSymlinks;
  return resolve_impl(rel.relative_path(), budget);
}

// Component-wise and memoized: the parent is resolved (from the cache when seen before), then
// the last component is checked; a symlink is replaced by its target (re-rooted when absolute)
// and resolved again. ".." applies to the resolved parent, so it never leaves the root.
std::optional<fs::path> SysfsReader::resolve_impl(const fs::path& rel, int& budget) const {
  if (rel.empty() || rel == ".") return fs::path();
  if (auto it = cache_.find(rel.native()); it != cache_.end()) return it->second;
  std::optional<fs::path> out;
  const fs::path name = rel.filename();
  auto parent = resolve_impl(rel.parent_path(), budget);
  if (parent) {
    if (name.empty() || name == ".") {
      out = parent;
    } else if (name == "..") {
      out = parent->parent_path();
    } else {
      const fs::path candidate = *parent / name;
      std::error_code ec;
      const auto st = fs::symlink_status(abs(candidate), ec);
      if (!ec && st.type() == fs::file_type::symlink) {
        const fs::path target = fs::read_symlink(abs(candidate), ec);
        if (!ec && --budget >= 0)
          out = resolve_impl(target.is_absolute() ? target.relative_path() : (*parent / target).lexically_normal(), budget);
      } else if (!ec && st.type() != fs::file_type::not_found) {
        out = candidate;
      }
    }
  }
  if (budget < 0) return std::nullopt;  // a symlink loop: do not remember a partial answer
  cache_.emplace(rel.native(), out);
  return out;
}

namespace {

// Reads at most kMaxFileBytes of a regular file, without blocking (a FIFO in a tree is skipped).
// With O_NOFOLLOW a final symlink fails with ELOOP, so the caller can resolve it inside the root.
std::optional<std::string> read_small(const fs::path& p, bool nofollow, bool* is_link) {
  return read_machine_file(p, kMaxFileBytes, nofollow, is_link);
}

}  // namespace

std::optional<std::string> SysfsReader::read(const fs::path& rel) const {
  auto parent = resolve(rel.parent_path());
  if (!parent) return std::nullopt;
  const fs::path candidate = *parent / rel.filename();
  bool is_link = false;
  auto data = read_small(abs(candidate), true, &is_link);
  if (data || !is_link) return data;
  auto r = resolve(candidate);  // the file itself is a symlink: follow it inside the root
  if (!r) return std::nullopt;
  return read_small(abs(*r), true, nullptr);
}

std::optional<std::string> SysfsReader::text(const fs::path& rel) const {
  auto data = read(rel);
  if (!data) return std::nullopt;
  return trim(*data);
}

std::optional<std::vector<std::uint8_t>> SysfsReader::bytes(const fs::path& rel) const {
  auto data = read(rel);
  if (!data) return std::nullopt;
  return std::vector<std::uint8_t>(data->begin(), data->end());
}

std::vector<std::string> SysfsReader::list(const fs::path& rel) const {
  std::vector<std::string> out;
  auto r = resolve(rel);
  if (!r) return out;
  std::error_code ec;
  fs::directory_iterator it(abs(*r), ec);
  if (ec) return out;
  for (const auto& e : it) out.push_back(e.path().filename().string());
  std::sort(out.begin(), out.end(), [](const std::string& a, const std::string& b) { return natural_less(a, b); });
  return out;
}

bool SysfsReader::exists(const fs::path& rel) const { return resolve(rel).has_value(); }

void SysfsReader::problem(const fs::path& rel, std::string_view subject, bool missing, std::string_view what) {
  Finding f;
  f.check = missing ? "input.unreadable" : "input.garbled";
  f.severity = Severity::Warning;
  f.subject = std::string(subject);
  // `what` may quote the file's content: NUL, escapes, a megabyte line are shown escaped and cut.
  f.message = std::string(missing ? "cannot read " : "cannot parse ") + printable(rel.string()) +
              (what.empty() ? std::string() : " (" + printable(what) + ")") + "; the value is reported as unknown";
  f.fix = missing ? "capture the file (scripts/capture-node.sh) or check permissions"
                  : "check the driver; the file content is not in the expected format";
  problems_.push_back(std::move(f));
}

}  // namespace railkit::topo
