#pragma once
// Sources beyond sysfs: NVLink from NVML or a captured `nvidia-smi topo -m`, and RDMA port
// state from libibverbs. NVML and verbs are only consulted on a live node (root "/").
#include <string>
#include <string_view>

#include "topology/model.hpp"

namespace railkit::topo {

/// Fills topo.nvlinks (and nvlink_source = "nvidia-smi") from the text of `nvidia-smi topo -m`.
/// GPU<i> of the capture is matched to GPU<i> of the probe (both are in PCI bus order).
/// Throws UsageError naming `source` when the text holds no GPU matrix.
void apply_nvsmi_topo(Topology& topo, std::string_view text, const std::string& source);

/// Loads NVML (`library`, default the driver's libnvidia-ml.so.1) with dlopen and fills
/// topo.nvlinks (nvlink_source = "nvml"). Links whose far end is not one of the GPUs count as
/// NVSwitch links. Returns false and leaves topo unchanged when NVML is absent or fails.
bool apply_nvml(Topology& topo, const char* library = "libnvidia-ml.so.1");

/// Queries every NIC port through libibverbs (state, active MTU, rate, link layer) into
/// Port::verbs. Returns false when verbs support is not built in or no device opens.
bool query_verbs(Topology& topo);

}  // namespace railkit::topo
