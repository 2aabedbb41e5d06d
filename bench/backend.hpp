#pragma once
// The backend registry: one entry per backend folder (bench/mpi, bench/nccl, bench/sim), each
// either built in (with its functions) or not (with the words that say so). railkit-bench's
// program logic looks backends up here and never names one: adding a backend is its folder, its
// entry function and one line of the table (bench/backends.cpp).
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "bench/bootstrap.hpp"
#include "bench/communicator.hpp"
#include "bench/options.hpp"
#include "bench/poll.hpp"
#include "bench/transport.hpp"
#include "core/results.hpp"

namespace railkit::bench {

/// What the program logic must know of a backend before it has a communicator.
struct BackendTraits {
  /// Drives several GPU ranks per process with -g N (nccl).
  bool gpu_slots = false;
  /// One process simulates every rank (no launcher, nothing to agree), its buffers are never
  /// backed, it checks no data and its times are simulated (sim).
  bool simulated = false;
  /// Element counts must fit an int (MPI's count type).
  bool int_counts = false;
  /// What its NCCL did is read from NCCL's own log after the run (nccl); other backends say it
  /// themselves (Communicator::observed_nccl) or not at all.
  bool nccl_log = false;
};

/// Memory other than the host's that holds some of this node's buffers (nccl: one GPU): where,
/// how many of the node's ranks put their send and receive buffers there, and its free bytes.
struct BufferRoom {
  std::string where;  ///< "GPU 0 (NVIDIA H200)"
  int ranks = 0;
  std::uint64_t free_bytes = 0;
};

/// A backend resolved and prepared for one run on this process: its communicators and what it
/// adds to the run's description.
class BackendRun {
 public:
  virtual ~BackendRun() = default;
  /// Ranks this process drives: 1, -g N on nccl, the cluster's GPUs on sim.
  virtual int slots() const = 0;
  /// Collective over `boot`: the communicator of the ranks that pass the same `color`. `signal`
  /// is the watchdog's; polls inside the backend honour it.
  virtual std::unique_ptr<Communicator> make(Bootstrap& boot, int color, AbortSignal& signal) const = 0;
  /// Throws UsageError for a plan the backend cannot run on `group_size` ranks (sim: a root
  /// beyond the simulated cluster), before the general checks.
  virtual void check_root(const BenchOptions& o, int group_size) const {
    (void)o, (void)group_size;
  }
  /// Adds what only the backend knows to the results document before the run (sim: the cluster
  /// and the machine that simulated it, `boot`'s first host).
  virtual void annotate(ResultsDocument& doc, const Bootstrap& boot) const { (void)doc, (void)boot; }
  /// Where this process's buffers go when not in host memory (nccl: each of its GPUs, with the
  /// ranks of the node's `local_processes` processes that share it); nullopt: host memory, checked
  /// against MemAvailable.
  virtual std::optional<std::vector<BufferRoom>> buffer_rooms(int local_processes) const {
    (void)local_processes;
    return std::nullopt;
  }
  /// One-line warnings rank 0 prints before the run.
  virtual std::vector<std::string> warnings() const { return {}; }
  /// Lines the table's header adds for options `given` on the command line.
  virtual std::vector<std::string> header_lines(const BenchOptions& given) const {
    (void)given;
    return {};
  }
  /// This rank's transport (mpi: what carries its data to each peer); nullopt where the backend
  /// does not say. `hosts`: every world rank's host; `guess`: the launcher's environment.
  virtual std::optional<RankTransport> transport(int rank, const std::vector<std::string>& hosts,
                                                 const LauncherGuess& guess) const {
    (void)rank, (void)hosts, (void)guess;
    return std::nullopt;
  }
};

/// The processes of a launch (MPI): started once per process, before any bootstrap.
class World {
 public:
  virtual ~World() = default;
  /// The bootstrap over every process of the launch.
  virtual std::unique_ptr<Bootstrap> bootstrap() = 0;
  /// Keeps the world up at destruction (another process may wait for this one; the job is to
  /// be ended with BackendEntry::abort_world).
  virtual void leave_up() = 0;
};

/// One backend of the registry. The function pointers are null when it is not built in.
struct BackendEntry {
  BackendChoice choice = BackendChoice::Mpi;
  std::string_view name;  ///< --backend's word and run.backend: "mpi"
  BackendTraits traits;
  std::string_view init_what = "communicator init";  ///< the watchdog's name for making its communicators

  /// Library and version ("Open MPI v4.1.4"): --version and run.backend_version.
  std::string (*version)() = nullptr;
  /// Empty when it can run here, else a one-line reason (nccl: no usable GPU). Null: it always can.
  std::string (*unusable)() = nullptr;
  /// Checks what only this process can see and prepares the run (`envp`: main's third argument).
  /// Throws UsageError / UnavailableError naming the flag or the reason.
  std::unique_ptr<BackendRun> (*prepare)(const BenchOptions& o, const Bootstrap& boot, char** envp) = nullptr;
  /// The launch's world, for the one backend that brings one (mpi); null elsewhere.
  /// `want_threads`: the watchdog's side channel needs concurrent calls.
  std::unique_ptr<World> (*start_world)(int* argc, char*** argv, bool want_threads) = nullptr;
  /// Ends every process of the world with `code` while it is up; nothing otherwise.
  void (*abort_world)(int code) = nullptr;
  std::string_view world_name;  ///< run's observed.backend.bootstrap with that world: "MPI"

  /// Not built: what --version lists (empty: nothing), the short reason, and the refusal that
  /// follows "--backend NAME: ".
  std::string_view absent_version;
  std::string_view absent_reason;
  std::string_view absent_error;

  bool built() const { return prepare != nullptr; }
};

/// --backend auto: the first of these that is built and usable here. The last is the fallback:
/// a refusal of it also says why the others cannot run.
inline constexpr BackendChoice kAutoOrder[] = {BackendChoice::Nccl, BackendChoice::Mpi};

/// Every backend, built or not, in --version's order. Immutable.
std::span<const BackendEntry> backend_table();

/// The entry of `c` (not Auto).
const BackendEntry& backend_entry(BackendChoice c);

/// The built backend that brings the launch's world; null when none is built (one process).
const BackendEntry* world_backend();

/// The backend `asked` runs on here: throws UnavailableError naming why when it is not built or
/// cannot run here (auto: when none of kAutoOrder can).
const BackendEntry& resolve_backend(BackendChoice asked);

}  // namespace railkit::bench
