#!/usr/bin/env bash
# The NCCL profiler plugin's overhead: ns per callback through the dlopened
# libnccl-profiler-railkit.so (Coll, ProxyOp, ProxyStep with its states, NetPlugin, an ignored API
# event; ProxyStep also from two threads on one communicator), as the median over repetitions,
# against the goal of 1 us per callback; and memory: the RSS one communicator's init adds and the
# RSS growth over 1e6 events (the goal: 0, no allocation after init). A benchmark, not a test: it
# prints the figures and exits 0 whatever they are; non-zero only when something fails to run.
#
# Usage: scripts/perf/monitor_plugin_overhead.sh [BUILD_DIR]      (default: <repo>/build)
# Needs: BUILD_DIR/bin/monitor_plugin_bench (cmake --build BUILD_DIR --target monitor_plugin_bench;
#        Google Benchmark, libbenchmark-dev), python3.
# Knobs (environment): REPS (repetitions, 5), MIN_TIME (seconds per repetition, 0.2), CPU (core to
#        pin to with taskset, 0; empty: no pinning).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
build="${1:-$repo/build}"
bench="$build/bin/monitor_plugin_bench"
REPS="${REPS:-5}"
MIN_TIME="${MIN_TIME:-0.2}"
CPU="${CPU-0}"

die() { echo "monitor_plugin_overhead.sh: $*" >&2; exit 1; }
[[ -x "$bench" ]] || die "$bench not found (cmake --build $build --target monitor_plugin_bench)"
command -v python3 >/dev/null || die "python3 not found"
[[ "$REPS" =~ ^[1-9][0-9]*$ ]] || die "REPS '$REPS': expected a positive integer"

pin=()
if [[ -n "$CPU" ]] && command -v taskset >/dev/null; then pin=(taskset -c "$CPU"); fi
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
"${pin[@]}" "$bench" --benchmark_repetitions="$REPS" --benchmark_min_time="${MIN_TIME}s" \
  --benchmark_out="$tmp/bench.json" --benchmark_out_format=json >"$tmp/console.txt" 2>&1 ||
  { cat "$tmp/console.txt" >&2; die "the benchmark failed"; }

python3 - "$tmp/bench.json" "$tmp/console.txt" "${pin[*]:-unpinned}" <<'PY'
import json, re, statistics, sys
runs = json.load(open(sys.argv[1]))["benchmarks"]
per = {}
for b in runs:
    if b.get("run_type") != "iteration":
        continue
    per.setdefault(b["run_name"], []).append(1e9 / b["items_per_second"])  # ns per callback
print(f"monitor plugin overhead ({sys.argv[3]}; ns per callback, median of {max(len(v) for v in per.values())} repetitions; goal < 1000 ns):")
for name, ns in per.items():
    med = statistics.median(ns)
    print(f"  {name:<34} {med:8.1f} ns   {med / 1000:6.3f} x goal   (min {min(ns):.1f}, max {max(ns):.1f})")
mem = re.search(r"communicator_init_rss_bytes=(-?\d+) rss_growth_per_1e6_events_bytes=(-?\d+)", open(sys.argv[2]).read())
if mem:
    print(f"  memory: one communicator's init adds {int(mem.group(1)) / 1024:.0f} KiB RSS; "
          f"RSS growth over 1e6 events: {int(mem.group(2))} bytes (goal 0)")
PY
