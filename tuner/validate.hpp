#pragma once
// Statistics of the tuner: objective and per-bucket busbw from results documents; the
// paired-ratio interval that decides whether tuned settings beat the baseline is core/stats'.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/results.hpp"
#include "core/stats.hpp"

namespace railkit::tuner {

/// A size bucket of one collective: [lower, 4 * lower).
struct BucketKey {
  std::string coll;
  std::uint64_t lower_bytes = 0;
  auto operator<=>(const BucketKey&) const = default;
};

/// The lower edge of the power-of-4 bucket holding `bytes` (1, 4, 16, ... ; 0 for 0).
std::uint64_t bucket_of(std::uint64_t bytes) noexcept;

/// Per-bucket busbw of a results document: for each collective and size the out-of-place
/// records (in-place when there are none) averaged over cycles; with --split groups, the slowest
/// group; then per bucket the harmonic mean over its sizes (time-weighted). Also the per-size values.
struct BucketValues {
  std::map<BucketKey, double> busbw_GBps;
  std::map<std::pair<std::string, std::uint64_t>, double> size_busbw_GBps;  ///< (coll, bytes)
};
BucketValues bucket_busbw(const ResultsDocument& doc);

/// Weights of the single objective, per bucket. Empty = every measured bucket weighs the same.
using BucketWeights = std::map<BucketKey, double>;

/// Reads a message-size histogram (`railkit.weights/1`, see tuner/README.md): messages
/// [{coll, bytes, count}]; each bucket weighs the bytes it moves (sum of count * bytes). Throws
/// UsageError naming the file.
BucketWeights load_weights(const std::string& path);

/// The objective: the weighted harmonic mean of bucket busbw (total bus bytes / total time),
/// in GB/s. Buckets with zero weight do not count. nullopt when a weighted bucket is missing
/// from `values` or has no positive busbw.
std::optional<double> objective_GBps(const std::map<BucketKey, double>& values, const BucketWeights& weights);

/// The paired ratio and its Student-t interval: one implementation in core/stats, shared with
/// `railkit sweep`'s rounds.
using railkit::PairedRatio;
using railkit::paired_ratio;
using railkit::t95;

}  // namespace railkit::tuner
