#include "topology/model.hpp"

namespace railkit::topo {

const char* path_type_name(PathType t) noexcept {
  switch (t) {
    case PathType::NV: return "NV";
    case PathType::PIX: return "PIX";
    case PathType::PXB: return "PXB";
    case PathType::PHB: return "PHB";
    case PathType::NODE: return "NODE";
    case PathType::SYS: return "SYS";
    case PathType::Unknown: return "unknown";
  }
  return "unknown";
}

std::string Path::str() const {
  if (type == PathType::NV) return "NV" + std::to_string(nvlinks);
  return path_type_name(type);
}

const char* severity_name(Severity s) noexcept {
  switch (s) {
    case Severity::Error: return "error";
    case Severity::Warning: return "warning";
    case Severity::Info: return "info";
  }
  return "info";
}

const Port* Nic::main_port() const {
  for (const auto& p : ports)
    if (p.state == "ACTIVE") return &p;
  return ports.empty() ? nullptr : &ports.front();
}

const Gpu* Topology::gpu(const std::string& name) const {
  for (const auto& g : gpus)
    if (g.name == name) return &g;
  return nullptr;
}

const Nic* Topology::nic(const std::string& name) const {
  for (const auto& n : nics)
    if (n.name == name) return &n;
  return nullptr;
}

const PciFunction* Topology::function(const std::string& bdf) const {
  auto it = pci.find(bdf);
  return it == pci.end() ? nullptr : &it->second;
}

const PathEntry* Topology::path(const std::string& a, const std::string& b) const {
  for (const auto& p : paths)
    if ((p.from == a && p.to == b) || (p.from == b && p.to == a)) return &p;
  return nullptr;
}

}  // namespace railkit::topo
