#include <gtest/gtest.h>

#include <algorithm>

#include "bench/types.hpp"
#include "core/collectives.hpp"

using namespace railkit::bench;

TEST(Types, NamesRoundTrip) {
  for (const auto& d : all_dtypes()) EXPECT_EQ(parse_dtype(d.name), d.type);
  for (const auto& o : all_redops()) EXPECT_EQ(parse_redop(o.name), o.op);
  for (const auto& c : all_colls()) EXPECT_EQ(parse_coll(c.name), c.coll);
  EXPECT_EQ(all_colls().size(), 7u);
  EXPECT_FALSE(parse_coll("allreduce").has_value());
  EXPECT_EQ(info(DType::Double).size_bytes, 8u);
  EXPECT_EQ(info(DType::BFloat16).size_bytes, 2u);
}

TEST(Types, BusbwFactorsFollowNcclTests) {
  EXPECT_DOUBLE_EQ(busbw_factor(Coll::AllReduce, 4), 1.5);
  EXPECT_DOUBLE_EQ(busbw_factor(Coll::AllReduce, 8), 1.75);
  EXPECT_DOUBLE_EQ(busbw_factor(Coll::AllGather, 4), 0.75);
  EXPECT_DOUBLE_EQ(busbw_factor(Coll::ReduceScatter, 2), 0.5);
  EXPECT_DOUBLE_EQ(busbw_factor(Coll::AllToAll, 4), 0.75);
  EXPECT_DOUBLE_EQ(busbw_factor(Coll::Broadcast, 4), 1.0);
  EXPECT_DOUBLE_EQ(busbw_factor(Coll::Reduce, 4), 1.0);
  EXPECT_DOUBLE_EQ(busbw_factor(Coll::SendRecv, 4), 1.0);
  EXPECT_DOUBLE_EQ(busbw_factor(Coll::AllReduce, 1), 0.0);
}

TEST(Types, SizesFollowNcclTests) {
  // all_reduce: everything is the requested count
  auto s = coll_sizes(Coll::AllReduce, 1024, 4, 4);
  EXPECT_EQ(s.param_count, 256u);
  EXPECT_EQ(s.bytes, 1024u);
  EXPECT_FALSE(s.rounded);
  // all_gather: per-rank count = count / n, size column = receive bytes
  s = coll_sizes(Coll::AllGather, 1024, 4, 4);
  EXPECT_EQ(s.param_count, 64u);
  EXPECT_EQ(s.send_count, 64u);
  EXPECT_EQ(s.recv_count, 256u);
  EXPECT_EQ(s.bytes, 1024u);
  // reduce_scatter: size column = send bytes
  s = coll_sizes(Coll::ReduceScatter, 1024, 4, 4);
  EXPECT_EQ(s.send_count, 256u);
  EXPECT_EQ(s.recv_count, 64u);
  EXPECT_EQ(s.bytes, 1024u);
  // rounding: 100 B of floats on 3 ranks -> 25 elements -> 8 per rank -> 96 B
  s = coll_sizes(Coll::AllToAll, 100, 4, 3);
  EXPECT_EQ(s.param_count, 8u);
  EXPECT_EQ(s.bytes, 96u);
  EXPECT_TRUE(s.rounded);
  // per-rank blocks are whole 16 B: 120 B of floats on 3 ranks -> 10 per rank -> 8 (32 B) -> 96 B
  s = coll_sizes(Coll::AllGather, 120, 4, 3);
  EXPECT_EQ(s.param_count, 8u);
  EXPECT_EQ(s.bytes, 96u);
  // too small for 16 B per rank
  EXPECT_EQ(coll_sizes(Coll::AllGather, 8, 4, 4).param_count, 0u);
  EXPECT_EQ(coll_sizes(Coll::AllGather, 32, 4, 4).param_count, 0u);
  // odd byte counts round down to whole elements
  s = coll_sizes(Coll::Broadcast, 10, 8, 2);
  EXPECT_EQ(s.param_count, 1u);
  EXPECT_TRUE(s.rounded);
}

