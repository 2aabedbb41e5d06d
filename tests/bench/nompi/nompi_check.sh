#!/usr/bin/env bash
# railkit-bench built without MPI (as scripts/gpu-check.sh builds it for the GPU machine, where no
# Open MPI exists), and here without CUDA or ns-3 too, must run as one process:
#   it links no libmpi,
#   --version says there is no mpi backend,
#   a run without a usable backend exits 5 with one line,
#   started by a launcher as several processes it refuses (exit 5) instead of running N copies,
#   built without ns-3, --backend sim exits 5 with one line saying why.
# Usage: nompi_check.sh RAILKIT_BENCH SOURCE_DIR
set -uo pipefail
bench=$1 src=$2
fail() { echo "FAIL: $*"; exit 1; }
ldd "$bench" | grep -qi 'libmpi' && fail "railkit-bench built without MPI links libmpi: $(ldd "$bench" | grep -i mpi)"

out=$("$bench" --version) || fail "--version rc $?"
grep -q 'backends: no mpi (built without MPI: one process, no launcher)' <<<"$out" || fail "--version: $out"

err=$("$bench" -b 8 -e 8 2>&1 >/dev/null); rc=$?
[ "$rc" -eq 5 ] || fail "auto without GPU or MPI: rc $rc (want 5): $err"
[ "$(grep -c '^railkit-bench: error:' <<<"$err")" -eq 1 ] || fail "want one error line: $err"
grep -q "built without MPI" <<<"$err" || fail "the line does not say why: $err"

err=$(OMPI_COMM_WORLD_SIZE=4 OMPI_COMM_WORLD_RANK=0 "$bench" --backend mpi -b 8 -e 8 2>&1 >/dev/null); rc=$?
[ "$rc" -eq 5 ] || fail "under a launcher: rc $rc (want 5): $err"
grep -q "the launcher started 4" <<<"$err" || fail "under a launcher: $err"

# Built without ns-3 (as the GPU bundle is): no sim backend, and asking for it says why.
grep -q 'no sim (built without ns-3)' <<<"$out" || fail "--version does not say there is no sim backend: $out"
err=$("$bench" --backend sim --sim-cluster "$src/sim/examples/cluster-4x8-1to1.yaml" -b 8 -e 8 2>&1 >/dev/null); rc=$?
[ "$rc" -eq 5 ] || fail "--backend sim without ns-3: rc $rc (want 5): $err"
[ "$(grep -c '^railkit-bench: error:' <<<"$err")" -eq 1 ] || fail "want one error line: $err"
grep -q "built without ns-3" <<<"$err" || fail "the line does not say why: $err"

err=$("$bench" -b 0 2>&1 >/dev/null); rc=$?
[ "$rc" -eq 6 ] || fail "usage error: rc $rc (want 6): $err"
echo "ok nompi_check $bench"
