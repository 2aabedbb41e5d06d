#!/usr/bin/env bash
# railkit-bench's measurement overhead against a raw MPI_Allreduce loop, and its peak memory.
# A benchmark, not a test: it prints figures and the goals, and exits 0 whatever they are;
# non-zero only when something fails to run.
#
# Usage: scripts/perf/overhead.sh [BUILD_DIR]      (default: <repo>/build)
# Needs: BUILD_DIR/bin/railkit-bench and BUILD_DIR/bin/railkit-raw-allreduce
#        (cmake --build build --target railkit-bench railkit-raw-allreduce), mpirun, python3.
# Knobs (environment): NP (ranks, 4), REPS (alternations per size, 9), MPIRUN (mpirun),
#        MPIRUN_ARGS (extra launcher flags, e.g. "--mca btl self,vader").
#
# Part 1, overhead: for each size (8 B, 64 KiB, 16 MiB), REPS times alternately (the order
# flips every repetition), railkit-bench --coll all_reduce --placement out -c 0 reading
# results[0].time_us.avg, and railkit-raw-allreduce with the same -n and -w. Both average the
# per-op time over ranks. Prints the medians and railkit/raw (goal <= 1.03).
# Part 2, memory: one railkit-bench all_reduce run at 256 MiB; peak RSS of every rank from
# observed.ranks[].peak_rss_bytes against 3.2 x 256 MiB + 64 MiB.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
build="${1:-$repo/build}"
bench="$build/bin/railkit-bench"
raw="$build/bin/railkit-raw-allreduce"
NP="${NP:-4}"
REPS="${REPS:-9}"
MPIRUN="${MPIRUN:-mpirun}"
read -r -a extra <<<"${MPIRUN_ARGS:-}"

die() { echo "overhead.sh: $*" >&2; exit 1; }
[[ -x "$bench" ]] || die "$bench not found (cmake --build $build --target railkit-bench)"
[[ -x "$raw" ]] || die "$raw not found (cmake --build $build --target railkit-raw-allreduce)"
command -v "$MPIRUN" >/dev/null || die "$MPIRUN not found"
command -v python3 >/dev/null || die "python3 not found"
[[ "$REPS" =~ ^[1-9][0-9]*$ ]] || die "REPS '$REPS': expected a positive integer"

if [[ "$(id -u)" == 0 ]]; then
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi

tmp="$(mktemp -d "${TMPDIR:-/tmp}/railkit-overhead.XXXXXX")"
trap 'rm -rf "$tmp"' EXIT
launch=("$MPIRUN" --oversubscribe -np "$NP" "${extra[@]}")

# Size, iterations, warm-up: enough timed work per launch for stable figures, the whole
# script within about 3 minutes on 2 cores with 4 ranks.
sizes=(8 65536 16777216)
declare -A iters=([8]=20000 [65536]=3000 [16777216]=30)
declare -A warm=([8]=1000 [65536]=100 [16777216]=3)

# Runs a command quietly; on failure shows its output and stops the script.
run_quiet() {
  local log="$tmp/last.log"
  if ! "$@" >"$log" 2>&1; then
    echo "overhead.sh: failed: $*" >&2
    tail -n 30 "$log" >&2
    exit 1
  fi
}

# Prints railkit-bench's avg us/op for one size.
railkit_us() {
  local s=$1 doc="$tmp/rk.json"
  rm -f "$doc"
  run_quiet "${launch[@]}" "$bench" --backend mpi --coll all_reduce -b "$s" -e "$s" --placement out -c 0 \
    -n "${iters[$s]}" -w "${warm[$s]}" -J "$doc"
  python3 - "$doc" "$s" <<'EOF'
import json, sys
doc, size = sys.argv[1], int(sys.argv[2])
r = json.load(open(doc))["results"][0]
if r["op"] != "all_reduce" or r["in_place"] or r["bytes"] != size:
    sys.exit(f"overhead.sh: unexpected record in {doc}: op={r['op']} in_place={r['in_place']} bytes={r['bytes']}")
print(r["time_us"]["avg"])
EOF
}

# Prints the raw loop's avg us/op for one size.
raw_us() {
  local s=$1 out
  run_quiet "${launch[@]}" "$raw" "$s" "${iters[$s]}" "${warm[$s]}"
  out="$(tail -n 1 "$tmp/last.log")"
  [[ "$out" =~ ^([0-9]+)\ ([0-9.eE+-]+)$ && "${BASH_REMATCH[1]}" == "$s" ]] ||
    die "unexpected output from $raw: '$out'"
  echo "${BASH_REMATCH[2]}"
}

