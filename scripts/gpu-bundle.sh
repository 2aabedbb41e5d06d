#!/usr/bin/env bash
# Builds the GPU-check bundle: everything scripts/gpu-check.sh --bundle DIR needs on a GPU machine
# that has a driver, CUDA and NCCL (possibly only as the Python wheel's libnccl.so.2) but no
# compiler toolchain packages, no MPI and no network.
#
#   scripts/gpu-bundle.sh [DIR]        (default DIR: <repo>/.gpu-bundle; usually run through
#                                       scripts/gpu-check.sh --dry-run, which also prints the size)
#
# DIR/bin      railkit-bench, railkit (stripped; CUDA runtime linked statically, no MPI: railkit-bench
#              runs as one process, -g N GPUs), all_reduce_perf, all_gather_perf and sendrecv_perf
#              (nccl-tests $NCCL_TESTS_REF, default v2.19.6, MPI=0, sm_90): the bundle is refused without them
# DIR/lib      libnccl-tuner-railkit.so, libnccl-profiler-railkit.so and every non-system shared library the binaries need (ldd),
#              leaving out glibc's libraries, libstdc++, libgcc_s, libcuda*, libnvidia*, libnccl*
# DIR/lib-compat  libstdc++.so.6 and libgcc_s.so.1 of this machine: used by gpu-check.sh only when the
#              GPU machine's libstdc++ is older than the bundle needs (GLIBCXX), never otherwise
# DIR/BUILDINFO   key=value: commit, date, glibc here, highest GLIBC_/GLIBCXX_ version each file needs,
#              CUDA and NCCL versions built against, nccl-tests version and commit
#
# Build tree: <repo>/build-gpu-bundle (ignored). nccl-tests is built in a temporary directory outside
# the repo from $NCCL_TESTS_SRC (a source tree or a git directory) or /work/.mirror/NVIDIA+nccl-tests/repo
# (a git directory without work tree, fetched by a session: never committed); no source or a failed
# build stops the bundle with the reason.
# Environment: CUDA_HOME (default /usr/local/cuda), NCCL_HOME (default $CUDA_HOME), RAILKIT_CUDA_ARCHS (90),
# NCCL_TESTS_SRC, NCCL_TESTS_REF (v2.19.6; the tag built from a mirror).
set -euo pipefail
# shellcheck source=scripts/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

die() { echo "gpu-bundle: $*" >&2; exit 1; }
say() { echo "gpu-bundle: $*" >&2; }

bundle="${1:-$RAILKIT_ROOT/.gpu-bundle}"
cuda_home="${CUDA_HOME:-/usr/local/cuda}"
nccl_home="${NCCL_HOME:-$cuda_home}"
archs="${RAILKIT_CUDA_ARCHS:-90}"
build="$RAILKIT_ROOT/build-gpu-bundle"
jobs="$(nproc)"

for tool in cmake ninja git objdump strip ldd make; do
  command -v "$tool" >/dev/null || die "'$tool' is missing (scripts/setup.sh installs the build packages)"
done
[ -x "$cuda_home/bin/nvcc" ] || die "no nvcc under $cuda_home (set CUDA_HOME)"
[ -f "$nccl_home/include/nccl.h" ] || die "no nccl.h under $nccl_home/include (set NCCL_HOME)"
"$RAILKIT_ROOT/scripts/setup.sh" || die "scripts/setup.sh failed: install the packages it names"

# Never empty a directory that is not a bundle.
mkdir -p "$bundle"
bundle="$(cd "$bundle" && pwd)"
case "$bundle" in
  / | "$RAILKIT_ROOT" | "$HOME") die "refusing to use '$bundle' as the bundle directory" ;;
esac
if [ -n "$(ls -A "$bundle")" ] && [ ! -f "$bundle/BUILDINFO" ] && [ ! -f "$bundle/.gpu-bundle" ]; then
  die "'$bundle' is not empty and holds no BUILDINFO: not a bundle, not touching it"
fi

# --- railkit --------------------------------------------------------------------------------------
logs="$build/gpu-bundle-logs"
mkdir -p "$logs"
say "configuring $build"
cmake -S "$RAILKIT_ROOT" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DRAILKIT_WITH_MPI=OFF \
  -DRAILKIT_WITH_CUDA=ON -DRAILKIT_CUDA_ARCHS="$archs" -DRAILKIT_BUILD_TESTS=OFF -DRAILKIT_BUILD_BENCHMARKS=OFF \
  -DRAILKIT_CUDART_STATIC=ON -DRAILKIT_WITH_NS3=OFF >"$logs/configure.log" 2>&1 \
  || { tail -n 30 "$logs/configure.log" >&2; die "configure failed (log: $logs/configure.log)"; }
