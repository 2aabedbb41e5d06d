#pragma once
// The sim backend (railkit-bench --backend sim): one process simulates every rank of a cluster
// file on the fabric simulator (sim/collective.hpp). Each GPU of the cluster is one slot of this
// process's Communicator (as nccl's -g N), so slots() == size() == the cluster's GPUs. Nothing
// moves: buffers are address-space reservations that are never touched, there is no data to
// check, and every time is a simulated completion time. Built only when ns-3 is found
// (RAILKIT_HAVE_NS3), like the NCCL backend with CUDA.
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench/backend.hpp"
#include "bench/communicator.hpp"
#include "bench/options.hpp"
#include "sim/collective.hpp"

namespace railkit::bench::sim {

namespace model = ::railkit::sim;

/// What a simulated run runs on, resolved once before anything runs.
struct SimSetup {
  std::string cluster_file;       ///< --sim-cluster as given
  std::vector<std::string> sets;  ///< --sim-set overrides, in order
  model::ClusterSpec cluster;     ///< after the overrides
  model::NcclSettings nccl;       ///< from the process's NCCL_* variables
  model::Fidelity fidelity = model::Fidelity::Packet;
};

/// "ns-3 3.37, simulated": what --version and run.backend_version say of this backend.
std::string version_text();

/// The NCCL_* variables of `envp` (main's third argument), name and value, in order.
std::vector<std::pair<std::string, std::string>> nccl_variables(char* const* envp);

/// Loads --sim-cluster with the --sim-set overrides and reads the NCCL settings from
/// `nccl_env`. Throws the simulator's UsageError for a bad cluster file, override or NCCL value
/// (one line naming it).
SimSetup prepare(const BenchOptions& o, const std::vector<std::pair<std::string, std::string>>& nccl_env);

/// run.sim of the results document: the cluster (name, file, shape, rates, the document after
/// the overrides), the overrides, fidelity, seeds, the NCCL settings honoured and inert, and the
/// machine (`machine`) that simulated it. Keys: results/README.md.
nlohmann::json run_json(const SimSetup& s, const std::string& machine);

/// The simulated nodes' names ("n0", "n1" ...), for run.hosts.
std::vector<std::string> node_names(const model::ClusterSpec& c);

/// One line naming the NCCL_* variables the simulator does not model (recorded in the document,
/// not acted on); empty when there are none.
std::string inert_warning(const model::NcclSettings& s);

/// What one launch asks of the simulator: the collective, nccl-tests' size of `call` on
/// `nranks` ranks (CollSizes.bytes: all_gather the receive buffer, reduce_scatter and alltoall
/// the send buffer, the others the buffer) and the root (broadcast, reduce). Pure.
model::CollRequest request_of(const OpCall& call, int nranks);

/// The communicator over every GPU of the cluster (rank = slot = global GPU index). Warm-up
/// launches are not simulated; each timed launch is one simulate_collective (packet fidelity:
/// iteration i with the cluster's seed + i; flow fidelity: simulated once per size and its time
/// repeated, as it is deterministic).
std::unique_ptr<Communicator> make_communicator(std::shared_ptr<const SimSetup> setup);

/// The sim backend's registry entry (bench/backend.hpp).
BackendEntry backend_entry();

}  // namespace railkit::bench::sim
