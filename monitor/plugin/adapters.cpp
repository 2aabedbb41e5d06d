// libnccl-profiler-railkit.so: the exported ncclProfiler_v5 .. _v1. Each version is a thin adapter
// from its descriptors into the one event model (model.hpp); nothing throws across the ABI and
// every call but a failed init answers success (ext-profiler/README.md "Error codes").
#include <cstring>
#include <type_traits>

#include "monitor/plugin/nccl_profiler_abi.h"
#include "monitor/plugin/process.hpp"

namespace {

namespace abi = railkit::nccl_prof_abi;
namespace mp = railkit::monitor_plugin;
using mp::Event;
using mp::Kind;

/// The events we ask NCCL for: the operations, their proxy and kernel activity, and the NICs.
constexpr int kMaskV3Plus = abi::kColl | abi::kP2p | abi::kProxyOp | abi::kProxyStep | abi::kKernelCh | abi::kNetPlugin;
constexpr int kMaskV1V2 = abi::kColl | abi::kP2p | abi::kProxyOp | abi::kProxyStep;

abi::Result init_common(void** context, int* mask, const mp::CommInfo& info, int wanted) noexcept {
  if (!context) return abi::kInvalidArgument;
  *context = mp::Process::get().open(info);
  if (!*context) return abi::kInternalError;  // NCCL runs this communicator without the plugin
  if (mask) *mask = wanted;
  return abi::kSuccess;
}

mp::CommInfo comm_info(const char* abi_name, bool kernel_events, abi::Logger log) {
  mp::CommInfo info;
  info.abi = abi_name;
  info.kernel_events = kernel_events;
  info.log = log;
  return info;
}

/// v4 and v5 init: the communicator is known from the start.
abi::Result init_v4_v5(void** context, int* mask, const char* abi_name, std::uint64_t comm_hash, const char* comm_name,
                       int nnodes, int nranks, int rank, abi::Logger logfn) noexcept {
  mp::CommInfo info = comm_info(abi_name, true, logfn);
  info.comm_hash = comm_hash;
  if (comm_name) std::strncpy(info.comm_name, comm_name, sizeof info.comm_name - 1);
  info.nnodes = nnodes;
  info.nranks = nranks;
  info.rank = rank;
  return init_common(context, mask, info, kMaskV3Plus);
}

abi::Result init_v5(void** context, std::uint64_t commId, int* mask, const char* commName, int nNodes, int nranks,
                    int rank, abi::Logger logfn) noexcept {
  return init_v4_v5(context, mask, "v5", commId, commName, nNodes, nranks, rank, logfn);
}

abi::Result init_v4(void** context, int* mask, const char* commName, std::uint64_t commHash, int nNodes, int nranks,
                    int rank, abi::Logger logfn) noexcept {
  return init_v4_v5(context, mask, "v4", commHash, commName, nNodes, nranks, rank, logfn);
}

abi::Result init_v3(void** context, int* mask) noexcept {
  return init_common(context, mask, comm_info("v3", true, nullptr), kMaskV3Plus);
}
abi::Result init_v2(void** context, int* mask) noexcept {
  return init_common(context, mask, comm_info("v2", false, nullptr), kMaskV1V2);
}
abi::Result init_v1(void** context, int* mask) noexcept {
  return init_common(context, mask, comm_info("v1", false, nullptr), kMaskV1V2);
}

abi::Result finalize(void* context) noexcept {
  auto& p = mp::Process::get();
  if (p.known(context)) p.close(static_cast<mp::Context*>(context));
  return abi::kSuccess;
}

/// The context that owns `e`: the parent's for events of the proxy (PXN: a ProxyOp of another
/// process is never dereferenced), the given one for operations. Null when none is ours.
mp::Context* owner(void* context, const Event& e) noexcept {
  auto& p = mp::Process::get();
  switch (e.kind) {
    case Kind::ProxyOp:
      if (e.pid != p.pid()) return nullptr;
      [[fallthrough]];
    case Kind::ProxyStep:
    case Kind::KernelCh:
    case Kind::NetPlugin: {
      const auto* head = static_cast<const mp::SlotHead*>(e.parent);
      if (!head || head->magic != mp::kSlotMagic || !p.known(head->ctx)) return nullptr;
      return head->ctx;
    }
    default: return p.known(context) ? static_cast<mp::Context*>(context) : nullptr;
  }
}

abi::Result start(void* context, void** handle, const Event& e) noexcept {
  if (!handle) return abi::kSuccess;
  *handle = nullptr;
  if (!mp::Process::get().enabled()) return abi::kSuccess;
  mp::Context* ctx = owner(context, e);
  if (!ctx) return abi::kSuccess;
  ctx->count_callback();
  if (e.kind != Kind::Ignored) *handle = ctx->start(e);
  return abi::kSuccess;
}

mp::SlotHead* our_slot(void* handle) noexcept {
  auto* head = static_cast<mp::SlotHead*>(handle);
  if (!head || !mp::Process::get().enabled() || head->magic != mp::kSlotMagic) return nullptr;
  return mp::Process::get().known(head->ctx) ? head : nullptr;
}

abi::Result stop(void* handle) noexcept {
  if (mp::SlotHead* head = our_slot(handle)) {
    head->ctx->count_callback();
    head->ctx->stop(head);
  }
  return abi::kSuccess;
}

abi::Result record(void* handle, const mp::StateUpdate& u) noexcept {
  if (mp::SlotHead* head = our_slot(handle)) {
    head->ctx->count_callback();
    if (u.kind != mp::StateKind::Ignored) head->ctx->record(head, u);
  }
  return abi::kSuccess;
}

/// The kind of a descriptor's type (one bit); API, group and proxy-control events are not kept.
Kind kind_of(std::uint64_t type) noexcept {
  switch (type) {
    case abi::kColl: return Kind::Coll;
    case abi::kP2p: return Kind::P2p;
    case abi::kProxyOp: return Kind::ProxyOp;
    case abi::kProxyStep: return Kind::ProxyStep;
    case abi::kKernelCh: return Kind::KernelCh;
    case abi::kNetPlugin: return Kind::NetPlugin;
    case abi::kGroup: case abi::kProxyCtrl: case abi::kGroupApi: case abi::kCollApi: case abi::kP2pApi:
    case abi::kKernelLaunch: return Kind::Ignored;
    default: return Kind::Bad;
  }
}

/// The parts every version shares: proxy operations and steps.
template <class D>
void proxy_fields(Event& e, const D& d) noexcept {
  if (e.kind == Kind::ProxyOp) {
    e.pid = d.proxyOp.pid;
    e.channel = d.proxyOp.channelId;
    e.peer = d.proxyOp.peer;
    e.steps = d.proxyOp.nSteps;
    e.chunk_bytes = d.proxyOp.chunkSize;
    e.send = d.proxyOp.isSend != 0;
  }
}

/// v4 and v5: the same coll, p2p, kernel and net fields under the same names.
template <class D>
Event from_v4_v5(const D& d) noexcept {
  Event e;
  e.kind = kind_of(d.type);
  e.parent = d.parentObj;
  e.rank = d.rank;
  if (e.kind == Kind::Coll) {
    e.op = mp::op_from_name(d.coll.func);
    e.seq = d.coll.seqNumber;
    e.count = d.coll.count;
    e.type_size = mp::type_size_from_name(d.coll.datatype);
    e.channels = d.coll.nChannels;
    e.algo = mp::algo_from_name(d.coll.algo);
    e.proto = mp::proto_from_name(d.coll.proto);
  } else if (e.kind == Kind::P2p) {
    e.op = mp::op_from_name(d.p2p.func);
    e.count = d.p2p.count;
    e.type_size = mp::type_size_from_name(d.p2p.datatype);
    e.peer = d.p2p.peer;
    e.channels = d.p2p.nChannels;
  } else if (e.kind == Kind::KernelCh) {
    e.channel = d.kernelCh.channelId;
    e.ptimer_ns = d.kernelCh.pTimer;
  } else if (e.kind == Kind::NetPlugin) {
    e.net_id = d.netPlugin.id;
    e.net_data = d.netPlugin.data;
  }
  proxy_fields(e, d);
  return e;
}

abi::Result start_v5(void* context, void** handle, abi::EventDescrV5* d) noexcept {
  if (!d) return handle ? (*handle = nullptr, abi::kSuccess) : abi::kSuccess;
  return start(context, handle, from_v4_v5(*d));
}

abi::Result start_v4(void* context, void** handle, abi::EventDescrV4* d) noexcept {
  if (!d) return handle ? (*handle = nullptr, abi::kSuccess) : abi::kSuccess;
  return start(context, handle, from_v4_v5(*d));
}

/// v1 to v3: coll and p2p carry the comm hash; v1 gives numbers where later versions give names.
template <class D>
Event from_v1_v3(const D& d) noexcept {
  Event e;
  e.kind = kind_of(d.type);
  e.parent = d.parentObj;
  e.rank = d.rank;
  if (e.kind == Kind::Coll) {
    e.comm_hash = d.coll.commHash;
    e.seq = d.coll.seqNumber;
    e.count = d.coll.count;
    e.channels = d.coll.nMaxChannels;
    if constexpr (std::is_same_v<D, abi::EventDescrV1>) {
      e.op = mp::op_from_number(d.coll.func);
      e.type_size = mp::type_size_from_number(d.coll.datatype);
      e.algo = d.coll.algo;
      e.proto = d.coll.proto;
    } else {
      e.op = mp::op_from_name(d.coll.func);
      e.type_size = mp::type_size_from_name(d.coll.datatype);
      e.algo = mp::algo_from_name(d.coll.algo);
      e.proto = mp::proto_from_name(d.coll.proto);
    }
  } else if (e.kind == Kind::P2p) {
    e.comm_hash = d.p2p.commHash;
    e.count = d.p2p.count;
    e.peer = d.p2p.peer;
    if constexpr (std::is_same_v<D, abi::EventDescrV1>) {
      e.op = mp::op_from_number(d.p2p.func);
      e.type_size = mp::type_size_from_number(d.p2p.datatype);
    } else {
      e.op = mp::op_from_name(d.p2p.func);
      e.type_size = mp::type_size_from_name(d.p2p.datatype);
    }
  } else if constexpr (std::is_same_v<D, abi::EventDescrV3>) {
    if (e.kind == Kind::NetPlugin) {
      e.net_id = d.netPlugin.id;
      e.net_data = d.netPlugin.data;
    }
  }
  if (e.kind == Kind::KernelCh && !std::is_same_v<D, abi::EventDescrV3>) e.kind = Kind::Bad;  // not before v3
  proxy_fields(e, d);
  return e;
}

template <class D>
abi::Result start_v1_v3(void* context, void** handle, D* d) noexcept {
  if (!d) return handle ? (*handle = nullptr, abi::kSuccess) : abi::kSuccess;
  return start(context, handle, from_v1_v3(*d));
}

abi::Result record_v4_v5(void* handle, abi::EventState state, abi::StateArgsV5* args) noexcept {
  mp::StateUpdate u;
  if (args) {
    switch (state) {
      case abi::kProxyStepSendGPUWait: case abi::kProxyStepSendWait: case abi::kProxyStepRecvWait:
      case abi::kProxyStepRecvFlushWait: case abi::kProxyStepRecvGPUWait: case abi::kProxyStepSendPeerWaitV4:
        u = {mp::StateKind::StepBytes, args->proxyStep.transSize};
        break;
      case abi::kKernelChStop: u = {mp::StateKind::KernelStop, args->kernelCh.pTimer}; break;
      default: break;
    }
  }
  return record(handle, u);
}

abi::Result record_v1_v3(void* handle, abi::EventState state, abi::StateArgsV1* args) noexcept {
  mp::StateUpdate u;
  if (args && state >= abi::kProxyOpSendPosted && state <= abi::kProxyOpRecvDone)
    u = {mp::StateKind::OpBytes, args->proxyOp.transSize};
  return record(handle, u);
}

}  // namespace

