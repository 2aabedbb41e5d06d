#!/usr/bin/env bash
# Installs the Debian packages a command needs, and only those:
#   scripts/setup.sh quickstart   what the quick start builds (railkit-bench with the MPI backend):
#                                 compilers, CMake, Ninja, Open MPI and the header libraries
#   scripts/setup.sh [test]       everything the build and every test need (the default): adds
#                                 GoogleTest, Google Benchmark, clang and its sanitizer runtime,
#                                 ns-3, Slurm and munge, chromium, matplotlib, ccache ...
# Idempotent and quiet when all is present. As non-root it prints the exact apt-get line and exits 1.
# CUDA and NCCL are not packages here: they are expected under /usr/local/cuda (optional).
set -euo pipefail

QUICKSTART=(
  build-essential cmake ninja-build pkg-config
  openmpi-bin libopenmpi-dev
  libcli11-dev libfmt-dev nlohmann-json3-dev libyaml-dev libsqlite3-dev libmicrohttpd-dev
)
TEST=(
  "${QUICKSTART[@]}" git ccache
  libgtest-dev libgmock-dev libbenchmark-dev
  libibverbs-dev
  python3 python3-jsonschema python3-matplotlib python3-yaml
  libns3-dev libgsl-dev
  clang libclang-rt-14-dev
  slurm-wlm munge iproute2 zsh fish
  prometheus
  chromium fonts-dejavu-core fonts-liberation
)

case "${1:-test}" in
  quickstart) PACKAGES=("${QUICKSTART[@]}") ;;
  test) PACKAGES=("${TEST[@]}") ;;
  *) echo "setup.sh: '$1': expected quickstart or test" >&2; exit 2 ;;
esac

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
[ ${#missing[@]} -eq 0 ] && exit 0

cmd="apt-get install -y --no-install-recommends ${missing[*]}"
if [ "$(id -u)" -ne 0 ]; then
  echo "setup.sh: missing packages; run as root:" >&2
  echo "  apt-get update && $cmd" >&2
  exit 1
fi
echo "setup.sh: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
