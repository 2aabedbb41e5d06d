#pragma once
// The enumerations shared with CUDA code (kept to C++17 so nvcc can include them).

namespace railkit::bench {

enum class DType { Int8, Uint8, Int32, Uint32, Int64, Uint64, Half, BFloat16, Float, Double };
enum class RedOp { Sum, Prod, Min, Max, Avg };
enum class Coll { AllReduce, AllGather, ReduceScatter, Broadcast, Reduce, AllToAll, SendRecv };

}  // namespace railkit::bench
