#pragma once
// NCCL's profiler plugin ABI, versions 1 (NCCL 2.23) to 5 (NCCL 2.28+), declared here under our own
// names because NCCL does not install its plugin headers. Written from NCCL v2.28.9-1's
// ext-profiler/README.md and ext-profiler/example/nccl/profiler{,_v1..v5,_net}.h and net_ib_v1.h;
// tests/monitor/plugin_abi_layout_test.cpp asserts the sizes, offsets and values those headers give.
#include <sys/types.h>

#include <cstddef>
#include <cstdint>

namespace railkit::nccl_prof_abi {

/// ncclResult_t: a C enum, 4 bytes. The profiler answers kSuccess except from a failed init.
enum Result : int { kSuccess = 0, kSystemError = 2, kInternalError = 3, kInvalidArgument = 4 };

/// ncclDebugLogLevel and the subsystem flags of a log line (common.h).
enum LogLevel : int { kLogNone = 0, kLogVersion = 1, kLogWarn = 2, kLogInfo = 3, kLogAbort = 4, kLogTrace = 5 };
enum LogSubsys : unsigned long { kSubsysInit = 0x1, kSubsysColl = 0x2, kSubsysNet = 0x10, kSubsysProxy = 0x400 };

/// ncclDebugLogger_t: printf-style; `file` and `line` name the caller.
using Logger = void (*)(LogLevel level, unsigned long flags, const char* file, int line, const char* fmt, ...);

/// Event types (profiler.h), also the bits of the activation mask init returns.
enum EventType : std::uint64_t {
  kGroup = 1u << 0,
  kColl = 1u << 1,
  kP2p = 1u << 2,
  kProxyOp = 1u << 3,
  kProxyStep = 1u << 4,
  kProxyCtrl = 1u << 5,
  kKernelCh = 1u << 6,
  kNetPlugin = 1u << 7,
  kGroupApi = 1u << 8,
  kCollApi = 1u << 9,
  kP2pApi = 1u << 10,
  kKernelLaunch = 1u << 11,
};

/// ncclProfilerEventState_t (profiler.h): the states recordEventState reports.
enum EventState : int {
  kProxyOpSendPosted = 0,
  kProxyOpRecvDone = 7,
  kProxyStepSendGPUWait = 8,
  kProxyStepSendWait = 9,
  kProxyStepRecvWait = 10,
  kProxyStepRecvFlushWait = 11,
  kProxyStepRecvGPUWait = 12,
  kProxyCtrlIdle = 13,
  kProxyCtrlAppendEnd = 18,
  kProxyOpInProgressV4 = 19,
  kProxyStepSendPeerWaitV4 = 20,
  kNetPluginUpdate = 21,
  kKernelChStop = 22,
  kGroupStartApiStop = 23,
  kGroupEndApiStart = 24,
};

/// The net-plugin id of ncclProfileNetPlugin events (profiler_net.h): 16 bits of version, then the type.
inline constexpr std::int64_t kNetVersionMask = 0xffff;
inline constexpr std::int64_t kNetTypeMask = 0xffff0000;
inline constexpr std::int64_t kNetTypeIb = 1 << 16;
inline constexpr std::int64_t kNetTypeSocket = 2 << 16;
inline constexpr std::int64_t kNetIbVersion = 1;
inline constexpr std::uint8_t kNetIbQp = 1;  ///< ncclProfileQp

/// ncclProfilerNetIbDescr_v1_t: what the IB net plugin attaches to a NetPlugin event (one work request).
struct NetIbDescrV1 {
  std::uint8_t type;  ///< kNetIbQp
  struct Qp {
    int device;  ///< NCCL's net device index
    std::uint64_t wr_id;
    int opcode;
    int qpNum;
    std::size_t length;  ///< bytes of the work request
  };
  union {
    Qp qp;
  };
};

// The per-type parts of the descriptors (named structs: ISO C++ has no anonymous structs).
struct GroupApiV5 { int graphCaptured; int groupDepth; };
struct CollApiV5 { const char* func; std::size_t count; const char* datatype; int root; void* stream; bool graphCaptured; };
struct P2pApiV5 { const char* func; std::size_t count; const char* datatype; void* stream; bool graphCaptured; };
struct KernelLaunchV5 { void* stream; };
struct CollV5 {
  std::uint64_t seqNumber; const char* func; const void* sendBuff; void* recvBuff; std::size_t count; int root;
  const char* datatype; std::uint8_t nChannels; std::uint8_t nWarps; const char* algo; const char* proto;
  void* parentGroup;
};
struct P2pV5 { const char* func; void* buff; const char* datatype; std::size_t count; int peer; std::uint8_t nChannels; void* parentGroup; };
struct ProxyOpDescr { pid_t pid; std::uint8_t channelId; int peer; int nSteps; int chunkSize; int isSend; };
struct ProxyStepDescr { int step; };
struct KernelChV4 { std::uint8_t channelId; std::uint64_t pTimer; };
struct NetPluginDescr { std::int64_t id; void* data; };

/// ncclProfilerEventDescr_v5_t (NCCL 2.28).
struct EventDescrV5 {
  std::uint64_t type;
  void* parentObj;
  int rank;
  union {
    GroupApiV5 groupApi;
    CollApiV5 collApi;
    P2pApiV5 p2pApi;
    KernelLaunchV5 kernelLaunch;
    CollV5 coll;
    P2pV5 p2p;
    ProxyOpDescr proxyOp;
    ProxyStepDescr proxyStep;
    KernelChV4 kernelCh;
    NetPluginDescr netPlugin;
  };
};

struct CollV4 {
  std::uint64_t seqNumber; const char* func; const void* sendBuff; void* recvBuff; std::size_t count; int root;
  const char* datatype; std::uint8_t nChannels; std::uint8_t nWarps; const char* algo; const char* proto;
};
struct P2pV4 { const char* func; void* buff; const char* datatype; std::size_t count; int peer; std::uint8_t nChannels; };

/// ncclProfilerEventDescr_v4_t (NCCL 2.26-2.27).
struct EventDescrV4 {
  std::uint8_t type;
  void* parentObj;
  int rank;
  union {
    CollV4 coll;
    P2pV4 p2p;
    ProxyOpDescr proxyOp;
    ProxyStepDescr proxyStep;
    KernelChV4 kernelCh;
    NetPluginDescr netPlugin;
  };
};

struct CollV3 {
  const char* name; std::uint64_t commHash; std::uint64_t seqNumber; const char* func; const void* sendBuff;
  void* recvBuff; std::size_t count; int root; const char* datatype; std::uint8_t nMaxChannels; std::uint8_t nWarps;
  const char* algo; const char* proto;
};
struct P2pV3 { const char* name; std::uint64_t commHash; const char* func; void* buff; const char* datatype; std::size_t count; int peer; };
struct KernelChV3 { std::uint8_t channelId; };

/// ncclProfilerEventDescr_v3_t (NCCL 2.25).
struct EventDescrV3 {
  std::uint8_t type;
  void* parentObj;
  int rank;
  union {
    CollV3 coll;
    P2pV3 p2p;
    ProxyOpDescr proxyOp;
    ProxyStepDescr proxyStep;
    KernelChV3 kernelCh;
    NetPluginDescr netPlugin;
  };
};

struct CollV2 {
  const char* name; std::uint64_t commHash; std::uint64_t seqNumber; const char* func; const void* sendBuff;
  void* recvBuff; std::size_t count; int root; const char* datatype; std::size_t trafficBytes;
  std::uint8_t nMaxChannels; std::uint8_t nWarps; const char* algo; const char* proto;
};

/// ncclProfilerEventDescr_v2_t (NCCL 2.24): no kernel or net-plugin events.
struct EventDescrV2 {
  std::uint8_t type;
  void* parentObj;
  int rank;
  union {
    CollV2 coll;
    P2pV3 p2p;
    ProxyOpDescr proxyOp;
    ProxyStepDescr proxyStep;
  };
};

struct CollV1 {
  const char* name; std::uint64_t commHash; std::uint64_t seqNumber; std::uint8_t func; const void* sendBuff;
  void* recvBuff; std::size_t count; int root; std::uint8_t datatype; std::uint32_t op; std::size_t trafficBytes;
  std::uint8_t nMaxChannels; std::uint8_t nWarps; std::uint8_t algo; std::uint8_t proto; int isCollnet; int isNvls;
};
struct P2pV1 { const char* name; std::uint64_t commHash; std::uint8_t func; void* buff; std::uint8_t datatype; std::size_t count; int peer; };

/// ncclProfilerEventDescr_v1_t (NCCL 2.23): func, datatype, algo and proto as numbers.
struct EventDescrV1 {
  std::uint8_t type;
  void* parentObj;
  int rank;
  union {
    CollV1 coll;
    P2pV1 p2p;
    ProxyOpDescr proxyOp;
    ProxyStepDescr proxyStep;
  };
};

/// ncclProfilerEventStateArgs_v4_t and _v5_t (the same layout).
union StateArgsV5 {
  struct { std::size_t transSize; } proxyStep;
  struct { int appendedProxyOps; } proxyCtrl;
  struct { void* data; } netPlugin;
  struct { std::uint64_t pTimer; } kernelCh;
};
using StateArgsV4 = StateArgsV5;

/// ncclProfilerEventStateArgs_v1_t to _v3_t.
union StateArgsV1 {
  struct { std::size_t transSize; int steps; } proxyOp;
  struct { int appendedProxyOps; } proxyCtrl;
};

/// ncclProfiler_v5_t, exported as `ncclProfiler_v5`.
struct ProfilerV5 {
  const char* name;
  Result (*init)(void** context, std::uint64_t commId, int* eActivationMask, const char* commName, int nNodes,
                 int nranks, int rank, Logger logfn);
  Result (*startEvent)(void* context, void** eHandle, EventDescrV5* eDescr);
  Result (*stopEvent)(void* eHandle);
  Result (*recordEventState)(void* eHandle, EventState eState, StateArgsV5* eStateArgs);
  Result (*finalize)(void* context);
};

/// ncclProfiler_v4_t, exported as `ncclProfiler_v4`: init takes the comm hash after the name.
struct ProfilerV4 {
  const char* name;
  Result (*init)(void** context, int* eActivationMask, const char* commName, std::uint64_t commHash, int nNodes,
                 int nranks, int rank, Logger logfn);
  Result (*startEvent)(void* context, void** eHandle, EventDescrV4* eDescr);
  Result (*stopEvent)(void* eHandle);
  Result (*recordEventState)(void* eHandle, EventState eState, StateArgsV4* eStateArgs);
  Result (*finalize)(void* context);
};

/// ncclProfiler_v1_t to _v3_t: init knows nothing of the communicator.
template <class Descr>
struct ProfilerV1to3 {
  const char* name;
  Result (*init)(void** context, int* eActivationMask);
  Result (*startEvent)(void* context, void** eHandle, Descr* eDescr);
  Result (*stopEvent)(void* eHandle);
  Result (*recordEventState)(void* eHandle, EventState eState, StateArgsV1* eStateArgs);
  Result (*finalize)(void* context);
};
using ProfilerV3 = ProfilerV1to3<EventDescrV3>;
using ProfilerV2 = ProfilerV1to3<EventDescrV2>;
using ProfilerV1 = ProfilerV1to3<EventDescrV1>;

}  // namespace railkit::nccl_prof_abi
