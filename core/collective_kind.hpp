#pragma once
// Which collective, and where each element of its checked output comes from: the parts of core's
// collectives table (core/collectives.hpp) that CUDA kernels and the simulator's plans share.
// C++17 and header-only, so nvcc includes it.
#if defined(__CUDACC__)
#define RAILKIT_COLL_HD __host__ __device__
#else
#define RAILKIT_COLL_HD
#endif

namespace railkit {

/// Every collective railkit measures, in the order of core's table (collectives()); bench::Coll
/// and sim::CollKind are this type.
enum class CollKind { AllReduce, AllGather, ReduceScatter, Broadcast, Reduce, AllToAll, SendRecv };

/// How many CollKind values there are (the size of core's table).
inline constexpr int kCollKinds = 7;

/// The expected-value rule of a data check: where element i of a rank's output comes from,
/// given pc, the count passed to the collective (nccl-tests' per-rank count where it has one).
enum class ExpectRule {
  Reduced,          ///< the reduction over ranks of input index i (all_reduce)
  ReducedAtRoot,    ///< as Reduced, on the root only; other ranks have no output (reduce)
  ReducedOwnBlock,  ///< the reduction over ranks of input index rank*pc + i (reduce_scatter)
  RootInput,        ///< the root's input at i (broadcast)
  RankBlocks,       ///< rank i/pc's input at i%pc (all_gather)
  ExchangedBlocks,  ///< rank i/pc's input at rank*pc + i%pc (alltoall)
  PreviousRank,     ///< rank (rank-1) mod nranks's input at i (sendrecv)
};

/// The input an expected output element is made of: the reduction over ranks of input `index`
/// (reduced), or rank `rank`'s input at `index`.
struct ExpectSource {
  bool reduced = false;
  unsigned long long rank = 0;
  unsigned long long index = 0;
};

/// Where output element `i` comes from under `rule` (pc > 0 for the block rules).
RAILKIT_COLL_HD constexpr ExpectSource expect_source(ExpectRule rule, unsigned long long i, unsigned long long pc,
                                                     int rank, int root, int nranks) {
  const auto me = static_cast<unsigned long long>(rank);
  switch (rule) {
    case ExpectRule::Reduced:
    case ExpectRule::ReducedAtRoot: return {true, 0, i};
    case ExpectRule::ReducedOwnBlock: return {true, 0, me * pc + i};
    case ExpectRule::RootInput: return {false, static_cast<unsigned long long>(root), i};
    case ExpectRule::RankBlocks: return {false, i / pc, i % pc};
    case ExpectRule::ExchangedBlocks: return {false, i / pc, me * pc + i % pc};
    case ExpectRule::PreviousRank: return {false, static_cast<unsigned long long>((rank - 1 + nranks) % nranks), i};
  }
  return {};
}

/// Whether a rank has an output to check under `rule` (false for non-roots of reduce).
RAILKIT_COLL_HD constexpr bool has_expected_output(ExpectRule rule, int rank, int root) {
  return rule != ExpectRule::ReducedAtRoot || rank == root;
}

}  // namespace railkit
