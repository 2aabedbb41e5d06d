#!/usr/bin/env bash
# The fabric simulator's speed: simulated packet-hops per wall-clock second, and the wall time
# to simulate 10 ms of the 16:1 incast at 400 Gb/s (sim/examples/incast-16to1.yaml with
# topology.link_rate=400Gbps, duration=10ms). A benchmark, not a test: it prints the figures and
# the goal (>= 1 million packet-hops per second on one core) and exits 0 whatever they are;
# non-zero only when something fails to run.
#
# Usage: scripts/perf/sim_speed.sh [BUILD_DIR]      (default: <repo>/build)
# Needs: BUILD_DIR/bin/railkit-sim (cmake --build BUILD_DIR --target railkit-sim), python3.
# Knobs (environment): REPS (runs, 5; the median is reported), CPU (core to pin to with taskset,
#        0; empty: no pinning), SET (extra --set overrides, space-separated).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
build="${1:-$repo/build}"
sim="$build/bin/railkit-sim"
REPS="${REPS:-5}"
CPU="${CPU-0}"
read -r -a extra <<<"${SET:-}"

die() { echo "sim_speed.sh: $*" >&2; exit 1; }
[[ -x "$sim" ]] || die "$sim not found (cmake --build $build --target railkit-sim)"
command -v python3 >/dev/null || die "python3 not found"
[[ "$REPS" =~ ^[1-9][0-9]*$ ]] || die "REPS '$REPS': expected a positive integer"

pin=()
if [[ -n "$CPU" ]] && command -v taskset >/dev/null; then pin=(taskset -c "$CPU"); fi
sets=(--set topology.link_rate=400Gbps --set duration=10ms)
for s in "${extra[@]}"; do sets+=(--set "$s"); done

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
for ((i = 0; i < REPS; i++)); do
  "${pin[@]}" "$sim" "$repo/sim/examples/incast-16to1.yaml" --out "$tmp/run$i" -q "${sets[@]}" ||
    die "railkit-sim failed (run $i)"
done

python3 - "$tmp" "$REPS" "${pin[*]:-unpinned}" <<'PY'
import json, statistics, sys
tmp, reps, pin = sys.argv[1], int(sys.argv[2]), sys.argv[3]
runs = [json.load(open(f"{tmp}/run{i}/sim.json"))["run"] for i in range(reps)]
rate = statistics.median(r["packet_hops_per_wall_s"] for r in runs)
wall = statistics.median(r["wall_s"] for r in runs)
r0 = runs[0]
print(f"# railkit-sim speed (simulated): 16:1 incast at 400 Gb/s, {r0['duration_us'] / 1000:g} ms simulated, "
      f"{reps} runs, {pin}")
print(f"packet-hops per run      {r0['packet_hops']}")
print(f"events per run           {r0['events']}")
print(f"wall time, 10 ms sim     {wall:.3f} s (median; min {min(r['wall_s'] for r in runs):.3f}, "
      f"max {max(r['wall_s'] for r in runs):.3f})")
print(f"packet-hops per wall-s   {rate / 1e6:.2f} M (median)   goal >= 1.00 M on one core: "
      f"{'met' if rate >= 1e6 else 'NOT met'}")
print(f"events per wall-s        {statistics.median(r['events'] / r['wall_s'] for r in runs) / 1e6:.2f} M")
PY
