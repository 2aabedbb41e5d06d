#!/usr/bin/env bash
# Small-message latency under srun against mpirun on this machine (issue 17's goal: an 8-byte
# all_reduce under Slurm within 2x of mpirun's). A benchmark, not a test: it prints figures, the
# ratios and the goal, and exits 0 whatever they are; non-zero only when something fails to run.
#
# Usage: scripts/perf/srun_vs_mpirun.sh [BUILD_DIR]      (default: <repo>/build)
# Needs: root, Slurm and munge (scripts/setup.sh), mpirun, python3, BUILD_DIR/bin/railkit-bench.
# Knobs (environment): REPS (launches per launcher, 8), NP (ranks, 2), LOAD (busy-looping
#        processes run beside the measurements, 0: with LOAD=1 on 2 CPUs unbound ranks are
#        descheduled while they poll, which is what binding is for).
#
# Starts a private one-node Slurm (tests/lib/slurm.py up, TaskPlugin=task/affinity) and always
# stops it. Then REPS times, in turn: mpirun -np NP; srun --mpi=pmix --cpu-bind=cores (what
# railkit passes with --backend mpi); srun --mpi=pmix --cpu-bind=none (unbound ranks). Each runs
# railkit-bench --backend mpi --coll all_reduce -b 8 -e 8 -n 2000 -w 200 and reads the
# out-of-place p50 (results[0].time_us.p50) and the recorded transport and CPUs from its
# document. Prints each launcher's launches, median, and the ratio of its median to mpirun's.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
build="${1:-$repo/build}"
bench="$build/bin/railkit-bench"
REPS="${REPS:-8}"
NP="${NP:-2}"
LOAD="${LOAD:-0}"

die() { echo "srun_vs_mpirun.sh: $*" >&2; exit 1; }
[[ -x "$bench" ]] || die "$bench not found (cmake --build $build --target railkit-bench)"
[[ "$(id -u)" == 0 ]] || die "needs root (the private Slurm's daemons run as root)"
command -v mpirun >/dev/null || die "mpirun not found (scripts/setup.sh)"
[[ "$REPS" =~ ^[1-9][0-9]*$ ]] || die "REPS '$REPS': expected a positive integer"
[[ "$LOAD" =~ ^[0-9]+$ ]] || die "LOAD '$LOAD': expected a number of processes"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

tmp="$(mktemp -d "${TMPDIR:-/tmp}/railkit-srun-vs-mpirun.XXXXXX")"
hogs=()
cleanup() {
  for p in "${hogs[@]}"; do kill "$p" 2>/dev/null || true; done
  python3 "$repo/tests/lib/slurm.py" down "$tmp/slurm" >/dev/null 2>&1 || true
  rm -rf "$tmp"
}
trap cleanup EXIT
rc=0
python3 "$repo/tests/lib/slurm.py" up "$tmp/slurm" >"$tmp/up.log" 2>&1 || rc=$?
[[ "$rc" == 0 ]] || { cat "$tmp/up.log" >&2; die "the private Slurm did not start (exit $rc)"; }
export SLURM_CONF="$tmp/slurm/slurm.conf"

args=(--backend mpi --coll all_reduce -b 8 -e 8 -n 2000 -w 200)
declare -A cmd=(
  [mpirun]="mpirun --allow-run-as-root -np $NP"
  [srun-bound]="srun --ntasks=$NP --mpi=pmix --cpu-bind=cores"
  [srun-unbound]="srun --ntasks=$NP --mpi=pmix --cpu-bind=none"
)
order=(mpirun srun-bound srun-unbound)
for ((i = 0; i < LOAD; i++)); do
  (while :; do :; done) &
  hogs+=("$!")
done
echo "srun_vs_mpirun.sh: $NP ranks, 8-byte all_reduce, $REPS launches each, in turn; $LOAD busy processes beside; load: $(cut -d' ' -f1-3 /proc/loadavg)"
for ((i = 0; i < REPS; i++)); do
  for l in "${order[@]}"; do
    read -r -a c <<<"${cmd[$l]}"
    "${c[@]}" "$bench" "${args[@]}" -J "$tmp/$l-$i.json" >"$tmp/$l-$i.log" 2>&1 ||
      { tail -n 20 "$tmp/$l-$i.log" >&2; die "failed: ${cmd[$l]} railkit-bench ${args[*]}"; }
  done
done

python3 - "$tmp" "$REPS" "${order[@]}" <<'PY'
import json, statistics, sys
tmp, reps, order = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
med = {}
for l in order:
    p50s, transports, cpus = [], set(), set()
    for i in range(reps):
        d = json.load(open("%s/%s-%d.json" % (tmp, l, i)))
        p50s.append(d["results"][0]["time_us"]["p50"])
        t = d["observed"].get("transport") or {}
        transports.add("%s/%s" % (t.get("pml"), t.get("intra_node")))
        cpus.add(" ".join(str(r.get("cpus")) for r in d["observed"]["ranks"]))
    med[l] = statistics.median(p50s)
    print("  %-13s p50 per launch (us): %s" % (l, " ".join("%.2f" % v for v in p50s)))
    print("  %-13s median %.2f us; transport %s; CPUs per rank %s" % ("", med[l], ", ".join(sorted(transports)),
                                                                     " | ".join(sorted(cpus))))
for l in order[1:]:
    print("  %s / mpirun: %.2f" % (l, med[l] / med["mpirun"]))
print("  goal: srun-bound (railkit's srun options for the mpi backend) / mpirun <= 2.0")
PY
