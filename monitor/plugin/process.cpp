// The process-wide part of the plugin (process.hpp): settings, registry, writer thread.
#include "monitor/plugin/process.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace railkit::monitor_plugin {
namespace {

const char* env_value(const char* name) {
  const char* v = std::getenv(name);
  return v && *v ? v : nullptr;
}

std::vector<std::string> split_list(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::size_t from = 0;
  while (from <= s.size()) {
    const std::size_t to = std::min(s.find(sep, from), s.size());
    out.push_back(s.substr(from, to - from));
    from = to + 1;
  }
  return out;
}

/// NCCL_IB_HCA's device names in order ("=mlx5_0:1,mlx5_1" -> mlx5_0, mlx5_1); none for "^..." lists.
std::vector<std::string> ib_hca_names(const char* v) {
  if (!v || *v == '^') return {};
  std::string s = v;
  if (!s.empty() && s[0] == '=') s.erase(0, 1);
  std::vector<std::string> names;
  for (std::string n : split_list(s, ',')) {
    n = n.substr(0, n.find(':'));
    if (!n.empty()) names.push_back(n);
  }
  return names;
}

std::string read_dir(Config& cfg) {
  const char* dir = env_value("RAILKIT_MONITOR_DIR");
  if (!dir) return "RAILKIT_MONITOR_DIR is not set";
  struct stat st{};
  if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) return std::string("RAILKIT_MONITOR_DIR=") + dir + ": not a directory";
  if (access(dir, W_OK | X_OK) != 0) return std::string("RAILKIT_MONITOR_DIR=") + dir + ": not writable";
  cfg.dir = dir;
  return {};
}

std::string read_numbers(Config& cfg) {
  if (const char* v = env_value("RAILKIT_MONITOR_WINDOW_S")) {
    char* end = nullptr;
    const double s = std::strtod(v, &end);
    if (*end || !(s >= 0.05 && s <= 3600))
      return std::string("RAILKIT_MONITOR_WINDOW_S=") + v + ": expected seconds from 0.05 to 3600";
    cfg.window_s = s;
  }
  if (const char* v = env_value("RAILKIT_MONITOR_SAMPLES")) {
    char* end = nullptr;
    const long n = std::strtol(v, &end, 10);
    if (*end || n < 0 || n > kMaxSamples)
      return std::string("RAILKIT_MONITOR_SAMPLES=") + v + ": expected an integer from 0 to " + std::to_string(kMaxSamples);
    cfg.samples = static_cast<int>(n);
  }
  if (const char* v = env_value("RAILKIT_MONITOR_SOURCE")) {
    if (std::strcmp(v, "nccl") != 0 && std::strcmp(v, "simulated") != 0)
      return std::string("RAILKIT_MONITOR_SOURCE=") + v + ": expected nccl or simulated";
    cfg.source = v;
  }
  return {};
}

void read_identity(Config& cfg) {
  for (const char* name : {"RAILKIT_MONITOR_JOB", "SLURM_JOB_ID", "PMIX_NAMESPACE", "OMPI_MCA_orte_ess_jobid"}) {
    if (const char* v = env_value(name)) {
      cfg.job = v;
      break;
    }
  }
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  cfg.host = host;
  cfg.pid = static_cast<int>(getpid());
  for (const char* name : {"OMPI_COMM_WORLD_LOCAL_RANK", "SLURM_LOCALID", "LOCAL_RANK"}) {
    if (const char* v = env_value(name)) {
      char* end = nullptr;
      const long r = std::strtol(v, &end, 10);
      if (!*end && r >= 0 && r < 1 << 20) cfg.local_rank = static_cast<int>(r);
      break;
    }
  }
  std::vector<std::string> gpus;
  if (const char* v = env_value("CUDA_VISIBLE_DEVICES")) gpus = split_list(v, ',');
  if (cfg.local_rank >= 0 && static_cast<std::size_t>(cfg.local_rank) < gpus.size()) {
    cfg.gpu = gpus[cfg.local_rank];
  } else if (gpus.size() == 1) {
    cfg.gpu = gpus[0];
  } else if (cfg.local_rank >= 0) {
    cfg.gpu = std::to_string(cfg.local_rank);
  }
  cfg.nic_names = ib_hca_names(env_value("NCCL_IB_HCA"));
  if (const char* v = env_value("RAILKIT_MONITOR_FAULT")) cfg.fault = v;
}

}  // namespace

std::string read_config(Config& cfg) {
  std::string err = read_dir(cfg);
  if (err.empty()) err = read_numbers(cfg);
  if (err.empty()) read_identity(cfg);
  return err;
}

Process& Process::get() {
  static Process* p = new Process;  // never destroyed (see process.hpp)
  return *p;
}