say "building railkit-bench railkit railkit_tuner_plugin railkit_profiler_plugin (-j $jobs)"
cmake --build "$build" -j "$jobs" --target railkit-bench railkit railkit_tuner_plugin railkit_profiler_plugin >"$logs/build.log" 2>&1 \
  || { grep -E 'error|FAILED' "$logs/build.log" | head -n 30 >&2; die "build failed (log: $logs/build.log)"; }

rm -rf "$bundle"
mkdir -p "$bundle/bin" "$bundle/lib" "$bundle/lib-compat"
: >"$bundle/.gpu-bundle"
for b in railkit-bench railkit; do
  [ -x "$build/bin/$b" ] || die "$build/bin/$b was not built"
  cp "$build/bin/$b" "$bundle/bin/$b"
  strip "$bundle/bin/$b"
done
for so in libnccl-tuner-railkit.so libnccl-profiler-railkit.so; do
  [ -f "$build/lib/$so" ] || die "$build/lib/$so was not built"
  cp "$build/lib/$so" "$bundle/lib/"
  strip --strip-unneeded "$bundle/lib/$so"
done

# --- nccl-tests: the reference the GPU checks compare railkit-bench against ------------------------
# NCCL_TESTS_SRC: a checkout or a bare mirror (default: the fetched mirror); NCCL_TESTS_REF: the tag built
# from a mirror (v2.19.6). No bundle without them: a GPU run that compares against nothing proves little.
nt_src_in="${NCCL_TESTS_SRC:-/work/.mirror/NVIDIA+nccl-tests/repo}"
nt_ref="${NCCL_TESTS_REF:-v2.19.6}"
nt_bins=(all_reduce_perf all_gather_perf sendrecv_perf)
nt_note=""
tmp="$(mktemp -d "${TMPDIR:-/tmp}/gpu-bundle.XXXXXX")"
trap 'rm -rf "$tmp"' EXIT
nt_src="$tmp/nccl-tests"
if [ -f "$nt_src_in/src/Makefile" ]; then
  cp -r "$nt_src_in" "$nt_src"
  nt_commit="$(git -C "$nt_src_in" rev-parse HEAD 2>/dev/null || echo unknown)"
  nt_version="$(git -C "$nt_src_in" describe --tags --always 2>/dev/null || echo unknown)"
elif git --git-dir="$nt_src_in" rev-parse --verify -q "$nt_ref^{commit}" >/dev/null 2>&1; then
  mkdir -p "$nt_src"
  git --git-dir="$nt_src_in" archive "$nt_ref" | tar -x -C "$nt_src"
  nt_commit="$(git --git-dir="$nt_src_in" rev-parse "$nt_ref^{commit}")"
  nt_version="$nt_ref"
else
  die "no nccl-tests source: '$nt_src_in' is neither a checkout nor a git mirror holding $nt_ref (fetch NVIDIA/nccl-tests, or set NCCL_TESTS_SRC / NCCL_TESTS_REF)"
fi
hdr_version="$(sed -n 's/^#define NCCL_TESTS_VERSION "\(.*\)"/\1/p' "$nt_src/src/common.h" 2>/dev/null | head -n 1)"
[ -n "$hdr_version" ] && nt_version="$nt_version (NCCL_TESTS_VERSION $hdr_version)"
say "building nccl-tests ${nt_bins[*]} $nt_version (MPI=0, sm_90) in $tmp"
# The binaries' own make targets: os/libnccl_test_os.a, verifiable.o and the common objects come along.
# CUDARTLIB=cudart_static: like railkit-bench, no libcudart.so needed on the GPU machine.
targets=()
for b in "${nt_bins[@]}"; do targets+=("$tmp/nt-build/$b"); done
make -C "$nt_src/src" -j "$jobs" MPI=0 BUILDDIR="$tmp/nt-build" CUDA_HOME="$cuda_home" NCCL_HOME="$nccl_home" \
    NVCC_GENCODE="-gencode=arch=compute_90,code=sm_90" CUDARTLIB=cudart_static "${targets[@]}" \
    >"$logs/nccl-tests.log" 2>&1 \
  || { tail -n 20 "$logs/nccl-tests.log" >&2; die "nccl-tests build failed (log: $logs/nccl-tests.log)"; }
for b in "${nt_bins[@]}"; do
  [ -x "$tmp/nt-build/$b" ] || die "nccl-tests: $b was not built (log: $logs/nccl-tests.log)"
  cp "$tmp/nt-build/$b" "$bundle/bin/$b"
  strip "$bundle/bin/$b"
done

