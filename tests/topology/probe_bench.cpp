// Probe time of the DGX-like fixture (issue target: <= 50 ms median). Not a test: run
// build/bin/topology_probe_bench [--benchmark_repetitions=10] and read the median.
#include <benchmark/benchmark.h>

#include "topology/analyze.hpp"
#include "topology/probe.hpp"

namespace {

void BM_ProbeDgx(benchmark::State& state) {
  railkit::topo::ProbeOptions o;
  o.root = std::filesystem::path(RAILKIT_TOPO_FIXTURES) / "dgx-h100";
  for (auto _ : state) {
    auto t = railkit::topo::probe_node(o);
    railkit::topo::analyze(t, {});
    benchmark::DoNotOptimize(t.fingerprint.hash);
  }
}
BENCHMARK(BM_ProbeDgx)->Unit(benchmark::kMillisecond)->Repetitions(10)->ReportAggregatesOnly(true);

}  // namespace

BENCHMARK_MAIN();