start=$SECONDS
echo "# railkit-bench overhead vs raw MPI_Allreduce: $NP ranks, float sum out of place, median of $REPS alternations"
echo "# $("$MPIRUN" --version 2>/dev/null | head -n 1); $(nproc) CPUs; $(uname -n); load average $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo '?')"
echo "# railkit: ${launch[*]} $bench --backend mpi --coll all_reduce -b S -e S --placement out -c 0 -n N -w W -J doc.json"
echo "# raw:     ${launch[*]} $raw S N W"
: >"$tmp/samples"
for ((rep = 1; rep <= REPS; ++rep)); do
  for s in "${sizes[@]}"; do
    if ((rep % 2)); then order=(railkit raw); else order=(raw railkit); fi
    for who in "${order[@]}"; do
      us="$("${who}_us" "$s")"  # a failure inside stops the script here (set -e)
      echo "$s ${iters[$s]} $who $us" >>"$tmp/samples"
    done
  done
  echo "#   repetition $rep/$REPS done ($((SECONDS - start)) s)" >&2
done

python3 - "$tmp/samples" "$REPS" <<'EOF'
import statistics, sys
path, reps = sys.argv[1], sys.argv[2]
# Lines come in pairs (railkit and raw of one repetition, either order), in run order.
samples, iters = {}, {}
for line in open(path):
    size, n, who, us = line.split()
    iters[int(size)] = n
    samples.setdefault(int(size), {}).setdefault(who, []).append(float(us))
def human(b):
    for unit, f in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if b >= f and b % f == 0:
            return f"{b // f} {unit}"
    return f"{b} B"
print()
print(f"{'size':>8}  {'iters':>6}  {'railkit us/op':>13}  {'raw us/op':>10}  {'railkit/raw':>11}  {'goal':>6}  "
      f"{'paired':>6}  {'railkit min..max':>21}  {'raw min..max':>21}")
for size in sorted(samples):
    rk, raw = samples[size]["railkit"], samples[size]["raw"]
    mr, mw = statistics.median(rk), statistics.median(raw)
    ratio = mr / mw if mw > 0 else float("inf")
    verdict = "met" if ratio <= 1.03 else "missed"
    paired = statistics.median(a / b for a, b in zip(rk, raw) if b > 0)
    print(f"{human(size):>8}  {iters[size]:>6}  {mr:13.3f}  {mw:10.3f}  {ratio:11.3f}  {verdict:>6}  "
          f"{paired:6.3f}  {min(rk):10.3f}..{max(rk):<9.3f}  {min(raw):10.3f}..{max(raw):<9.3f}")
print(f"railkit/raw = median railkit / median raw over {reps} alternations; goal <= 1.03.")
print("paired = median of railkit/raw within each alternation (adjacent runs, less sensitive to load drifting).")
EOF

# Part 2: peak memory at 256 MiB.
doc="$tmp/mem.json"
mem_cmd=("${launch[@]}" "$bench" --backend mpi --coll all_reduce -b 256M -e 256M -c 1 -n 5 -w 1 -J "$doc")
echo
echo "# memory: ${mem_cmd[*]}"
run_quiet "${mem_cmd[@]}"
python3 - "$doc" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
MiB = 1 << 20
size = 256 * MiB
goal = 3.2 * size + 64 * MiB
ranks = d["observed"]["ranks"]
buf = d["observed"].get("buffer_bytes")
print(f"buffer_bytes per buffer: {buf / MiB:.1f} MiB (send + recv = {2 * buf / MiB:.1f} MiB)" if buf else "buffer_bytes: n/a")
print(f"{'rank':>4}  {'host':>12}  {'peak RSS MiB':>12}  {'x 256 MiB':>9}")
for r in ranks:
    print(f"{r['rank']:>4}  {r['host']:>12}  {r['peak_rss_bytes'] / MiB:12.1f}  {r['peak_rss_bytes'] / size:9.2f}")
worst = max(r["peak_rss_bytes"] for r in ranks)
word = "PASS" if worst > 0 and worst <= goal else "over"
if worst == 0:
    word = "unknown (peak RSS not reported)"
print(f"{word}: largest peak RSS {worst / MiB:.1f} MiB, goal <= 3.2 x 256 MiB + 64 MiB = {goal / MiB:.1f} MiB")
if d.get("results"):
    parts = [f"{'in-place' if r['in_place'] else 'out-of-place'} {r['time_us']['avg']:.0f}" for r in d["results"]]
    print("256 MiB all_reduce avg us/op: " + ", ".join(parts))
EOF
echo "# total $((SECONDS - start)) s; load average at the end $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo '?')" \
  "(other work on the machine makes these figures noisy)"
