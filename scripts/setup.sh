#!/usr/bin/env bash
# Installs every Debian package railkit's build and tests need. Idempotent and quiet when all is
# present. As non-root it prints the exact apt-get line and exits 1.
# CUDA and NCCL are not packages here: they are expected under /usr/local/cuda (optional).
set -euo pipefail

PACKAGES=(
  build-essential cmake ninja-build pkg-config git
  openmpi-bin libopenmpi-dev
  libcli11-dev libfmt-dev nlohmann-json3-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  libibverbs-dev libyaml-dev libsqlite3-dev
  python3 python3-jsonschema python3-matplotlib
  libns3-dev libgsl-dev
  clang libclang-rt-14-dev
  slurm-wlm munge iproute2 python3-yaml
  chromium fonts-dejavu-core fonts-liberation
)

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
