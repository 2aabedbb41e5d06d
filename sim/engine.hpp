#pragma once
// The one place that touches ns-3's Simulator, a process-wide singleton: an Engine sets the time
// resolution (picoseconds), the event scheduler and the random seed, runs the events, and destroys
// the simulator when it goes away, so runs in one process never see each other's events. Only
// one Engine may live at a time. Everything else schedules through Engine::after().
#include <cstdint>
#include <string>
#include <utility>

#include <ns3/nstime.h>
#include <ns3/ptr.h>
#include <ns3/random-variable-stream.h>
#include <ns3/simulator.h>

namespace railkit::sim {

/// A stream of uniform [0, 1) numbers from ns-3's MRG32k3a generator.
class Uniform {
 public:
  explicit Uniform(ns3::Ptr<ns3::UniformRandomVariable> rv) : rv_(std::move(rv)) {}
  double next() { return rv_->GetValue(); }

 private:
  ns3::Ptr<ns3::UniformRandomVariable> rv_;
};

/// Owner of the ns-3 simulator for one run. Throws UsageError for an unknown scheduler name
/// and Error(Internal) when another Engine is alive.
class Engine {
 public:
  /// `scheduler`: priority_queue | heap | map | calendar | list (ns-3's event schedulers).
  Engine(const std::string& scheduler, std::uint64_t seed);
  ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  /// Simulated time now, in picoseconds.
  static std::int64_t now_ps() { return ns3::Simulator::Now().GetTimeStep(); }

  /// Calls (obj->*fn)(args...) `delay_ps` picoseconds from now.
  template <class Fn, class Obj, class... Args>
  static void after(std::int64_t delay_ps, Fn fn, Obj* obj, Args&&... args) {
    ns3::Simulator::Schedule(ns3::Time(static_cast<std::int64_t>(delay_ps)), fn, obj, std::forward<Args>(args)...);
  }

  /// Runs every event up to `end_ps` (absolute simulated time), or until stop() or no event is left.
  void run_until(std::int64_t end_ps);

  /// Makes run_until() return once the event now running is done (events left stay unrun).
  static void stop() { ns3::Simulator::Stop(); }

  /// Events executed so far.
  std::uint64_t events() const;

  /// Independent random stream number `stream` (deterministic for a given seed).
  Uniform uniform(std::int64_t stream) const;
};

}  // namespace railkit::sim
