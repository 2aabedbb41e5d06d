#include "sim/engine.hpp"

#include <array>
#include <atomic>
#include <string_view>

#include <ns3/object-factory.h>
#include <ns3/rng-seed-manager.h>

#include "core/error.hpp"

namespace railkit::sim {
namespace {

struct SchedulerRow {
  std::string_view name;
  const char* type_id;
};

constexpr std::array kSchedulers = {
    SchedulerRow{"priority_queue", "ns3::PriorityQueueScheduler"},
    SchedulerRow{"heap", "ns3::HeapScheduler"},
    SchedulerRow{"map", "ns3::MapScheduler"},
    SchedulerRow{"calendar", "ns3::CalendarScheduler"},
    SchedulerRow{"list", "ns3::ListScheduler"},
};

/// Guards ns-3's singleton: at most one Engine at a time.
std::atomic<bool> g_engine_alive{false};

}  // namespace

Engine::Engine(const std::string& scheduler, std::uint64_t seed) {
  const SchedulerRow* row = nullptr;
  for (const auto& r : kSchedulers)
    if (r.name == scheduler) row = &r;
  if (row == nullptr) throw UsageError("event_scheduler '" + scheduler + "': expected priority_queue, heap, map, calendar or list");
  if (g_engine_alive.exchange(true)) throw Error(ErrorCode::Internal, "a second simulation engine while one is running");
  if (ns3::Time::GetResolution() != ns3::Time::PS) ns3::Time::SetResolution(ns3::Time::PS);
  ns3::Simulator::Destroy();
  ns3::ObjectFactory factory;
  factory.SetTypeId(row->type_id);
  ns3::Simulator::SetScheduler(factory);
  ns3::RngSeedManager::SetSeed(static_cast<std::uint32_t>(seed));
  ns3::RngSeedManager::SetRun(1);
}

Engine::~Engine() {
  ns3::Simulator::Destroy();
  g_engine_alive = false;
}

void Engine::run_until(std::int64_t end_ps) {
  const std::int64_t now = now_ps();
  if (end_ps <= now) return;
  ns3::Simulator::Stop(ns3::Time(static_cast<std::int64_t>(end_ps - now)));
  ns3::Simulator::Run();
}

std::uint64_t Engine::events() const { return ns3::Simulator::GetEventCount(); }

Uniform Engine::uniform(std::int64_t stream) const {
  auto rv = ns3::CreateObject<ns3::UniformRandomVariable>();
  rv->SetStream(stream);
  return Uniform(rv);
}

}  // namespace railkit::sim
