#!/usr/bin/env bash
# Builds the `sanitize` preset (clang, AddressSanitizer + UndefinedBehaviorSanitizer, libFuzzer
# coverage) into build-sanitize/, runs every unit test once under the sanitizers, then every
# libFuzzer target of tests/fuzz for RAILKIT_FUZZ_SECONDS seconds each (default 20), and prints
# how many inputs each target ran. Non-zero on any failure; a crashing input is kept under
# build-sanitize/fuzz-artifacts/<target>/. scripts/test.sh runs this unless given --no-sanitizers.
# Extra arguments go to ctest, e.g. scripts/sanitize.sh -R fuzz.nccl_log
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
"$RAILKIT_ROOT/scripts/setup.sh"
dir="$RAILKIT_ROOT/build-sanitize"
seconds="${RAILKIT_FUZZ_SECONDS:-20}"
if [ ! -f "$dir/build.ninja" ]; then
  (cd "$RAILKIT_ROOT" && cmake --preset sanitize -DRAILKIT_FUZZ_SECONDS="$seconds" >/dev/null)
else
  cmake "$dir" -DRAILKIT_FUZZ_SECONDS="$seconds" >/dev/null
fi
# Only what the sanitizer run executes: the unit-test programs, the fuzz targets, and railkit
# (the CLI that the unit-labelled command-line tests run).
mapfile -t targets < <(ninja -C "$dir" -t targets all | grep -v '^cmake_' |
                       sed -n 's/^\(fuzz_[a-z_]*\|[a-z_]*_tests\|railkit\): phony$/\1/p' | sort -u)
cmake --build "$dir" -j "$(nproc)" $(printf -- '--target %s ' "${targets[@]}")
railkit_mpi_env
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:strict_string_checks=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
rm -f "$dir"/fuzz-summary/*.txt
status=0
ctest --test-dir "$dir" --output-on-failure -j "$(nproc)" -L 'unit|fuzz' -E '^layout[.]' "$@" || status=$?
echo "sanitize.sh: fuzz targets (${seconds} s each, ASan+UBSan):"
cat "$dir"/fuzz-summary/*.txt 2>/dev/null | sed 's/^/  /' || true
exit "$status"
