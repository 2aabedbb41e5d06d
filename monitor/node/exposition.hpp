#pragma once
// The Prometheus text exposition of a sample (node_exporter textfile format and HTTP /metrics),
// and the table for people on stdout.
#include <string>
#include <vector>

#include "monitor/node/rates.hpp"
#include "monitor/node/sample.hpp"

namespace railkit::monitor {

/// Every metric of monitor/README.md section 3 that the sample, its rates (null before the second
/// sample) and the signals hold, with # HELP and # TYPE; series of a metric in the sources' order.
std::string render_exposition(const NodeSample& cur, const IntervalRates* rates, const std::vector<Signal>& signals);

/// For people: the signals raised (and how many judged clean), then the `top` highest rates.
std::string render_node_table(int index, const NodeSample& cur, const IntervalRates* rates,
                              const std::vector<Signal>& signals, int top = 8);

}  // namespace railkit::monitor
