// libnccl-tuner-railkit.so: the C ABI entry points. Everything behind them is in rules.cpp; here
// nothing may throw across the ABI, so each entry point catches everything and answers success,
// which leaves NCCL's own choice in place.
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "profiles/plugin/nccl_tuner_abi.h"
#include "profiles/plugin/rules.hpp"

namespace {

namespace abi = railkit::nccl_abi;
namespace tp = railkit::tuner_plugin;

constexpr unsigned long kFlags = abi::kSubsysInit | abi::kSubsysTuning;

/// One communicator's state: created by init, read by getCollInfo, freed by finalize.
struct Context {
  std::vector<tp::Rule> rules;
  abi::Logger log = nullptr;
  std::size_t nRanks = 0, nNodes = 0;
};

std::optional<std::string> env(const char* name) {
  const char* v = std::getenv(name);
  if (!v || !*v) return std::nullopt;
  return std::string(v);
}

void emit(abi::Logger log, abi::LogLevel level, const char* text, unsigned long flags = kFlags) noexcept {
  if (log) log(level, flags, __FILE__, __LINE__, "TUNER/railkit: %s", text);
}

void emit(abi::Logger log, const tp::LogLine& line) noexcept {
  switch (line.severity) {
    case tp::Severity::Warn: return emit(log, abi::kLogWarn, line.text.c_str());
    case tp::Severity::Info: return emit(log, abi::kLogInfo, line.text.c_str());
    case tp::Severity::Detail: return emit(log, abi::kLogInfo, line.text.c_str(), abi::kSubsysTuning);
  }
}

abi::Result init_common(void** context, std::size_t nRanks, std::size_t nNodes, abi::Logger log) noexcept {
  if (!context) return abi::kSuccess;
  *context = nullptr;
  try {
    auto ctx = std::make_unique<Context>();
    ctx->log = log;
    ctx->nRanks = nRanks;
    ctx->nNodes = nNodes;
    tp::Loaded loaded = tp::load({env("RAILKIT_PROFILE"), env("NCCL_TUNER_CONFIG_FILE")}, nRanks, nNodes);
    for (const auto& line : loaded.log) emit(log, line);
    ctx->rules = std::move(loaded.rules);
    *context = ctx.release();
  } catch (...) {
    emit(log, abi::kLogWarn, "out of memory while loading; the plugin does nothing, NCCL's own choices stand");
  }
  return abi::kSuccess;
}

abi::Result init_v5(void** context, std::uint64_t /*commId*/, std::size_t nRanks, std::size_t nNodes,
                    abi::Logger logFunction, abi::NvlDomainInfoV5* /*nvlDomainInfo*/,
                    abi::TunerConstantsV5* /*constants*/) noexcept {
  return init_common(context, nRanks, nNodes, logFunction);
}

abi::Result init_v4(std::size_t nRanks, std::size_t nNodes, abi::Logger logFunction, void** context) noexcept {
  return init_common(context, nRanks, nNodes, logFunction);
}

abi::Result get_coll_info(void* context, abi::Func collType, std::size_t nBytes, int numPipeOps,
                          float** collCostTable, int numAlgo, int numProto, int regBuff, int* nChannels) noexcept {
  try {
    const auto* ctx = static_cast<const Context*>(context);
    if (!ctx || ctx->rules.empty() || !collCostTable) return abi::kSuccess;
    const tp::Rule* r = tp::find_rule(ctx->rules, collType, nBytes, ctx->nNodes, ctx->nRanks, numPipeOps, regBuff);
    if (!r) return abi::kSuccess;
    // NCCL passes a contiguous float[numAlgo][numProto] cast to float**, not an array of rows.
    const tp::Applied done = tp::apply(*r, reinterpret_cast<float*>(collCostTable), numAlgo, numProto, nChannels);
    if (ctx->log)
      ctx->log(abi::kLogTrace, abi::kSubsysTuning, __FILE__, __LINE__,
               "TUNER/railkit: %s %zu bytes pipeOps %d regBuff %d: %s -> %s/%s channels %d", tp::coll_name(collType).data(),
               nBytes, numPipeOps, regBuff, r->origin.c_str(), done.algo < 0 ? "nccl" : tp::algo_name(done.algo).data(),
               done.proto < 0 ? "nccl" : tp::proto_name(done.proto).data(), done.channels);
  } catch (...) {
  }
  return abi::kSuccess;
}

abi::Result finalize(void* context) noexcept {
  delete static_cast<Context*>(context);
  return abi::kSuccess;
}

}  // namespace

extern "C" {
// The only two symbols the library exports (exports.map); NCCL 2.28 looks for v5 first.
__attribute__((visibility("default"))) extern const abi::TunerV5 ncclTunerPlugin_v5;
__attribute__((visibility("default"))) extern const abi::TunerV4 ncclTunerPlugin_v4;
const abi::TunerV5 ncclTunerPlugin_v5 = {"railkit", init_v5, get_coll_info, finalize};
const abi::TunerV4 ncclTunerPlugin_v4 = {"railkit", init_v4, get_coll_info, finalize};
}
