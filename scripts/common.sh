# Shared by the scripts: paths, the two builds, phase timing, and the Open MPI settings a 2-core
# root machine needs.
# shellcheck shell=bash
RAILKIT_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
RAILKIT_BUILD="${RAILKIT_BUILD:-$RAILKIT_ROOT/build}"
RAILKIT_SANITIZE_BUILD="${RAILKIT_SANITIZE_BUILD:-$RAILKIT_ROOT/build-sanitize}"

# mpirun refuses root unless told, and more ranks than cores need oversubscription.
railkit_mpi_env() {
  if [ "$(id -u)" -eq 0 ]; then
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
  fi
  export OMPI_MCA_rmaps_base_oversubscribe=1
}

# ccache, when installed, in front of every compiler (C, C++, CUDA), with its cache where ccache
# keeps it ($CCACHE_DIR, else ~/.cache/ccache), shared by every clone on the machine: paths under
# the source tree are hashed relative to it (base_dir) and the build directory is left out of the
# hash, so a fresh clone compiles from the cache. Appends the CMake arguments to the array
# RAILKIT_ARGS (none without ccache).
railkit_ccache_args() {
  command -v ccache >/dev/null || return 0
  export CCACHE_BASEDIR="$RAILKIT_ROOT" CCACHE_NOHASHDIR=1
  export CCACHE_SLOPPINESS="${CCACHE_SLOPPINESS:-pch_defines,time_macros,include_file_mtime,include_file_ctime}"
  RAILKIT_ARGS+=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache
                 -DCMAKE_CUDA_COMPILER_LAUNCHER=ccache)
}

# railkit_configure DIR CMAKE-ARGS...: configures DIR with Ninja, again only when the arguments (or
# CMakePresets.json) differ from the last configuration's (kept in DIR/.railkit-configure-args).
railkit_configure() {
  local dir=$1
  shift
  local want
  want="$* presets:$(cksum <"$RAILKIT_ROOT/CMakePresets.json")"
  if [ -f "$dir/build.ninja" ] && [ "$(cat "$dir/.railkit-configure-args" 2>/dev/null)" = "$want" ]; then
    return 0
  fi
  mkdir -p "$dir"
  cmake -S "$RAILKIT_ROOT" -B "$dir" -G Ninja "$@" >"$dir/configure.log" 2>&1 ||
    { tail -n 30 "$dir/configure.log" >&2; echo "configure of $dir failed (log: $dir/configure.log)" >&2; return 1; }
  printf '%s' "$want" >"$dir/.railkit-configure-args"
}

# The release build's arguments, into the array RAILKIT_ARGS: unity builds (the sources of a target
# compiled in batches, each header parsed and each template instantiated once per batch), ccache
# when installed, and on CI the NCCL backend's kernels for one architecture (sm_90) and C++ without
# debug information. $1: the test set (RAILKIT_TEST_SET: all, unit, integration) or none.
railkit_release_args() {
  RAILKIT_ARGS=(-DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_UNITY_BUILD=ON)
  railkit_ccache_args
  if [ "$1" = none ]; then
    RAILKIT_ARGS+=(-DRAILKIT_BUILD_TESTS=OFF)
  else
    RAILKIT_ARGS+=(-DRAILKIT_BUILD_TESTS=ON "-DRAILKIT_TEST_SET=$1")
  fi
  if [ -n "${CI:-}" ]; then
    RAILKIT_ARGS+=(-DRAILKIT_CUDA_ARCHS=90 "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O2 -DNDEBUG")
  fi
}

# Configures (when needed) and builds $RAILKIT_BUILD with the tests of set $1 (or none): the named
# targets, or everything.
railkit_build() {
  railkit_release_args "$1"
  shift
  railkit_configure "$RAILKIT_BUILD" "${RAILKIT_ARGS[@]}"
  local targets=()
  for t in "$@"; do targets+=(--target "$t"); done
  cmake --build "$RAILKIT_BUILD" -j "$(nproc)" "${targets[@]}"
}

# Configures (when needed) and builds the sanitizer build ($RAILKIT_SANITIZE_BUILD, the `sanitize`
# preset: clang, ASan+UBSan, the unit tests and the fuzz targets, in unity batches, with ccache).
# RAILKIT_FUZZ_SECONDS, when set, is how long each slow-tier fuzz.<name>.run case fuzzes.
railkit_build_sanitize() {
  RAILKIT_ARGS=(--preset sanitize -DCMAKE_UNITY_BUILD=ON)
  railkit_ccache_args
  if [ -n "${RAILKIT_FUZZ_SECONDS:-}" ]; then
    RAILKIT_ARGS+=("-DRAILKIT_FUZZ_SECONDS=$RAILKIT_FUZZ_SECONDS")
  fi
  railkit_configure "$RAILKIT_SANITIZE_BUILD" "${RAILKIT_ARGS[@]}"
  cmake --build "$RAILKIT_SANITIZE_BUILD" -j "$(nproc)"
}

# Phase timing: railkit_phase NAME starts a phase (ending the one before); railkit_phase_end ends
# the last. Each ended phase is appended to $RAILKIT_PHASES ("NAME SECONDS" lines) when set.
railkit_phase() {
  railkit_phase_end
  _railkit_phase_name=$1
  _railkit_phase_start=$(date +%s.%N)
  echo "== $1" >&2
}
railkit_phase_end() {
  [ -n "${_railkit_phase_name:-}" ] || return 0
  local s
  s=$(awk -v a="$_railkit_phase_start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
  [ -n "${RAILKIT_PHASES:-}" ] && echo "$_railkit_phase_name $s" >>"$RAILKIT_PHASES"
  echo "== $_railkit_phase_name: ${s} s" >&2
  _railkit_phase_name=
}
