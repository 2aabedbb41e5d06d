#pragma once
// The tuner plugin's decisions, independent of the C ABI: where they come from (a railkit profile
// or NVIDIA's example CSV), which one applies to a collective call, and how it edits NCCL's cost
// table. profiles/plugin/plugin.cpp wraps these behind ncclTunerPlugin_v5 / _v4; documented in
// profiles/README.md ("NCCL tuner plugin").
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/profile.hpp"

namespace railkit::tuner_plugin {

inline constexpr std::uint32_t kAnyAlgo = (1u << 7) - 1;   ///< every algorithm of NCCL 2.28 (7)
inline constexpr std::uint32_t kAnyProto = (1u << 3) - 1;  ///< every protocol (3)

/// One decision: for a collective, a size range and (optionally) a scale, the algorithms and
/// protocols allowed and a channel count. -1 in nodes/ranks/pipe_ops/reg_buff matches any value.
struct Rule {
  int coll = 0;                  ///< ncclFunc_t value, 0 (broadcast) to 4 (allreduce)
  std::uint64_t min_bytes = 0;   ///< inclusive
  std::uint64_t max_bytes = std::numeric_limits<std::uint64_t>::max();  ///< inclusive
  std::uint32_t algos = kAnyAlgo;    ///< bit a set: algorithm index a allowed
  std::uint32_t protos = kAnyProto;  ///< bit p set: protocol index p allowed
  int channels = 0;              ///< > 0: the channel count to set; otherwise NCCL's
  long long nodes = -1, ranks = -1, pipe_ops = -1, reg_buff = -1;
  std::string origin;            ///< where it came from, for logs: "decisions[2]", "tuner.conf:7"
};

/// Info: the one line saying what was loaded (NCCL shows it with NCCL_DEBUG=INFO); Detail: one
/// line per rule (shown when NCCL_DEBUG_SUBSYS includes TUNING); Warn: why something was skipped.
enum class Severity { Info, Detail, Warn };
struct LogLine {
  Severity severity;
  std::string text;  ///< without the "TUNER/railkit: " prefix
};

/// What init loaded: the rules (empty = the plugin does nothing) and the lines to log.
struct Loaded {
  std::vector<Rule> rules;
  std::vector<LogLine> log;
};

/// The environment the plugin reads at init.
struct PluginEnv {
  std::optional<std::string> profile;      ///< RAILKIT_PROFILE
  std::optional<std::string> config_file;  ///< NCCL_TUNER_CONFIG_FILE
};

/// Parses NVIDIA's example CSV (`collective_type,min_bytes,max_bytes,algorithm,protocol,channels,
/// nNodes,nRanks[,numPipeOps[,regBuff]]`). `#` comments and blank lines are skipped; a malformed
/// line is skipped with a Warn line naming `source:line`. -1 means any (bytes: 0 / unbounded;
/// channels: NCCL's); channels at most 64; a leading UTF-8 byte order mark is ignored. Appends to `out`.
void rules_from_csv(std::string_view text, const std::string& source, Loaded& out);

/// The rules of a profile's decisions (NCCL_ALGO, NCCL_PROTO, NCCL_MAX_NCHANNELS/NCCL_MAX_CTAS or
/// NCCL_MIN_NCHANNELS/NCCL_MIN_CTAS of each decision's env). Decisions for collectives NCCL's tuner
/// is not asked about (alltoall, sendrecv) are left out; a value that cannot be read is a Warn.
void rules_from_profile(const ProfileDocument& p, Loaded& out);

/// Everything init does before it builds a context: reads RAILKIT_PROFILE (preferred) or
/// NCCL_TUNER_CONFIG_FILE, applies the scale rule (a profile applies only to a communicator of
/// exactly its cluster's nodes and ranks) and returns the rules with one Info line saying what
/// was loaded and a Detail line per rule that chooses, or no rules and a Warn line saying why
/// the plugin does nothing. Never throws.
Loaded load(const PluginEnv& env, std::size_t nRanks, std::size_t nNodes) noexcept;

/// The first rule matching the call, or nullptr.
const Rule* find_rule(std::span<const Rule> rules, int coll, std::size_t nBytes, std::size_t nNodes,
                      std::size_t nRanks, int numPipeOps, int regBuff) noexcept;

/// What apply() did.
struct Applied {
  int algo = -1, proto = -1;  ///< the entry set to 0.0, or -1 when NCCL's choice stands
  int channels = 0;           ///< the channel count written, or 0
};

/// Applies `r` to NCCL's cost table, a contiguous float[numAlgo][numProto]: among the allowed
/// entries NCCL left enabled (>= 0) the cheapest is set to 0.0 (so NCCL picks it) and, when the
/// rule has a channel count, *nChannels is set (not for CollNet, whose count NCCL does not clamp).
/// A rule allowing every entry, or one whose entries are all disabled, changes nothing. Never
/// touches an index outside numAlgo x numProto.
Applied apply(const Rule& r, float* table, int numAlgo, int numProto, int* nChannels) noexcept;

/// Names for logs: "allreduce", "ring", "simple" (NVIDIA's CSV spellings); "?" when unknown.
std::string_view coll_name(int coll) noexcept;
std::string_view algo_name(int algo) noexcept;
std::string_view proto_name(int proto) noexcept;

}  // namespace railkit::tuner_plugin
