// Live RDMA port state through libibverbs (rdma-core), loaded at run time with dlopen as NVML
// is: railkit links no rdma-core and starts on a node without it (then there are no live port
// queries). Built when verbs.h is found; topology/verbs_none.cpp stands in otherwise.
#include <infiniband/verbs.h>

#include <memory>

#include "topology/dl.hpp"
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

namespace {

/// The libibverbs entry points the probe uses (exported symbols of libibverbs.so.1).
struct VerbsApi {
  DlLibrary lib{"libibverbs.so.1"};
  using GetList = ibv_device** (*)(int*);
  using FreeList = void (*)(ibv_device**);
  using DeviceName = const char* (*)(ibv_device*);
  using Open = ibv_context* (*)(ibv_device*);
  using Close = int (*)(ibv_context*);
  using QueryPortCompat = int (*)(ibv_context*, uint8_t, _compat_ibv_port_attr*);
  using QueryGidEx = int (*)(ibv_context*, uint32_t, uint32_t, ibv_gid_entry*, uint32_t, size_t);
  GetList get_list = lib.sym<GetList>("ibv_get_device_list");
  FreeList free_list = lib.sym<FreeList>("ibv_free_device_list");
  DeviceName device_name = lib.sym<DeviceName>("ibv_get_device_name");
  Open open = lib.sym<Open>("ibv_open_device");
  Close close = lib.sym<Close>("ibv_close_device");
  QueryPortCompat query_port_compat = lib.sym<QueryPortCompat>("ibv_query_port");
  QueryGidEx query_gid_ex = lib.sym<QueryGidEx>("_ibv_query_gid_ex");
  bool usable() const { return get_list && free_list && device_name && open && close && query_port_compat; }

  /// What verbs.h's inline ibv_query_port does: the provider's extended query when it has one.
  int query_port(ibv_context* ctx, uint8_t port, ibv_port_attr* attr) const {
    *attr = ibv_port_attr{};
    if (verbs_context* vctx = verbs_get_ctx_op(ctx, query_port)) return vctx->query_port(ctx, port, attr, sizeof *attr);
    return query_port_compat(ctx, port, reinterpret_cast<_compat_ibv_port_attr*>(attr));
  }
};

void query_port(const VerbsApi& v, ibv_context* ctx, Port& port) {
  ibv_port_attr attr{};
  if (v.query_port(ctx, static_cast<uint8_t>(port.num), &attr) != 0) return;
  port.verbs.queried = true;
  port.verbs.state = state_name(attr.state);
  port.verbs.active_mtu_bytes = 128 << static_cast<int>(attr.active_mtu);
  const double r = lane_Gbps(attr.active_speed) * lanes(attr.active_width);
  if (r > 0) port.verbs.rate_Gbps = r;
  port.verbs.link_layer = attr.link_layer == IBV_LINK_LAYER_ETHERNET ? "Ethernet" : "InfiniBand";
  if (!v.query_gid_ex) return;
  for (const auto& g : port.gids) {
    ibv_gid_entry entry{};
    if (v.query_gid_ex(ctx, static_cast<uint32_t>(port.num), static_cast<uint32_t>(g.index), &entry, 0, sizeof entry) != 0)
      continue;
    port.verbs.gid_types[g.index] = entry.gid_type == IBV_GID_TYPE_ROCE_V2   ? "RoCE v2"
                                    : entry.gid_type == IBV_GID_TYPE_ROCE_V1 ? "RoCE v1"
                                                                             : "IB";
  }
}

}  // namespace

bool query_verbs(Topology& topo) {
  const VerbsApi v;
  if (!v.usable()) return false;  // no rdma-core on this node
  int n = 0;
  std::unique_ptr<ibv_device*, VerbsApi::FreeList> list(v.get_list(&n), v.free_list);
  if (!list || n <= 0) return false;
  bool any = false;
  for (int i = 0; i < n; ++i) {
    const char* name = v.device_name(list.get()[i]);
    if (!name) continue;
    Nic* nic = nullptr;
    for (auto& x : topo.nics)
      if (x.name == name) nic = &x;
    if (!nic) continue;
    std::unique_ptr<ibv_context, VerbsApi::Close> ctx(v.open(list.get()[i]), v.close);
    if (!ctx) continue;
    for (auto& port : nic->ports) {
      query_port(v, ctx.get(), port);
      any = any || port.verbs.queried;
    }
  }
  return any;
}

}  // namespace railkit::topo
