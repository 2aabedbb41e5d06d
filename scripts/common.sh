# Shared by the scripts: paths, build, and the Open MPI settings a 2-core root machine needs.
# shellcheck shell=bash
RAILKIT_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
RAILKIT_BUILD="${RAILKIT_BUILD:-$RAILKIT_ROOT/build}"

# mpirun refuses root unless told, and more ranks than cores need oversubscription.
railkit_mpi_env() {
  if [ "$(id -u)" -eq 0 ]; then
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
  fi
  export OMPI_MCA_rmaps_base_oversubscribe=1
}

# Configures (once) and builds into $RAILKIT_BUILD: the named targets, or everything.
railkit_build() {
  "$RAILKIT_ROOT/scripts/setup.sh"
  if [ ! -f "$RAILKIT_BUILD/build.ninja" ]; then
    local extra=()
    # CI compiles the NCCL backend's kernels for one architecture (sm_90), and C++ without debug
    # information (a fifth of the compile time; the sanitizer build keeps line tables), to save time.
    [ -n "${CI:-}" ] && extra+=(-DRAILKIT_CUDA_ARCHS=90 "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O2 -DNDEBUG")
    cmake -S "$RAILKIT_ROOT" -B "$RAILKIT_BUILD" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo "${extra[@]}" >/dev/null
  fi
  local targets=()
  for t in "$@"; do targets+=(--target "$t"); done
  cmake --build "$RAILKIT_BUILD" -j "$(nproc)" "${targets[@]}"
}
