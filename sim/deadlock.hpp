#pragma once
// PFC deadlock detection. A switch that holds XOFF on an ingress port and priority keeps its
// upstream paused (the pause is refreshed every half pause) until that ingress has drained; a
// held pause whose ingress releases nothing for a sustained time (the bound below) is *stuck*.
// The watch looks at the switches every period (a fraction of the bound, never per packet) and
// reports a deadlock when the stuck pauses prove one:
// - `cycle`: a cycle in the wait-for graph of stuck pauses. Pause (B, ingress i) waits on pause
//   (C, ingress j) when B has packets from i queued on its egress port towards C that C pauses
//   through its ingress j. Around a cycle nothing can ever drain.
// - `pause_never_clears`: a stuck pause whose ingress holds nothing: nothing is left to drain,
//   yet the XON condition (queue + xon offset <= threshold) does not hold, e.g. a static
//   `switch.pfc.xoff_bytes` below `switch.pfc.xon_offset_bytes`.
// Stuck pauses that prove neither (a lossless priority starved by strict priorities, a queue
// that drains slowly) are not reported: the run goes on.
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "sim/result.hpp"
#include "sim/scenario.hpp"
#include "sim/switch.hpp"
#include "sim/topology.hpp"

namespace railkit::sim {

/// How long a held pause must release nothing to be stuck: the larger of 8 pause times
/// (`pause_quanta` x 512 bit times: 16 refreshes with nothing drained) and 2 times the switch
/// buffer at line rate (a queue ahead of its packets, at most the whole buffer, would have left
/// twice over), both at the slowest switch port. 2.68 ms at 100 Gb/s with the defaults.
std::int64_t deadlock_bound_ps(const FabricGraph& g, const SwitchSpec& sw);

/// Watches the switches of one Network.
class DeadlockWatch {
 public:
  /// `switches[i]` is graph node g.hosts + i.
  DeadlockWatch(const FabricGraph& g, const std::vector<std::unique_ptr<Switch>>& switches, const SwitchSpec& sw);

  std::int64_t bound_ps() const noexcept { return bound_ps_; }
  /// Time between checks: a quarter of the bound.
  std::int64_t period_ps() const noexcept { return period_ps_; }

  /// One check at `now_ps`: a finding when the stuck pauses prove a deadlock.
  std::optional<DeadlockFinding> check(std::int64_t now_ps);

 private:
  struct Pause {
    int sw = 0;        ///< index into switches
    int port = 0;      ///< its ingress port
    int prio = 0;
    std::int64_t since_ps = 0;  ///< held and nothing released since
  };

  std::optional<DeadlockFinding> analyse(const std::vector<Pause>& stuck, std::int64_t now_ps) const;
  std::string name(const Pause& p) const;

  const FabricGraph& g_;
  const std::vector<std::unique_ptr<Switch>>& switches_;
  const SwitchSpec& sw_;
  std::int64_t bound_ps_ = 0;
  std::int64_t period_ps_ = 0;
  std::vector<std::size_t> first_slot_;          ///< per switch: its first port's slot
  std::vector<std::uint64_t> released_;          ///< per slot (port x priority): released at the last check
  std::vector<std::int64_t> progress_ps_;        ///< per slot: when it last released something
};

}  // namespace railkit::sim
