// The nccl backend's registry entry: one process's GPUs (-g N), NCCL communicators over a group's
// processes.
#include "bench/nccl/nccl_backend.hpp"

namespace railkit::bench::nccl {
namespace {

/// This process's GPUs as the options and its node-local rank pick them.
NcclSetup setup_of(const BenchOptions& o, const Bootstrap& boot) {
  NcclSetup setup;
  setup.local_rank = boot.local_rank();
  setup.device = o.device;
  setup.gpus = o.gpus_per_process;
  setup.blocking = !o.nonblocking;
  setup.poll_timeout_s = o.timeout_s;
  return setup;
}

/// NCCL communicators over the processes of each group, -g N GPUs in each process.
class NcclRun final : public BackendRun {
 public:
  explicit NcclRun(const NcclSetup& setup) : setup_(setup) {}
  int slots() const override { return setup_.gpus; }
  std::unique_ptr<Communicator> make(Bootstrap& boot, int color, AbortSignal& signal) const override {
    const std::unique_ptr<Bootstrap> group = boot.split(color);
    NcclSetup s = setup_;
    s.signal = &signal;
    return make_communicator(s, *group);
  }
  std::optional<std::vector<BufferRoom>> buffer_rooms(int local_processes) const override {
    return device_rooms(setup_, local_processes);
  }

 private:
  NcclSetup setup_;
};

}  // namespace

BackendEntry backend_entry() {
  BackendEntry e;
  e.choice = BackendChoice::Nccl;
  e.name = "nccl";
  e.traits.gpu_slots = true;
  e.traits.nccl_log = true;
  e.init_what = "NCCL communicator init";
  e.version = version_text;
  e.unusable = unusable_gpu_reason;
  e.prepare = [](const BenchOptions& o, const Bootstrap& boot, char**) -> std::unique_ptr<BackendRun> {
    const NcclSetup setup = setup_of(o, boot);
    check_setup(setup);
    return std::make_unique<NcclRun>(setup);
  };
  return e;
}

}  // namespace railkit::bench::nccl
