#!/usr/bin/env bash
# Compares the search strategies of `railkit tune` on the ompi-coll space with 4 local ranks:
# grid once (every configuration), then coordinate and halving once each with a budget of 25% of
# grid's trials. For each it prints trials, wall time, its best objective, and the configuration
# it picked judged by GRID's own measurement of that configuration (one measurement basis, so
# run-to-run noise does not decide the ratio), as a ratio to grid's best. Goal (issue 5): each
# reaches >= 0.98 of grid's best with <= 25% of grid's trials. No validation (--no-validate).
#
#   scripts/perf/tune_strategies.sh [BUILD_DIR] [OUT_DIR]
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$here/build}
out=${2:-$(mktemp -d /tmp/railkit-tune-perf.XXXXXX)}
mkdir -p "$out"
railkit=$build/bin/railkit
bench_args=(--backend mpi --coll all_reduce,all_gather -b 4K -e 4M -f 16 -n 20)
common=(--space ompi-coll --launcher mpirun --np 4 --no-validate --quiet)

run() {  # name strategy budget
  local t0 t1
  t0=$(date +%s.%N)
  "$railkit" tune "${common[@]}" --strategy "$2" --budget "$3" --out "$out/$1" -- "${bench_args[@]}" > "$out/$1.log" 2>&1
  t1=$(date +%s.%N)
  echo "$t1 - $t0" | bc > "$out/$1.wall_s"
}

echo "railkit tune strategies on ompi-coll (all_reduce + all_gather, 4 ranks); results in $out"
run grid grid 0
grid_trials=$(grep -c '"type":"trial"' "$out/grid/journal.jsonl")
budget=$(( grid_trials / 4 ))
run coordinate coordinate "$budget"
run halving halving "$budget"

python3 - "$out" <<'PY'
import json, sys, os
out = sys.argv[1]
def trials(name):
    with open(os.path.join(out, name, "journal.jsonl")) as f:
        return [j for j in map(json.loads, f) if j["type"] == "trial"]
def key(t):
    return json.dumps(t["config"], sort_keys=True)
grid = trials("grid")
grid_obj = {key(t): t["objective"] for t in grid if t["objective"] is not None}
grid_best = max(grid_obj.values())
print(f"{'strategy':<11} {'trials':>6} {'of grid':>8} {'wall s':>8} {'own best GB/s':>14} {'picked (grid GB/s)':>19} {'ratio':>6}  picked")
for name in ("grid", "coordinate", "halving"):
    ts = trials(name)
    ok = [t for t in ts if t["objective"] is not None]
    # halving: the survivor of the last rung; others: the best objective
    top = max(t["fidelity"] for t in ok)
    pick = max((t for t in ok if t["fidelity"] == top), key=lambda t: t["objective"])
    wall = float(open(os.path.join(out, name + ".wall_s")).read())
    g = grid_obj.get(key(pick), float("nan"))
    print(f"{name:<11} {len(ts):>6} {len(ts)/len(grid):>8.0%} {wall:>8.1f} {pick['objective']:>14.3f} {g:>19.3f} "
          f"{g/grid_best:>6.3f}  {pick['label']}")
print(f"grid best: {grid_best:.3f} GB/s ({max(grid, key=lambda t: t['objective'] or 0)['label']})")
PY
