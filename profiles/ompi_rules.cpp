#include "profiles/ompi_rules.hpp"

#include <algorithm>
#include <map>
#include <utility>

#include <fmt/format.h>

#include "core/units.hpp"
#include "core/version.hpp"

namespace railkit::profiles {
namespace {

/// railkit-bench collective -> the id of Open MPI's COLLTYPE enum (coll_base_functions.h) and its
/// coll/tuned name.
const std::map<std::string, std::pair<int, std::string>> kIds = {
    {"all_gather", {0, "allgather"}}, {"all_reduce", {2, "allreduce"}}, {"alltoall", {3, "alltoall"}},
    {"broadcast", {7, "bcast"}},      {"reduce", {11, "reduce"}},       {"reduce_scatter", {12, "reduce_scatter"}}};

}  // namespace

int ompi_rules_choosing(const std::vector<ProfileDecision>& decisions) {
  int n = 0;
  for (const auto& d : decisions) {
    const auto id = kIds.find(d.coll);
    if (id == kIds.end()) continue;
    const auto algo = d.env.find("OMPI_MCA_coll_tuned_" + id->second.second + "_algorithm");
    if (algo != d.env.end() && algo->second != "0") ++n;
  }
  return n;
}

std::string ompi_rules(const std::vector<ProfileDecision>& decisions, int nranks) {
  std::map<int, std::vector<const ProfileDecision*>> by_coll;
  for (const auto& d : decisions)
    if (auto it = kIds.find(d.coll); it != kIds.end()) by_coll[it->second.first].push_back(&d);
  std::string s = "# Open MPI coll/tuned dynamic rules written by railkit " + std::string(kVersion) + "\n";
  s += "# use: OMPI_MCA_coll_tuned_use_dynamic_rules=1 OMPI_MCA_coll_tuned_dynamic_rules_filename=<this file>\n";
  s += fmt::format("{} # number of collectives\n", by_coll.size());
  for (auto& [id, ds] : by_coll) {
    std::sort(ds.begin(), ds.end(), [](const ProfileDecision* a, const ProfileDecision* b) { return a->min_bytes < b->min_bytes; });
    const std::string name = std::find_if(kIds.begin(), kIds.end(), [&](const auto& kv) { return kv.second.first == id; })->second.second;
    s += fmt::format("{} # collective id ({})\n1 # number of communicator sizes\n{} # communicator size\n", id, name, nranks);
    s += fmt::format("{} # number of message sizes\n", ds.size());
    bool first = true;
    for (const auto* d : ds) {
      auto get = [&](const std::string& key) {
        auto it = d->env.find("OMPI_MCA_coll_tuned_" + name + "_algorithm" + key);
        return it == d->env.end() ? std::string("0") : it->second;
      };
      // The first rule starts at 0 so that smaller messages than measured keep the first decision.
      s += fmt::format("{} {} 0 {} # {} ({})\n", first ? 0 : d->min_bytes, get(""), get("_segmentsize"), d->config,
                       format_bytes(d->min_bytes));
      first = false;
    }
  }
  return s;
}

}  // namespace railkit::profiles
