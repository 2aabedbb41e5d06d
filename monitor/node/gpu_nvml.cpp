#include "monitor/node/gpu_nvml.hpp"

#include <fmt/format.h>

#include <map>
#include <vector>

#include "topology/dl.hpp"

namespace railkit::monitor {
namespace nvml_abi {

// NVML ABI subset (nvml.h): return codes are ints, 0 = NVML_SUCCESS; enums are int-sized.
using nvmlDevice_t = struct nvmlDevice_st*;
using nvmlEventSet_t = struct nvmlEventSet_st*;
struct nvmlEventData_t {
  nvmlDevice_t device;
  unsigned long long eventType;
  unsigned long long eventData;  // the XID for nvmlEventTypeXidCriticalError
  unsigned int gpuInstanceId;
  unsigned int computeInstanceId;
};
constexpr int kNvmlSuccess = 0;
constexpr unsigned long long kEventXid = 0x8;  // nvmlEventTypeXidCriticalError
constexpr unsigned kMaxLinks = 18;             // NVML_NVLINK_MAX_LINKS
constexpr int kMaxEventsPerSample = 1000;

using VoidFn = int (*)();
using CountFn = int (*)(unsigned*);
using ByIndexFn = int (*)(unsigned, nvmlDevice_t*);
using EccFn = int (*)(nvmlDevice_t, int, int, unsigned long long*);
using LinkStateFn = int (*)(nvmlDevice_t, unsigned, int*);
using LinkErrFn = int (*)(nvmlDevice_t, unsigned, int, unsigned long long*);
using ReasonsFn = int (*)(nvmlDevice_t, unsigned long long*);
using SetCreateFn = int (*)(nvmlEventSet_t*);
using SetFreeFn = int (*)(nvmlEventSet_t);
using RegisterFn = int (*)(nvmlDevice_t, unsigned long long, nvmlEventSet_t);
using WaitFn = int (*)(nvmlEventSet_t, nvmlEventData_t*, unsigned);
using ErrorStringFn = const char* (*)(int);

// nvmlNvLinkErrorCounter_t, in order.
const char* const kLinkCounters[] = {"replay", "recovery", "crc_flit", "crc_data", "ecc_data"};
// nvmlMemoryErrorType_t, in order.
const char* const kEccTypes[] = {"corrected", "uncorrected"};
constexpr int kVolatileEcc = 0;  // NVML_VOLATILE_ECC

}  // namespace nvml_abi
namespace abi = nvml_abi;

struct NvmlSource::Impl {
  explicit Impl(const std::string& library) : lib(library.c_str()) {}
  topo::DlLibrary lib;
  std::string why;
  bool ok = false;
  abi::VoidFn shutdown = nullptr;
  abi::EccFn ecc = nullptr;
  abi::LinkStateFn link_state = nullptr;
  abi::LinkErrFn link_err = nullptr;
  abi::ReasonsFn reasons = nullptr;
  abi::SetFreeFn set_free = nullptr;
  abi::WaitFn wait = nullptr;
  abi::ErrorStringFn error_string = nullptr;
  abi::nvmlEventSet_t events = nullptr;
  std::vector<abi::nvmlDevice_t> gpus;
  std::map<std::pair<unsigned, unsigned long long>, std::uint64_t> xids;  // (gpu, xid) -> events seen

