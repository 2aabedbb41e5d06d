#include "tuner/journal.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "core/atomic_file.hpp"
#include "core/error.hpp"

namespace railkit::tuner {

std::vector<nlohmann::json> read_journal(const std::filesystem::path& path) {
  const std::string text = read_file(path);
  std::vector<nlohmann::json> lines;
  size_t pos = 0, good_end = 0;
  int lineno = 0;
  while (pos < text.size()) {
    const size_t nl = text.find('\n', pos);
    ++lineno;
    const bool complete = nl != std::string::npos;
    const std::string line = text.substr(pos, complete ? nl - pos : std::string::npos);
    const size_t next = complete ? nl + 1 : text.size();
    nlohmann::json j;
    bool parsed = true;
    try {
      j = nlohmann::json::parse(line);
    } catch (const nlohmann::json::parse_error&) {
      parsed = false;
    }
    if (!parsed || !complete || !j.is_object()) {
      if (next < text.size() || (complete && parsed))  // a broken line before the end
        throw UsageError(fmt::format("{}:{}: not a journal line (JSON object per line)", path.string(), lineno));
      break;  // the torn last line of an interrupted write
    }
    lines.push_back(std::move(j));
    pos = next;
    good_end = next;
  }
  if (lines.empty() || lines.front().value("type", "") != "session" || lines.front().value("schema", "") != kJournalSchema)
    throw UsageError(path.string() + ": not a railkit tuning journal (the first line must be a " + kJournalSchema + " session)");
  if (good_end < text.size()) {
    if (::truncate(path.c_str(), static_cast<off_t>(good_end)) != 0)
      throw IoError(fmt::format("{}: cannot drop its torn last line: {}", path.string(), std::strerror(errno)));
  }
  return lines;
}

void append_journal(const std::filesystem::path& path, const nlohmann::ordered_json& line) {
  const std::string text = line.dump() + "\n";
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) throw IoError(fmt::format("{}: cannot open for appending: {}", path.string(), std::strerror(errno)));
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      const int e = errno;
      ::close(fd);
      throw IoError(fmt::format("{}: write failed: {}", path.string(), std::strerror(e)));
    }
    done += static_cast<size_t>(n);
  }
  if (::fsync(fd) != 0) {
    const int e = errno;
    ::close(fd);
    throw IoError(fmt::format("{}: fsync failed: {}", path.string(), std::strerror(e)));
  }
  ::close(fd);
}

}  // namespace railkit::tuner
