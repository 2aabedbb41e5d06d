// Name tables of the event model (model.hpp): NCCL's names as ncclFuncToString, ncclAlgoToString,
// ncclProtoToString and ncclDatatypeToString give them (NCCL v2.28.9-1 src/collectives.cc).
#include "monitor/plugin/model.hpp"

#include <cstring>

namespace railkit::monitor_plugin {
namespace {

constexpr OpInfo kOps[kOpCount] = {
    {"Broadcast", BusbwRule::One, false, false},
    {"Reduce", BusbwRule::One, false, false},
    {"AllGather", BusbwRule::NMinus1OverN, true, false},
    {"ReduceScatter", BusbwRule::NMinus1OverN, true, false},
    {"AllReduce", BusbwRule::AllReduce, false, false},
    {"SendRecv", BusbwRule::One, false, true},
    {"Send", BusbwRule::One, false, true},
    {"Recv", BusbwRule::One, false, true},
    {"AlltoAll", BusbwRule::NMinus1OverN, true, false},
    {"Gather", BusbwRule::NMinus1OverN, true, false},
    {"Scatter", BusbwRule::NMinus1OverN, true, false},
    {"Unknown", BusbwRule::One, false, false},
};

// ncclFunc_t numbering (nccl_common.h), for v1 descriptors.
constexpr Op kOpByNumber[] = {Op::Broadcast, Op::Reduce, Op::AllGather, Op::ReduceScatter, Op::AllReduce, Op::SendRecv,
                              Op::Send, Op::Recv, Op::AlltoAll, Op::Scatter, Op::Gather};

constexpr const char* kAlgos[] = {"TREE", "RING", "COLLNET_DIRECT", "COLLNET_CHAIN", "NVLS", "NVLS_TREE", "PAT"};
constexpr const char* kProtos[] = {"LL", "LL128", "SIMPLE"};

struct TypeRow {
  const char* name;
  int bytes;
};
// ncclDataType_t numbering is the index (types.h): Int8 0 ... Bfloat16 9, Float8e4m3 10, Float8e5m2 11.
constexpr TypeRow kTypes[] = {{"ncclInt8", 1},    {"ncclUint8", 1},    {"ncclInt32", 4},   {"ncclUint32", 4},
                              {"ncclInt64", 8},   {"ncclUint64", 8},   {"ncclFloat16", 2}, {"ncclFloat32", 4},
                              {"ncclFloat64", 8}, {"ncclBfloat16", 2}, {"ncclFloat8e4m3", 1}, {"ncclFloat8e5m2", 1}};

template <std::size_t N>
std::uint8_t index_of(const char* const (&table)[N], const char* name) noexcept {
  if (!name) return kUnknownName;
  for (std::size_t i = 0; i < N; ++i)
    if (std::strcmp(table[i], name) == 0) return static_cast<std::uint8_t>(i);
  return kUnknownName;
}

}  // namespace

const OpInfo& op_info(Op op) noexcept {
  const auto i = static_cast<int>(op);
  return kOps[i >= 0 && i < kOpCount ? i : kOpCount - 1];
}

Op op_from_name(const char* name) noexcept {
  if (!name) return Op::Unknown;
  for (int i = 0; i + 1 < kOpCount; ++i)
    if (std::strcmp(kOps[i].name, name) == 0) return static_cast<Op>(i);
  return Op::Unknown;
}

Op op_from_number(int func) noexcept {
  constexpr int n = sizeof(kOpByNumber) / sizeof(kOpByNumber[0]);
  return func >= 0 && func < n ? kOpByNumber[func] : Op::Unknown;
}

double busbw_factor(Op op, int nranks) noexcept {
  if (nranks < 1) return 0;
  const double n = nranks;
  switch (op_info(op).busbw) {
    case BusbwRule::AllReduce: return 2.0 * (n - 1) / n;
    case BusbwRule::NMinus1OverN: return (n - 1) / n;
    case BusbwRule::One: return 1.0;
  }
  return 0;
}

std::uint8_t algo_from_name(const char* name) noexcept { return index_of(kAlgos, name); }
std::uint8_t proto_from_name(const char* name) noexcept { return index_of(kProtos, name); }

const char* algo_name(std::uint8_t algo) noexcept {
  return algo < sizeof(kAlgos) / sizeof(kAlgos[0]) ? kAlgos[algo] : "UNKNOWN";
}

const char* proto_name(std::uint8_t proto) noexcept {
  return proto < sizeof(kProtos) / sizeof(kProtos[0]) ? kProtos[proto] : "UNKNOWN";
}

int type_size_from_name(const char* name) noexcept {
  if (!name) return 0;
  for (const auto& t : kTypes)
    if (std::strcmp(t.name, name) == 0) return t.bytes;
  return 0;
}

int type_size_from_number(int type) noexcept {
  constexpr int n = sizeof(kTypes) / sizeof(kTypes[0]);
  return type >= 0 && type < n ? kTypes[type].bytes : 0;
}

}  // namespace railkit::monitor_plugin
