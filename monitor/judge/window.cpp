// Reading the plugin's windows: one line at a time, bounded memory per file, problems reported.
#include "monitor/judge/window.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <system_error>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/json_text.hpp"

namespace railkit::monitor {
namespace {

using nlohmann::json;

/// The window sources the plugin writes; anything else is refused (a verdict says which it is).
constexpr std::array<std::string_view, 2> kWindowSources{"nccl", "simulated"};

std::string gpu_text(const json& j, std::string_view where) {
  const auto it = j.find("gpu");
  if (it == j.end() || it->is_null()) return "";
  if (it->is_number_integer()) return std::to_string(it->get<long long>());
  return json_as<std::string>(*it, std::string(where) + ": gpu");
}

std::vector<WindowColl> parse_colls(const json& j, const std::string& where) {
  std::vector<WindowColl> out;
  const json arr = field_opt<json>(j, "colls", where).value_or(json::array());
  if (!arr.is_array()) throw UsageError(where + ": colls must be an array");
  for (std::size_t i = 0; i < arr.size(); ++i) {
    const std::string w = fmt::format("{}: colls[{}]", where, i);
    const json& c = json_object(arr[i], w);
    WindowColl e;
    e.op = field<std::string>(c, "op", w);
    e.bytes = field_opt<std::uint64_t>(c, "bytes", w).value_or(0);
    e.count = field_opt<std::uint64_t>(c, "count", w).value_or(0);
    if (const auto t = c.find("time_us"); t != c.end() && !t->is_null())
      e.time_p50_us = field_opt<double>(json_object(*t, w + ".time_us"), "p50", w + ".time_us").value_or(0);
    out.push_back(std::move(e));
  }
  return out;
}

std::vector<WindowSample> parse_samples(const json& j, const std::string& where, std::size_t max_samples) {
  std::vector<WindowSample> out;
  const json arr = field_opt<json>(j, "samples", where).value_or(json::array());
  if (!arr.is_array()) throw UsageError(where + ": samples must be an array");
  for (std::size_t i = 0; i < arr.size() && out.size() < max_samples; ++i) {
    const std::string w = fmt::format("{}: samples[{}]", where, i);
    const json& s = json_object(arr[i], w);
    WindowSample e;
    e.op = field<std::string>(s, "op", w);
    e.seq = field<std::uint64_t>(s, "seq", w);
    e.start_unix_ns = field<long long>(s, "start_unix_ns", w);
    e.time_us = field<double>(s, "time_us", w);
    out.push_back(std::move(e));
  }
  return out;
}

std::vector<WindowNic> parse_nics(const json& j, const std::string& where) {
  std::vector<WindowNic> out;
  const json arr = field_opt<json>(j, "nics", where).value_or(json::array());
  if (!arr.is_array()) throw UsageError(where + ": nics must be an array");
  for (std::size_t i = 0; i < arr.size(); ++i) {
    const std::string w = fmt::format("{}: nics[{}]", where, i);
    const json& n = json_object(arr[i], w);
    WindowNic e;
    e.device = field_opt<int>(n, "device", w).value_or(0);
    e.name = field_opt<std::string>(n, "name", w).value_or("");
    if (e.name.empty()) e.name = "dev" + std::to_string(e.device);
    e.bytes = field_opt<double>(n, "bytes", w).value_or(0);
    e.busy_us = field_opt<double>(n, "busy_us", w).value_or(0);
    out.push_back(std::move(e));
  }
  return out;
}

void parse_tail(const json& j, const std::string& where, Window& w) {
  if (const auto it = j.find("inflight"); it != j.end() && !it->is_null()) {
    const std::string wi = where + ": inflight";
    const json& f = json_object(*it, wi);
    w.inflight.count = field_opt<std::uint64_t>(f, "count", wi).value_or(0);
    w.inflight.oldest_seq = field_opt<std::uint64_t>(f, "oldest_seq", wi).value_or(0);
    w.inflight.oldest_op = field_opt<std::string>(f, "oldest_op", wi).value_or("");
    w.inflight.oldest_age_s = field_opt<double>(f, "oldest_age_s", wi).value_or(0);
  }
  w.last_completion_unix_s = field_opt<double>(j, "last_completion_unix_s", where);
  if (const auto it = j.find("dropped"); it != j.end() && !it->is_null()) {
    const std::string wd = where + ": dropped";
    w.dropped_events = field_opt<std::uint64_t>(json_object(*it, wd), "events", wd).value_or(0);
    w.dropped_samples = field_opt<std::uint64_t>(*it, "samples", wd).value_or(0);
  }
}

/// Reads `fd` in blocks and hands each line to `on_line(text, line_no, last_without_newline)`;
/// a line longer than `max_line` is reported through `on_long(line_no)` and skipped. The lines
/// that start before byte `skip_bytes` are only counted (on_prefix(count) once they end).
template <typename OnLine, typename OnLong, typename OnPrefix>
void for_each_line(int fd, const std::string& file, std::size_t max_line, std::uint64_t skip_bytes, OnLine on_line,
                   OnLong on_long, OnPrefix on_prefix) {
  std::string buf(std::size_t{1} << 20, '\0');
  std::string line;
  bool skipping = false, prefix = skip_bytes > 0;
  std::uint64_t line_no = 1, pos = 0;
  for (;;) {
    const ssize_t n = ::read(fd, buf.data(), buf.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw IoError(file + ": cannot read: " + std::strerror(errno));
    if (n == 0) break;
    std::string_view rest(buf.data(), static_cast<std::size_t>(n));
    while (!rest.empty()) {
      const std::size_t nl = rest.find('\n');
      if (prefix) {
        if (nl == std::string_view::npos) break;
        ++line_no;
        pos += nl + 1;
        rest.remove_prefix(nl + 1);
        if (pos >= skip_bytes) {
          prefix = false;
          on_prefix(line_no - 1);
        }
        continue;
      }
      const std::string_view part = rest.substr(0, nl);
      if (!skipping && line.size() + part.size() > max_line) {
        skipping = true;
        line.clear();
        line.shrink_to_fit();
        on_long(line_no);
      }
      if (!skipping) line.append(part);
      if (nl == std::string_view::npos) break;
      if (!skipping) on_line(std::string_view(line), line_no, false);
      line.clear();
      skipping = false;
      ++line_no;
      pos += nl + 1;
      rest.remove_prefix(nl + 1);
    }
  }
  if (!skipping && !prefix && !line.empty()) on_line(std::string_view(line), line_no, true);
}

void add_problem(Corpus& c, std::string text, const ReadOptions& opts) {
  if (c.problems.size() < opts.max_problems)
    c.problems.push_back(std::move(text));
  else
    ++c.problems_dropped;
}

void read_one_file(Corpus& c, const std::filesystem::path& file, const ReadOptions& opts) {
  const std::string name = file.string();
  const int fd = ::open(name.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) throw IoError(name + ": cannot open: " + std::strerror(errno));
  ++c.files;
  struct stat st {};
  const std::uint64_t size = ::fstat(fd, &st) == 0 ? static_cast<std::uint64_t>(st.st_size) : 0;
  const std::uint64_t skip = size > opts.tail_bytes ? size - opts.tail_bytes : 0;
  try {
    for_each_line(
        fd, name, opts.max_line_bytes, skip,
        [&](std::string_view text, std::uint64_t no, bool last) {
          add_window_line(c, text, fmt::format("{}:{}", name, no), last, opts);
        },
        [&](std::uint64_t no) {
          ++c.lines;
          add_problem(c, fmt::format("{}:{}: longer than {} bytes: skipped", name, no, opts.max_line_bytes), opts);
        },
        [&](std::uint64_t lines) {
          add_problem(c, fmt::format("{}:1-{}: before the file's last {} bytes: not read (older windows)", name, lines,
                                     opts.tail_bytes), opts);
        });
  } catch (...) {
    ::close(fd);
    throw;
  }
  ::close(fd);
}

std::vector<std::filesystem::path> jsonl_files(const std::filesystem::path& dir) {
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec)) throw UsageError("--dir " + dir.string() + ": not a directory");
  std::vector<std::filesystem::path> out;
  std::filesystem::directory_iterator it(dir, ec);
  if (ec) throw UsageError("--dir " + dir.string() + ": cannot list: " + ec.message());
  for (const auto& e : it) {
    std::error_code fe;
    if (e.path().extension() == ".jsonl" && e.is_regular_file(fe)) out.push_back(e.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

Window parse_window(const json& j, std::string_view where_view) {
  const std::string where(where_view);
  Window w;
  w.where = where;
  w.source = field_opt<std::string>(j, "source", where).value_or("nccl");
  if (std::find(kWindowSources.begin(), kWindowSources.end(), w.source) == kWindowSources.end())
    throw UsageError(where + ": source '" + w.source + "' is not nccl or simulated");
  w.job = field<std::string>(j, "job", where);
  w.host = field<std::string>(j, "host", where);
  w.comm = field<std::string>(j, "comm", where);
  w.comm_name = field_opt<std::string>(j, "comm_name", where).value_or("");
  w.pid = field_opt<long long>(j, "pid", where).value_or(0);
  w.rank = field<int>(j, "rank", where);
  w.nranks = field<int>(j, "nranks", where);
  if (w.rank < 0 || w.nranks <= 0 || w.rank >= w.nranks)
    throw UsageError(fmt::format("{}: rank {} is not in [0, nranks {})", where, w.rank, w.nranks));
  w.gpu = gpu_text(j, where);
  w.local_rank = field_opt<int>(j, "local_rank", where).value_or(-1);
  const std::string ww = where + ": window";
  const json& win = json_member(j, "window", where);
  json_object(win, ww);
  w.index = field_opt<long long>(win, "index", ww).value_or(0);
  w.start_unix_s = field<double>(win, "start_unix_s", ww);
  w.end_unix_s = field<double>(win, "end_unix_s", ww);
  if (!(w.end_unix_s >= w.start_unix_s)) throw UsageError(ww + ": end_unix_s is before start_unix_s");
  w.colls = parse_colls(j, where);
  w.nics = parse_nics(j, where);
  parse_tail(j, where, w);
  return w;
}

void add_window_line(Corpus& c, std::string_view text, const std::string& where, bool last_without_newline,
                     const ReadOptions& opts) {
  ++c.lines;
  if (text.find_first_not_of(" \t\r") == std::string_view::npos) return;
  const json j = parse_json_or_discarded(text);
  if (j.is_discarded() || !j.is_object()) {
    add_problem(c, where + (last_without_newline ? ": torn last line (no newline, not JSON): skipped" : ": not a JSON object: skipped"), opts);
    return;
  }
  const auto schema = j.find("schema");
  if (schema == j.end() || !schema->is_string() || *schema != kWindowSchema) {
    const std::string got = schema == j.end() ? "no schema" : "schema " + json_dump(*schema);
    add_problem(c, where + ": " + got + ", not " + kWindowSchema + ": skipped", opts);
    return;
  }
  Window w;
  try {
    w = with_json_errors(where, [&] { return parse_window(j, where); });
    w.samples = with_json_errors(where, [&] { return parse_samples(j, where, opts.max_samples_per_window); });
  } catch (const UsageError& e) {
    add_problem(c, std::string(e.what()) + ": skipped", opts);
    return;
  }
  StreamKey key{w.job, w.comm, w.rank};
  auto it = c.streams.find(key);
  if (it == c.streams.end()) {
    if (c.streams.size() >= opts.max_streams) {
      add_problem(c, fmt::format("{}: more than {} (job, comm, rank) streams: skipped", where, opts.max_streams), opts);
      return;
    }
    it = c.streams.emplace(std::move(key), RankStream{}).first;
  }
  RankStream& s = it->second;
  ++s.seen;
  ++c.windows;
  // Kept in window-end order: a restarted process or a second file of the same rank interleaves.
  auto pos = std::upper_bound(s.windows.begin(), s.windows.end(), w.end_unix_s,
                              [](double t, const Window& x) { return t < x.end_unix_s; });
  s.windows.insert(pos, std::move(w));
  while (s.windows.size() > opts.keep_windows) s.windows.pop_front();
}

Corpus read_windows(const std::vector<std::filesystem::path>& dirs, const ReadOptions& opts) {
  Corpus c;
  for (const auto& d : dirs) {
    c.dirs.push_back(d.string());
    for (const auto& f : jsonl_files(d)) read_one_file(c, f, opts);
  }
  if (c.windows == 0) {
    std::string dl;
    for (const auto& d : c.dirs) dl += (dl.empty() ? "" : ", ") + d;
    throw UsageError(fmt::format("--dir {}: no {} window in {} .jsonl file{} ({} line{})", dl, kWindowSchema, c.files,
                                 c.files == 1 ? "" : "s", c.lines, c.lines == 1 ? "" : "s"));
  }
  return c;
}

}  // namespace railkit::monitor
