#!/usr/bin/env bash
# Installs what is missing, builds, and runs every test (unit, mpi, ...), then the sanitizer run
# (scripts/sanitize.sh: the unit tests under ASan+UBSan and every libFuzzer target for a bounded
# time). Non-zero on any failure. --no-sanitizers skips the sanitizer run (CI never passes it).
# Other arguments go to ctest, e.g. scripts/test.sh -L unit (they narrow both runs).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
sanitize=1
args=()
for a in "$@"; do
  if [ "$a" = "--no-sanitizers" ]; then sanitize=0; else args+=("$a"); fi
done
railkit_build
railkit_mpi_env
status=0
ctest --test-dir "$RAILKIT_BUILD" --output-on-failure -j "$(nproc)" "${args[@]}" || status=$?
if [ "$sanitize" = 1 ]; then
  "$RAILKIT_ROOT/scripts/sanitize.sh" "${args[@]}" || status=$?
fi
exit "$status"