  std::string err(int rc) const { return error_string ? error_string(rc) : fmt::format("NVML error {}", rc); }
  void open(const std::string& library);
  void read_gpu(unsigned i, NodeSample& s);
  void drain_events(NodeSample& s);
};

void NvmlSource::Impl::open(const std::string& library) {
  if (!lib) {
    const char* e = dlerror();
    why = fmt::format("NVML not loaded ({}); GPU metrics absent", e ? e : library);
    return;
  }
  auto init = lib.sym<abi::VoidFn>("nvmlInit_v2");
  auto count = lib.sym<abi::CountFn>("nvmlDeviceGetCount_v2");
  auto by_index = lib.sym<abi::ByIndexFn>("nvmlDeviceGetHandleByIndex_v2");
  shutdown = lib.sym<abi::VoidFn>("nvmlShutdown");
  error_string = lib.sym<abi::ErrorStringFn>("nvmlErrorString");
  if (!init || !count || !by_index || !shutdown) {
    why = fmt::format("{} lacks nvmlInit_v2/nvmlDeviceGetCount_v2/nvmlDeviceGetHandleByIndex_v2; GPU metrics absent",
                      library);
    return;
  }
  if (int rc = init(); rc != abi::kNvmlSuccess) {
    shutdown = nullptr;
    why = fmt::format("nvmlInit_v2 failed ({}); GPU metrics absent", err(rc));
    return;
  }
  unsigned n = 0;
  if (int rc = count(&n); rc != abi::kNvmlSuccess) {
    why = fmt::format("nvmlDeviceGetCount_v2 failed ({}); GPU metrics absent", err(rc));
    return;
  }
  for (unsigned i = 0; i < n; ++i) {
    abi::nvmlDevice_t d = nullptr;
    gpus.push_back(by_index(i, &d) == abi::kNvmlSuccess ? d : nullptr);
  }
  ecc = lib.sym<abi::EccFn>("nvmlDeviceGetTotalEccErrors");
  link_state = lib.sym<abi::LinkStateFn>("nvmlDeviceGetNvLinkState");
  link_err = lib.sym<abi::LinkErrFn>("nvmlDeviceGetNvLinkErrorCounter");
  reasons = lib.sym<abi::ReasonsFn>("nvmlDeviceGetCurrentClocksEventReasons");
  if (!reasons) reasons = lib.sym<abi::ReasonsFn>("nvmlDeviceGetCurrentClocksThrottleReasons");
  auto set_create = lib.sym<abi::SetCreateFn>("nvmlEventSetCreate");
  auto reg = lib.sym<abi::RegisterFn>("nvmlDeviceRegisterEvents");
  set_free = lib.sym<abi::SetFreeFn>("nvmlEventSetFree");
  wait = lib.sym<abi::WaitFn>("nvmlEventSetWait_v2");
  if (set_create && reg && set_free && wait && set_create(&events) == abi::kNvmlSuccess) {
    for (unsigned i = 0; i < n; ++i)
      if (gpus[i] && reg(gpus[i], abi::kEventXid, events) != abi::kNvmlSuccess)
        why = fmt::format("GPU {}: XID events not supported; its XID counts absent", i);
  } else {
    events = nullptr;
    why = "NVML event sets unavailable; XID counts absent";
  }
  ok = true;
}

void NvmlSource::Impl::read_gpu(unsigned i, NodeSample& s) {
  const std::string gpu = std::to_string(i);
  if (!gpus[i]) {
    s.notes.push_back(fmt::format("GPU {}: no NVML handle; its metrics absent", i));
    return;
  }
  for (int t = 0; ecc && t < 2; ++t) {
    unsigned long long v = 0;
    if (ecc(gpus[i], t, abi::kVolatileEcc, &v) == abi::kNvmlSuccess)
      s.counters.push_back({std::string(kGpuEcc), {{"gpu", gpu}, {"type", abi::kEccTypes[t]}}, v, 1});
    else if (t == 0)
      s.notes.push_back(fmt::format("GPU {}: ECC counts not supported", i));
  }
  for (unsigned link = 0; link_state && link_err && link < abi::kMaxLinks; ++link) {
    int active = 0;
    if (link_state(gpus[i], link, &active) != abi::kNvmlSuccess || active != 1) continue;
    for (int c = 0; c < 5; ++c) {
      unsigned long long v = 0;
      if (link_err(gpus[i], link, c, &v) != abi::kNvmlSuccess) continue;
      s.counters.push_back({std::string(kGpuNvlink),
                            {{"gpu", gpu}, {"link", std::to_string(link)}, {"counter", abi::kLinkCounters[c]}}, v, 1});
    }
  }
  unsigned long long mask = 0;
  if (reasons && reasons(gpus[i], &mask) == abi::kNvmlSuccess)
    s.gauges.push_back({"railkit_node_gpu_throttle_reasons", {{"gpu", gpu}}, static_cast<double>(mask)});
}

void NvmlSource::Impl::drain_events(NodeSample& s) {
  for (int k = 0; events && k < abi::kMaxEventsPerSample; ++k) {
    abi::nvmlEventData_t e{};
    if (wait(events, &e, 0) != abi::kNvmlSuccess) break;  // NVML_ERROR_TIMEOUT: nothing pending
    if (!(e.eventType & abi::kEventXid)) continue;
    for (unsigned i = 0; i < gpus.size(); ++i)
      if (gpus[i] == e.device) ++xids[{i, e.eventData}];
  }
  for (const auto& [key, n] : xids)
    s.counters.push_back(
        {std::string(kGpuXid), {{"gpu", std::to_string(key.first)}, {"xid", std::to_string(key.second)}}, n, 1});
}

NvmlSource::NvmlSource(const std::string& library) : impl_(std::make_unique<Impl>(library)) { impl_->open(library); }

NvmlSource::~NvmlSource() {
  if (impl_->events && impl_->set_free) impl_->set_free(impl_->events);
  if (impl_->shutdown) impl_->shutdown();
}

bool NvmlSource::available() const noexcept { return impl_->ok; }
const std::string& NvmlSource::why() const noexcept { return impl_->why; }

void NvmlSource::read(NodeSample& s) {
  if (!impl_->ok) return;
  for (unsigned i = 0; i < impl_->gpus.size(); ++i) impl_->read_gpu(i, s);
  impl_->drain_events(s);
}

}  // namespace railkit::monitor
