#include "bench/communicator.hpp"

namespace railkit::bench {

InPlaceLayout Communicator::in_place_layout(Coll c, const CollSizes& s) const {
  InPlaceLayout l;
  const auto mine = static_cast<std::uint64_t>(rank()) * s.param_count;
  if (c == Coll::AllGather) l.input_offset = mine;
  if (c == Coll::ReduceScatter) l.output_offset = mine;
  return l;
}

}  // namespace railkit::bench
