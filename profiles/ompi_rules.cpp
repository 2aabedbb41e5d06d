#include "profiles/ompi_rules.hpp"

#include <algorithm>
#include <map>
#include <utility>

#include <fmt/format.h>

#include "core/collectives.hpp"
#include "core/units.hpp"
#include "core/version.hpp"

namespace railkit::profiles {
namespace {

/// The Open MPI id and coll/tuned name of a railkit-bench collective (core's collectives table);
/// nullptr when coll/tuned has no rules for it.
const Collective* ompi_coll(const std::string& coll) {
  const Collective* c = find_collective(coll);
  return c && c->ompi_id >= 0 ? c : nullptr;
}

}  // namespace

int ompi_rules_choosing(const std::vector<ProfileDecision>& decisions) {
  int n = 0;
  for (const auto& d : decisions) {
    const Collective* c = ompi_coll(d.coll);
    if (!c) continue;
    const auto algo = d.env.find("OMPI_MCA_coll_tuned_" + std::string(c->ompi_name) + "_algorithm");
    if (algo != d.env.end() && algo->second != "0") ++n;
  }
  return n;
}

std::string ompi_rules(const std::vector<ProfileDecision>& decisions, int nranks) {
  std::map<int, std::vector<const ProfileDecision*>> by_coll;
  std::map<int, std::string> names;
  for (const auto& d : decisions)
    if (const Collective* c = ompi_coll(d.coll)) {
      by_coll[c->ompi_id].push_back(&d);
      names[c->ompi_id] = c->ompi_name;
    }
  std::string s = "# Open MPI coll/tuned dynamic rules written by railkit " + std::string(kVersion) + "\n";
  s += "# use: OMPI_MCA_coll_tuned_use_dynamic_rules=1 OMPI_MCA_coll_tuned_dynamic_rules_filename=<this file>\n";
  s += fmt::format("{} # number of collectives\n", by_coll.size());
  for (auto& [id, ds] : by_coll) {
    std::sort(ds.begin(), ds.end(), [](const ProfileDecision* a, const ProfileDecision* b) { return a->min_bytes < b->min_bytes; });
    const std::string& name = names[id];
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
