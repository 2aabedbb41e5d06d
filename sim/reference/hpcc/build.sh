#!/usr/bin/env bash
# Build the HPCC ns-3.17 simulator (alibaba-edu/High-Precision-Congestion-Control
# @ 9f4be2a9ead8a90e8bf732c66bd758c00e58e5be) with the railkit tracer patches and
# run the railkit cross-check scenarios (railkit issue 29).
#
# usage: build.sh [build|run|all] [scenario ...]
#   build  extract + patch + configure + build into $HPCC_WORK (default /work/hpcc-ref)
#   run    run the scenarios (default: all, each with RngRun 1, 2 and 3)
#          and write results/<scenario>/ next to this script
#   all    build then run (default)
#
# environment:
#   HPCC_WORK    work directory (default /work/hpcc-ref; outside the railkit repo)
#   HPCC_MIRROR  bare git repository of the HPCC simulator; if unset or missing,
#                it is cloned from https://github.com/alibaba-edu/High-Precision-Congestion-Control
#   PYTHON2      command that runs Python 2.7 (waf 1.7 needs it);
#                default "env PYENV_VERSION=2.7.18 python2"
#   JOBS         parallel compile jobs (default 2)
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
COMMIT=9f4be2a9ead8a90e8bf732c66bd758c00e58e5be
URL=https://github.com/alibaba-edu/High-Precision-Congestion-Control
HPCC_WORK="${HPCC_WORK:-/work/hpcc-ref}"
HPCC_MIRROR="${HPCC_MIRROR:-/work/.mirror/alibaba-edu+High-Precision-Congestion-Control/repo}"
PYTHON2="${PYTHON2:-env PYENV_VERSION=2.7.18 python2}"
JOBS="${JOBS:-2}"
SIM="$HPCC_WORK/simulation"

do_build() {
  mkdir -p "$HPCC_WORK"
  if [ ! -d "$SIM" ]; then
    if [ -d "$HPCC_MIRROR" ]; then
      git --git-dir="$HPCC_MIRROR" archive "$COMMIT" simulation | tar -x -C "$HPCC_WORK"
    else
      git clone "$URL" "$HPCC_WORK/clone"
      git -C "$HPCC_WORK/clone" archive "$COMMIT" simulation | tar -x -C "$HPCC_WORK"
    fi
    # third.cc is stored with CRLF line ends; normalise it so that the (LF) patch applies.
    sed -i 's/\r$//' "$SIM/scratch/third.cc"
    (cd "$HPCC_WORK" && patch -p1 < "$HERE/third.patch" && patch -p1 < "$HERE/rdma-counters.patch")
  fi
  cd "$SIM"
  # waf 1.7 (Python 2). The source builds unchanged with g++ 12 in gnu++11 mode
  # (waf-tools/cflags.py already asks for -std=gnu++11); -fpermissive -w only to be safe.
  # With CXXFLAGS set in the environment waf uses them as given; the 'optimized' profile only
  # appends -march=native and leaves NS3_ASSERT/NS3_LOG compiled out.
  CXXFLAGS="-std=gnu++11 -O2 -fpermissive -w" $PYTHON2 ./waf configure --build-profile=optimized \
      --disable-python --disable-tests --disable-examples \
      --enable-modules=point-to-point,internet,applications
  nice -n 10 $PYTHON2 ./waf build -j"$JOBS"
  ls -la "$SIM/build/scratch/third"
}

# run_one NAME RNGRUN RESULT_NAME
run_one() {
  local name="$1" rng="$2" rname="$3"
  local rd="$HPCC_WORK/runs/$rname"
  rm -rf "$rd"
  mkdir -p "$rd"
  cp "$HERE/scenarios/$name/"*.txt "$rd/"
  mkdir -p "$rd/out"
  local t0 t1
  t0=$(date +%s.%N)
  (cd "$rd" && LD_LIBRARY_PATH="$SIM/build" NS_GLOBAL_VALUE="RngRun=$rng" \
      nice -n 10 "$SIM/build/scratch/third" config.txt > out/stdout.txt 2>&1)
  t1=$(date +%s.%N)
  local wall
  wall=$(python3 -c "print(round($t1-$t0,2))")
  echo "$rname: wall ${wall}s"
  python3 "$HERE/summarize.py" "$rd" "$HERE/results/$rname" "$name" --wall "$wall" --rngrun "$rng" > "$rd/summary.log"
  cp "$rd/out/stdout.txt" "$HERE/results/$rname/stdout.txt"
}

do_run() {
  local list=("$@")
  if [ ${#list[@]} -eq 0 ]; then
    list=(incast2-100g incast2-100g@2 incast2-100g@3 incast4-400g incast4-400g@2 incast4-400g@3 incast16-100g
          incast16-100g@2 incast16-100g@3 incast16-100g-sonic incast16-100g-sonic@2 incast16-100g-sonic@3
          burst-recovery-100g burst-recovery-100g@2 burst-recovery-100g@3)
  fi
  for s in "${list[@]}"; do
    local name="${s%@*}" rng=1 rname
    if [[ "$s" == *@* ]]; then rng="${s#*@}"; fi
    if [ "$rng" = 1 ]; then rname="$name"; else rname="$name-rngrun$rng"; fi
    run_one "$name" "$rng" "$rname"
  done
  if [ -f "$HERE/results/incast16-100g/summary.json" ] && [ -f "$HERE/results/incast16-100g-rngrun2/summary.json" ] \
     && [ -f "$HERE/results/incast16-100g-rngrun3/summary.json" ]; then
    (cd "$HERE/results" && python3 "$HERE/seed_spread.py" incast16-100g/seed_spread.json \
        incast16-100g incast16-100g-rngrun2 incast16-100g-rngrun3 > /dev/null)
  fi
}

cmd="${1:-all}"
shift || true
case "$cmd" in
  build) do_build ;;
  run) do_run "$@" ;;
  all) do_build; do_run "$@" ;;
  *) echo "usage: $0 [build|run|all] [scenario[@rngrun] ...]" >&2; exit 2 ;;
esac
