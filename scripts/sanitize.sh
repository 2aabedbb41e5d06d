#!/usr/bin/env bash
# The sanitizer half of scripts/test.sh on its own: builds the `sanitize` preset (clang,
# AddressSanitizer + UndefinedBehaviorSanitizer, libFuzzer coverage) into build-sanitize/, with the
# unit tests, the command-line checks and the fuzz targets (RAILKIT_TEST_SET=unit), and runs them:
# the default tier (every saved fuzz input replayed once), or with --slow the slow tier (each fuzz
# target fuzzed for RAILKIT_FUZZ_SECONDS, default 60, new coverage merged into tests/fuzz/corpus).
# Non-zero on any failure; a crashing input is kept under build-sanitize/fuzz-artifacts/<target>/.
# Extra arguments go to ctest, e.g. scripts/sanitize.sh -R fuzz.nccl_log
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
tier=(-LE slow)
args=()
for a in "$@"; do
  if [ "$a" = "--slow" ]; then tier=(-L slow); else args+=("$a"); fi
done
"$RAILKIT_ROOT/scripts/setup.sh" test
railkit_build_sanitize
railkit_mpi_env
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:strict_string_checks=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
rm -f "$RAILKIT_SANITIZE_BUILD"/fuzz-summary/*.txt
status=0
ctest --test-dir "$RAILKIT_SANITIZE_BUILD" --output-on-failure -j "$(nproc)" "${tier[@]}" "${args[@]}" || status=$?
if compgen -G "$RAILKIT_SANITIZE_BUILD/fuzz-summary/*.txt" >/dev/null; then
  echo "sanitize.sh: fuzz targets (ASan+UBSan):"
  cat "$RAILKIT_SANITIZE_BUILD"/fuzz-summary/*.txt | sed 's/^/  /'
fi
exit "$status"
