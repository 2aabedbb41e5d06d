#pragma once
// NCCL's tuner plugin ABI, versions 4 (NCCL 2.24-2.27) and 5 (NCCL 2.28+), declared here because
// NCCL does not install its plugin headers. Written from the documented layout
// (../shared/reference/nccl.md, "Tuner plugin ABI") and checked against NCCL v2.28.9-1
// (src/include/nccl_common.h, src/include/plugin/nccl_tuner.h, plugin/tuner/tuner_v{4,5}.h, nccl.h):
// tests/profiles/abi_layout_test.cpp asserts the sizes, offsets and values that header gives.
// Our own names (namespace railkit::nccl_abi), so this can sit next to a real nccl.h.
#include <cstddef>
#include <cstdint>

namespace railkit::nccl_abi {

/// ncclResult_t (nccl.h): a C enum, 4 bytes.
enum Result : int {
  kSuccess = 0,
  kUnhandledCudaError = 1,
  kSystemError = 2,
  kInternalError = 3,
  kInvalidArgument = 4,
  kInvalidUsage = 5,
};

/// ncclDebugLogLevel (nccl_common.h).
enum LogLevel : int {
  kLogNone = 0,
  kLogVersion = 1,
  kLogWarn = 2,
  kLogInfo = 3,
  kLogAbort = 4,
  kLogTrace = 5,
};

/// ncclDebugLogSubSys (nccl_common.h): flags of a log line; NCCL prints an INFO line only when
/// one of its flags is in NCCL_DEBUG_SUBSYS (default INIT, BOOTSTRAP, ENV).
enum LogSubsys : unsigned long {
  kSubsysInit = 0x1,
  kSubsysColl = 0x2,
  kSubsysEnv = 0x80,
  kSubsysTuning = 0x40,
};

/// ncclDebugLogger_t: printf-style; `file` and `line` name the caller.
using Logger = void (*)(LogLevel level, unsigned long flags, const char* file, int line, const char* fmt, ...);

/// ncclFunc_t (nccl_common.h): the collectives a tuner is asked about are 0 to 4.
enum Func : int {
  kFuncBroadcast = 0,
  kFuncReduce = 1,
  kFuncAllGather = 2,
  kFuncReduceScatter = 3,
  kFuncAllReduce = 4,
  kFuncSendRecv = 5,
  kFuncSend = 6,
  kFuncRecv = 7,
  kFuncAlltoAll = 8,
  kFuncScatter = 9,
  kFuncGather = 10,
};

/// Indices of the cost table (nccl_tuner.h NCCL_ALGO_*, NCCL_PROTO_*).
enum Algo : int { kAlgoTree = 0, kAlgoRing = 1, kAlgoCollNetDirect = 2, kAlgoCollNetChain = 3, kAlgoNvls = 4,
                  kAlgoNvlsTree = 5, kAlgoPat = 6 };
enum Proto : int { kProtoLL = 0, kProtoLL128 = 1, kProtoSimple = 2 };
inline constexpr int kNumAlgorithms = 7;   ///< NCCL_NUM_ALGORITHMS (v5)
inline constexpr int kNumProtocols = 3;    ///< NCCL_NUM_PROTOCOLS (v5)
inline constexpr float kIgnore = -1.0f;    ///< NCCL_ALGO_PROTO_IGNORE: a disabled entry
inline constexpr int kNumHwLinks = 3;      ///< NCCL_NUM_HW_LINKS_V5
inline constexpr int kNumCompCaps = 4;     ///< NCCL_NUM_COMPCAPS_V5
inline constexpr int kNumTuningScales = 3; ///< NCCL_NUM_TUNING_SCALES_V5

/// ncclNvlDomainInfo_v5_t.
struct NvlDomainInfoV5 {
  int nNvlDomains;
  int minRanksPerNvlDomain;
  int maxRanksPerNvlDomain;
};

/// ncclTunerConstants_v5_t: NCCL's cost-model constants, which init may modify (we do not).
struct TunerConstantsV5 {
  double baseLatencies[kNumAlgorithms][kNumProtocols];
  double hwLatencies[kNumHwLinks][kNumAlgorithms][kNumProtocols];
  double llMaxBws[kNumCompCaps][kNumTuningScales];
  double perChMaxRingLL128Bws[kNumCompCaps][kNumTuningScales];
  double perChMaxTreeLL128Bws[kNumCompCaps][kNumTuningScales];
  double perChMaxTreeBws[kNumCompCaps][kNumTuningScales];
  double perChMaxNVLSTreeBws[kNumCompCaps][kNumTuningScales];
};

/// getCollInfo, the same in v4 and v5. `collCostTable` is a contiguous float[numAlgo][numProto]
/// cast to float**; entries of -1 are disabled. `nChannels`: a non-zero value overrides NCCL's.
using GetCollInfoFn = Result (*)(void* context, Func collType, std::size_t nBytes, int numPipeOps,
                                 float** collCostTable, int numAlgo, int numProto, int regBuff, int* nChannels);

/// ncclTuner_v5_t, exported as `ncclTunerPlugin_v5` (NCCL 2.28+).
struct TunerV5 {
  const char* name;
  Result (*init)(void** context, std::uint64_t commId, std::size_t nRanks, std::size_t nNodes, Logger logFunction,
                 NvlDomainInfoV5* nvlDomainInfo, TunerConstantsV5* constants);
  GetCollInfoFn getCollInfo;
  Result (*finalize)(void* context);
};

/// ncclTuner_v4_t, exported as `ncclTunerPlugin_v4` (NCCL 2.24 to 2.27).
struct TunerV4 {
  const char* name;
  Result (*init)(std::size_t nRanks, std::size_t nNodes, Logger logFunction, void** context);
  GetCollInfoFn getCollInfo;
  Result (*destroy)(void* context);
};

}  // namespace railkit::nccl_abi
