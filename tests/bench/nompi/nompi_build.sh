#!/usr/bin/env bash
# The slow tier's check of the configuration itself: CMake configures a build of its own with MPI,
# CUDA and ns-3 off (as scripts/gpu-bundle.sh configures without Open MPI), builds railkit-bench
# there and runs nompi_check.sh on it. The default tier runs nompi_check.sh on railkit-bench-nompi,
# which the main build makes from the same sources without a second configuration.
# Usage: nompi_build.sh SOURCE_DIR WORK_DIR
set -uo pipefail
src=$1 work=$2
rm -rf "$work" && mkdir -p "$work"
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
cmake -S "$src" -B "$work/build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DRAILKIT_WITH_MPI=OFF -DRAILKIT_WITH_CUDA=OFF -DRAILKIT_WITH_NS3=OFF \
  -DRAILKIT_BUILD_TESTS=OFF -DRAILKIT_BUILD_BENCHMARKS=OFF -DCMAKE_UNITY_BUILD=ON >"$work/configure.log" 2>&1 ||
  { tail -n 20 "$work/configure.log"; fail "configure without MPI"; }
cmake --build "$work/build" --target railkit-bench -j "$(nproc)" >"$work/build.log" 2>&1 ||
  { tail -n 30 "$work/build.log"; fail "build of railkit-bench without MPI"; }
exec "$(dirname "$0")/nompi_check.sh" "$work/build/bin/railkit-bench" "$src"
