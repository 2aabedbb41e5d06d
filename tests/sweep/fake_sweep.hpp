#pragma once
// A sweep run for real on the stand-in bench (tests/lib/fake_bench.py, launcher `local`): the
// template document it copies, its launch counter, and the options every such test starts from.
// Shared by the runner and --prom tests.
#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "core/atomic_file.hpp"
#include "core/results.hpp"
#include "sweep/sweep.hpp"
#include "test_util.hpp"

namespace railkit::sweep::test_sweep {

class FakeBenchSweep : public ::testing::Test {
 protected:
  test::TempDir tmp;
  std::filesystem::path out = tmp.path / "out";
  std::filesystem::path templ = tmp.path / "template.json";
  std::filesystem::path counter = tmp.path / "count.txt";

  /// The document every fake launch copies (scaled by FAKE_SCALE).
  void write_template(const ResultsDocument& d) { write_file_atomic(templ, dump_results(d)); }

  /// A configuration whose launches copy the template and count themselves.
  BenchConfig cfg(const std::string& name, std::map<std::string, std::string> env) {
    env["FAKE_TEMPLATE"] = templ.string();
    env["FAKE_COUNTER"] = counter.string();
    return BenchConfig{name, env, {}};
  }

  /// The configurations on the local launcher and the fake bench, `rounds` rounds with `seed`.
  SweepOptions fake_opts(std::vector<BenchConfig> configs, int rounds, std::uint64_t seed) {
    SweepOptions o;
    o.configs = std::move(configs);
    o.launcher.kind = launch::LauncherKind::Local;
    o.bench = std::string(RAILKIT_TESTS_DIR) + "/lib/fake_bench.py";
    o.bench_args = {"-b", "1K"};
    o.out_dir = out;
    o.kill_grace_s = 0.5;
    o.rounds = rounds;
    o.seed = seed;
    return o;
  }
};

}  // namespace railkit::sweep::test_sweep
