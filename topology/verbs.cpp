// Live RDMA port state through libibverbs (rdma-core). Built only when libibverbs is found;
// topology/verbs_none.cpp stands in otherwise.
#include <infiniband/verbs.h>

#include <memory>

#include "topology/live.hpp"

namespace railkit::topo {
namespace {

// Per-lane signalling rate (Gb/s) of ibv_port_attr::active_speed.
double lane_Gbps(unsigned speed) {
  switch (speed) {
    case 1: return 2.5;
    case 2: return 5.0;
    case 4: return 10.0;
    case 8: return 10.0;   // FDR10
    case 16: return 14.0;  // FDR
    case 32: return 25.0;  // EDR
    case 64: return 50.0;  // HDR
    case 128: return 100.0;  // NDR
    case 256: return 200.0;  // XDR
    default: return 0.0;
  }
}

int lanes(unsigned width) {
  switch (width) {
    case 1: return 1;
    case 2: return 4;
    case 4: return 8;
    case 8: return 12;
    case 16: return 2;
    default: return 0;
  }
}

std::string state_name(ibv_port_state s) {
  switch (s) {
    case IBV_PORT_DOWN: return "DOWN";
    case IBV_PORT_INIT: return "INIT";
    case IBV_PORT_ARMED: return "ARMED";
    case IBV_PORT_ACTIVE: return "ACTIVE";
    case IBV_PORT_ACTIVE_DEFER: return "ACTIVE_DEFER";
    default: return "NOP";
  }
}

}  // namespace

bool query_verbs(Topology& topo) {
  int n = 0;
  std::unique_ptr<ibv_device*, void (*)(ibv_device**)> list(ibv_get_device_list(&n), ibv_free_device_list);
  if (!list || n <= 0) return false;
  bool any = false;
  for (int i = 0; i < n; ++i) {
    const char* name = ibv_get_device_name(list.get()[i]);
    if (!name) continue;
    Nic* nic = nullptr;
    for (auto& x : topo.nics)
      if (x.name == name) nic = &x;
    if (!nic) continue;
    std::unique_ptr<ibv_context, int (*)(ibv_context*)> ctx(ibv_open_device(list.get()[i]), ibv_close_device);
    if (!ctx) continue;
    for (auto& port : nic->ports) {
      ibv_port_attr attr{};
      if (ibv_query_port(ctx.get(), static_cast<uint8_t>(port.num), &attr) != 0) continue;
      any = true;
      port.verbs.queried = true;
      port.verbs.state = state_name(attr.state);
      port.verbs.active_mtu_bytes = 128 << static_cast<int>(attr.active_mtu);
      const double r = lane_Gbps(attr.active_speed) * lanes(attr.active_width);
      if (r > 0) port.verbs.rate_Gbps = r;
      port.verbs.link_layer = attr.link_layer == IBV_LINK_LAYER_ETHERNET ? "Ethernet" : "InfiniBand";
      for (const auto& g : port.gids) {
        ibv_gid_entry entry{};
        if (ibv_query_gid_ex(ctx.get(), static_cast<uint32_t>(port.num), static_cast<uint32_t>(g.index), &entry, 0) != 0)
          continue;
        port.verbs.gid_types[g.index] = entry.gid_type == IBV_GID_TYPE_ROCE_V2   ? "RoCE v2"
                                        : entry.gid_type == IBV_GID_TYPE_ROCE_V1 ? "RoCE v1"
                                                                                 : "IB";
      }
    }
  }
  return any;
}

}  // namespace railkit::topo
