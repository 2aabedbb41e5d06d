#include "sim/qp_route.hpp"

#include <algorithm>

namespace railkit::sim {

std::uint32_t transfer_qp_number(int src_gpu, int channel, int q) noexcept {
  return (static_cast<std::uint32_t>(channel) << 24) ^ (static_cast<std::uint32_t>(q) << 16) ^ static_cast<std::uint32_t>(src_gpu);
}

std::uint32_t transfer_qp_hash(int nic_src, int nic_dst, int src_gpu, int channel, int q, std::uint64_t seed) noexcept {
  return flow_hash(nic_src, nic_dst, transfer_qp_number(src_gpu, channel, q), seed);
}

bool crosses_spine(const FabricGraph& g, const std::vector<std::int64_t>& path) {
  return std::any_of(path.begin(), path.end(), [&](std::int64_t link) {
    return g.names[static_cast<std::size_t>(link / 65536)].rfind("spine", 0) == 0;
  });
}

}  // namespace railkit::sim
