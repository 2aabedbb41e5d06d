#include "tuner/validate.hpp"

#include <cmath>

#include <fmt/format.h>

#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "core/json_text.hpp"
#include "core/units.hpp"

namespace railkit::tuner {

std::uint64_t bucket_of(std::uint64_t bytes) noexcept {
  if (bytes == 0) return 0;
  std::uint64_t b = 1;
  while (b <= bytes / 4) b *= 4;
  return b;
}

BucketValues bucket_busbw(const ResultsDocument& doc) {
  struct Acc {
    double sum = 0;
    int n = 0;
  };
  // (coll, bytes, in_place, group) -> mean over cycles
  std::map<std::tuple<std::string, std::uint64_t, bool, std::string>, Acc> per;
  for (const auto& r : doc.results) {
    auto& a = per[{r.op, r.bytes, r.in_place, r.group.value_or("")}];
    a.sum += r.busbw_GBps;
    ++a.n;
  }
  // (coll, bytes) -> slowest group, out-of-place preferred
  std::map<std::pair<std::string, std::uint64_t>, std::pair<bool, double>> chosen;  // (is_in_place, value)
  for (const auto& [key, a] : per) {
    const auto& [coll, bytes, in_place, group] = key;
    const double v = a.sum / a.n;
    auto it = chosen.find({coll, bytes});
    if (it == chosen.end()) {
      chosen[{coll, bytes}] = {in_place, v};
    } else if (it->second.first && !in_place) {
      it->second = {false, v};  // out-of-place replaces in-place
    } else if (it->second.first == in_place) {
      it->second.second = std::min(it->second.second, v);  // slowest split group
    }
  }
  BucketValues out;
  std::map<BucketKey, std::pair<double, int>> inv;  // sum of 1/busbw, count
  for (const auto& [key, v] : chosen) {
    out.size_busbw_GBps[key] = v.second;
    auto& s = inv[{key.first, bucket_of(key.second)}];
    s.first += v.second > 0 ? 1.0 / v.second : INFINITY;
    ++s.second;
  }
  for (const auto& [b, s] : inv) out.busbw_GBps[b] = std::isfinite(s.first) && s.first > 0 ? s.second / s.first : 0.0;
  return out;
}

BucketWeights load_weights(const std::string& path) {
  const std::string text = read_file(path);
  nlohmann::json j;
  try {
    j = parse_json(text);
  } catch (const nlohmann::json::parse_error& e) {
    throw UsageError("--weights " + path + ": not JSON: " + json_error_text(e));
  }
  if (!j.is_object() || field_or(j, "schema", nlohmann::json(), "--weights " + path) != "railkit.weights/1" || !j.contains("messages") || !j["messages"].is_array())
    throw UsageError("--weights " + path + ": expected {\"schema\": \"railkit.weights/1\", \"messages\": [{\"coll\", \"bytes\", \"count\"}]}");
  BucketWeights w;
  for (size_t i = 0; i < j["messages"].size(); ++i) {
    const auto& m = j["messages"][i];
    const std::string where = fmt::format("--weights {}: messages[{}]", path, i);
    if (!m.is_object() || !m.contains("coll") || !m["coll"].is_string() || !m.contains("bytes") || !m.contains("count"))
      throw UsageError(where + ": needs coll (string), bytes and count");
    std::uint64_t bytes = 0;
    if (m["bytes"].is_number_unsigned()) bytes = m["bytes"].get<std::uint64_t>();
    else if (m["bytes"].is_string()) bytes = parse_size_bytes(m["bytes"].get<std::string>(), where + ".bytes");
    else throw UsageError(where + ".bytes: a positive integer or a size such as \"4M\"");
    if (!m["count"].is_number() || m["count"].get<double>() < 0) throw UsageError(where + ".count: a number >= 0");
    if (bytes == 0) throw UsageError(where + ".bytes: must be > 0");
    w[{m["coll"].get<std::string>(), bucket_of(bytes)}] += m["count"].get<double>() * static_cast<double>(bytes);
  }
  if (w.empty()) throw UsageError("--weights " + path + ": no messages");
  return w;
}

std::optional<double> objective_GBps(const std::map<BucketKey, double>& values, const BucketWeights& weights) {
  double wsum = 0, tsum = 0;
  auto add = [&](double w, double busbw) {
    if (w <= 0) return true;
    if (!(busbw > 0)) return false;
    wsum += w;
    tsum += w / busbw;
    return true;
  };
  if (weights.empty()) {
    if (values.empty()) return std::nullopt;
    for (const auto& [b, v] : values)
      if (!add(1.0, v)) return std::nullopt;
  } else {
    for (const auto& [b, w] : weights) {
      auto it = values.find(b);
      if (it == values.end()) {
        if (w > 0) return std::nullopt;
        continue;
      }
      if (!add(w, it->second)) return std::nullopt;
    }
  }
  if (wsum <= 0) return std::nullopt;
  return wsum / tsum;
}

}  // namespace railkit::tuner
