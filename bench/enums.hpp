#pragma once
// The enumerations shared with CUDA code (kept to C++17 so nvcc can include them).
#include "core/collective_kind.hpp"

namespace railkit::bench {

enum class DType { Int8, Uint8, Int32, Uint32, Int64, Uint64, Half, BFloat16, Float, Double };
enum class RedOp { Sum, Prod, Min, Max, Avg };
/// The collective: core's CollKind (core/collectives.hpp describes each).
using Coll = railkit::CollKind;

}  // namespace railkit::bench
