#!/usr/bin/env python3
"""Reads the dynamic section (readelf -d) of the control plane and of the NCCL tuner plugin:

- `railkit` must start on a node with no GPU driver, no MPI and no rdma-core: it needs none of
  libmpi, libcuda, libcudart, libnccl, libnvidia-ml, libibverbs (those it uses are dlopen'ed);
- `libnccl-tuner-railkit.so` and `libnccl-profiler-railkit.so` are loaded into every training
  process: they need nothing beyond libc, libstdc++, libm, libgcc_s and the dynamic loader.

Usage: dynamic_deps.py RAILKIT PLUGIN [PLUGIN...]. Prints one line per finding; exit 1 on any.
"""
import re
import subprocess
import sys

FORBIDDEN_FOR_RAILKIT = ("libmpi", "libcuda", "libcudart", "libnccl", "libnvidia-ml", "libibverbs", "libopen-rte",
                         "libopen-pal")
PLUGIN_ALLOWED = ("libc.so", "libstdc++.so", "libm.so", "libgcc_s.so", "ld-linux")


def needed(path):
    out = subprocess.run(["readelf", "-d", path], capture_output=True, text=True, check=True).stdout
    return re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", out)


def main():
    railkit, plugins = sys.argv[1], sys.argv[2:]
    bad = []
    r = needed(railkit)
    bad += [f"{railkit}: needs {lib} (must be loaded at run time, or not at all)" for lib in r
            if lib.startswith(FORBIDDEN_FOR_RAILKIT)]
    found = []
    for plugin in plugins:
        p = needed(plugin)
        bad += [f"{plugin}: needs {lib} (a plugin may need only libc, libstdc++, libm, libgcc)" for lib in p
                if not lib.startswith(PLUGIN_ALLOWED)]
        found.append(f"{plugin.rsplit('/', 1)[-1]} needs {', '.join(p)}")
    for line in bad:
        print(line)
    if bad:
        return 1
    print(f"ok: railkit needs {', '.join(r)}; " + "; ".join(found))
    return 0


if __name__ == "__main__":
    sys.exit(main())