void Process::log(int level, const char* fmt, const char* arg) noexcept {
  char msg[768];
  std::snprintf(msg, sizeof msg, fmt, arg);
  if (auto logger = logger_.load()) {
    logger(static_cast<nccl_prof_abi::LogLevel>(level), nccl_prof_abi::kSubsysInit, __FILE__, __LINE__,
           "PROFILER/railkit: %s", msg);
  } else {
    std::fprintf(stderr, "NCCL %s PROFILER/railkit: %s\n", level == nccl_prof_abi::kLogWarn ? "WARN" : "INFO", msg);
  }
}

void Process::fail(const char* what) noexcept {
  if (enabled_.exchange(false)) log(nccl_prof_abi::kLogWarn, "%s; recording is off for this process", what);
}

bool Process::known(const void* p) const noexcept {
  if (!p) return false;
  const int end = known_end_.load(std::memory_order_acquire);
  for (int i = 0; i < end; ++i)
    if (known_[i].load(std::memory_order_relaxed) == p) return true;
  return false;
}

Context* Process::open(CommInfo info) noexcept {
  std::unique_lock lk(mu_);
  cv_.wait(lk, [&] { return !joining_; });  // a writer being stopped finishes first
  if (info.log && !logger_.load()) logger_ = info.log;
  try {
    if (entries_.empty() && !writer_.joinable()) configured_ = false;  // nothing open: read afresh
    if (!configured_) {
      cfg_ = Config{};
      const std::string err = read_config(cfg_);
      if (!err.empty()) {  // one line per process, not one per communicator
        if (!config_error_logged_) log(nccl_prof_abi::kLogWarn, "%s; NCCL runs without this profiler", err.c_str());
        config_error_logged_ = true;
        return nullptr;
      }
      configured_ = true;
    }
    if (!enabled()) return nullptr;
    PoolSizes sizes;
    if (cfg_.fault == "tiny_pools") sizes = PoolSizes{1, 1, 1, 1, 1};
    auto entry = std::make_unique<Entry>();
    entry->ctx = std::make_unique<Context>(info, sizes, cfg_.samples, static_cast<std::uint64_t>(unix_ns()));
    Context* ctx = entry->ctx.get();
    entry->info = info;
    auto slot = std::find_if(std::begin(known_), std::end(known_), [](const auto& k) { return k.load() == nullptr; });
    if (slot == std::end(known_)) {
      log(nccl_prof_abi::kLogWarn, "%s", "more than 256 communicators open; this one is not profiled");
      return nullptr;
    }
    if (!writer_.joinable() && !start_writer()) return nullptr;
    slot->store(ctx);
    const int index = static_cast<int>(slot - std::begin(known_));
    if (index >= known_end_.load()) known_end_.store(index + 1, std::memory_order_release);
    pid_.store(cfg_.pid);
    entries_.push_back(std::move(entry));
    return ctx;
  } catch (...) {
    log(nccl_prof_abi::kLogWarn, "%s", "out of memory at init; this communicator is not profiled");
    return nullptr;
  }
}

bool Process::start_writer() {
  stop_ = writer_done_ = false;
  try {
    writer_ = std::thread([this] { writer_loop(); });
  } catch (...) {
    log(nccl_prof_abi::kLogWarn, "%s", "cannot start the writer thread; NCCL runs without this profiler");
    return false;
  }
  return true;
}

void Process::close(Context* ctx) noexcept {
  std::unique_lock lk(mu_);
  auto it = std::find_if(entries_.begin(), entries_.end(), [&](const auto& e) { return e->ctx.get() == ctx; });
  if (it == entries_.end()) return;
  Entry* e = it->get();
  e->closing = true;
  kick_ = true;
  cv_.notify_all();
  const bool flushed = cv_.wait_for(lk, std::chrono::seconds(5), [&] { return e->closed || writer_done_; });
  for (auto& k : known_)
    if (k.load() == ctx) k.store(nullptr);
  if (flushed && e->closed) {
    entries_.erase(std::find_if(entries_.begin(), entries_.end(), [&](const auto& x) { return x.get() == e; }));
  } else {
    fail("the writer did not flush a closing communicator within 5 s");  // its memory stays with the writer
  }
  if (!entries_.empty() || !writer_.joinable()) return;
  // The last communicator: stop the writer. Only this thread joins it (it moves the thread out).
  stop_ = true;
  joining_ = true;
  cv_.notify_all();
  const bool done = cv_.wait_for(lk, std::chrono::seconds(5), [&] { return writer_done_; });
  std::thread writer = std::move(writer_);
  lk.unlock();
  if (done) {
    writer.join();
  } else {
    writer.detach();  // stuck in a write; the library stays mapped (-z nodelete)
  }
  lk.lock();
  joining_ = false;
  cv_.notify_all();
}

}  // namespace railkit::monitor_plugin