extern "C" {
// The only symbols the library exports (exports.map); NCCL 2.28 looks for v5 first, then v4 .. v1.
__attribute__((visibility("default"))) extern const abi::ProfilerV5 ncclProfiler_v5;
__attribute__((visibility("default"))) extern const abi::ProfilerV4 ncclProfiler_v4;
__attribute__((visibility("default"))) extern const abi::ProfilerV3 ncclProfiler_v3;
__attribute__((visibility("default"))) extern const abi::ProfilerV2 ncclProfiler_v2;
__attribute__((visibility("default"))) extern const abi::ProfilerV1 ncclProfiler_v1;
const abi::ProfilerV5 ncclProfiler_v5 = {"railkit", init_v5, start_v5, stop, record_v4_v5, finalize};
const abi::ProfilerV4 ncclProfiler_v4 = {"railkit", init_v4, start_v4, stop, record_v4_v5, finalize};
const abi::ProfilerV3 ncclProfiler_v3 = {"railkit", init_v3, start_v1_v3<abi::EventDescrV3>, stop, record_v1_v3, finalize};
const abi::ProfilerV2 ncclProfiler_v2 = {"railkit", init_v2, start_v1_v3<abi::EventDescrV2>, stop, record_v1_v3, finalize};
const abi::ProfilerV1 ncclProfiler_v1 = {"railkit", init_v1, start_v1_v3<abi::EventDescrV1>, stop, record_v1_v3, finalize};
}
