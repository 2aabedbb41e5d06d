#include "accept/schedule.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "core/strings.hpp"

namespace railkit::accept {

std::vector<std::vector<std::pair<int, int>>> circle_rounds(int n) {
  std::vector<std::vector<std::pair<int, int>>> rounds;
  if (n < 2) return rounds;
  const int m = n % 2 == 0 ? n : n + 1;  // node m-1 is the bye when n is odd
  std::vector<int> ring(static_cast<size_t>(m));
  for (int i = 0; i < m; ++i) ring[static_cast<size_t>(i)] = i;
  for (int r = 0; r < m - 1; ++r) {
    std::vector<std::pair<int, int>> round;
    for (int i = 0; i < m / 2; ++i) {
      const int a = ring[static_cast<size_t>(i)], b = ring[static_cast<size_t>(m - 1 - i)];
      if (a >= n || b >= n) continue;  // the bye
      round.emplace_back(std::min(a, b), std::max(a, b));
    }
    std::sort(round.begin(), round.end());
    rounds.push_back(std::move(round));
    // Keep ring[0] fixed, rotate the rest by one.
    std::rotate(ring.begin() + 1, ring.end() - 1, ring.end());
  }
  return rounds;
}

namespace {

/// The evidence against `node` when isolate_pairs convicts it, or nullopt when it does not.
std::optional<std::string> conviction(int node, int total, int suspect, const std::vector<PairResult>& pairs,
                                      const std::vector<std::string>& names) {
  if (total < 2 || suspect < 2) return std::nullopt;
  const auto name = [&](int i) {
    return i >= 0 && static_cast<size_t>(i) < names.size() ? names[static_cast<size_t>(i)] : std::to_string(i);
  };
  // Whether every pair of `n` other than the one with `except` passed.
  const auto others_pass = [&](int n, int except) {
    return std::none_of(pairs.begin(), pairs.end(), [&](const PairResult& p) {
      return p.suspect && (p.a == n || p.b == n) && p.a != except && p.b != except;
    });
  };
  std::vector<std::string> lines;
  bool partners_clean = true;
  for (const PairResult& p : pairs) {
    if (!p.suspect || (p.a != node && p.b != node)) continue;
    const int partner = p.a == node ? p.b : p.a;
    partners_clean = partners_clean && others_pass(partner, node);
    lines.push_back(fmt::format("{}+{} {:.3f} GB/s", name(p.a), name(p.b), p.busbw_GBps));
  }
  const bool all_suspect = suspect == total;
  if (!all_suspect && !partners_clean) return std::nullopt;
  return (all_suspect ? fmt::format("suspect in all {} of its pairs: ", total)
                      : fmt::format("suspect in {} of {} pairs whose partners pass their other pairs: ", suspect, total)) +
         join(lines, "; ");
}

}  // namespace

Isolation isolate_pairs(const std::vector<PairResult>& pairs, const std::vector<std::string>& names) {
  std::map<int, int> total, suspect;
  for (const PairResult& p : pairs) {
    ++total[p.a];
    ++total[p.b];
    if (p.suspect) {
      ++suspect[p.a];
      ++suspect[p.b];
    }
  }
  Isolation iso;
  for (const auto& [node, t] : total) {
    const int s = suspect.count(node) ? suspect.at(node) : 0;
    if (const auto ev = conviction(node, t, s, pairs, names)) {
      iso.guilty_nodes.push_back(node);
      iso.evidence[node] = *ev;
    }
  }
  const auto guilty = [&](int n) { return std::count(iso.guilty_nodes.begin(), iso.guilty_nodes.end(), n) > 0; };
  for (const PairResult& p : pairs)
    if (p.suspect && !guilty(p.a) && !guilty(p.b)) iso.guilty_links.emplace_back(p.a, p.b);
  return iso;
}

std::string node_list(const std::vector<int>& nodes) {
  std::vector<std::string> s;
  for (int n : nodes) s.push_back(std::to_string(n));
  return join(s, "+");
}

Halves halve(const std::vector<int>& set) {
  const auto h = static_cast<std::ptrdiff_t>(set.size() / 2);
  Halves out;
  out.a.assign(set.begin(), set.begin() + h);
  out.b.assign(set.begin() + h, set.begin() + 2 * h);
  out.left = set.size() % 2 ? set.back() : -1;
  return out;
}

std::optional<std::vector<int>> next_bisection_set(const Halves& h, double va, double vb, double fraction) {
  if (va < fraction * vb) return h.a;
  if (vb < fraction * va) return h.b;
  if (h.left >= 0) return std::vector<int>{h.left};
  return std::nullopt;
}

}  // namespace railkit::accept
