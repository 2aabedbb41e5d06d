#pragma once
// Printers for a probed node: the nvidia-smi-style table, JSON (railkit.topology/1, see
// topology/README.md) and NCCL's topology XML. Printers format; they never probe.
#include <string>

#include <nlohmann/json.hpp>

#include "topology/compare.hpp"
#include "topology/model.hpp"

namespace railkit::topo {

/// Table options: `priority` labels the ECN/PFC columns; `findings_only` prints just the findings.
struct TableOptions {
  int priority = 3;
  bool findings_only = false;
};

/// Matrix (GPUs and NICs, CPU and NUMA affinity), legends, rails, RoCE ports, findings.
std::string render_table(const Topology& topo, const TableOptions& opts);

/// The railkit.topology/1 JSON document.
nlohmann::json to_json(const Topology& topo);

/// NCCL topology XML (NCCL_TOPO_FILE): system > cpu > nested pci > gpu | nic/net.
/// NVLink elements are left out: NCCL fills them from NVML for the GPUs it finds.
std::string render_nccl_xml(const Topology& topo);

/// The comparison as text: majority fingerprint, odd nodes, and the differing facts most telling
/// first (an absent device's own facts folded into its line; long path lists cut to what differs).
std::string render_compare_table(const CompareReport& rep);

/// The comparison as JSON (`railkit.topology-compare/1`).
nlohmann::json compare_to_json(const CompareReport& rep);

}  // namespace railkit::topo
