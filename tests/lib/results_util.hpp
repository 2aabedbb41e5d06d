#pragma once
// Shared by the tests: small results documents built in code.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/results.hpp"

namespace railkit::test {

struct Rec {
  std::string op;
  std::uint64_t bytes;
  bool in_place;
  double busbw_GBps;
  int cycle = 0;
  std::optional<std::string> group = std::nullopt;  ///< --split group
};

inline ResultsDocument make_doc(const std::string& label, const std::vector<Rec>& recs) {
  ResultsDocument d;
  d.run.label = label;
  d.run.backend = "mpi";
  d.run.backend_version = "test";
  d.run.nranks = 4;
  d.run.nnodes = 1;
  d.run.hosts = {"vm"};
  d.run.command = "railkit-bench";
  for (const auto& r : recs) {
    ResultRecord x;
    x.op = r.op;
    x.dtype = "float";
    x.redop = "sum";
    x.bytes = r.bytes;
    x.count = r.bytes / 4;
    x.in_place = r.in_place;
    x.cycle = r.cycle;
    x.iters = 20;
    x.time_us.avg = x.time_us.min = x.time_us.max = x.time_us.p50 = x.time_us.p99 = 10;
    x.busbw_GBps = r.busbw_GBps;
    x.algbw_GBps = r.busbw_GBps / 1.5;
    x.wrong = 0;
    x.group = r.group;
    d.results.push_back(x);
  }
  update_summary(d);
  return d;
}

}  // namespace railkit::test
