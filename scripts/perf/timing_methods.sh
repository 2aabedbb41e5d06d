#!/usr/bin/env bash
# railkit-bench against raw MPI loops for both timing methods: back to back (the default, as
# nccl-tests) and barrier-separated (--sync, as IMB-MPI1 and the OSU benchmarks), for all_reduce
# and all_gather. A benchmark, not a test: it prints figures and the goal, and exits 0 whatever
# they are; non-zero only when something fails to run.
#
# Usage: scripts/perf/timing_methods.sh [BUILD_DIR]      (default: <repo>/build)
# Needs: BUILD_DIR/bin/railkit-bench and BUILD_DIR/bin/railkit-raw-collective
#        (cmake --build build --target railkit-bench railkit-raw-collective), mpirun, python3.
# Knobs (environment): NP (ranks, 4), REPS (alternations, 6), MINBYTES (64), MAXBYTES (4194304),
#        FACTOR (4), ITERS (-n, 100), WARMUP (-w, 10), MPIRUN (mpirun), MPIRUN_ARGS (extra
#        launcher flags, e.g. "--mca btl self,vader").
#
# Each repetition runs, for each op (all_reduce, all_gather) and method (back-to-back, --sync),
# railkit-bench --backend mpi --coll OP -b MIN -e MAX -f FACTOR --placement out -c 0 [--sync]
# (reading every results[].time_us.avg) and railkit-raw-collective [--sync] OP with the same
# sizes, -n and -w, one after the other; the order flips every repetition. Both average the
# per-op time over ranks. Prints per op, method and size the medians and railkit/raw, the
# geometric mean of railkit/raw over the sizes per op and method (goal <= 1.03 each), and how far
# the methods differ (back-to-back / barrier-separated, railkit's and raw's).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
build="${1:-$repo/build}"
bench="$build/bin/railkit-bench"
raw="$build/bin/railkit-raw-collective"
NP="${NP:-4}"
REPS="${REPS:-6}"
MINBYTES="${MINBYTES:-64}"
MAXBYTES="${MAXBYTES:-4194304}"
FACTOR="${FACTOR:-4}"
ITERS="${ITERS:-100}"
WARMUP="${WARMUP:-10}"
MPIRUN="${MPIRUN:-mpirun}"
read -r -a extra <<<"${MPIRUN_ARGS:-}"

die() { echo "timing_methods.sh: $*" >&2; exit 1; }
[[ -x "$bench" ]] || die "$bench not found (cmake --build $build --target railkit-bench)"
[[ -x "$raw" ]] || die "$raw not found (cmake --build $build --target railkit-raw-collective)"
command -v "$MPIRUN" >/dev/null || die "$MPIRUN not found"
command -v python3 >/dev/null || die "python3 not found"
for k in NP REPS MINBYTES MAXBYTES FACTOR ITERS WARMUP; do
  [[ "${!k}" =~ ^[0-9]+$ ]] || die "$k '${!k}': expected a non-negative integer"
done
((REPS >= 1 && FACTOR >= 2 && ITERS >= 1)) || die "REPS and ITERS must be >= 1, FACTOR >= 2"

if [[ "$(id -u)" == 0 ]]; then
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi

tmp="$(mktemp -d "${TMPDIR:-/tmp}/railkit-timing.XXXXXX")"
trap 'rm -rf "$tmp"' EXIT
# As overhead.sh: more ranks than cores are allowed (Open MPI then yields when idle).
launch=("$MPIRUN" --oversubscribe -np "$NP" "${extra[@]}")

# Runs a command quietly; on failure shows its output and stops the script.
run_quiet() {
  local log="$tmp/last.log"
  if ! "$@" >"$log" 2>&1; then
    echo "timing_methods.sh: failed: $*" >&2
    tail -n 30 "$log" >&2
    exit 1
  fi
}

# Appends "OP METHOD railkit BYTES US" per size of one railkit-bench run.
railkit_run() {
  local op=$1 method=$2 doc="$tmp/rk.json" sync=()
  [[ "$method" == sync ]] && sync=(--sync)
  rm -f "$doc"
  run_quiet "${launch[@]}" "$bench" --backend mpi --coll "$op" -b "$MINBYTES" -e "$MAXBYTES" -f "$FACTOR" \
    --placement out -c 0 -n "$ITERS" -w "$WARMUP" "${sync[@]}" -J "$doc"
  python3 - "$doc" "$op" "$method" >>"$tmp/samples" <<'EOF'
import json, sys
doc, op, method = sys.argv[1:]
d = json.load(open(doc))
want = "barrier_separated" if method == "sync" else "back_to_back"
if d["run"]["timing_method"] != want:
    sys.exit(f"timing_methods.sh: {doc}: run.timing_method {d['run']['timing_method']}, not {want}")
for r in d["results"]:
    if r["op"] != op or r["in_place"]:
        sys.exit(f"timing_methods.sh: unexpected record in {doc}: op={r['op']} in_place={r['in_place']}")
    print(op, method, "railkit", r["bytes"], r["time_us"]["avg"])
EOF
}

