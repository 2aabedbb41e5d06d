#!/usr/bin/env bash
# Regenerates the README's pictures in docs/images/ from real measurements on this machine:
# two small `railkit sweep`s of railkit-bench --backend mpi on 4 local ranks (Open MPI's allreduce
# algorithms 1 and 4; the second with --split mod:2), drawn by scripts/plot_results.py through
# `railkit report --plot-series`:
#   plot-busbw.png    busbw against size, in-place and out-of-place on one y scale, rounds shaded
#   plot-latency.png  time_us p50 with the p50..p99 band, both placements
#   plot-split.png    one line per configuration and --split group, the slowest group marked
#   report-html.png   `railkit report --html` in headless Chromium (scripts/html_screenshot.py),
#                     when that script is there and finds Chromium
# Nothing is invented: every number comes from the sweeps this script runs (their hosts, dates
# and Open MPI version are in each picture's title).
#
#   scripts/readme-images.sh [--keep DIR]    (build first: railkit and railkit-bench in $RAILKIT_BUILD/bin)
set -euo pipefail
# shellcheck source=scripts/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
railkit_mpi_env

keep=""
if [ "${1:-}" = "--keep" ]; then keep="${2:?--keep DIR}"; fi
RAILKIT="$RAILKIT_BUILD/bin/railkit"
BENCH="$RAILKIT_BUILD/bin/railkit-bench"
PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3
OUT="$RAILKIT_ROOT/docs/images"
for b in "$RAILKIT" "$BENCH"; do
  [ -x "$b" ] || { echo "readme-images.sh: $b not found: build railkit and railkit-bench first" >&2; exit 5; }
done
mkdir -p "$OUT"
if [ -n "$keep" ]; then
  work="$keep"
  mkdir -p "$work"
else
  work="$(mktemp -d "${TMPDIR:-/tmp}/railkit-readme-images-XXXXXX")"
  trap 'rm -rf "$work"' EXIT
fi

algo=(--axis OMPI_MCA_coll_tuned_use_dynamic_rules=1 --axis OMPI_MCA_coll_tuned_allreduce_algorithm=1,4)
echo "readme-images.sh: sweep 1/2 (allreduce algorithms 1 and 4, 3 rounds, both placements) into $work/algo" >&2
"$RAILKIT" sweep --bench "$BENCH" --launcher mpirun --np 4 "${algo[@]}" --rounds 3 --out "$work/algo" \
  -- --backend mpi --coll all_reduce -b 8 -e 4M -f 4 --placement both >/dev/null
echo "readme-images.sh: sweep 2/2 (--split mod:2, 3 rounds) into $work/split" >&2
"$RAILKIT" sweep --bench "$BENCH" --launcher mpirun --np 4 "${algo[@]}" --rounds 3 --out "$work/split" \
  -- --backend mpi --coll all_reduce -b 8 -e 4M -f 4 --placement out --split mod:2 >/dev/null

"$RAILKIT" report "$work/algo" --plot-series "$work/algo.series.json" >/dev/null
"$RAILKIT" report "$work/split" --plot-series "$work/split.series.json" >/dev/null
"$PY" "$RAILKIT_ROOT/scripts/plot_results.py" --series "$work/algo.series.json" --panels metric \
  --out "$OUT/plot-busbw.png"
"$PY" "$RAILKIT_ROOT/scripts/plot_results.py" --series "$work/algo.series.json" --panels latency \
  --out "$OUT/plot-latency.png"
"$PY" "$RAILKIT_ROOT/scripts/plot_results.py" --series "$work/split.series.json" --out "$OUT/plot-split.png"
echo "readme-images.sh: wrote $OUT/plot-busbw.png, plot-latency.png, plot-split.png" >&2

# The HTML report's screenshot: only when scripts/html_screenshot.py is there (and finds Chromium).
shot="$RAILKIT_ROOT/scripts/html_screenshot.py"
if [ -f "$shot" ]; then
  "$RAILKIT" report "$work/algo" --html "$work/report.html" >/dev/null
  rc=0
  # The top of the page (header, notes, configurations, verdicts, the first table): the whole
  # page of a sweep is about 4000 px tall, too tall to read in a README.
  "$PY" "$shot" "$work/report.html" "$OUT/report-html.png" --width 1280 --height 1400 || rc=$?
  if [ "$rc" -eq 0 ]; then
    echo "readme-images.sh: wrote $OUT/report-html.png" >&2
  else
    echo "readme-images.sh: html_screenshot.py failed (exit $rc): report-html.png left as it was" >&2
  fi
fi
