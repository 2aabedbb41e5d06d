#pragma once
// Helpers shared by the topology tests: fixture paths and a probe + analyze in one call.
#include <filesystem>
#include <optional>
#include <string>

#include "topology/analyze.hpp"
#include "topology/probe.hpp"

namespace railkit::topo::testing {

inline std::filesystem::path fixture(const std::string& name) { return std::filesystem::path(RAILKIT_TOPO_FIXTURES) / name; }

inline std::filesystem::path fixture_src(const std::string& name) {
  return std::filesystem::path(RAILKIT_TOPO_FIXTURE_SRC) / name;
}

inline Topology probe_fixture(const std::string& name, std::optional<std::filesystem::path> nvsmi = std::nullopt,
                              int priority = 3) {
  ProbeOptions o;
  o.root = fixture(name);
  o.nvidia_smi_topo = std::move(nvsmi);
  Topology t = probe_node(o);
  analyze(t, LintOptions{priority});
  return t;
}

inline const Finding* find_finding(const Topology& t, const std::string& check, const std::string& subject) {
  for (const auto& f : t.findings)
    if (f.check == check && f.subject == subject) return &f;
  return nullptr;
}

}  // namespace railkit::topo::testing
