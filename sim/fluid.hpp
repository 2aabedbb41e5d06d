#pragma once
// The DCQCN fluid model (Zhu et al., "ECN or Delay", CoNEXT'16; as written in roce.md) for N
// identical flows sharing one bottleneck, integrated numerically (explicit Euler with the delayed
// terms read from a history buffer). Rates are in packets per second, the queue in packets.
#include <cstdint>
#include <vector>

namespace railkit::sim {

/// Inputs of the fluid model. The paper's 40G defaults, 1 KB packets.
struct FluidParams {
  int flows = 2;                    ///< N
  double capacity_pps = 40e9 / 8 / 1086;  ///< C: bottleneck rate in packets/s
  double line_rate_pps = 40e9 / 8 / 1086; ///< each sender's line rate (initial and maximum RC)
  double kmin_pkts = 5;             ///< ECN Kmin in packets
  double kmax_pkts = 200;           ///< ECN Kmax in packets
  double pmax = 0.01;
  double g = 1.0 / 256;
  double tau_s = 50e-6;             ///< CNP interval N
  double tau_prime_s = 55e-6;       ///< alpha timer K
  double tau_star_s = 4e-6;         ///< feedback delay
  double timer_s = 55e-6;           ///< rate-increase timer T
  double byte_counter_pkts = 10 * 1024 * 1024 / 1024.0;  ///< byte counter B in packets
  double f = 5;                     ///< fast-recovery stages F
  double ai_pps = 40e6 / 8 / 1086;  ///< R_AI in packets/s
  double min_rate_pps = 1e6 / 8 / 1086;  ///< rate floor
  double dt_s = 0.1e-6;             ///< integration step
  double duration_s = 0.1;
  double average_from_s = 0.05;     ///< steady-state averages over [average_from_s, duration_s]
  double sample_interval_s = 10e-6; ///< spacing of the returned series
};

/// The integrated trajectory and its steady state.
struct FluidResult {
  std::vector<double> t_s;          ///< sample times
  std::vector<double> queue_pkts;   ///< q(t)
  std::vector<double> rate_pps;     ///< RC(t) of each flow
  std::vector<double> target_pps;   ///< RT(t)
  std::vector<double> alpha;        ///< alpha(t)
  double mean_queue_pkts = 0;       ///< time average of q over the steady window
  double mean_rate_pps = 0;         ///< time average of RC over the steady window
  double mean_cnp_rate_per_s = 0;   ///< CNPs per second each flow receives (a / tau), whole run
  double min_queue_pkts = 0;        ///< extremes of q over the steady window (oscillation)
  double max_queue_pkts = 0;
};

/// The mark probability the model uses at queue `q_pkts` (RED-like, as the switch marks).
double fluid_mark_probability(double q_pkts, const FluidParams& p) noexcept;

/// Integrates the model from RC = RT = line rate, alpha = 1, q = 0. Throws UsageError for
/// parameters it cannot integrate (N < 1, dt not positive, dt above the feedback delay, ...).
FluidResult integrate_dcqcn_fluid(const FluidParams& p);

}  // namespace railkit::sim
