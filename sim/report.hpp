#pragma once
// Writers of a run: the railkit.sim/1 JSON document, the CSV time series and a short summary
// for people. They format; they measure nothing.
#include <string>

#include <nlohmann/json.hpp>

#include "sim/result.hpp"
#include "sim/scenario.hpp"

namespace railkit::sim {

inline constexpr const char* kSimSchema = "railkit.sim/1";

/// The document: schema, "simulated": true, versions, the scenario as read and as resolved,
/// run figures, flows, ports, totals and the series. Described in sim/README.md.
nlohmann::ordered_json sim_document(const Scenario& s, const SimResult& r);

/// flows.csv: t_us, then per flow its goodput (Gb/s) and its DCQCN rate (Gb/s).
std::string flows_csv(const SimResult& r);

/// ports.csv: t_us, then per port in the series its mean queue (bytes), pauses sent, pauses received.
std::string ports_csv(const SimResult& r);

/// A few lines: where it ran, what converged, what paused or dropped (and the deadlock, if any).
std::string summary_text(const SimResult& r);

/// One line, without a newline: "deadlock at T us simulated (a cycle of PFC pauses): P1 -> P2
/// -> ... -> back to P1", or "(pauses that never clear): P1, P2, ...: why" (at most 8 ports named).
std::string deadlock_text(const DeadlockFinding& d);

}  // namespace railkit::sim
