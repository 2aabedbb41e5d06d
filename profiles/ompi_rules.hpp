#pragma once
// The Open MPI export of a profile: coll/tuned dynamic rules from its decisions.
#include <string>
#include <vector>

#include "core/profile.hpp"

namespace railkit::profiles {

/// An Open MPI coll/tuned dynamic rules file (coll_tuned_dynamic_rules_filename format) from the
/// per-bucket decisions, for `nranks` ranks. Decisions without an algorithm for their collective
/// give 0 (Open MPI's own choice). Message sizes are railkit-bench's bytes (nccl-tests' size).
std::string ompi_rules(const std::vector<ProfileDecision>& decisions, int nranks);

/// How many decisions choose an algorithm (OMPI_MCA_coll_tuned_<coll>_algorithm, not "0") for a
/// collective the rules file covers; 0 means the rules would change nothing.
int ompi_rules_choosing(const std::vector<ProfileDecision>& decisions);

}  // namespace railkit::profiles
