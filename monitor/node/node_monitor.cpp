#include "monitor/node/node_monitor.hpp"

#include <signal.h>
#include <time.h>

#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <ostream>
#include <set>

#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "monitor/node/exposition.hpp"
#include "monitor/node/gpu_nvml.hpp"
#include "monitor/node/http_server.hpp"
#include "topology/sysfs.hpp"

namespace railkit::monitor {
namespace fs = std::filesystem;
namespace {

constexpr double kMinIntervalS = 0.05, kMaxIntervalS = 86400;

bool is_live_root(const fs::path& root) {
  std::error_code ec;
  return fs::weakly_canonical(root, ec) == fs::path("/") && !ec;
}

double mono_now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

double unix_now_s() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

// SIGINT and SIGTERM held for the life of the loop and taken with sigtimedwait between samples
// (the HTTP thread, started later, inherits the mask); pending ones are taken before the old
// mask comes back, so a signal that arrived during the last sample does not kill the process.
class HeldSignals {
 public:
  HeldSignals() {
    sigemptyset(&set_);
    sigaddset(&set_, SIGINT);
    sigaddset(&set_, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &set_, &old_);
  }
  ~HeldSignals() {
    const timespec zero{0, 0};
    while (sigtimedwait(&set_, nullptr, &zero) > 0) {
    }
    pthread_sigmask(SIG_SETMASK, &old_, nullptr);
  }
  HeldSignals(const HeldSignals&) = delete;
  HeldSignals& operator=(const HeldSignals&) = delete;
  /// Waits up to `seconds`; the signal number when one came, else 0.
  int wait(double seconds) {
    if (seconds <= 0) seconds = 0;
    timespec ts{static_cast<time_t>(seconds), static_cast<long>(std::fmod(seconds, 1.0) * 1e9)};
    const int s = sigtimedwait(&set_, nullptr, &ts);
    return s > 0 ? s : 0;
  }

 private:
  sigset_t set_{}, old_{};
};

}  // namespace

void check_node_options(const NodeMonitorOptions& o) {
  if (!(o.interval_s >= kMinIntervalS && o.interval_s <= kMaxIntervalS))
    throw UsageError(fmt::format("--interval-s {}: must be {} to {} seconds", o.interval_s, kMinIntervalS, kMaxIntervalS));
  if (o.count < 0) throw UsageError(fmt::format("--count {}: must be >= 0 (0 = until SIGINT/SIGTERM)", o.count));
  const auto& t = o.thresholds;
  if (!(t.pause_ratio > 0 && t.pause_ratio <= 1)) throw UsageError("--pause-ratio: must be in (0, 1]");
  if (!(t.rail_fraction > 0 && t.rail_fraction < 1)) throw UsageError("--rail-fraction: must be in (0, 1)");
  for (auto [flag, v] : {std::pair{"--pause-frames-per-s", t.pause_frames_per_s}, {"--cnp-per-s", t.cnp_per_s},
                         {"--retransmit-per-s", t.retransmit_per_s}, {"--rail-min-gbps", t.rail_min_Gbps}})
    if (!(v >= 0) || !std::isfinite(v)) throw UsageError(fmt::format("{} {}: must be a number >= 0", flag, v));
}

struct NodeSampler::Impl {
  explicit Impl(const NodeMonitorOptions& o)
      : root(o.root), live(is_live_root(o.root)), inv(discover_node(o.root)), rd(SysRoot{o.root}) {
    const std::optional<std::string> lib = o.nvml ? o.nvml : live ? std::optional<std::string>("libnvidia-ml.so.1")
                                                                 : std::nullopt;
    if (lib) {
      nvml = std::make_unique<NvmlSource>(*lib);
      if (!nvml->why().empty()) inv.notes.push_back(nvml->why());
    } else {
      inv.notes.push_back("NVML not consulted under --root " + root.string() + " (give --nvml); GPU metrics absent");
    }
  }
  fs::path root;
  bool live;
  NodeInventory inv;
  topo::SysfsReader rd;
  std::unique_ptr<NvmlSource> nvml;
};

NodeSampler::NodeSampler(const NodeMonitorOptions& o) : impl_(std::make_unique<Impl>(o)) {}
NodeSampler::~NodeSampler() = default;
const NodeInventory& NodeSampler::inventory() const noexcept { return impl_->inv; }

NodeSample NodeSampler::sample() {
  NodeSample s;
  s.mono_s = mono_now_s();
  s.unix_s = unix_now_s();
  read_sysfs_sources(impl_->inv, impl_->rd, s);
  read_ethtool_sources(impl_->inv, impl_->root, impl_->live, s);
  if (impl_->nvml) impl_->nvml->read(s);
  return s;
}

int run_node_monitor(const NodeMonitorOptions& o, std::ostream& out, std::ostream& err) {
  check_node_options(o);
  std::optional<ListenAddress> addr;
  if (o.listen) addr = parse_listen(*o.listen);
  if (o.textfile) check_writable(*o.textfile, "--textfile");
  HeldSignals held;  // before the HTTP thread starts, so that it inherits the mask
  std::unique_ptr<MetricsServer> server;
  if (addr) server = std::make_unique<MetricsServer>(*addr);
  NodeSampler sampler(o);
  if (server) {
    const std::string host = addr->host.empty()                              ? std::string("0.0.0.0")
                             : addr->host.find(':') != std::string::npos ? "[" + addr->host + "]"
                                                                         : addr->host;
    out << fmt::format("serving http://{}:{}/metrics\n", host, server->port());
    out.flush();
  }
  std::set<std::string> noted;
  auto note = [&](const std::vector<std::string>& notes) {
    for (const auto& n : notes)
      if (noted.insert(n).second) err << "railkit monitor node: note: " << n << "\n";
    err.flush();
  };
  note(sampler.inventory().notes);
  std::optional<NodeSample> prev;
  const double start = mono_now_s();
  for (int i = 1; o.count == 0 || i <= o.count; ++i) {
    NodeSample cur = sampler.sample();
    std::optional<IntervalRates> rates;
    if (prev && cur.mono_s > prev->mono_s) rates = compute_rates(*prev, cur);
    const auto signals = derive_signals(cur, rates ? &*rates : nullptr, o.thresholds);
    const std::string text = render_exposition(cur, rates ? &*rates : nullptr, signals);
    if (o.textfile) write_file_atomic(*o.textfile, text);
    if (server) server->publish(text);
    note(cur.notes);
    if (rates) note(rates->notes);
    out << render_node_table(i, cur, rates ? &*rates : nullptr, signals);
    out.flush();
    prev = std::move(cur);
    if (o.count != 0 && i == o.count) break;
    if (held.wait(start + i * o.interval_s - mono_now_s())) break;
  }
  return 0;
}

}  // namespace railkit::monitor
