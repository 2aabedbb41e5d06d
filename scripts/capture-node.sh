#!/usr/bin/env bash
# Captures the files `railkit topo` reads from this node into OUT.tar.gz, so the node can be
# probed elsewhere with `railkit topo --root <unpacked dir>`.
#
# usage: scripts/capture-node.sh OUT.tar.gz
#
# What is copied (nothing else): proc/sys/kernel/hostname, proc/cpuinfo (first CPU only),
# sys/devices/system/{cpu/online,node/node*/cpulist,cpumap}; every PCI function's identity,
# NUMA, CPU and link files (and `config` for bridges, complete only when run as root);
# each RDMA device's node_guid, ports/*/{link_layer,state,phys_state,rate}, GID table;
# its netdevs' mtu, dev_port, ecn/ and qos/{pfc,trust}; the GPUDirect RDMA module markers.
# Symlinks (sys/bus/pci/devices/*, sys/class/infiniband/*, .../device, sys/class/net/*) are
# kept as the kernel's relative links and files are stored at their real sysfs paths, so the
# capture resolves exactly like the live tree. When nvidia-smi exists, `nvidia-smi topo -m` is
# saved as nvidia-smi-topo.txt at the top of the archive (pass it with --nvidia-smi-topo).
set -euo pipefail

if [[ $# -ne 1 || "$1" == -* ]]; then
  echo "usage: $0 OUT.tar.gz" >&2
  exit 6
fi
out=$1
case "$out" in /*) ;; *) out="$PWD/$out" ;; esac
if [[ ! -d "$(dirname "$out")" ]]; then
  echo "capture-node: $(dirname "$out") does not exist" >&2
  exit 6
fi
src=${RAILKIT_CAPTURE_SRC:-}  # test hook: capture from a tree instead of / (default: the live node)
if [[ -n "$src" ]]; then src=$(realpath -e "$src"); fi
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT

# realpath -e of $1 into REPLY (status 1 when it does not exist). A path whose last component is
# not a symlink is its directory's real path (resolved once per directory, cached) plus that
# component: a node has thousands of attribute files in a few hundred directories, and one
# realpath process per file made a capture of a DGX fixture take a minute.
declare -A realdir=()
resolve() {
  [[ -e "$1" ]] || return 1
  if [[ -L "$1" || "$1" != */* ]]; then
    REPLY=$(realpath -e "$1" 2>/dev/null) || return 1
    return 0
  fi
  local parent=${1%/*}
  parent=${parent:-/}
  if [[ -z "${realdir[$parent]+set}" ]]; then
    realdir[$parent]=$(realpath -e "$parent" 2>/dev/null) || return 1
  fi
  REPLY="${realdir[$parent]%/}/${1##*/}"
}

# copy_file PATH: the file at PATH (resolved) to the same real path under the stage.
copy_file() {
  resolve "$1" || return 0
  local real=$REPLY
  [[ -f "$real" ]] || return 0
  local rel=${real#"$src"}
  local dir="$stage${rel%/*}"
  [[ -d "$dir" ]] || mkdir -p "$dir"
  # sysfs files report a fixed size: read them with cat; unreadable ones (EINVAL) are left out.
  if ! cat "$real" >"$stage$rel" 2>/dev/null; then rm -f "$stage$rel"; fi
}

# copy_link LINK: the symlink itself, into the real path of its directory.
copy_link() {
  [[ -L "$1" ]] || return 0
  local dir
  dir=$(realpath -e "$(dirname "$1")") || return 0
  local rel=${dir#"$src"}
  mkdir -p "$stage$rel"
  cp -P "$1" "$stage$rel/"
}

# copy_dir DIR: the directory (its real path) exists in the capture even when empty.
copy_dir() {
  local real
  real=$(realpath -e "$1" 2>/dev/null) || return 0
  mkdir -p "$stage${real#"$src"}"
}

copy_file "$src/proc/sys/kernel/hostname"
if [[ -r "$src/proc/cpuinfo" ]]; then
  mkdir -p "$stage/proc"
  awk 'BEGIN{RS=""} NR==1 {print; exit}' "$src/proc/cpuinfo" >"$stage/proc/cpuinfo"
fi
copy_file "$src/sys/devices/system/cpu/online"
for node in "$src"/sys/devices/system/node/node[0-9]*; do
  [[ -d "$node" ]] || continue
  copy_file "$node/cpulist"
  copy_file "$node/cpumap"
done

for dev in "$src"/sys/bus/pci/devices/*; do
  [[ -e "$dev" ]] || continue
  copy_link "$dev"
  for attr in vendor device class subsystem_vendor subsystem_device numa_node local_cpulist \
              current_link_speed current_link_width max_link_speed max_link_width; do
    copy_file "$dev/$attr"
  done
  if [[ "$(cat "$dev/class" 2>/dev/null)" == 0x0604* ]]; then copy_file "$dev/config"; fi
done

for ib in "$src"/sys/class/infiniband/*; do
  [[ -e "$ib" ]] || continue
  copy_link "$ib"
  copy_link "$ib/device"
  copy_file "$ib/node_guid"
  for port in "$ib"/ports/*; do
    [[ -d "$port" ]] || continue
    for attr in link_layer state phys_state rate; do copy_file "$port/$attr"; done
    for gid in "$port"/gids/*; do
      [[ -e "$gid" ]] || continue
      idx=$(basename "$gid")
      copy_file "$gid"
      copy_file "$port/gid_attrs/types/$idx"
      copy_file "$port/gid_attrs/ndevs/$idx"
    done
  done
  copy_dir "$ib/device/net"
  for nd in "$ib"/device/net/*; do
    [[ -e "$nd" ]] || continue
    name=$(basename "$nd")
    copy_link "$src/sys/class/net/$name"
    copy_file "$nd/mtu"
    copy_file "$nd/dev_port"
    if [[ -d "$nd/ecn" ]]; then
      while IFS= read -r f; do copy_file "$f"; done < <(find "$nd/ecn/" -type f 2>/dev/null)
    fi
    copy_file "$nd/qos/pfc"
    copy_file "$nd/qos/trust"
  done
done

for m in sys/module/nvidia_peermem sys/module/nv_peer_mem; do
  [[ -d "$src/$m" ]] && { copy_dir "$src/$m"; copy_file "$src/$m/version"; }
done
copy_file "$src/sys/kernel/mm/memory_peers/nv_mem/version"

if [[ -z "$src" ]] && command -v nvidia-smi >/dev/null 2>&1; then
  nvidia-smi topo -m >"$stage/nvidia-smi-topo.txt" 2>/dev/null || rm -f "$stage/nvidia-smi-topo.txt"
fi

tar -czf "$out" -C "$stage" .
echo "capture-node: wrote $out ($(find "$stage" -type f | wc -l) files); probe it with: railkit topo --root <unpacked dir>"
