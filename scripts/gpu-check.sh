#!/usr/bin/env bash
# GPU checks for a machine with at least one NVIDIA GPU (run by hand or on a lent device).
# Builds with CUDA for this GPU's architecture only, then runs railkit-bench's NCCL backend:
# every collective on one rank (-g 1) with data checks, CUDA-graph mode, a stall the watchdog must end, the NCCL
# log reader on NCCL's real log, and with 2 or more GPUs one process driving 2 GPUs (-g 2). Writes a summary to
# ${OUT:-gpu-check}/summary.txt; exits non-zero when a check fails.
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
out="${OUT:-$RAILKIT_ROOT/gpu-check}"
mkdir -p "$out"
summary="$out/summary.txt"
: >"$summary"
fails=0
note() { echo "$*" | tee -a "$summary"; }
check() {  # name, expected rc, command...
  local name=$1 want=$2; shift 2
  local t0=$SECONDS
  "$@" >"$out/$name.out" 2>"$out/$name.err"
  local rc=$?
  if [ "$rc" -eq "$want" ]; then note "PASS $name (rc $rc, $((SECONDS - t0)) s)"
  else note "FAIL $name (rc $rc, want $want): $(tail -n 3 "$out/$name.err" | tr '\n' ' ')"; fails=$((fails + 1)); fi
}

if ! command -v nvidia-smi >/dev/null || ! nvidia-smi -L >"$out/gpus.txt" 2>&1; then
  note "SKIP: no NVIDIA GPU here ($(head -n 1 "$out/gpus.txt" 2>/dev/null))"
  exit 0
fi
note "GPUs: $(tr '\n' ';' <"$out/gpus.txt")"
ngpus=$(grep -c '^GPU ' "$out/gpus.txt")
cap=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -n 1 | tr -d '.')
export RAILKIT_BUILD="${RAILKIT_BUILD:-$RAILKIT_ROOT/build-gpu}"
"$RAILKIT_ROOT/scripts/setup.sh" || exit 1
cmake -S "$RAILKIT_ROOT" -B "$RAILKIT_BUILD" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DRAILKIT_WITH_CUDA=ON \
  -DRAILKIT_CUDA_ARCHS="$cap" -DRAILKIT_BUILD_TESTS=OFF >"$out/configure.log" 2>&1 || { note "FAIL configure"; exit 1; }
cmake --build "$RAILKIT_BUILD" -j "$(nproc)" --target railkit-bench railkit >"$out/build.log" 2>&1 || { note "FAIL build"; tail -n 20 "$out/build.log"; exit 1; }
railkit_mpi_env
bench="$RAILKIT_BUILD/bin/railkit-bench"
"$bench" --version | tee -a "$summary"

for dt in float half bfloat16 int32; do
  check "all-colls-$dt" 0 "$bench" --backend nccl -g 1 --coll all -b 8 -e 64M -f 8 -d "$dt" -c 1 -J "$out/all-$dt.json"
done
for op in prod min max avg; do
  check "all_reduce-$op" 0 "$bench" --backend nccl --coll all_reduce,reduce_scatter -b 1K -e 16M -f 16 -o "$op" -J "$out/op-$op.json"
done
check "cuda-graph" 0 "$bench" --backend nccl -g 1 --coll all_reduce,all_gather -b 1K -e 64M -f 8 -G 4 -J "$out/graph.json"
# -g N: one process, N GPUs, N ranks. More GPUs than visible is a usage error (6) on any machine.
check "ngpus-too-many" 6 "$bench" --backend nccl -g $((ngpus + 1)) -b 1K -e 1K
if [ "$ngpus" -ge 2 ]; then
  check "ngpus-2-all-colls" 0 "$bench" --backend nccl -g 2 --coll all -b 8 -e 64M -f 8 -c 1 -J "$out/g2-all.json"
  check "ngpus-2-cuda-graph" 0 "$bench" --backend nccl -g 2 --coll all_reduce,all_gather -b 1K -e 64M -f 8 -G 4 \
    -J "$out/g2-graph.json"
  check "ngpus-2-watchdog-stall" 4 "$bench" --backend nccl -g 2 --coll all_reduce -b 1M -e 1M -T 5 --inject-stall 0 \
    -J "$out/g2-stall.json"
else
  note "SKIP ngpus-2-*: -g 2 needs 2 GPUs, this machine has $ngpus"
fi
check "watchdog-stall" 4 "$bench" --backend nccl --coll all_reduce -b 1M -e 1M -T 5 --inject-stall 0 -J "$out/stall.json"
export NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET,GRAPH NCCL_DEBUG_FILE="$out/nccl.%h.%p.log"
check "nccl-log-run" 0 "$bench" --backend nccl --coll all_reduce -b 1M -e 1M -J "$out/log.json"
unset NCCL_DEBUG NCCL_DEBUG_SUBSYS NCCL_DEBUG_FILE
if [ -x "$RAILKIT_BUILD/bin/railkit" ] && ls "$out"/nccl.*.log >/dev/null 2>&1; then
  check "nccl-log-read" 0 "$RAILKIT_BUILD/bin/railkit" nccl-log "$out"/nccl.*.log
fi
python3 - "$out" <<'PY' | tee -a "$summary"
import glob, json, sys
for f in sorted(glob.glob(sys.argv[1] + "/*.json")):
    try:
        d = json.load(open(f))
    except Exception:
        continue
    if "results" not in d:
        continue
    best = max((r["busbw_GBps"] for r in d["results"]), default=0)
    wrong = sum(r["wrong"] or 0 for r in d["results"])
    print("%-28s backend %-5s results %3d  max busbw %8.2f GB/s  wrong %d  %s" % (
        f.split("/")[-1], d["run"]["backend"], len(d["results"]), best, wrong, d["error"]["message"] if d.get("error") else ""))
PY
note "failures: $fails"
[ "$fails" -eq 0 ]
