#!/usr/bin/env bash
# The README's test command, and CI's (.ci/run). Installs what is missing (scripts/setup.sh test),
# then builds and runs the tests in two builds, each test compiled and run in one of them:
#   release build (build/, gcc, RAILKIT_TEST_SET=integration): the programs, and the tests that run
#     them for real: mpirun, Slurm, the simulator, the HTML pages in chromium, the binaries' links;
#   sanitizer build (build-sanitize/, the `sanitize` preset: clang, ASan+UBSan, RAILKIT_TEST_SET=unit):
#     the unit tests (GoogleTest), the command-line checks on fixtures, and a replay of every
#     fuzz target's saved inputs.
# Tiers (ctest labels): the default tier is every test not labelled slow. --slow runs the slow
# tier instead: fuzzing for RAILKIT_FUZZ_SECONDS (60) per target, keeping the inputs that reach new
# coverage in tests/fuzz/corpus, the 200k-NIC parse, every hostile value alone in every shell, and
# the configure-and-build of railkit-bench without MPI.
# Prints each phase's time and ends with the budget (scripts/test_budget.py): the run fails when a
# unit case took over 2 s, another case over 60 s (each also when timed again alone), or the whole
# run over 25 minutes, naming them.
# Usage: scripts/test.sh [--slow] [--no-sanitizers] [CTEST ARGS...]
#   --no-sanitizers  skips the sanitizer build and its tests (CI never passes it)
#   CTEST ARGS       narrow both ctest runs, e.g. scripts/test.sh -L mpi, scripts/test.sh -R fuzz
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
sanitize=1
tier=(-LE slow)
tier_name="default tier"
args=()
for a in "$@"; do
  case "$a" in
    --no-sanitizers) sanitize=0 ;;
    --slow) tier=(-L slow) tier_name="slow tier" ;;
    *) args+=("$a") ;;
  esac
done
t0=$(date +%s)
reports="$RAILKIT_BUILD/test-reports"
rm -rf "$reports" && mkdir -p "$reports"  # the build directory keeps them
export RAILKIT_PHASES="$reports/phases.txt"

railkit_phase setup
"$RAILKIT_ROOT/scripts/setup.sh" test
# What each build compiled in this run (its new .ninja_log lines), for the budget's table.
ninja_lines() { if [ -f "$1/.ninja_log" ]; then wc -l <"$1/.ninja_log"; else echo 0; fi; }
keep_ninja_log() {  # DIR LINES-BEFORE NAME
  [ -f "$1/.ninja_log" ] && tail -n "+$(($2 + 1))" "$1/.ninja_log" | grep -v '^#' >"$reports/$3.ninja_log" || true
}
railkit_phase "configure+build release"
n0=$(ninja_lines "$RAILKIT_BUILD")
railkit_build integration
keep_ninja_log "$RAILKIT_BUILD" "$n0" release
if [ "$sanitize" = 1 ]; then
  railkit_phase "configure+build sanitize"
  n0=$(ninja_lines "$RAILKIT_SANITIZE_BUILD")
  railkit_build_sanitize
  keep_ninja_log "$RAILKIT_SANITIZE_BUILD" "$n0" sanitize
fi

railkit_mpi_env
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:strict_string_checks=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
status=0
# A build where no test matches (e.g. -L sim in the sanitizer build) is not a failure.
run_ctest() {  # NAME DIR
  ctest --test-dir "$2" --output-on-failure -j "$(nproc)" "${tier[@]}" --no-tests=ignore \
    --output-junit "$reports/$1.xml" "${args[@]}" || status=1
  ctest --test-dir "$2" --show-only=json-v1 >"$reports/$1.tests.json"
}
railkit_phase "ctest release, $tier_name"
run_ctest release "$RAILKIT_BUILD"
if [ "$sanitize" = 1 ]; then
  railkit_phase "ctest sanitize, $tier_name"
  rm -f "$RAILKIT_SANITIZE_BUILD"/fuzz-summary/*.txt
  run_ctest sanitize "$RAILKIT_SANITIZE_BUILD"
  if compgen -G "$RAILKIT_SANITIZE_BUILD/fuzz-summary/*.txt" >/dev/null; then
    echo "fuzz targets (ASan+UBSan):"
    cat "$RAILKIT_SANITIZE_BUILD"/fuzz-summary/*.txt | sed 's/^/  /'
  fi
fi
railkit_phase_end

"$RAILKIT_ROOT/scripts/test_budget.py" --reports "$reports" --total-s "$(( $(date +%s) - t0 ))" \
  --build "release=$RAILKIT_BUILD" --build "sanitize=$RAILKIT_SANITIZE_BUILD" || status=1
exit "$status"
