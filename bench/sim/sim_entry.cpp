// The sim backend's registry entry: one process simulates every rank of --sim-cluster.
#include <fmt/format.h>

#include "bench/sim/sim_communicator.hpp"
#include "core/error.hpp"

namespace railkit::bench::sim {
namespace {

/// The simulated cluster and NCCL settings, loaded once before anything runs.
class SimRun final : public BackendRun {
 public:
  explicit SimRun(std::shared_ptr<const SimSetup> setup) : setup_(std::move(setup)) {}
  int slots() const override { return setup_->cluster.gpus(); }
  std::unique_ptr<Communicator> make(Bootstrap&, int, AbortSignal&) const override {
    return make_communicator(setup_);
  }
  void check_root(const BenchOptions& o, int group_size) const override {
    if (o.root >= group_size)
      throw UsageError(fmt::format("-r/--root '{}': the simulated cluster has only {} GPUs (ranks 0..{})", o.root,
                                   group_size, group_size - 1));
  }
  // The run is the simulated cluster; the machine that simulated it is run.sim.machine.
  void annotate(ResultsDocument& doc, const Bootstrap& boot) const override {
    doc.simulated = true;
    doc.run.timing = "simulated";
    doc.run.sim = run_json(*setup_, boot.hosts().front());
    doc.run.hosts = node_names(setup_->cluster);
    doc.run.nnodes = setup_->cluster.nodes();
  }
  std::vector<std::string> warnings() const override {
    if (std::string w = inert_warning(setup_->nccl); !w.empty()) return {std::move(w)};
    return {};
  }
  std::vector<std::string> header_lines(const BenchOptions& given) const override {
    if (given.check_passes > 0) return {"-c: the sim backend moves no data: nothing checked"};
    return {};
  }

 private:
  std::shared_ptr<const SimSetup> setup_;
};

}  // namespace

BackendEntry backend_entry() {
  BackendEntry e;
  e.choice = BackendChoice::Sim;
  e.name = "sim";
  e.traits.simulated = true;
  e.version = version_text;
  // A bad cluster file or NCCL value is a usage error here, before anything runs.
  e.prepare = [](const BenchOptions& o, const Bootstrap&, char** envp) -> std::unique_ptr<BackendRun> {
    return std::make_unique<SimRun>(std::make_shared<const SimSetup>(prepare(o, nccl_variables(envp))));
  };
  return e;
}

}  // namespace railkit::bench::sim
