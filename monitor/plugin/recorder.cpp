// The recording core (recorder.hpp). Completion by reference counting: a Task holds one reference
// until its Coll/P2p stop (enqueued), one per open ProxyOp and one per open KernelCh; with kernel
// events (v3+) it also waits for one KernelCh stop per channel. Operations of one communicator
// complete in order, so a completing task also completes the older ones that nothing holds open.
#include "monitor/plugin/recorder.hpp"

#include <time.h>
#include <unistd.h>

#include <thread>

namespace railkit::monitor_plugin {

std::int64_t monotonic_ns() noexcept {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return std::int64_t{ts.tv_sec} * 1000000000 + ts.tv_nsec;
}

std::int64_t unix_ns() noexcept {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return std::int64_t{ts.tv_sec} * 1000000000 + ts.tv_nsec;
}

template <class T>
Pool<T>::Pool(std::uint32_t capacity)
    : capacity_(capacity), slots_(new T[capacity]), free_(new std::uint32_t[capacity]), tail_(capacity) {
  for (std::uint32_t i = 0; i < capacity; ++i) free_[i] = i;
}

template <class T>
T* Pool<T>::take() noexcept {
  if (head_ == tail_) return nullptr;
  T* s = &slots_[free_[head_++ % capacity_]];
  *s = T{};
  return s;
}

template <class T>
void Pool<T>::give(T* slot) noexcept {
  slot->live = false;
  free_[tail_++ % capacity_] = static_cast<std::uint32_t>(slot - slots_.get());
}

template <class T>
bool Pool<T>::owns(const void* p) const noexcept {
  const auto* b = reinterpret_cast<const char*>(slots_.get());
  const auto* c = static_cast<const char*>(p);
  return c >= b && c < b + sizeof(T) * capacity_ && (c - b) % sizeof(T) == 0;
}

template <class T>
std::size_t Pool<T>::bytes() const noexcept {
  return (sizeof(T) + sizeof(std::uint32_t)) * capacity_;
}

Context::Context(const CommInfo& info, const PoolSizes& sizes, int max_samples, std::uint64_t seed)
    : info_(info),
      max_samples_(max_samples),
      unix_offset_ns_(unix_ns() - monotonic_ns()),
      tasks_(sizes.tasks),
      ops_(sizes.proxy_ops),
      steps_(sizes.steps),
      kernels_(sizes.kernels),
      nets_(sizes.nets),
      windows_{std::make_unique<Window>(), std::make_unique<Window>()},
      active_(windows_[0].get()),
      random_state_(seed | 1) {
  active_->reset(unix_ns());
}

std::size_t Context::bytes() const noexcept {
  return sizeof(Context) + 2 * sizeof(Window) + tasks_.bytes() + ops_.bytes() + steps_.bytes() + kernels_.bytes() +
         nets_.bytes();
}

void Context::lock() noexcept {
  for (int spins = 0; lock_.test_and_set(std::memory_order_acquire); ++spins) {
    if (spins > 64) std::this_thread::yield();
  }
}

std::uint64_t Context::next_random() noexcept {  // xorshift64
  random_state_ ^= random_state_ << 13;
  random_state_ ^= random_state_ >> 7;
  random_state_ ^= random_state_ << 17;
  return random_state_;
}

void Context::drop() noexcept {
  pool_drops_.fetch_add(1, std::memory_order_relaxed);
  ++active_->dropped_events;
}

Task* Context::live_task(void* parent) noexcept {
  if (!parent || !tasks_.owns(parent)) return nullptr;
  auto* t = static_cast<Task*>(parent);
  return t->live && t->magic == kSlotMagic ? t : nullptr;
}

void* Context::start(const Event& e) noexcept {
  lock();
  void* h = nullptr;
  switch (e.kind) {
    case Kind::Coll:
    case Kind::P2p: h = start_task(e); break;
    case Kind::ProxyOp: h = start_proxy_op(e); break;
    case Kind::ProxyStep: h = start_step(e); break;
    case Kind::KernelCh: h = start_kernel(e); break;
    case Kind::NetPlugin: h = start_net(e); break;
    case Kind::Bad: ++active_->dropped_events; break;
    case Kind::Ignored: break;
  }
  unlock();
  return h;
}

void* Context::start_task(const Event& e) noexcept {
  if (info_.rank < 0) info_.rank = e.rank;  // v1-v3: init does not say
  if (info_.comm_hash == 0) info_.comm_hash = e.comm_hash;
  Task* t = tasks_.take();
  if (!t) { drop(); return nullptr; }
  const OpInfo& oi = op_info(e.op);
  t->magic = kSlotMagic;
  t->kind = e.kind;
  t->live = true;
  t->ctx = this;
  t->op = e.op;
  t->algo = e.algo;
  t->proto = e.proto;
  t->channels = e.channels;
  t->peer = e.peer;
  t->refs = 1;
  t->seq = e.seq;
  t->bytes = std::uint64_t{e.count} * static_cast<std::uint64_t>(e.type_size) *
             (oi.bytes_times_nranks && info_.nranks > 0 ? static_cast<std::uint64_t>(info_.nranks) : 1);
  t->start_ns = monotonic_ns();
  t->prev = newest_;
  (newest_ ? newest_->next : oldest_) = t;
  newest_ = t;
  ++inflight_;
  return t;
}

void* Context::start_proxy_op(const Event& e) noexcept {
  ProxyOpSlot* op = ops_.take();
  if (!op) { drop(); return nullptr; }
  op->magic = kSlotMagic;
  op->kind = Kind::ProxyOp;
  op->live = true;
  op->ctx = this;
  op->task = live_task(e.parent);  // v1/v2: the task usually completed at its stop already
  op->channel = e.channel;
  op->peer = e.peer;
  op->steps = e.steps;
  op->chunk_bytes = e.chunk_bytes;
  op->send = e.send;
  op->start_ns = monotonic_ns();
  if (op->task) {
    ++op->task->refs;
    if (op->task->proxy_first_ns == 0) op->task->proxy_first_ns = op->start_ns;
  }
  return op;
}

void* Context::start_step(const Event& e) noexcept {
  auto* op = static_cast<ProxyOpSlot*>(e.parent);
  if (!op || !ops_.owns(op) || !op->live) return nullptr;
  StepSlot* s = steps_.take();
  if (!s) { drop(); return nullptr; }
  s->magic = kSlotMagic;
  s->kind = Kind::ProxyStep;
  s->live = true;
  s->ctx = this;
  s->op = op;
  ++op->step_events;
  return s;
}

void* Context::start_kernel(const Event& e) noexcept {
  Task* t = live_task(e.parent);
  if (!t) return nullptr;
  KernelSlot* k = kernels_.take();
  if (!k) { drop(); return nullptr; }
  k->magic = kSlotMagic;
  k->kind = Kind::KernelCh;
  k->live = true;
  k->ctx = this;
  k->task = t;
  ++t->refs;
  if (e.ptimer_ns) {
    k->start_ns = e.ptimer_ns;
    if (t->kernel_start_ns == 0 || e.ptimer_ns < t->kernel_start_ns) t->kernel_start_ns = e.ptimer_ns;
  } else if (t->proxy_first_ns == 0) {  // v3: no GPU timer; the proxy's view of the kernel
    t->proxy_first_ns = monotonic_ns();
  }
  return k;
}

void* Context::start_net(const Event& e) noexcept {
  auto* step = static_cast<StepSlot*>(e.parent);
  if (!step || !steps_.owns(step) || !step->live) return nullptr;
  if ((e.net_id & nccl_prof_abi::kNetTypeMask) != nccl_prof_abi::kNetTypeIb ||
      (e.net_id & nccl_prof_abi::kNetVersionMask) != nccl_prof_abi::kNetIbVersion || !e.net_data)
    return nullptr;  // a socket or unknown net plugin: not per NIC
  const auto* ib = static_cast<const nccl_prof_abi::NetIbDescrV1*>(e.net_data);
  if (ib->type != nccl_prof_abi::kNetIbQp) return nullptr;
  if (ib->qp.device < 0 || ib->qp.device >= kMaxNics) { ++active_->dropped_events; return nullptr; }
  NetSlot* n = nets_.take();
  if (!n) { drop(); return nullptr; }
  n->magic = kSlotMagic;
  n->kind = Kind::NetPlugin;
  n->live = true;
  n->ctx = this;
  n->device = ib->qp.device;
  n->bytes = ib->qp.length;
  if (nic_outstanding_[n->device]++ == 0) nic_since_ns_[n->device] = monotonic_ns();
  return n;
}

void Context::stop(SlotHead* h) noexcept {
  lock();
  if (h->live) {
    switch (h->kind) {
      case Kind::Coll:
      case Kind::P2p: stop_task(static_cast<Task*>(h)); break;
      case Kind::ProxyOp: stop_proxy_op(static_cast<ProxyOpSlot*>(h)); break;
      case Kind::ProxyStep: {
        auto* s = static_cast<StepSlot*>(h);
        if (s->op->live) s->op->bytes += s->bytes;
        steps_.give(s);
      } break;
      case Kind::KernelCh: stop_kernel(static_cast<KernelSlot*>(h)); break;
      case Kind::NetPlugin: stop_net(static_cast<NetSlot*>(h)); break;
      default: ++active_->dropped_events; break;
    }
  }
  unlock();
}

void Context::stop_task(Task* t) noexcept {
  if (t->enqueued) return;  // stopped twice: keep the first
  t->enqueued = true;
  t->enqueued_ns = monotonic_ns();
  --t->refs;
  maybe_complete(t);
}

void Context::stop_proxy_op(ProxyOpSlot* op) noexcept {
  const std::int64_t now = monotonic_ns();
  // Bytes: what the steps reported moving, else the steps and chunk size the op announced.
  const std::uint64_t bytes = op->step_events ? op->bytes
                                              : std::uint64_t(op->steps > 0 ? op->steps : 0) *
                                                    std::uint64_t(op->chunk_bytes > 0 ? op->chunk_bytes : 0);
  active_->add_proxy(op->channel, op->peer, op->send, bytes, double(now - op->start_ns) / 1e3);
  if (Task* t = op->task; t && t->live) {
    t->proxy_last_ns = now;
    --t->refs;
    maybe_complete(t);
  }
  ops_.give(op);
}

void Context::stop_kernel(KernelSlot* k) noexcept {
  Task* t = k->task;
  if (t->live) {
    if (k->stop_ns && k->start_ns) {
      if (k->stop_ns > t->kernel_stop_ns) t->kernel_stop_ns = k->stop_ns;
    } else {
      t->proxy_last_ns = monotonic_ns();  // v3
    }
    ++t->kernel_stopped;
    --t->refs;
    maybe_complete(t);
  }
  kernels_.give(k);
}

void Context::stop_net(NetSlot* n) noexcept {
  NicEntry& nic = active_->nics[n->device];
  nic.bytes += n->bytes;
  ++nic.wrs;
  if (--nic_outstanding_[n->device] == 0) nic.busy_us += double(monotonic_ns() - nic_since_ns_[n->device]) / 1e3;
  nets_.give(n);
}

void Context::record(SlotHead* h, const StateUpdate& u) noexcept {
  lock();
  if (h->live) {
    if (u.kind == StateKind::StepBytes && h->kind == Kind::ProxyStep) {
      static_cast<StepSlot*>(h)->bytes = u.value;  // the latest transSize of this step
    } else if (u.kind == StateKind::OpBytes && h->kind == Kind::ProxyOp) {
      auto* op = static_cast<ProxyOpSlot*>(h);  // v1-v3: the bytes the op moved so far
      op->bytes = u.value;
      op->step_events = 1;
    } else if (u.kind == StateKind::KernelStop && h->kind == Kind::KernelCh) {
      static_cast<KernelSlot*>(h)->stop_ns = u.value;
    }
  }
  unlock();
}

void Context::maybe_complete(Task* t) noexcept {
  if (!t->enqueued || t->refs > 0) return;
  if (info_.kernel_events && t->kernel_stopped < (t->channels > 0 ? t->channels : 1)) return;
  // Older tasks that nothing holds open completed before this one (one stream, in order).
  while (oldest_ && oldest_ != t && oldest_->enqueued && oldest_->refs == 0) complete(oldest_);
  complete(t);
}

void Context::complete(Task* t) noexcept {
  Completed c;
  c.op = t->op;
  c.p2p = t->kind == Kind::P2p;
  c.algo = t->algo;
  c.proto = t->proto;
  c.channels = t->channels;
  c.peer = t->peer;
  c.seq = t->seq;
  c.bytes = t->bytes;
  if (t->kernel_start_ns && t->kernel_stop_ns > t->kernel_start_ns) {
    c.timing = Timing::Kernel;
    c.time_us = double(t->kernel_stop_ns - t->kernel_start_ns) / 1e3;
  } else if (t->proxy_first_ns && t->proxy_last_ns > t->proxy_first_ns) {
    c.timing = Timing::Proxy;
    c.time_us = double(t->proxy_last_ns - t->proxy_first_ns) / 1e3;
  } else {
    c.timing = Timing::Enqueue;
    c.time_us = double((t->enqueued_ns ? t->enqueued_ns : t->start_ns) - t->start_ns) / 1e3;
  }
  c.start_unix_ns = t->start_ns + unix_offset_ns_;
  c.end_unix_ns = monotonic_ns() + unix_offset_ns_;
  active_->add(c, max_samples_, next_random());
  unlink(t);
  tasks_.give(t);
}

void Context::unlink(Task* t) noexcept {
  (t->prev ? t->prev->next : oldest_) = t->next;
  (t->next ? t->next->prev : newest_) = t->prev;
  t->prev = t->next = nullptr;
  --inflight_;
}

Window& Context::swap(std::int64_t now_ns, std::int64_t now_unix_ns, InflightSummary& inflight,
                      CommInfo& info) noexcept {
  Window* closed = active_;
  Window* next = closed == windows_[0].get() ? windows_[1].get() : windows_[0].get();
  next->reset(now_unix_ns);
  lock();
  for (int d = 0; d < kMaxNics; ++d) {  // a transfer outstanding across the boundary: split its time
    if (nic_outstanding_[d] > 0) {
      closed->nics[d].busy_us += double(now_ns - nic_since_ns_[d]) / 1e3;
      nic_since_ns_[d] = now_ns;
    }
  }
  inflight.count = inflight_;
  if (oldest_) {
    inflight.oldest_op = oldest_->op;
    inflight.oldest_seq = oldest_->seq;
    inflight.oldest_start_ns = oldest_->start_ns;
  }
  info = info_;
  active_ = next;
  unlock();
  return *closed;
}

template class Pool<Task>;
template class Pool<ProxyOpSlot>;
template class Pool<StepSlot>;
template class Pool<KernelSlot>;
template class Pool<NetSlot>;

}  // namespace railkit::monitor_plugin
