#pragma once
// MPI lifetime and error checking for railkit-bench. Errors throw MpiError; nothing exits deep down.
#include <mpi.h>

#include <memory>
#include <string>

#include "bench/backend.hpp"
#include "bench/bootstrap.hpp"
#include "bench/communicator.hpp"
#include "bench/transport.hpp"

namespace railkit::bench::mpi {

/// Throws MpiError("<what>: <MPI's error string>") unless rc is MPI_SUCCESS.
void check(int rc, const char* what);

/// "Open MPI v4.1.4" (first line of MPI_Get_library_version); callable before MPI_Init.
std::string library_version();

/// MPI_Init_thread on construction, MPI_Finalize on destruction unless leave_up() was called.
/// `want_threads` asks for MPI_THREAD_MULTIPLE (needed by the watchdog's side channel).
class Session {
 public:
  Session(int* argc, char*** argv, bool want_threads);
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;
  bool thread_multiple() const { return thread_multiple_; }
  /// No MPI_Finalize at destruction: another rank may wait in a collective for this one, and
  /// the job is to be ended with abort_world instead.
  void leave_up() { finalize_ = false; }

 private:
  bool thread_multiple_ = false;
  bool finalize_ = true;
};

/// MPI_Abort(MPI_COMM_WORLD, code) while MPI is initialized and not finalized; else nothing.
void abort_world(int code);

/// Bootstrap over MPI_COMM_WORLD (duplicated communicators for control and side channel).
std::unique_ptr<Bootstrap> make_bootstrap(const Session& session);

/// The MPI data-plane backend, host memory, on its own communicator: the ranks of
/// MPI_COMM_WORLD that share `color` (one group of --split), ordered by world rank.
std::unique_ptr<Communicator> make_communicator(int color);

/// This rank's MPI transport: the selected PML (and MTL), for ob1 the BTLs that reach each peer of
/// peers_to_probe (setting up their BML endpoints, as a first send would), and the PMI as Open MPI
/// and `guess` (the environment at start) say. Read through Open MPI's internals when this
/// railkit-bench was built against the release it runs on; otherwise "unknown" with the reason
/// in `source` (MPI_T tells only the requested component lists, not the selection).
/// `hosts`: host of every rank of MPI_COMM_WORLD.
RankTransport probe_transport(int world_rank, const std::vector<std::string>& hosts, const LauncherGuess& guess);

/// The mpi backend's registry entry (bench/backend.hpp); it brings the MPI world too.
BackendEntry backend_entry();

}  // namespace railkit::bench::mpi
