#include "sim/collective.hpp"

#include "core/error.hpp"

namespace railkit::sim {

const char* algo_name(Algo a) noexcept { return a == Algo::Ring ? "Ring" : "Tree"; }

const char* proto_name(Proto p) noexcept {
  switch (p) {
    case Proto::LL: return "LL";
    case Proto::LL128: return "LL128";
    case Proto::Simple: return "Simple";
  }
  return "?";
}

const char* fidelity_name(Fidelity f) noexcept { return f == Fidelity::Packet ? "packet" : "flow"; }

Fidelity parse_fidelity(const std::string& text, const std::string& what) {
  if (text == "packet") return Fidelity::Packet;
  if (text == "flow") return Fidelity::Flow;
  throw UsageError(what + ": '" + text + "': expected packet or flow");
}

CollOutcome simulate_collective(const ClusterSpec& c, const NcclSettings& s, const CollRequest& r, Fidelity f) {
  CollPlan plan = plan_collective(c, s, r);
  return f == Fidelity::Flow ? run_flow_plan(c, std::move(plan)) : run_packet_plan(c, std::move(plan));
}

}  // namespace railkit::sim
