#pragma once
// MPI lifetime and error checking for railkit-bench. Errors throw MpiError; nothing exits deep down.
#include <mpi.h>

#include <memory>
#include <string>

#include "bench/bootstrap.hpp"
#include "bench/communicator.hpp"

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

}  // namespace railkit::bench::mpi
