#pragma once
// The data-plane seam (gloo's shape): one Communicator per backend folder (bench/mpi, bench/nccl,
// bench/sim) with the same contract. Buffers live wherever the backend wants (host or device memory);
// data init and verification go through the backend because only it can touch them cheaply.
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench/data.hpp"
#include "bench/types.hpp"
#include "core/nccl_log.hpp"

namespace railkit::bench {

/// One collective call of one slot. `count` is the param count of CollSizes.
struct OpCall {
  Coll coll;
  DType dtype;
  RedOp op;
  int root;
  const void* send;
  void* recv;
  std::uint64_t count;
  bool in_place;
};

/// Where, in elements from the receive buffer's start, an in-place operation reads its input
/// and writes the part of its output this rank checks.
struct InPlaceLayout {
  std::uint64_t input_offset = 0;
  std::uint64_t output_offset = 0;
};

/// Per-launch times of an asynchronous backend (device events on nccl, simulated times on sim).
class EventTiming {
 public:
  virtual ~EventTiming() = default;
  /// Times each of the next `iters` launches.
  virtual void start_event_timing(int iters) = 0;
  /// Per-launch times (us) of each slot (outer index) since start_event_timing, after
  /// complete(); empty when not timed.
  virtual std::vector<std::vector<double>> event_times_us() = 0;
  /// True when event_times_us() are simulated times (the sim backend): the loop time is then
  /// their mean, never the host clock (which measures the simulator, not the collective).
  virtual bool simulated_clock() const { return false; }
};

/// CUDA graphs (-G): capturing launches into a graph and replaying it (the nccl backend).
class GraphCapture {
 public:
  virtual ~GraphCapture() = default;
  /// Starts capturing launch() calls instead of running them (every slot's stream).
  virtual void begin_capture() = 0;
  /// Ends the capture and prepares the graphs.
  virtual void end_capture() = 0;
  /// Launches the captured graphs `times` times (asynchronously; complete() waits).
  virtual void replay(int times) = 0;
  /// Destroys the captured graphs, after complete() (never while capturing): NCCL keeps a
  /// communicator alive while a graph that captured it lives.
  virtual void drop_graphs() = 0;
};

/// What a backend knows of its own run rather than from a log (the sim backend's model).
class SelfObserved {
 public:
  virtual ~SelfObserved() = default;
  /// What the backend saw of the last timed loop, for each record of it (`results[].observed`,
  /// e.g. the simulated algorithm and fabric counters); null when nothing.
  virtual nlohmann::json timed_observed() const = 0;
  /// What NCCL did, in the shape NCCL's log gives (the sim backend's modelled NCCL, files =
  /// {"simulated"}); nullopt when nothing.
  virtual std::optional<NcclLogSummary> observed_nccl() const = 0;
};

/// A process drives one or more ranks (`slots`): nccl's -g N gives it N GPUs, each its own rank
/// (ranks rank() .. rank() + slots() - 1 of size()); every other backend has one slot. Buffers,
/// data init and checks name the slot (0-based) they belong to; a launch takes one call per slot.
class Communicator {
 public:
  virtual ~Communicator() = default;
  /// Rank of slot 0 in this communicator; slot s is rank() + s.
  virtual int rank() const = 0;
  /// Ranks in this communicator, over all processes and slots.
  virtual int size() const = 0;
  /// Ranks this process drives (-g on nccl); 1 elsewhere.
  virtual int slots() const { return 1; }
  /// "mpi", "nccl".
  virtual std::string name() const = 0;
  /// Library and version, e.g. "Open MPI v4.1.4".
  virtual std::string version() const = 0;
  /// What `slot` computes on: "host" (mpi) or "GPU 0 NVIDIA H200 [0000:18:00.0]" (nccl).
  virtual std::string device(int slot) const {
    (void)slot;
    return "host";
  }
  /// The host `slot`'s rank is on when the backend places it itself (sim: the simulated node,
  /// "n3"); empty: the process's host.
  virtual std::string host(int slot) const {
    (void)slot;
    return {};
  }
  /// Empty when supported, else a one-line reason.
  virtual std::string unsupported_reason(DType t, RedOp op) const = 0;

  /// A buffer of `bytes` for `slot` (device memory of its GPU on nccl).
  virtual void* allocate(int slot, std::uint64_t bytes) = 0;
  virtual void release(int slot, void* p) noexcept = 0;

  /// Runs one collective (calls[s] for slot s); returns when this process's part is complete
  /// (its buffers reusable).
  void run(std::span<const OpCall> calls) {
    launch(calls);
    complete();
  }

  /// Starts one collective, `calls[s]` for slot s (exactly slots() calls). Synchronous backends
  /// (mpi) finish it here; asynchronous ones (nccl) enqueue it and finish in complete().
  virtual void launch(std::span<const OpCall> calls) = 0;
  /// Waits until everything launched has finished, on every slot.
  virtual void complete() {}

  /// Optional abilities (gloo's shape: small interfaces a backend implements or not); null when
  /// the backend has none. Asynchronous backends (nccl, sim) time with an EventTiming: launch()
  /// returns before the operation is done, so per-iteration times cannot come from the host clock.
  virtual EventTiming* event_timing() { return nullptr; }
  /// CUDA graphs (-G): the nccl backend.
  virtual GraphCapture* graph_capture() { return nullptr; }
  /// What the backend saw itself rather than through logs: the sim backend.
  virtual const SelfObserved* self_observed() const { return nullptr; }

  /// How this backend measured, for the results document (`observed.backend`): e.g.
  /// {"communicators", "blocking"}, {"buffers", "ncclMemAlloc"}.
  virtual std::vector<std::pair<std::string, std::string>> facts() const { return {}; }

  /// Whether the backend can run `c` in place (NCCL's grouped send/recv cannot).
  virtual bool supports_in_place(Coll c) const {
    (void)c;
    return true;
  }
  /// Whether an out-of-place broadcast leaves the data in the root's receive buffer too (NCCL
  /// copies it there, and nccl-tests checks it; MPI_Bcast's root has one buffer).
  virtual bool broadcast_root_receives() const { return true; }
  /// Input/output placement of `slot`'s in-place operations (NCCL's convention by default).
  virtual InPlaceLayout in_place_layout(Coll c, const CollSizes& s, int slot) const;

  virtual void fill_input(int slot, void* dst, std::uint64_t count, const CheckSpec& spec) = 0;
  virtual void fill_sentinel(int slot, void* dst, std::uint64_t bytes) = 0;
  virtual std::int64_t count_wrong(int slot, const void* out, const CheckSpec& spec) = 0;
};

}  // namespace railkit::bench
