#pragma once
// The one event model every ABI version's adapter (adapters.cpp) translates into, and the name
// tables (operations, algorithms, protocols, data types) with nccl-tests' bytes and busbw rules.
#include <sys/types.h>

#include <cstddef>
#include <cstdint>

namespace railkit::monitor_plugin {

/// The operations NCCL names (ncclFuncToString); Unknown for anything else.
enum class Op : std::uint8_t {
  Broadcast, Reduce, AllGather, ReduceScatter, AllReduce, SendRecv, Send, Recv, AlltoAll, Gather, Scatter, Unknown
};
inline constexpr int kOpCount = static_cast<int>(Op::Unknown) + 1;

/// How nccl-tests turns a count into bytes and algbw into busbw for one operation.
enum class BusbwRule : std::uint8_t { AllReduce, NMinus1OverN, One };
struct OpInfo {
  const char* name;
  BusbwRule busbw;
  bool bytes_times_nranks;  ///< AllGather, ReduceScatter: count is per rank, nccl-tests counts all of them
  bool p2p;
};

/// The row of `op` (total: Unknown has a row).
const OpInfo& op_info(Op op) noexcept;
/// The operation NCCL calls `name` (Unknown when not one).
Op op_from_name(const char* name) noexcept;
/// ncclFunc_t's number (v1 descriptors) to the operation.
Op op_from_number(int func) noexcept;
/// nccl-tests' busbw factor for `nranks` ranks (0 when nranks < 1: unknown).
double busbw_factor(Op op, int nranks) noexcept;

inline constexpr std::uint8_t kUnknownName = 0xff;
/// Index of an algorithm ("RING") or protocol ("SIMPLE") name in NCCL's tables, kUnknownName if none.
std::uint8_t algo_from_name(const char* name) noexcept;
std::uint8_t proto_from_name(const char* name) noexcept;
/// Names of those indices ("UNKNOWN" for kUnknownName or out of range).
const char* algo_name(std::uint8_t algo) noexcept;
const char* proto_name(std::uint8_t proto) noexcept;
/// Bytes of one element of an NCCL data type, by name ("ncclFloat32") or number (v1); 0 if unknown.
int type_size_from_name(const char* name) noexcept;
int type_size_from_number(int type) noexcept;

/// What an event is, after the adapter: kinds the recorder does not keep are Ignored.
enum class Kind : std::uint8_t { Ignored, Coll, P2p, ProxyOp, ProxyStep, KernelCh, NetPlugin, Bad };

/// One startEvent, version-neutral. Fields beyond `kind` are set for the kinds that have them.
struct Event {
  Kind kind = Kind::Ignored;
  void* parent = nullptr;
  int rank = -1;
  // Coll and P2p
  Op op = Op::Unknown;
  std::uint64_t seq = 0;
  std::size_t count = 0;
  int type_size = 0;
  int peer = -1;  ///< P2p peer; ProxyOp peer
  int channels = 0;
  std::uint8_t algo = kUnknownName;
  std::uint8_t proto = kUnknownName;
  std::uint64_t comm_hash = 0;  ///< v1-v3 descriptors carry it; 0 otherwise
  // ProxyOp
  pid_t pid = 0;
  int channel = 0;
  int steps = 0;
  int chunk_bytes = 0;
  bool send = false;
  // KernelCh: GPU globaltimer ns (0: the ABI version has none)
  std::uint64_t ptimer_ns = 0;
  // NetPlugin
  std::int64_t net_id = 0;
  const void* net_data = nullptr;
};

/// One recordEventState, version-neutral.
enum class StateKind : std::uint8_t { Ignored, StepBytes, OpBytes, KernelStop };
struct StateUpdate {
  StateKind kind = StateKind::Ignored;
  std::uint64_t value = 0;  ///< StepBytes, OpBytes (v1-v3): transSize; KernelStop: pTimer ns
};

}  // namespace railkit::monitor_plugin
