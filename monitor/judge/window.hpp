#pragma once
// The profiler plugin's windows (`railkit.monitor.window/1`, monitor/README.md section 1) as the
// judge reads them, and the streaming reader of the directories that hold them.
#include <cstdint>
#include <deque>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace railkit::monitor {

inline constexpr const char* kWindowSchema = "railkit.monitor.window/1";

/// One (op, bytes, algo, proto) bucket of a window: what the judge uses of it.
struct WindowColl {
  std::string op;
  std::uint64_t bytes = 0;
  std::uint64_t count = 0;
  double time_p50_us = 0;  ///< median collective time in the window, microseconds
};

/// One collective with its own start time, for the alignment across ranks by (comm, op, seq).
struct WindowSample {
  std::string op;
  std::uint64_t seq = 0;
  std::int64_t start_unix_ns = 0;  ///< this host's clock
  double time_us = 0;
};

/// A NIC's proxy traffic in the window (net-plugin events).
struct WindowNic {
  int device = 0;
  std::string name;  ///< "mlx5_0", or "dev<device>" when the plugin could not name it
  double bytes = 0;
  double busy_us = 0;
};

/// Collectives started and not completed at the window's end.
struct WindowInflight {
  std::uint64_t count = 0;
  std::uint64_t oldest_seq = 0;
  std::string oldest_op;
  double oldest_age_s = 0;  ///< age of the oldest at the window's end
};

/// One line of a plugin's .jsonl: one communicator of one rank over one window.
struct Window {
  std::string source = "nccl";  ///< "nccl" or "simulated"
  std::string job, host, comm, comm_name, gpu;
  long long pid = 0;
  int rank = 0, nranks = 0, local_rank = -1;
  long long index = 0;
  double start_unix_s = 0, end_unix_s = 0;
  std::vector<WindowColl> colls;
  std::vector<WindowSample> samples;
  std::vector<WindowNic> nics;
  WindowInflight inflight;
  std::optional<double> last_completion_unix_s;
  std::uint64_t dropped_events = 0, dropped_samples = 0;
  std::string where;  ///< "file:line"
  bool simulated() const { return source == "simulated"; }
};

/// A parsed window line. Throws UsageError naming `where` and the field for a line of the
/// window schema with a missing or mistyped field; the schema itself is checked by the caller.
Window parse_window(const nlohmann::json& j, std::string_view where);

/// The windows of one rank of one communicator (one process), oldest first; at most the last
/// `ReadOptions::keep_windows` of them are kept.
struct RankStream {
  std::deque<Window> windows;
  std::uint64_t seen = 0;  ///< windows read, kept or not
};

/// Key of a RankStream: job, communicator, rank.
struct StreamKey {
  std::string job, comm;
  int rank = 0;
  auto operator<=>(const StreamKey&) const = default;
};

/// What the reader takes.
struct ReadOptions {
  std::size_t keep_windows = 30;                      ///< last windows kept per rank and communicator
  std::size_t max_line_bytes = std::size_t{8} << 20;  ///< a longer line is reported and skipped
  std::size_t max_streams = std::size_t{1} << 16;     ///< (job, comm, rank) streams kept in all
  std::uint64_t tail_bytes = std::uint64_t{64} << 20; ///< of a larger file only its last bytes are read
  std::size_t max_samples_per_window = 1024;          ///< samples kept per window
  std::size_t max_problems = 200;                     ///< problem lines kept (the rest are counted)
};

/// Every window read from the directories, and what could not be read.
struct Corpus {
  std::map<StreamKey, RankStream> streams;
  std::vector<std::string> problems;  ///< "file:line: what", one per problem kept
  std::uint64_t problems_dropped = 0;
  std::uint64_t files = 0, lines = 0, windows = 0;
  std::vector<std::string> dirs;
};

/// Reads every `*.jsonl` directly in each of `dirs` (sorted by name), line by line with bounded
/// memory (of a file larger than `tail_bytes` only the lines that start in its last tail_bytes are
/// parsed; the others are counted and reported as one problem): a line of another schema, a line that is not JSON (a torn last line among them) or a
/// window with a bad field is a problem naming file:line, not an error. Throws UsageError naming
/// the directory when it is not a readable directory, IoError when a file cannot be read, and
/// UsageError when no window at all was found.
Corpus read_windows(const std::vector<std::filesystem::path>& dirs, const ReadOptions& opts = {});

/// Adds one line's text (without its newline) to `c`, as read_windows does: exposed for tests.
/// `last_without_newline`: the file ended without a newline after this line (a torn line when it
/// does not parse).
void add_window_line(Corpus& c, std::string_view text, const std::string& where, bool last_without_newline,
                     const ReadOptions& opts);

}  // namespace railkit::monitor
