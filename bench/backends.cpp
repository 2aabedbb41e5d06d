// The backend table: the one place that knows which backends this railkit-bench was built with
// (RAILKIT_HAVE_*, set by bench/CMakeLists.txt). Each backend folder provides backend_entry();
// the words for one that is not built are here, beside its line.
#include <algorithm>
#include <array>
#include <cstddef>

#include <fmt/format.h>

#include "bench/backend.hpp"
#include "core/error.hpp"
#if RAILKIT_HAVE_MPI
#include "bench/mpi/mpi_session.hpp"
#endif
#if RAILKIT_HAVE_NCCL
#include "bench/nccl/nccl_backend.hpp"
#endif
#if RAILKIT_HAVE_SIM
#include "bench/sim/sim_communicator.hpp"
#endif

namespace railkit::bench {
namespace {

/// The entry of a backend this railkit-bench was built without.
[[maybe_unused]] BackendEntry absent(BackendChoice c, std::string_view name, BackendTraits traits, std::string_view version_line,
                    std::string_view reason, std::string_view error) {
  BackendEntry e;
  e.choice = c;
  e.name = name;
  e.traits = traits;
  e.absent_version = version_line;
  e.absent_reason = reason;
  e.absent_error = error;
  return e;
}

/// Empty when `e` is built and can run here, else why not.
std::string why_not(const BackendEntry& e) {
  if (!e.built()) return std::string(e.absent_reason);
  return e.unusable ? e.unusable() : std::string();
}

}  // namespace

std::span<const BackendEntry> backend_table() {
  static const std::array<BackendEntry, 3> table = {
#if RAILKIT_HAVE_MPI
      mpi::backend_entry(),
#else
      absent(BackendChoice::Mpi, "mpi", {.int_counts = true}, "no mpi (built without MPI: one process, no launcher)",
             "built without MPI", "this railkit-bench was built without MPI and has no mpi backend"),
#endif
#if RAILKIT_HAVE_NCCL
      nccl::backend_entry(),
#else
      absent(BackendChoice::Nccl, "nccl", {.gpu_slots = true, .nccl_log = true}, "", "built without the NCCL backend",
             "this railkit-bench was built without the NCCL backend (see --version)"),
#endif
#if RAILKIT_HAVE_SIM
      sim::backend_entry(),
#else
      absent(BackendChoice::Sim, "sim", {.simulated = true}, "no sim (built without ns-3)", "built without ns-3",
             "this railkit-bench was built without ns-3, so without the sim backend (Debian: libns3-dev libgsl-dev, "
             "then reconfigure; see --version)"),
#endif
  };
  return table;
}

const BackendEntry& backend_entry(BackendChoice c) {
  const std::span<const BackendEntry> t = backend_table();
  const auto it = std::find_if(t.begin(), t.end(), [c](const BackendEntry& e) { return e.choice == c; });
  if (it == t.end()) throw Error(ErrorCode::Internal, "no backend entry for this --backend");
  return *it;
}

const BackendEntry* world_backend() {
  for (const BackendEntry& e : backend_table())
    if (e.built() && e.start_world) return &e;
  return nullptr;
}

const BackendEntry& resolve_backend(BackendChoice asked) {
  const auto& order = kAutoOrder;
  const bool in_order = std::find(std::begin(order), std::end(order), asked) != std::end(order);
  if (asked != BackendChoice::Auto && !in_order) {
    const BackendEntry& e = backend_entry(asked);
    if (!e.built()) throw UnavailableError(fmt::format("--backend {}: {}", e.name, e.absent_error));
    if (const std::string why = why_not(e); !why.empty()) throw UnavailableError(fmt::format("--backend {}: {}", e.name, why));
    return e;
  }
  // Why each of auto's choices cannot run here, asked once each (nccl's asks CUDA for a GPU).
  std::array<std::string, std::size(kAutoOrder)> why;
  for (std::size_t i = 0; i < why.size(); ++i) why[i] = why_not(backend_entry(order[i]));
  const BackendEntry& fallback = backend_entry(order[why.size() - 1]);
  if (asked == BackendChoice::Auto) {
    for (std::size_t i = 0; i < why.size(); ++i)
      if (why[i].empty()) return backend_entry(order[i]);
    throw UnavailableError(fmt::format("--backend auto: this railkit-bench was {} and found no usable GPU ({})",
                                       fallback.absent_reason, why.front()));
  }
  const std::size_t i = static_cast<std::size_t>(std::find(std::begin(order), std::end(order), asked) - std::begin(order));
  const BackendEntry& e = backend_entry(asked);
  if (why[i].empty()) return e;
  if (e.built()) throw UnavailableError(fmt::format("--backend {}: {}", e.name, why[i]));
  if (&e != &fallback) throw UnavailableError(fmt::format("--backend {}: {}", e.name, e.absent_error));
  // The fallback refused: the reason the first choice cannot run is the one that matters.
  throw UnavailableError(fmt::format("--backend {}: {} ({})", e.name, e.absent_error, why.front()));
}

}  // namespace railkit::bench
