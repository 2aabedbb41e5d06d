#!/usr/bin/env bash
# Scale of the simulated collectives (issue 16, check 4): wall time and peak memory of one
# 256 MiB all-reduce on rail-optimized clusters of 2, 4, 8, 16, 32 ... nodes x 8 GPUs
# (sim/examples/cluster-4x8-1to1.yaml with topology.nodes, spines and fabric_rate set), at packet level and at
# flow level, and the largest cluster each fidelity simulates within CAP_S seconds. A benchmark,
# not a test: it prints the figures (all simulated times are simulated; wall times and memory are
# measured on this machine) and exits 0 whatever they are; non-zero only when something fails to
# run.
#
# Usage: scripts/perf/sim_collectives.sh [BUILD_DIR]       (default: <repo>/build)
# Needs: BUILD_DIR/bin/railkit-bench built with the sim backend (ns-3), /usr/bin/time, python3.
# Knobs (environment): NODES ("2 4 8 16 32": the fixed list), GROW (1: after the list, keep
#   doubling until a run takes more than CAP_S; 0: the list only), CAP_S (600), MAX_NODES (1024),
#   FIDELITIES ("flow packet"), BYTES (256M), CPU (core to pin to, 0; empty: no pinning).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
build="${1:-$repo/build}"
bench="$build/bin/railkit-bench"
NODES="${NODES:-2 4 8 16 32}"
GROW="${GROW:-1}"
CAP_S="${CAP_S:-600}"
MAX_NODES="${MAX_NODES:-1024}"
FIDELITIES="${FIDELITIES:-flow packet}"
BYTES="${BYTES:-256M}"
CPU="${CPU-0}"

die() { echo "sim_collectives.sh: $*" >&2; exit 1; }
[[ -x "$bench" ]] || die "$bench not found (cmake --build $build --target railkit-bench)"
[[ -x /usr/bin/time ]] || die "/usr/bin/time not found (Debian package time)"
command -v python3 >/dev/null || die "python3 not found"
[[ "$CAP_S" =~ ^[1-9][0-9]*$ ]] || die "CAP_S '$CAP_S': expected a positive integer"
pin=()
if [[ -n "$CPU" ]] && command -v taskset >/dev/null; then pin=(taskset -c "$CPU"); fi

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
cluster="$repo/sim/examples/cluster-4x8-1to1.yaml"

# run FIDELITY NODES -> appends "fidelity nodes wall_s rss_kB doc" to $tmp/rows; returns 1 past the cap
run() {
  local fid="$1" nodes="$2" spines=$(( $2 < 4 ? $2 : 4 )) doc="$tmp/$1-$2.json"
  # Spines: as many as the leaf has nodes, up to 4, each link at nodes x 400 Gb/s / spines (1:1
  # keeps every leaf's uplinks = downlinks; the example's NICs are 400 Gb/s).
  local fabric=$(( nodes * 400 / spines ))
  # A leaf has a port per node: its buffer grows with them (1 MiB per port, at least the example's
  # 64 MiB), or the PFC headroom of 256 ports would not fit.
  local buffer=$(( (nodes + spines) * 1048576 > 67108864 ? (nodes + spines) * 1048576 : 67108864 ))
  if ! timeout "$((CAP_S + 60))" /usr/bin/time -f '%e %M' -o "$tmp/time" "${pin[@]}" "$bench" --backend sim \
      --sim-cluster "$cluster" --sim-set "topology.nodes=$nodes" --sim-set "topology.spines=$spines" \
      --sim-set "topology.fabric_rate=${fabric}Gbps" --sim-set "switch.buffer_bytes=$buffer" \
      --fidelity "$fid" --coll all_reduce -b "$BYTES" -e "$BYTES" -n 1 -w 0 -J "$doc" >"$tmp/out" 2>&1; then
    echo "$fid $nodes failed or exceeded $((CAP_S + 60)) s:" >&2
    tail -3 "$tmp/out" >&2
    return 2
  fi
  read -r wall rss <"$tmp/time"
  echo "$fid $nodes $wall $rss $doc" >>"$tmp/rows"
  printf '  %-6s %4d nodes (%5d GPUs): %8.2f s wall, %8.1f MiB peak\n' "$fid" "$nodes" $((nodes * 8)) "$wall" \
    "$(python3 -c "print($rss / 1024)")"
  python3 -c "import sys; sys.exit(0 if float('$wall') <= $CAP_S else 1)"
}

echo "# railkit-bench --backend sim: one $BYTES all-reduce, nodes x 8 GPUs, 400 Gb/s NICs, 1:1 spines (${pin[*]:-unpinned})"
for fid in $FIDELITIES; do
  last=0
  for n in $NODES; do
    run "$fid" "$n" || break
    last=$n
  done
  if [[ "$GROW" == 1 && "$last" != 0 && "$last" == "${NODES##* }" ]]; then
    n=$((last * 2))
    while ((n <= MAX_NODES)); do
      run "$fid" "$n" || break
      n=$((n * 2))
    done
  fi
done

python3 - "$tmp/rows" "$CAP_S" <<'PY'
import json, sys
rows = [l.split() for l in open(sys.argv[1])] if __import__("os").path.exists(sys.argv[1]) else []
cap = float(sys.argv[2])
print()
print("| fidelity | nodes | GPUs | wall s | peak MiB | simulated time us | busbw GB/s (simulated) |")
print("|---|---|---|---|---|---|---|")
best = {}
for fid, nodes, wall, rss, doc in rows:
    d = json.load(open(doc))
    r = d["results"][0]
    t = r["time_us"]["avg"]
    bus = r["busbw_GBps"]
    print(f"| {fid} | {nodes} | {int(nodes) * 8} | {float(wall):.2f} | {int(rss) / 1024:.1f} | {t:.1f} | {bus:.1f} |")
    if float(wall) <= cap:
        best[fid] = max(best.get(fid, 0), int(nodes))
for fid, n in best.items():
    print(f"largest within {cap:g} s ({fid}): {n} nodes = {n * 8} GPUs")
flow = [(int(n), float(w)) for f, n, w, _, _ in rows if f == "flow" and int(n) == 128]
if flow:
    print(f"goal: flow level simulates 128 nodes (1024 GPUs) in under 60 s: {flow[0][1]:.2f} s, "
          f"{'met' if flow[0][1] < 60 else 'NOT met'}")
PY