# --- shared libraries -------------------------------------------------------------------------------
# Left out: what every Linux has (glibc's libraries), what the GPU machine must provide in its own
# version (driver, NCCL), and the C++ runtime (kept apart in lib-compat, used only when too old there).
system_lib='^(linux-vdso|linux-gate|ld-linux|libc|libm|libmvec|libpthread|libdl|librt|libresolv|libutil|libanl|libnsl|libnss_[a-z]+|libBrokenLocale|libstdc\+\+|libgcc_s|libcuda[a-z_]*|libnvidia[-a-z_]*|libnccl[-a-z_]*)\.so'
compat_lib='^(libstdc\+\+|libgcc_s)\.so'
missing=()
for f in "$bundle"/bin/* "$bundle"/lib/*.so; do
  while read -r name arrow path _; do
    [ "$arrow" = "=>" ] || continue
    if [[ "$name" =~ $compat_lib ]]; then
      [ -e "$bundle/lib-compat/$name" ] || cp -L "$path" "$bundle/lib-compat/$name"
      continue
    fi
    [[ "$name" =~ $system_lib ]] && continue
    if [ "$path" = "not" ]; then missing+=("$(basename "$f"): $name"); continue; fi
    [ -e "$bundle/lib/$name" ] || cp -L "$path" "$bundle/lib/$name"
  done < <(ldd "$f")
done
[ ${#missing[@]} -eq 0 ] || die "libraries not found here: ${missing[*]}"
chmod u+w "$bundle"/lib/* "$bundle"/lib-compat/* 2>/dev/null || true
for f in "$bundle"/lib/lib*.so* "$bundle"/lib-compat/*; do
  [ "$(basename "$f")" = libnccl-tuner-railkit.so ] || strip --strip-unneeded "$f"
done

# --- BUILDINFO ----------------------------------------------------------------------------------------
# The highest version of a symbol set (GLIBC_, GLIBCXX_) that a file's undefined symbols require.
max_version() {  # prefix, file
  objdump -T "$2" 2>/dev/null | awk '/\*UND\*/' | grep -o "$1_[0-9][0-9.]*" | sed "s/^$1_//" | sort -uV | tail -n 1 || true
}
max_of() { printf '%s\n' "$@" | { grep . || true; } | sort -V | tail -n 1; }
glibc_here="$(getconf GNU_LIBC_VERSION 2>/dev/null | awk '{print $2}')"
nccl_built="$(awk '/#define NCCL_MAJOR/{a=$3} /#define NCCL_MINOR/{b=$3} /#define NCCL_PATCH/{c=$3} END{print a"."b"."c}' \
  "$nccl_home/include/nccl.h")"
cuda_version="$("$cuda_home/bin/nvcc" --version | sed -n 's/.*release \([0-9.]*\), V\([0-9.]*\).*/\2/p')"
commit="$(git -C "$RAILKIT_ROOT" rev-parse HEAD 2>/dev/null || echo unknown)"
dirty="$(git -C "$RAILKIT_ROOT" status --porcelain --untracked-files=no 2>/dev/null | grep -q . && echo yes || echo no)"
all_glibc=() all_glibcxx=() compat_glibc=() per_file=()
for f in "$bundle"/bin/* "$bundle"/lib/* "$bundle"/lib-compat/*; do
  rel="${f#"$bundle"/}"
  g="$(max_version GLIBC "$f")" gx="$(max_version GLIBCXX "$f")"
  # lib-compat is loaded only where the machine's libstdc++ is too old: its needs are apart.
  case "$rel" in
    lib-compat/*) compat_glibc+=("$g") ;;
    *) all_glibc+=("$g") all_glibcxx+=("$gx") ;;
  esac
  per_file+=("requires.$rel=GLIBC_${g:-none} GLIBCXX_${gx:-none}")
done
{
  echo "railkit_commit=$commit"
  echo "railkit_dirty=$dirty"
  echo "railkit_version=$("$bundle/bin/railkit-bench" --version 2>/dev/null | head -n 1 || true)"
  echo "date=$(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "build_host=$(uname -srm)"
  echo "build_glibc=$glibc_here"
  echo "required_glibc=$(max_of "${all_glibc[@]}")"
  echo "required_glibcxx=$(max_of "${all_glibcxx[@]}")"
  echo "lib_compat_glibc=$(max_of "${compat_glibc[@]}")"
  printf '%s\n' "${per_file[@]}"
  echo "cuda_version=$cuda_version"
  echo "cuda_archs=$archs"
  echo "cudart=static"
  echo "nccl_built=$nccl_built"
  echo "mpi=off"
  echo "nccl_tests_commit=${nt_commit:-none}"
  echo "nccl_tests_version=${nt_version:-none}"
  [ -z "$nt_note" ] || echo "nccl_tests_note=$nt_note"
} >"$bundle/BUILDINFO"
say "bundle ready: $bundle"
