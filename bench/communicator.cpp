#include "bench/communicator.hpp"

namespace railkit::bench {

InPlaceLayout Communicator::in_place_layout(Coll c, const CollSizes& s, int slot) const {
  InPlaceLayout l;
  const auto mine = static_cast<std::uint64_t>(rank() + slot) * s.param_count;
  if (c == Coll::AllGather) l.input_offset = mine;
  if (c == Coll::ReduceScatter) l.output_offset = mine;
  return l;
}

}  // namespace railkit::bench
