// NVLink sources: a captured `nvidia-smi topo -m`, or NVML loaded at run time with dlopen
// (no NVML header: the few types used are declared here from NVML's documented ABI).
#include <algorithm>
#include <cctype>
#include <map>

#include "core/error.hpp"
#include "topology/dl.hpp"
#include "topology/live.hpp"
#include "topology/parse.hpp"

namespace railkit::topo {

void apply_nvsmi_topo(Topology& topo, std::string_view text, const std::string& source) {
  auto m = parse_nvsmi_topo(text);
  if (!m) throw UsageError("--nvidia-smi-topo " + source + ": no 'nvidia-smi topo -m' GPU matrix found");
  const auto ngpu = std::count_if(m->columns.begin(), m->columns.end(),
                                  [](const std::string& c) { return c.rfind("GPU", 0) == 0; });
  if (static_cast<size_t>(ngpu) != topo.gpus.size())
    throw UsageError("--nvidia-smi-topo " + source + " lists " + std::to_string(ngpu) + " GPUs but the probe found " +
                     std::to_string(topo.gpus.size()));
  topo.nvlinks.clear();
  for (size_t i = 0; i < topo.gpus.size(); ++i)
    for (size_t j = i + 1; j < topo.gpus.size(); ++j) {
      const auto& a = topo.gpus[i].name;
      const auto& b = topo.gpus[j].name;
      auto it = m->cells.find({a, b});
      if (it == m->cells.end()) it = m->cells.find({b, a});
      int count = 0;
      if (it != m->cells.end()) count = parse_nv_cell(it->second).value_or(0);
      topo.nvlinks[{a, b}] = count;
    }
  topo.nvlink_source = "nvidia-smi";
}

namespace {

// NVML ABI subset (nvml.h): return codes are ints, 0 = NVML_SUCCESS.
using nvmlDevice_t = struct nvmlDevice_st*;
struct nvmlPciInfo_t {
  char busIdLegacy[16];
  unsigned int domain, bus, device, pciDeviceId, pciSubSystemId;
  char busId[32];
};
constexpr unsigned kNvmlMaxLinks = 18;

using InitFn = int (*)();
using ShutdownFn = int (*)();
using HandleByBusIdFn = int (*)(const char*, nvmlDevice_t*);
using LinkStateFn = int (*)(nvmlDevice_t, unsigned int, int*);
using RemotePciFn = int (*)(nvmlDevice_t, unsigned int, nvmlPciInfo_t*);

std::string normalize_bus_id(const char* id) {
  std::string s(id);
  if (s.size() > 12) s = s.substr(s.size() - 12);  // "00000000:1B:00.0" -> "0000:1B:00.0"
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

}  // namespace

bool apply_nvml(Topology& topo, const char* library) {
  if (topo.gpus.size() < 2) return false;
  DlLibrary lib(library);
  if (!lib) return false;
  auto init = lib.sym<InitFn>("nvmlInit_v2");
  auto shutdown = lib.sym<ShutdownFn>("nvmlShutdown");
  auto by_bus = lib.sym<HandleByBusIdFn>("nvmlDeviceGetHandleByPciBusId_v2");
  auto state = lib.sym<LinkStateFn>("nvmlDeviceGetNvLinkState");
  auto remote = lib.sym<RemotePciFn>("nvmlDeviceGetNvLinkRemotePciInfo_v2");
  if (!init || !shutdown || !by_bus || !state || !remote) return false;
  if (init() != 0) return false;
  std::map<std::string, std::string> gpu_by_bdf;
  for (const auto& g : topo.gpus) gpu_by_bdf[g.bdf] = g.name;
  std::map<std::pair<std::string, std::string>, int> direct;
  std::map<std::string, int> to_switch;  // links whose far end is not a GPU (NVSwitch)
  bool ok = true;
  for (const auto& g : topo.gpus) {
    nvmlDevice_t dev = nullptr;
    if (by_bus(g.bdf.c_str(), &dev) != 0) {
      ok = false;
      break;
    }
    for (unsigned link = 0; link < kNvmlMaxLinks; ++link) {
      int active = 0;
      if (state(dev, link, &active) != 0 || active != 1) continue;
      nvmlPciInfo_t pci{};
      if (remote(dev, link, &pci) != 0) continue;
      auto it = gpu_by_bdf.find(normalize_bus_id(pci.busId));
      if (it == gpu_by_bdf.end()) {
        ++to_switch[g.name];
      } else if (g.index < topo.gpu(it->second)->index) {
        ++direct[{g.name, it->second}];
      }
    }
  }
  shutdown();
  if (!ok) return false;
  topo.nvlinks.clear();
  for (size_t i = 0; i < topo.gpus.size(); ++i)
    for (size_t j = i + 1; j < topo.gpus.size(); ++j) {
      const auto& a = topo.gpus[i].name;
      const auto& b = topo.gpus[j].name;
      int count = 0;
      if (auto it = direct.find({a, b}); it != direct.end()) count += it->second;
      const int sa = to_switch.count(a) ? to_switch[a] : 0;
      const int sb = to_switch.count(b) ? to_switch[b] : 0;
      count += std::min(sa, sb);
      topo.nvlinks[{a, b}] = count;
    }
  topo.nvlink_source = "nvml";
  return true;
}

}  // namespace railkit::topo