TEST(Types, SizeSequence) {
  EXPECT_EQ(size_sequence(8, 128, 2, 0), (std::vector<std::uint64_t>{8, 16, 32, 64, 128}));
  EXPECT_EQ(size_sequence(8, 100, 4, 0), (std::vector<std::uint64_t>{8, 32}));
  EXPECT_EQ(size_sequence(10, 30, 1, 10), (std::vector<std::uint64_t>{10, 20, 30}));
  EXPECT_EQ(size_sequence(64, 64, 1, 0), (std::vector<std::uint64_t>{64}));
  EXPECT_EQ(size_sequence(1ull << 62, ~0ull, 4, 0).size(), 1u);  // overflow stops
}

namespace {

/// nccl-tests v2.19.6's GetCollByteCount functions (src/all_gather.cu, src/reduce_scatter.cu,
/// src/alltoall.cu, and the others), transcribed with their own names, as the reference.
void nccl_tests_counts(Coll c, size_t count, size_t eltSize, int nranks, size_t* sendcount, size_t* recvcount,
                       size_t* paramcount) {
  switch (c) {
    case Coll::AllGather: {
      size_t base = (count / nranks) & ~(16 / eltSize - 1);
      *sendcount = base;
      *recvcount = base * nranks;
      *paramcount = base;
      return;
    }
    case Coll::ReduceScatter: {
      size_t base = (count / nranks) & ~(16 / eltSize - 1);
      *sendcount = base * nranks;
      *recvcount = base;
      *paramcount = base;
      return;
    }
    case Coll::AllToAll:
      *paramcount = (count / nranks) & ~(16 / eltSize - 1);
      *sendcount = nranks * (*paramcount);
      *recvcount = *sendcount;
      return;
    default:
      *sendcount = count;
      *recvcount = count;
      *paramcount = *sendcount;
      return;
  }
}

}  // namespace

TEST(Types, CountsMatchNcclTestsForEveryCollectiveDatatypeAndRankCount) {
  for (const CollInfo& ci : all_colls())
    for (size_t esz : {1, 2, 4, 8})
      for (int n : {1, 2, 3, 4, 7, 8, 16, 64, 100})
        for (std::uint64_t bytes : {1ull, 8ull, 15ull, 16ull, 100ull, 1000ull, 4096ull, 65535ull, 1048577ull, 33554432ull}) {
          size_t send = 0, recv = 0, param = 0;
          nccl_tests_counts(ci.coll, bytes / esz, esz, n, &send, &recv, &param);
          const CollSizes s = coll_sizes(ci.coll, bytes, esz, n);
          ASSERT_EQ(s.param_count, param) << ci.name << " esz " << esz << " n " << n << " bytes " << bytes;
          ASSERT_EQ(s.send_count, send) << ci.name << " esz " << esz << " n " << n << " bytes " << bytes;
          ASSERT_EQ(s.recv_count, recv) << ci.name << " esz " << esz << " n " << n << " bytes " << bytes;
          // The in-place offsets follow: all_gather's input and reduce_scatter's output sit at rank x param.
          EXPECT_EQ(s.bytes, std::max(send, recv) * esz);
        }
}

TEST(Types, CollectivesAreCoresTable) {
  ASSERT_EQ(all_colls().size(), railkit::collectives().size());
  for (const railkit::Collective& c : railkit::collectives()) {
    const CollInfo& ci = info(c.kind);
    EXPECT_EQ(ci.coll, c.kind) << c.name;
    EXPECT_EQ(ci.name, c.name);
    EXPECT_EQ(ci.has_redop, c.has_redop) << c.name;
    EXPECT_EQ(ci.has_root, c.has_root) << c.name;
    EXPECT_EQ(parse_coll(c.name), c.kind) << c.name;
    EXPECT_DOUBLE_EQ(busbw_factor(c.kind, 8), railkit::busbw_factor(c, 8)) << c.name;
  }
}
