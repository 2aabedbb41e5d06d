// The Open MPI coll/tuned rules export of a profile (profiles/ompi_rules).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "core/results.hpp"
#include "test_util.hpp"
#include "profiles/ompi_rules.hpp"

namespace railkit::profiles {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

// ---------------------------------------------------------------- tune: Open MPI rules file

ProfileDecision decision(const std::string& coll, std::uint64_t min_bytes, std::map<std::string, std::string> env,
                         const std::string& config) {
  ProfileDecision d;
  d.coll = coll;
  d.min_bytes = min_bytes;
  d.max_bytes = min_bytes * 4 - 1;
  d.env = std::move(env);
  d.config = config;
  return d;
}

/// The lines of a rules file without comments and surrounding blanks; comment-only lines dropped.
std::vector<std::string> rule_data(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    line = line.substr(0, line.find('#'));
    while (!line.empty() && line.back() == ' ') line.pop_back();
    if (!line.empty()) out.push_back(line);
  }
  return out;
}

TEST(OmpiRules, AllReduceAndAllGather) {
  const std::string ar = "OMPI_MCA_coll_tuned_allreduce_algorithm";
  const std::string ag = "OMPI_MCA_coll_tuned_allgather_algorithm";
  const std::vector<ProfileDecision> ds = {
      decision("all_reduce", 1048576, {{ar, "5"}, {ar + "_segmentsize", "131072"}}, "allreduce_algorithm=5"),
      decision("all_gather", 65536, {{ag, "4"}}, "allgather_algorithm=4"),
      decision("all_reduce", 1024, {{ar, "3"}}, "allreduce_algorithm=3"),
      decision("all_reduce", 16384, {}, "defaults"),  // the baseline: Open MPI's own choice
      decision("sendrecv", 1024, {{"NCCL_PROTO", "LL"}}, "x"),  // no Open MPI collective: left out
      decision("all_reduce", 65536, {{ar, "4"}, {"NCCL_PROTO", "LL"}}, "allreduce_algorithm=4"),
      decision("all_gather", 256, {{ag, "2"}}, "allgather_algorithm=2"),
  };
  const std::string text = ompi_rules(ds, 16);
  EXPECT_EQ(rule_data(text), (std::vector<std::string>{
                                 "2",                    // number of collectives
                                 "0",                    // allgather
                                 "1", "16",              // one communicator size: 16
                                 "2",                    // message sizes
                                 "0 2 0 0",              // the first rule starts at 0
                                 "65536 4 0 0",
                                 "2",                    // allreduce
                                 "1", "16",
                                 "4",
                                 "0 3 0 0",
                                 "16384 0 0 0",
                                 "65536 4 0 0",
                                 "1048576 5 0 131072",
                             }))
      << text;
  EXPECT_NE(text.find("0 # collective id (allgather)"), std::string::npos) << text;
  EXPECT_NE(text.find("2 # collective id (allreduce)"), std::string::npos) << text;
  EXPECT_NE(text.find("16 # communicator size"), std::string::npos) << text;
  EXPECT_NE(text.find("# allreduce_algorithm=5"), std::string::npos) << text;
  EXPECT_EQ(text.back(), '\n');
}

TEST(OmpiRules, NoDecisions) {
  EXPECT_EQ(rule_data(ompi_rules({}, 4)), (std::vector<std::string>{"0"}));
}


}  // namespace
}  // namespace railkit::profiles
