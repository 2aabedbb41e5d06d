#pragma once
// The recording core: one Context per communicator (profiler init), with fixed pools of event
// slots allocated at init. Handles given to NCCL are pointers into the pools; a full pool counts
// the event as dropped and answers a null handle, which NCCL tolerates. Every call takes the
// context's spin lock for a bounded section (no allocation, no system call but the clock).
#include <atomic>
#include <cstdint>
#include <memory>

#include "monitor/plugin/model.hpp"
#include "monitor/plugin/nccl_profiler_abi.h"
#include "monitor/plugin/window.hpp"

namespace railkit::monitor_plugin {

inline constexpr std::uint32_t kSlotMagic = 0x524b4d31;  // "RKM1"

class Context;

/// The head of every slot: what the handle is and whose it is.
struct SlotHead {
  std::uint32_t magic = 0;
  Kind kind = Kind::Ignored;
  bool live = false;
  Context* ctx = nullptr;
};

/// A collective or point-to-point operation, open from Coll/P2p start until it completes.
struct Task : SlotHead {
  Op op = Op::Unknown;
  std::uint8_t algo = kUnknownName, proto = kUnknownName;
  int channels = 0, peer = -1, refs = 0, kernel_stopped = 0;
  bool enqueued = false;
  std::uint64_t seq = 0, bytes = 0;
  std::int64_t start_ns = 0, enqueued_ns = 0;  // CPU monotonic
  std::int64_t proxy_first_ns = 0, proxy_last_ns = 0;
  std::uint64_t kernel_start_ns = 0, kernel_stop_ns = 0;  // GPU globaltimer
  Task* prev = nullptr;
  Task* next = nullptr;  // the in-flight list, in start order
};

struct ProxyOpSlot : SlotHead {
  Task* task = nullptr;
  int channel = 0, peer = 0, steps = 0, chunk_bytes = 0;
  bool send = false;
  std::uint64_t bytes = 0, step_events = 0;
  std::int64_t start_ns = 0;
};

struct StepSlot : SlotHead {
  ProxyOpSlot* op = nullptr;
  std::uint64_t bytes = 0;
};

struct KernelSlot : SlotHead {
  Task* task = nullptr;
  std::uint64_t start_ns = 0, stop_ns = 0;
};

struct NetSlot : SlotHead {
  int device = 0;
  std::uint64_t bytes = 0;
};

/// A fixed pool: slots and a FIFO ring of free indices (a freed slot is reused last, so a late
/// reference to it finds it not live rather than reused).
template <class T>
class Pool {
 public:
  explicit Pool(std::uint32_t capacity);
  T* take() noexcept;
  void give(T* slot) noexcept;
  std::uint32_t capacity() const noexcept { return capacity_; }
  bool owns(const void* p) const noexcept;
  std::size_t bytes() const noexcept;

 private:
  std::uint32_t capacity_;
  std::unique_ptr<T[]> slots_;
  std::unique_ptr<std::uint32_t[]> free_;
  std::uint64_t head_ = 0, tail_ = 0;  // free_[head % cap] .. free_[tail % cap)
};

/// Pool sizes per communicator.
struct PoolSizes {
  std::uint32_t tasks = 1024, proxy_ops = 2048, steps = 4096, kernels = 2048, nets = 4096;
};

/// What the communicator is, as init (or, before v4, the first events) tells it.
struct CommInfo {
  std::uint64_t comm_hash = 0;
  char comm_name[128] = {};
  int nnodes = 0, nranks = 0, rank = -1;
  const char* abi = "v5";
  bool kernel_events = true;  ///< completion waits for the KernelCh events (v3+)
  nccl_prof_abi::Logger log = nullptr;
};

/// What the writer takes at a window's end, under the lock.
struct InflightSummary {
  int count = 0;
  Op oldest_op = Op::Unknown;
  std::uint64_t oldest_seq = 0;
  std::int64_t oldest_start_ns = 0;  // CPU monotonic
};

/// One communicator's recorder. Created by init, destroyed by finalize (after the writer is done).
class Context {
 public:
  Context(const CommInfo& info, const PoolSizes& sizes, int max_samples, std::uint64_t seed);

  /// startEvent: a handle (or null for kinds not kept, a full pool, or a bad event).
  void* start(const Event& e) noexcept;
  /// stopEvent and recordEventState on a handle of this context.
  void stop(SlotHead* h) noexcept;
  void record(SlotHead* h, const StateUpdate& u) noexcept;

  /// Writer side: swaps windows; returns the closed one (valid until the next swap) and fills
  /// `inflight`. `now_ns` is CPU monotonic, `now_unix_ns` the same instant in Unix time.
  /// `info` gets the communicator's identity as of the swap (v1-v3 learn it from events).
  Window& swap(std::int64_t now_ns, std::int64_t now_unix_ns, InflightSummary& inflight, CommInfo& info) noexcept;

  std::uint32_t magic() const noexcept { return magic_; }
  std::int64_t unix_offset_ns() const noexcept { return unix_offset_ns_; }
  /// Bytes of the pools and windows this context allocated at init.
  std::size_t bytes() const noexcept;
  /// Events dropped because a pool was full, since init (read by the writer).
  std::uint64_t pool_drops() const noexcept { return pool_drops_.load(std::memory_order_relaxed); }
  void count_callback() noexcept { callbacks_.fetch_add(1, std::memory_order_relaxed); }
  std::uint64_t callbacks() const noexcept { return callbacks_.load(std::memory_order_relaxed); }

 private:
  void* start_task(const Event& e) noexcept;
  void* start_proxy_op(const Event& e) noexcept;
  void* start_step(const Event& e) noexcept;
  void* start_kernel(const Event& e) noexcept;
  void* start_net(const Event& e) noexcept;
  void stop_task(Task* t) noexcept;
  void stop_proxy_op(ProxyOpSlot* op) noexcept;
  void stop_kernel(KernelSlot* k) noexcept;
  void stop_net(NetSlot* n) noexcept;
  void maybe_complete(Task* t) noexcept;
  void complete(Task* t) noexcept;
  void unlink(Task* t) noexcept;
  Task* live_task(void* parent) noexcept;
  void drop() noexcept;
  std::uint64_t next_random() noexcept;
  void lock() noexcept;
  void unlock() noexcept { lock_.clear(std::memory_order_release); }

  std::uint32_t magic_ = kSlotMagic;
  CommInfo info_;
  int max_samples_;
  std::int64_t unix_offset_ns_;
  std::atomic_flag lock_ = ATOMIC_FLAG_INIT;
  Pool<Task> tasks_;
  Pool<ProxyOpSlot> ops_;
  Pool<StepSlot> steps_;
  Pool<KernelSlot> kernels_;
  Pool<NetSlot> nets_;
  Task* oldest_ = nullptr;
  Task* newest_ = nullptr;
  int inflight_ = 0;
  std::unique_ptr<Window> windows_[2];
  Window* active_;
  int nic_outstanding_[kMaxNics] = {};
  std::int64_t nic_since_ns_[kMaxNics] = {};
  std::uint64_t random_state_;
  std::atomic<std::uint64_t> pool_drops_{0};
  std::atomic<std::uint64_t> callbacks_{0};
};

/// CPU monotonic clock, ns.
std::int64_t monotonic_ns() noexcept;
/// Unix time, ns.
std::int64_t unix_ns() noexcept;

}  // namespace railkit::monitor_plugin
