#pragma once
// The ECMP identity of a collective's network queue pairs, for both fidelities: NCCL keeps a
// connection's QPs for the communicator's life, so a QP's UDP source port (and path) is a function
// of the connection, the same in every step and repetition. Pure: no ns-3 here.
#include <cstdint>
#include <vector>

#include "sim/topology.hpp"

namespace railkit::sim {

/// Identity of queue pair `q` of a connection, as its UDP source port would carry it: the GPU
/// whose data it is (`src_gpu`: PXN relays for several GPUs of a node stay apart), the channel and
/// the QP index.
std::uint32_t transfer_qp_number(int src_gpu, int channel, int q) noexcept;

/// ECMP hash of the data direction of QP `q` of a transfer from fabric host `nic_src` to
/// `nic_dst`: flow_hash(nic_src, nic_dst, transfer_qp_number(...), seed). ACKs and CNPs use
/// flow_hash(nic_dst, nic_src, the same number, seed).
std::uint32_t transfer_qp_hash(int nic_src, int nic_dst, int src_gpu, int channel, int q, std::uint64_t seed) noexcept;

/// Whether a route_path() goes through a spine switch (a node named spine<N>).
bool crosses_spine(const FabricGraph& g, const std::vector<std::int64_t>& path);

}  // namespace railkit::sim
