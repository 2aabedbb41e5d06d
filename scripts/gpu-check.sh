#!/usr/bin/env bash
# GPU checks for a machine with at least one NVIDIA GPU (run by hand or on a lent device).
# Builds with CUDA for this GPU's architecture only, then runs railkit-bench's NCCL backend:
# every collective on one rank (-g 1) with data checks, CUDA-graph mode, a stall the watchdog must end, the NCCL
# log reader on NCCL's real log, the NCCL tuner plugin (libnccl-tuner-railkit.so) loaded into real NCCL, and with
# 2 or more GPUs one process driving 2 GPUs (-g 2). Writes a summary to
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
cmake --build "$RAILKIT_BUILD" -j "$(nproc)" --target railkit-bench railkit railkit_tuner_plugin >"$out/build.log" 2>&1 || { note "FAIL build"; tail -n 20 "$out/build.log"; exit 1; }
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
# The tuner plugin in real NCCL, with a profile made for this run's scale (1 node, -g ranks): NCCL names the
# plugin, the plugin logs what it loaded, and with 2 ranks NCCL's TUNING line shows the profile's choice
# (Ring/LL on 2 channels, which NCCL would not pick for 1 MiB by itself).
tg=$((ngpus >= 2 ? 2 : 1))
cat >"$out/tuner-profile.json" <<JSON
{"schema": "railkit.profile/1", "name": "gpu-check-tuner", "created": "2000-01-01T00:00:00Z",
 "cluster": {"fingerprint": "", "nodes": 1, "ranks": $tg, "ranks_per_node": $tg, "backend": "nccl",
   "backend_version": "", "hosts": [], "gpu_models": [], "nic_models": [], "extra": {}},
 "settings": {"env": {}, "dcqcn": {}},
 "decisions": [{"coll": "all_reduce", "min_bytes": 0, "max_bytes": 1073741824,
   "env": {"NCCL_ALGO": "Ring", "NCCL_PROTO": "LL", "NCCL_MAX_NCHANNELS": "2"}, "config": "ring/ll/2",
   "busbw_GBps": 0, "baseline_busbw_GBps": 0, "ratio": 1, "ratio_lo": 1, "ratio_hi": 1, "significant": false}],
 "expectations": [],
 "evidence": {"validated": false, "validated_at": "", "railkit_version": "", "strategy": "", "space": "",
   "trials": 0, "pairs": 0, "max_regression": 0.02, "baseline_env": {}, "rows": [], "tune_dir": "", "extra": {}}}
JSON
export NCCL_TUNER_PLUGIN="$RAILKIT_BUILD/lib/libnccl-tuner-railkit.so" RAILKIT_PROFILE="$out/tuner-profile.json" \
  NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,ENV,TUNING NCCL_DEBUG_FILE="$out/tuner.%h.%p.log"
check "tuner-plugin-run" 0 "$bench" --backend nccl -g "$tg" --coll all_reduce -b 1M -e 1M -J "$out/tuner.json"
unset NCCL_TUNER_PLUGIN RAILKIT_PROFILE NCCL_DEBUG NCCL_DEBUG_SUBSYS NCCL_DEBUG_FILE
check "tuner-plugin-using" 0 grep -q "TUNER/Plugin: Using railkit (v5)" "$out"/tuner.*.log
check "tuner-plugin-loaded" 0 grep -q "TUNER/railkit: loaded profile 'gpu-check-tuner'" "$out"/tuner.*.log
check "tuner-plugin-no-warning" 1 grep -q "TUNER/railkit: .*does nothing" "$out"/tuner.*.log
if [ "$tg" -ge 2 ]; then
  check "tuner-plugin-applied" 0 grep -qiE 'AllReduce: 1048576 Bytes -> Algo Ring proto LL channel\{Lo\.\.Hi\}=\{0\.\.1\}' \
    "$out"/tuner.*.log
else
  note "SKIP tuner-plugin-applied: NCCL asks a tuner only about collectives of 2 or more ranks, this machine has $ngpus GPU"
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
