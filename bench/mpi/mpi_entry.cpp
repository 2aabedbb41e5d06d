// The mpi backend's registry entry: host memory and MPI collectives on the launch's MPI world.
#include "bench/mpi/mpi_session.hpp"

namespace railkit::bench::mpi {
namespace {

/// The MPI world of this process: MPI_Init_thread at start, MPI_Finalize at the end unless left up.
class MpiWorld final : public World {
 public:
  MpiWorld(int* argc, char*** argv, bool want_threads) : session_(argc, argv, want_threads) {}
  std::unique_ptr<Bootstrap> bootstrap() override { return make_bootstrap(session_); }
  void leave_up() override { session_.leave_up(); }

 private:
  Session session_;
};

/// One rank per process on its group's MPI communicator.
class MpiRun final : public BackendRun {
 public:
  int slots() const override { return 1; }
  std::unique_ptr<Communicator> make(Bootstrap&, int color, AbortSignal&) const override {
    return make_communicator(color);
  }
  std::optional<RankTransport> transport(int rank, const std::vector<std::string>& hosts,
                                         const LauncherGuess& guess) const override {
    return probe_transport(rank, hosts, guess);
  }
};

}  // namespace

BackendEntry backend_entry() {
  BackendEntry e;
  e.choice = BackendChoice::Mpi;
  e.name = "mpi";
  e.traits.int_counts = true;
  e.version = library_version;
  e.prepare = [](const BenchOptions&, const Bootstrap&, char**) -> std::unique_ptr<BackendRun> {
    return std::make_unique<MpiRun>();
  };
  e.start_world = [](int* argc, char*** argv, bool want_threads) -> std::unique_ptr<World> {
    return std::make_unique<MpiWorld>(argc, argv, want_threads);
  };
  e.abort_world = abort_world;
  e.world_name = "MPI";
  return e;
}

}  // namespace railkit::bench::mpi
