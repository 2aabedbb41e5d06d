#pragma once
// The plugin's process-wide part: the settings read at the first init, the communicators that are
// open, the writer thread (started at the first init, joined at the last finalize), and the
// switch that turns recording off after an internal error. NCCL's plugin ABI gives no place to
// hold these but the library itself, so this is the one process-wide object (never destroyed:
// the library is linked -z nodelete, so a writer stuck in a write can never outlive its code).
#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "monitor/plugin/format.hpp"
#include "monitor/plugin/recorder.hpp"

namespace railkit::monitor_plugin {

/// Reads the environment (README "Environment"). Returns an empty string, or the one line that
/// says which variable is wrong.
std::string read_config(Config& cfg);

class Process {
 public:
  /// The process's one instance.
  static Process& get();

  /// Registers a new communicator's context; the first call reads the environment and starts the
  /// writer. Returns null (and logs one line) when the plugin cannot run.
  Context* open(CommInfo info) noexcept;
  /// Flushes the communicator's last (partial) window, unregisters and frees it; the last one
  /// stops the writer.
  void close(Context* ctx) noexcept;
  /// False once an internal error turned recording off.
  bool enabled() const noexcept { return enabled_.load(std::memory_order_relaxed); }
  /// Turns recording off with one WARN line (only the first call logs).
  void fail(const char* what) noexcept;
  /// True when `p` is a context this process opened and has not closed.
  bool known(const void* p) const noexcept;
  /// This process's id (PXN: a ProxyOp of another process must not be dereferenced).
  int pid() const noexcept { return pid_.load(std::memory_order_relaxed); }

 private:
  struct Entry {
    std::unique_ptr<Context> ctx;
    CommInfo info;  ///< as of the last swap (writer-owned)
    Totals totals;
    std::uint64_t index = 0;
    std::uint64_t callbacks_seen = 0;
    std::uint64_t drops_seen = 0;
    int drop_streak = 0;
    bool closing = false, closed = false;
  };

  void log(int level, const char* fmt, const char* arg) noexcept;
  bool start_writer();
  void writer_loop();
  void write_window(Entry& e, std::int64_t now_ns, std::int64_t now_unix_ns, std::string& lines);
  void write_outputs(const std::string& lines, const std::vector<Entry*>& entries, std::int64_t now_unix_ns);

  mutable std::mutex mu_;
  std::condition_variable cv_;
  Config cfg_;
  bool configured_ = false, config_error_logged_ = false;
  std::atomic<bool> enabled_{true};
  std::atomic<nccl_prof_abi::Logger> logger_{nullptr};
  std::vector<std::unique_ptr<Entry>> entries_;
  static constexpr int kMaxContexts = 256;
  std::atomic<const void*> known_[kMaxContexts] = {};
  std::atomic<int> known_end_{0};  // slots at and past this index are empty
  std::atomic<int> pid_{0};
  /// Closed communicators' last totals: the textfile keeps their series (writer-owned).
  struct Retired {
    CommInfo info;
    Totals totals;
  };
  static constexpr std::size_t kMaxRetired = 256;
  std::vector<Retired> retired_;
  std::thread writer_;
  bool stop_ = false, writer_done_ = false, joining_ = false, kick_ = false, disabled_written_ = false;
  std::uint64_t jsonl_writes_ = 0;
};

}  // namespace railkit::monitor_plugin
