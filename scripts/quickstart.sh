#!/usr/bin/env bash
# Quick start: install what the MPI build needs (scripts/setup.sh quickstart), build railkit-bench,
# then run the main job: a 4-rank MPI run of all_reduce and all_gather from 8 B to 64 MiB with data
# checks. Prints nccl-tests' table and writes the results document to
# results/quickstart-<UTC time>.json.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
"$RAILKIT_ROOT/scripts/setup.sh" quickstart
railkit_build none railkit-bench
railkit_mpi_env
mkdir -p "$RAILKIT_ROOT/results"
out="$RAILKIT_ROOT/results/quickstart-$(date -u +%Y%m%dT%H%M%SZ).json"
mpirun -np 4 "$RAILKIT_BUILD/bin/railkit-bench" --backend mpi --coll all_reduce,all_gather \
  -b 8 -e 64M -f 2 -c 1 --label quickstart -J "$out"
echo "# results document: ${out#"$RAILKIT_ROOT"/}"
