// The writer thread of Process (process.hpp): at each window end (multiples of the window length
// in Unix time) it swaps every communicator's window, appends one JSON line per communicator with
// one write() each (O_APPEND: lines of several processes never interleave) and rewrites the
// textfile atomically (temp file, rename). A closing communicator's last window is written at once.
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>

#include "monitor/plugin/process.hpp"

namespace railkit::monitor_plugin {
namespace {

bool write_fully(int fd, const char* p, std::size_t n) {
  while (n > 0) {
    const ssize_t w = ::write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    p += w;
    n -= static_cast<std::size_t>(w);
  }
  return true;
}

std::string file_base(const Config& cfg) {
  return cfg.dir + "/railkit-nccl-" + cfg.host + "-" + std::to_string(cfg.pid);
}

/// Writes `text` to `path` atomically; the error text, or empty. The temporary is a new file
/// (O_EXCL|O_NOFOLLOW): in a shared directory a link planted at its name is never written through;
/// a name taken is retried with the next counter value.
std::string replace_file(const std::string& path, const std::string& text) {
  std::string tmp;
  int fd = -1;
  for (unsigned attempt = 0; fd < 0 && attempt < 16; ++attempt) {
    tmp = path + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(attempt);
    fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd < 0 && errno != EEXIST) break;
  }
  if (fd < 0) return "cannot write " + tmp + ": " + std::strerror(errno);
  const bool ok = write_fully(fd, text.data(), text.size());
  const int err = errno;
  ::close(fd);
  if (!ok) return "cannot write " + tmp + ": " + std::strerror(err);
  if (::rename(tmp.c_str(), path.c_str()) != 0) return "cannot rename " + tmp + ": " + std::strerror(errno);
  return {};
}

}  // namespace

void Process::writer_loop() {
  std::unique_lock lk(mu_);
  const auto window_ns = static_cast<std::int64_t>(cfg_.window_s * 1e9);
  std::int64_t boundary = (unix_ns() / window_ns + 1) * window_ns;
  for (;;) {
    cv_.wait_for(lk, std::chrono::nanoseconds(std::max<std::int64_t>(boundary - unix_ns(), 0)),
                 [&] { return stop_ || kick_; });
    const bool tick = unix_ns() >= boundary;
    if (tick) boundary = (unix_ns() / window_ns + 1) * window_ns;
    kick_ = false;
    std::vector<Entry*> all, todo;
    for (auto& e : entries_) {
      if (e->closed) continue;  // its closer frees it without waiting for this loop
      all.push_back(e.get());
      if (tick || (e->closing && !e->closed)) todo.push_back(e.get());
    }
    const bool stopping = stop_;
    lk.unlock();
    if (!todo.empty()) {
      const std::int64_t now_ns = monotonic_ns(), now_unix = unix_ns();
      std::string lines;
      if (enabled())
        for (Entry* e : todo) write_window(*e, now_ns, now_unix, lines);
      write_outputs(lines, all, now_unix);
    }
    lk.lock();
    for (Entry* e : todo) {
      if (!e->closing) continue;
      e->closed = true;
      retired_.push_back(Retired{e->info, e->totals});  // its series stay in the textfile
      if (retired_.size() > kMaxRetired) retired_.erase(retired_.begin());
    }
    cv_.notify_all();
    if (stopping) break;
  }
  writer_done_ = true;
  cv_.notify_all();
}

void Process::write_window(Entry& e, std::int64_t now_ns, std::int64_t now_unix_ns, std::string& lines) {
  InflightSummary inflight;
  Context& ctx = *e.ctx;
  const Window& w = ctx.swap(now_ns, now_unix_ns, inflight, e.info);
  const std::uint64_t callbacks = ctx.callbacks(), drops = ctx.pool_drops();
  e.drop_streak = drops > e.drops_seen ? e.drop_streak + 1 : 0;
  e.drops_seen = drops;
  e.totals.add(w, e.info.nranks);
  const double age_s = inflight.count ? double(now_ns - inflight.oldest_start_ns) / 1e9 : 0;
  e.totals.inflight_oldest_age_s = age_s;
  WindowView v{e.info, w, inflight, e.index++, now_unix_ns, age_s, callbacks - e.callbacks_seen,
               e.totals.last_completion_unix_ns};
  e.callbacks_seen = callbacks;
  append_window_json(lines, cfg_, v);
  if (e.drop_streak >= 3) fail("event pools full in 3 windows in a row");
}

void Process::write_outputs(const std::string& lines, const std::vector<Entry*>& entries, std::int64_t now_unix_ns) {
  const std::string base = file_base(cfg_);
  if (!lines.empty() && enabled()) {
    const std::string path = base + ".jsonl";
    const bool inject = cfg_.fault == "jsonl_write" && jsonl_writes_ >= 1;  // tests: the second write fails
    const int fd = inject ? -1 : ::open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
    bool ok = fd >= 0;
    for (std::size_t from = 0; ok && from < lines.size();) {  // one write() per line
      const std::size_t to = lines.find('\n', from) + 1;
      ok = write_fully(fd, lines.data() + from, to - from);
      from = to;
    }
    const int err = inject ? EIO : errno;
    if (fd >= 0) ::close(fd);
    ++jsonl_writes_;
    if (!ok) fail(("cannot append to " + path + ": " + std::strerror(err)).c_str());
  }
  if (!enabled() && disabled_written_) return;
  std::vector<PromComm> comms;
  for (const Retired& r : retired_) comms.push_back(PromComm{&r.info, &r.totals});
  for (Entry* e : entries) comms.push_back(PromComm{&e->info, &e->totals});
  const std::string err = replace_file(base + ".prom", prom_text(cfg_, comms, enabled(), double(now_unix_ns) / 1e9));
  if (!err.empty()) fail(err.c_str());
  if (!enabled()) disabled_written_ = true;
}

}  // namespace railkit::monitor_plugin
