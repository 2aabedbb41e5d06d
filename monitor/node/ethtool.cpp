#include "monitor/node/ethtool.hpp"

#include <linux/ethtool.h>
#include <linux/sockios.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <algorithm>

#include "core/strings.hpp"

namespace railkit::monitor {
namespace {

using enum EthtoolKind;

// Names from the kernel drivers' ethtool string tables: mlx5 (en_stats.c, per-priority PFC group),
// bnxt_en (bnxt_ethtool.c: rx/tx_port_stats and their _ext tables), ice (ice_ethtool.c: the
// per-priority XOFF counters, legacy and unified names). ice counts no pause duration.
const std::vector<EthtoolName> kNames = {
    {"mlx5_core", "rx_prio{P}_pause", PauseFrames, "rx"},
    {"mlx5_core", "tx_prio{P}_pause", PauseFrames, "tx"},
    {"mlx5_core", "rx_prio{P}_pause_duration", PauseDurationUs, "rx"},
    {"mlx5_core", "tx_prio{P}_pause_duration", PauseDurationUs, "tx"},
    {"mlx5_core", "rx_discards_phy", Other, ""},
    {"mlx5_core", "tx_discards_phy", Other, ""},
    {"mlx5_core", "rx_out_of_buffer", Other, ""},
    {"mlx5_core", "tx_pause_storm_warning_events", Other, ""},
    {"mlx5_core", "tx_pause_storm_error_events", Other, ""},
    {"mlx5_core", "rx_prio{P}_buf_discard", Other, ""},
    {"mlx5_core", "rx_prio{P}_cong_discard", Other, ""},
    {"bnxt_en", "rx_pfc_ena_frames_pri{P}", PauseFrames, "rx"},
    {"bnxt_en", "tx_pfc_ena_frames_pri{P}", PauseFrames, "tx"},
    {"bnxt_en", "pfc_pri{P}_rx_duration_us", PauseDurationUs, "rx"},
    {"bnxt_en", "pfc_pri{P}_tx_duration_us", PauseDurationUs, "tx"},
    {"bnxt_en", "rx_discard_packets_cos{P}", Other, ""},
    {"ice", "rx_priority_{P}_xoff.nic", PauseFrames, "rx"},
    {"ice", "tx_priority_{P}_xoff.nic", PauseFrames, "tx"},
    {"ice", "port-rx-xoff_prio-{P}_events", PauseFrames, "rx"},
    {"ice", "port-tx-xoff_prio-{P}_events", PauseFrames, "tx"},
    {"ice", "rx_dropped.nic", Other, ""},
};

// The priority `name` has at "{P}" of `pattern` (a single digit 0-7), -1 when the pattern has no
// {P} and matches exactly, nullopt when it does not match.
std::optional<int> match_pattern(std::string_view pattern, std::string_view name) {
  const auto at = pattern.find("{P}");
  if (at == std::string_view::npos) return pattern == name ? std::optional<int>(-1) : std::nullopt;
  const std::string_view pre = pattern.substr(0, at), post = pattern.substr(at + 3);
  if (name.size() != pre.size() + 1 + post.size()) return std::nullopt;
  if (name.substr(0, pre.size()) != pre || name.substr(pre.size() + 1) != post) return std::nullopt;
  const char d = name[pre.size()];
  if (d < '0' || d > '7') return std::nullopt;
  return d - '0';
}

std::string_view metric_of(EthtoolKind k) {
  switch (k) {
    case PauseFrames: return kPauseFrames;
    case PauseDurationUs: return kPauseDuration;
    case Other: break;
  }
  return kNetdevEvents;
}

// A socket closed when it goes out of scope.
struct SocketFd {
  int fd;
  ~SocketFd() {
    if (fd >= 0) close(fd);
  }
};

// An ethtool ioctl on `fd` for `netdev` with `data`; 0 or the errno.
int ethtool_ioctl(int fd, const std::string& netdev, void* data) {
  ifreq ifr{};
  std::strncpy(ifr.ifr_name, netdev.c_str(), IFNAMSIZ - 1);
  ifr.ifr_data = static_cast<char*>(data);
  return ioctl(fd, SIOCETHTOOL, &ifr) == 0 ? 0 : errno;
}

}  // namespace

EthtoolStats parse_ethtool_text(std::string_view text, int* skipped) {
  EthtoolStats out;
  int bad = 0;
  for (const auto& raw : split(text, '\n')) {
    const std::string_view line = trim(raw);
    if (line.empty() || line.back() == ':') continue;  // "NIC statistics:" and the like
    const auto colon = line.rfind(':');
    auto value = colon == std::string_view::npos ? std::nullopt : parse_counter(line.substr(colon + 1));
    const std::string_view name = colon == std::string_view::npos ? line : trim(line.substr(0, colon));
    if (!value || name.empty()) {
      ++bad;
      continue;
    }
    out.emplace_back(std::string(name), *value);
  }
  if (skipped) *skipped = bad;
  return out;
}

std::optional<EthtoolStats> read_ethtool_ioctl(const std::string& netdev, std::string* why) {
  if (netdev.empty() || netdev.size() >= IFNAMSIZ) {
    if (why) *why = "not a netdev name";
    return std::nullopt;
  }
  const SocketFd fd{socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0)};
  if (fd.fd < 0) {
    if (why) *why = std::string("socket: ") + std::strerror(errno);
    return std::nullopt;
  }
  auto fail = [&](const char* step, int err) -> std::optional<EthtoolStats> {
    if (why) *why = std::string(step) + ": " + std::strerror(err);
    return std::nullopt;
  };
  std::uint64_t sbuf_info[4] = {};  // ethtool_sset_info and its one data word
  auto* sset = reinterpret_cast<ethtool_sset_info*>(sbuf_info);
  sset->cmd = ETHTOOL_GSSET_INFO;
  sset->sset_mask = std::uint64_t{1} << ETH_SS_STATS;
  if (int e = ethtool_ioctl(fd.fd, netdev, sset)) return fail("ETHTOOL_GSSET_INFO", e);
  const std::uint32_t n = (sset->sset_mask & (std::uint64_t{1} << ETH_SS_STATS)) ? sset->data[0] : 0;
  if (n == 0) return fail("ETHTOOL_GSSET_INFO", EOPNOTSUPP);
  std::vector<std::uint64_t> sbuf((sizeof(ethtool_gstrings) + std::size_t{n} * ETH_GSTRING_LEN + 7) / 8 + 1);
  auto* strings = reinterpret_cast<ethtool_gstrings*>(sbuf.data());
  strings->cmd = ETHTOOL_GSTRINGS;
  strings->string_set = ETH_SS_STATS;
  strings->len = n;
  if (int e = ethtool_ioctl(fd.fd, netdev, strings)) return fail("ETHTOOL_GSTRINGS", e);
  std::vector<std::uint64_t> vbuf(sizeof(ethtool_stats) / 8 + 1 + n);
  auto* stats = reinterpret_cast<ethtool_stats*>(vbuf.data());
  stats->cmd = ETHTOOL_GSTATS;
  stats->n_stats = n;
  if (int e = ethtool_ioctl(fd.fd, netdev, stats)) return fail("ETHTOOL_GSTATS", e);
  EthtoolStats out;
  const std::uint32_t count = std::min(n, std::min(strings->len, stats->n_stats));
  for (std::uint32_t i = 0; i < count; ++i) {
    const char* s = reinterpret_cast<const char*>(strings->data) + std::size_t{i} * ETH_GSTRING_LEN;
    out.emplace_back(std::string(s, strnlen(s, ETH_GSTRING_LEN)), stats->data[i]);
  }
  return out;
}

const std::vector<EthtoolName>& ethtool_names() { return kNames; }

bool ethtool_driver_mapped(std::string_view driver) {
  for (const auto& r : kNames)
    if (r.driver == driver) return true;
  return false;
}

void map_ethtool_stats(std::string_view driver, const std::string& netdev, const EthtoolStats& stats,
                       std::vector<CounterReading>& out) {
  const bool all = !ethtool_driver_mapped(driver);
  for (const auto& [name, value] : stats) {
    for (const auto& row : kNames) {
      if (!all && row.driver != driver) continue;
      const auto prio = match_pattern(row.pattern, name);
      if (!prio) continue;
      CounterReading c{std::string(metric_of(row.kind)), {{"netdev", netdev}}, value, 1};
      if (row.kind == Other) {
        c.labels.emplace_back("counter", name);
      } else {
        c.labels.emplace_back("priority", std::to_string(*prio));
        c.labels.emplace_back("direction", std::string(row.direction));
        if (row.kind == PauseDurationUs) c.divisor = 1e6;
      }
      out.push_back(std::move(c));
      break;
    }
  }
}

}  // namespace railkit::monitor
