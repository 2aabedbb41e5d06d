#!/usr/bin/env bash
# Installs what is missing, builds, and runs every test (unit, mpi, ...). Non-zero on any failure.
# Extra arguments go to ctest, e.g. scripts/test.sh -L unit
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
railkit_build
railkit_mpi_env
ctest --test-dir "$RAILKIT_BUILD" --output-on-failure -j "$(nproc)" "$@"
