#pragma once
// Helpers of the simulator's validation tests: the example scenarios with overrides, and a
// line per measured figure (printed, and recorded as a test property for the XML report).
#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <vector>

#include "sim/network.hpp"
#include "sim/scenario.hpp"

namespace simtest {

namespace rs = railkit::sim;

/// sim/examples/<name> with `set` applied (as railkit-sim --set).
inline rs::Scenario example(const std::string& name, const std::vector<std::string>& set = {}) {
  return rs::load_scenario(std::string(RAILKIT_SIM_EXAMPLES) + "/" + name, set);
}

/// Overrides that turn the 16:1 example into an N:1 incast (h0..hN-1 -> hN).
inline std::vector<std::string> incast(int n) {
  return {"topology.hosts=" + std::to_string(n + 1),
          "flows=[{src: h0-h" + std::to_string(n - 1) + ", dst: h" + std::to_string(n) + "}]"};
}

/// The egress port `node`:`port`; fails the test when absent.
inline const rs::PortResult& port(const rs::SimResult& r, const std::string& node, int p) {
  const rs::PortResult* x = r.find_port(node, p);
  if (x == nullptr) throw std::runtime_error("no port " + node + ":" + std::to_string(p));
  return *x;
}

/// Prints "[ measured ] <key> = <value>" and records it on the test.
inline void measured(const std::string& key, double value) {
  std::printf("[ measured ] %s = %.6g\n", key.c_str(), value);
  ::testing::Test::RecordProperty(key, std::to_string(value));
}

}  // namespace simtest