# Appends "OP METHOD raw BYTES US" per size of one raw loop run.
raw_run() {
  local op=$1 method=$2 sync=()
  [[ "$method" == sync ]] && sync=(--sync)
  run_quiet "${launch[@]}" "$raw" "${sync[@]}" "$op" "$MINBYTES" "$MAXBYTES" "$FACTOR" "$ITERS" "$WARMUP"
  grep -E '^[0-9]+ [0-9.eE+-]+$' "$tmp/last.log" | sed "s/^/$op $method raw /" >>"$tmp/samples" ||
    die "no figures from $raw: $(tail -n 3 "$tmp/last.log")"
}

start=$SECONDS
echo "# railkit-bench vs raw MPI loops, back-to-back and barrier-separated (--sync): $NP ranks, float, out of place," \
  "-n $ITERS -w $WARMUP, median of $REPS alternations"
echo "# $("$MPIRUN" --version 2>/dev/null | head -n 1); $(nproc) CPUs; $(uname -n); load average $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo '?')"
echo "# railkit: ${launch[*]} $bench --backend mpi --coll OP -b $MINBYTES -e $MAXBYTES -f $FACTOR --placement out -c 0 -n $ITERS -w $WARMUP [--sync] -J doc.json"
echo "# raw:     ${launch[*]} $raw [--sync] OP $MINBYTES $MAXBYTES $FACTOR $ITERS $WARMUP"
: >"$tmp/samples"
for ((rep = 1; rep <= REPS; ++rep)); do
  for op in all_reduce all_gather; do
    for method in b2b sync; do
      if ((rep % 2)); then order=(railkit raw); else order=(raw railkit); fi
      for who in "${order[@]}"; do
        "${who}_run" "$op" "$method"  # a failure inside stops the script here (set -e)
      done
    done
  done
  echo "#   repetition $rep/$REPS done ($((SECONDS - start)) s)" >&2
done

python3 - "$tmp/samples" "$REPS" <<'EOF'
import math, statistics, sys
path, reps = sys.argv[1], sys.argv[2]
s = {}  # (op, method, who, bytes) -> [us, ...] in run order
for line in open(path):
    op, method, who, b, us = line.split()
    s.setdefault((op, method, who, int(b)), []).append(float(us))
def human(b):
    for unit, f in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if b >= f and b % f == 0:
            return f"{b // f} {unit}"
    return f"{b} B"
def gmean(v):
    return math.exp(sum(math.log(x) for x in v) / len(v)) if v else float("nan")
name = {"b2b": "back-to-back", "sync": "barrier-separated (--sync)"}
ops = ["all_reduce", "all_gather"]
sizes = {op: sorted({k[3] for k in s if k[0] == op}) for op in ops}
med = {k: statistics.median(v) for k, v in s.items()}
summary = []
for op in ops:
    for method in ("b2b", "sync"):
        print()
        print(f"{op}, {name[method]}")
        print(f"{'size':>8}  {'railkit us':>10}  {'raw us':>10}  {'railkit/raw':>11}  {'paired':>6}  "
              f"{'railkit min..max':>21}  {'raw min..max':>21}")
        ratios, paireds = [], []
        for b in sizes[op]:
            rk, rw = s.get((op, method, "railkit", b)), s.get((op, method, "raw", b))
            if not rk or not rw:
                continue
            r = med[(op, method, "railkit", b)] / med[(op, method, "raw", b)]
            p = statistics.median(a / c for a, c in zip(rk, rw))
            ratios.append(r)
            paireds.append(p)
            print(f"{human(b):>8}  {med[(op, method, 'railkit', b)]:10.2f}  {med[(op, method, 'raw', b)]:10.2f}  "
                  f"{r:11.3f}  {p:6.3f}  {min(rk):10.2f}..{max(rk):<9.2f}  {min(rw):10.2f}..{max(rw):<9.2f}")
        summary.append((op, method, gmean(ratios), gmean(paireds), len(ratios)))
print()
print("railkit/raw per op and method: geometric mean over the sizes of median railkit / median raw (goal <= 1.03)")
for op, method, g, gp, n in summary:
    print(f"  {op:<10}  {name[method]:<27}  {g:6.3f}  {'met' if g <= 1.03 else 'missed':>6}   (paired {gp:.3f}, {n} sizes)")
print()
print("how far the methods differ: back-to-back / barrier-separated time per size (medians)")
print(f"{'size':>8}  " + "  ".join(f"{op + ' ' + who:>18}" for op in ops for who in ("railkit", "raw")))
allsizes = sorted(set(sizes["all_reduce"]) | set(sizes["all_gather"]))
geo = {}
for b in allsizes:
    cells = []
    for op in ops:
        for who in ("railkit", "raw"):
            k1, k2 = (op, "b2b", who, b), (op, "sync", who, b)
            if k1 in med and k2 in med:
                x = med[k1] / med[k2]
                geo.setdefault((op, who), []).append(x)
                cells.append(f"{x:18.3f}")
            else:
                cells.append(f"{'-':>18}")
    print(f"{human(b):>8}  " + "  ".join(cells))
print(f"{'geomean':>8}  " + "  ".join(f"{gmean(geo.get((op, who), [])):18.3f}" for op in ops for who in ("railkit", "raw")))
print(f"medians over {reps} alternations; paired = median of railkit/raw within each alternation (adjacent runs).")
EOF
echo "# total $((SECONDS - start)) s; load average at the end $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo '?')" \
  "(other work on the machine makes these figures noisy)"
