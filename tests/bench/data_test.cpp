// The check's expected values against an independent in-process execution of each collective:
// every rank's input comes from fill_input_host, the collective is applied by its definition,
// and count_wrong_host must find 0 wrong elements, and exactly the ones we corrupt.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "bench/data.hpp"

using namespace railkit::bench;

namespace {

template <typename T>
T apply(RedOp op, T a, T b) {
  switch (op) {
    case RedOp::Sum: return static_cast<T>(a + b);
    case RedOp::Prod: return static_cast<T>(a * b);
    case RedOp::Min: return a < b ? a : b;
    case RedOp::Max: return a > b ? a : b;
    default: return a;
  }
}

/// Output buffer of `rank` after running `c` on all ranks' inputs.
template <typename T>
std::vector<T> simulate(Coll c, DType dt, RedOp op, int n, int root, int rank, int rep, const CollSizes& s) {
  std::vector<std::vector<T>> in(static_cast<size_t>(n), std::vector<T>(s.send_count));
  for (int r = 0; r < n; ++r) {
    CheckSpec spec{c, dt, op, root, n, r, rep, s};
    fill_input_host(in[static_cast<size_t>(r)].data(), s.send_count, spec);
  }
  std::vector<T> out(s.recv_count);
  const auto pc = s.param_count;
  auto fold = [&](std::uint64_t idx) {
    T acc = in[0][idx];
    for (int r = 1; r < n; ++r) acc = apply(op, acc, in[static_cast<size_t>(r)][idx]);
    return acc;
  };
  for (std::uint64_t i = 0; i < s.recv_count; ++i) {
    switch (c) {
      case Coll::AllReduce:
      case Coll::Reduce: out[i] = fold(i); break;
      case Coll::Broadcast: out[i] = in[static_cast<size_t>(root)][i]; break;
      case Coll::AllGather: out[i] = in[i / pc][i % pc]; break;
      case Coll::ReduceScatter: out[i] = fold(static_cast<std::uint64_t>(rank) * pc + i); break;
      case Coll::AllToAll: out[i] = in[i / pc][static_cast<std::uint64_t>(rank) * pc + i % pc]; break;
      case Coll::SendRecv: out[i] = in[static_cast<size_t>((rank - 1 + n) % n)][i]; break;
    }
  }
  return out;
}

template <typename T>
void check_all(DType dt) {
  for (const auto& ci : all_colls()) {
    for (RedOp op : {RedOp::Sum, RedOp::Prod, RedOp::Min, RedOp::Max}) {
      for (int n : {1, 2, 3, 4, 9}) {
        const CollSizes s = coll_sizes(ci.coll, 200 * sizeof(T) * static_cast<std::uint64_t>(n), sizeof(T), n);
        for (int rank = 0; rank < n; ++rank) {
          const int root = n - 1;
          CheckSpec spec{ci.coll, dt, op, root, n, rank, 3, s};
          if (!has_output(spec)) continue;
          std::vector<T> out = simulate<T>(ci.coll, dt, op, n, root, rank, 3, s);
          ASSERT_EQ(count_wrong_host(out.data(), spec), 0) << ci.name << " n=" << n << " rank=" << rank;
          out[5] = static_cast<T>(out[5] + 1);
          out[s.recv_count - 1] = static_cast<T>(out[s.recv_count - 1] + 1);
          EXPECT_EQ(count_wrong_host(out.data(), spec), 2) << ci.name;
        }
      }
    }
  }
}

}  // namespace

TEST(Data, FloatMatchesIndependentExecution) { check_all<float>(DType::Float); }
TEST(Data, DoubleMatchesIndependentExecution) { check_all<double>(DType::Double); }
TEST(Data, Int8WrapsLikeMpi) { check_all<std::int8_t>(DType::Int8); }
TEST(Data, Uint8MatchesIndependentExecution) { check_all<std::uint8_t>(DType::Uint8); }
TEST(Data, Int32MatchesIndependentExecution) { check_all<std::int32_t>(DType::Int32); }
TEST(Data, Uint64MatchesIndependentExecution) { check_all<std::uint64_t>(DType::Uint64); }

TEST(Data, PassesAndRanksGetDifferentData) {
  EXPECT_NE(gen_value(RedOp::Sum, 0, 0, 1), gen_value(RedOp::Sum, 0, 0, 2));
  EXPECT_NE(gen_value(RedOp::Sum, 0, 0, 1), gen_value(RedOp::Sum, 1, 0, 1));
  // prod inputs are 1 or 2, so products stay exact
  for (int r = 0; r < 8; ++r)
    for (std::uint64_t i = 0; i < 20; ++i) {
      const auto v = gen_value(RedOp::Prod, r, i, 1);
      EXPECT_TRUE(v == 1 || v == 2);
    }
}

TEST(Data, SentinelIsDetected) {
  const CollSizes s = coll_sizes(Coll::AllReduce, 64, 4, 2);
  CheckSpec spec{Coll::AllReduce, DType::Float, RedOp::Sum, 0, 2, 0, 1, s};
  std::vector<float> out(s.recv_count);
  fill_sentinel_host(out.data(), 64);
  EXPECT_EQ(count_wrong_host(out.data(), spec), static_cast<std::int64_t>(s.recv_count));
}
