#pragma once
// Which nodes `railkit accept` measures together, and what follows from it: circle rounds of
// pairs, isolation of guilty nodes and links from pair results, and the steps of bisection.
// Pure functions.
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace railkit::accept {

/// SuperBench's circle method: n - 1 rounds (n even; odd n gets a bye, node -1, whose pairs are
/// dropped: n rounds), each round a set of disjoint pairs (a < b), every pair exactly once.
/// n < 2 gives no round.
std::vector<std::vector<std::pair<int, int>>> circle_rounds(int n);

/// One pair of the pair stage.
struct PairResult {
  int a = 0, b = 0;
  double busbw_GBps = 0;
  bool suspect = false;
};

/// What the isolation concluded.
struct Isolation {
  std::vector<int> guilty_nodes;                  ///< ascending
  std::vector<std::pair<int, int>> guilty_links;  ///< suspect pairs no guilty node explains
  std::map<int, std::string> evidence;            ///< per guilty node: what convicted it
};

/// From pair results: a node is guilty when it took part in >= 2 pairs and every one of them was
/// suspect, or when it is in >= 2 suspect pairs whose partners pass all their other pairs.
/// Suspect pairs that no guilty node explains are named as links. `names` label the evidence.
Isolation isolate_pairs(const std::vector<PairResult>& pairs, const std::vector<std::string>& names);

/// Node indices joined with '+' ("0+1"), as `--split nodes:` and its group names spell them.
std::string node_list(const std::vector<int>& nodes);

/// One bisection step over a set of nodes: two halves of equal size measured at once, and the
/// odd node out (-1 when the set is even), which sits the step out.
struct Halves {
  std::vector<int> a, b;
  int left = -1;
};
Halves halve(const std::vector<int>& set);

/// Where bisection goes after measuring the halves: into a when va < fraction x vb, into b when
/// vb < fraction x va, else to the odd node out; nullopt (stop: no single slow node) when the
/// halves agree and there is none.
std::optional<std::vector<int>> next_bisection_set(const Halves& h, double va_GBps, double vb_GBps, double fraction);

}  // namespace railkit::accept
