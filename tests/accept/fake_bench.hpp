#pragma once
// A fake railkit-bench for accept's stages: a modeled cluster of `nodes` nodes of `rpn` ranks
// (node i = ranks [i*rpn, (i+1)*rpn), rail k = rank k of every node) that answers each launch
// with a synthetic results document: one record per collective and --split group, busbw `fast`,
// or `slow` when the group holds a slow rank or is a pair on a slow link. A launch's own `-b S`
// and `--coll A,B` (as the whole-set stage gives for a profile's sizes) replace `bytes` and
// `colls` for that launch. Records every launch.
#include <csignal>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "accept/runner.hpp"
#include "core/strings.hpp"
#include "results_util.hpp"

namespace railkit::test {
using accept::BenchOutcome;
using accept::CommandRecord;


class FakeBench final : public accept::BenchRunner {
 public:
  FakeBench(int nodes, int rpn) : nodes_(nodes), rpn_(rpn) {}

  std::set<int> slow_ranks;                      ///< slow in every launch
  std::map<std::string, std::set<int>> slow_in;  ///< launch name -> ranks slow in that launch only (noise)
  std::set<std::pair<int, int>> slow_links;      ///< node pairs (a < b) slow when measured as a pair
  std::set<std::string> failing;                 ///< launch names that fail
  std::string interrupt_at;                      ///< launch name a SIGINT interrupts
  std::vector<std::string> colls{"all_reduce", "all_gather"};
  double fast_GBps = 10, slow_GBps = 1;
  std::uint64_t bytes = 16384;

  struct Call {
    std::string stage;
    launch::BenchConfig config;
  };
  std::vector<Call> calls;

  /// The launch names, in order.
  std::vector<std::string> names() const {
    std::vector<std::string> out;
    for (const Call& c : calls) out.push_back(c.config.name);
    return out;
  }
  /// The --split value of the launch named `name` ("" when none or no such launch).
  std::string split_of(const std::string& name) const {
    for (const Call& c : calls)
      if (c.config.name == name) return split_arg(c.config.args);
    return "";
  }

  BenchOutcome run(const std::string& stage, const launch::BenchConfig& c) override {
    calls.push_back(Call{stage, c});
    BenchOutcome out;
    out.command = CommandRecord{stage, {"railkit-bench", "--label", c.name}, "exit code 0", 0.5};
    if (c.name == interrupt_at) throw accept::accept_interrupted(SIGINT, "/out");
    if (failing.count(c.name)) {
      out.command.result = "exit code 1";
      out.why = "exit code 1: rank 3: error: boom";
      return out;
    }
    const std::string own_bytes = arg_of(c.args, "-b"), own_colls = arg_of(c.args, "--coll");
    const std::uint64_t size = own_bytes.empty() ? bytes : std::stoull(own_bytes);
    std::vector<Rec> recs;
    for (const auto& [group, ranks] : groups(split_arg(c.args)))
      for (const std::string& coll : own_colls.empty() ? colls : railkit::split(own_colls, ','))
        recs.push_back(Rec{coll, size, false, busbw(c.name, group, ranks), 0, group});
    out.doc = make_doc(c.name, recs);
    return out;
  }

 private:
  static std::string arg_of(const std::vector<std::string>& args, const std::string& flag) {
    for (std::size_t i = 0; i + 1 < args.size(); ++i)
      if (args[i] == flag) return args[i + 1];
    return "";
  }
  static std::string split_arg(const std::vector<std::string>& args) { return arg_of(args, "--split"); }

  std::set<int> node_ranks(int node) const {
    std::set<int> r;
    for (int k = 0; k < rpn_; ++k) r.insert(node * rpn_ + k);
    return r;
  }

  /// Group name (nullopt: no split) -> its ranks.
  std::vector<std::pair<std::optional<std::string>, std::set<int>>> groups(const std::string& how) const {
    std::vector<std::pair<std::optional<std::string>, std::set<int>>> out;
    if (how.empty()) {
      std::set<int> all;
      for (int i = 0; i < nodes_ * rpn_; ++i) all.insert(i);
      out.emplace_back(std::nullopt, all);
    } else if (how == "node") {
      for (int i = 0; i < nodes_; ++i) out.emplace_back("node" + std::to_string(i), node_ranks(i));
    } else if (how == "rail") {
      for (int k = 0; k < rpn_; ++k) {
        std::set<int> r;
        for (int i = 0; i < nodes_; ++i) r.insert(i * rpn_ + k);
        out.emplace_back("rail" + std::to_string(k), r);
      }
    } else if (how.starts_with("nodes:")) {
      for (const std::string& g : railkit::split(how.substr(6), ',')) {
        std::set<int> r;
        for (const std::string& n : railkit::split(g, '+')) r.merge(node_ranks(std::stoi(n)));
        out.emplace_back("nodes" + g, r);
      }
    }
    return out;
  }

  double busbw(const std::string& launch, const std::optional<std::string>& group, const std::set<int>& ranks) const {
    std::set<int> slow = slow_ranks;
    if (const auto it = slow_in.find(launch); it != slow_in.end()) slow.insert(it->second.begin(), it->second.end());
    for (int r : ranks)
      if (slow.count(r)) return slow_GBps;
    if (group && group->starts_with("nodes")) {
      const std::vector<std::string> ends = railkit::split(group->substr(5), '+');
      if (ends.size() == 2 && slow_links.count({std::stoi(ends[0]), std::stoi(ends[1])})) return slow_GBps;
    }
    return fast_GBps;
  }

  int nodes_, rpn_;
};

}  // namespace railkit::test
