#!/usr/bin/env python3
"""Fails when an #include crosses the allowed dependency direction of DESIGN.md:

    core <- topology <- launch <- {sweep, fabric, tuner} <- accept <- report
    ingest <- core (report reads it);  monitor <- core, topology;  profiles <- core, topology
    sim <- core;  bench <- core, sim (bench/sim only);  apps on top

Reads every source file of the code folders and each `#include "FOLDER/..."` in it; prints one
line per violation (file:line: FOLDER may not include OTHER) and exits 1, else prints a summary
and exits 0. Usage: include_direction.py [REPO_ROOT] | --self-test
"""
import os
import re
import sys

# Folder -> the folders its code may include (itself always). Sub-folders (bench/nccl,
# profiles/plugin) belong to their top folder.
ALLOWED = {
    "core": set(),
    "topology": {"core"},
    "launch": {"core", "topology"},
    "sweep": {"core", "topology", "launch"},
    "fabric": {"core", "topology", "launch"},
    "tuner": {"core", "topology", "launch"},
    "accept": {"core", "topology", "launch", "sweep", "fabric", "tuner"},
    "report": {"core", "topology", "launch", "sweep", "fabric", "tuner", "accept", "ingest"},
    "ingest": {"core"},
    "monitor": {"core", "topology"},
    "profiles": {"core", "topology"},
    "sim": {"core"},
    "bench": {"core", "sim"},
}
# Folder -> the one sub-folder whose code may include it: bench's sim backend alone reaches sim/.
ONLY_FROM = {"sim": "bench/sim"}
EXTS = (".hpp", ".cpp", ".h", ".cu", ".cuh")
INCLUDE = re.compile(r'^\s*#\s*include\s+"([A-Za-z0-9_\-]+)/')


def violations(root):
    out, files = [], 0
    for folder, allowed in ALLOWED.items():
        base = os.path.join(root, folder)
        for dirpath, _, names in os.walk(base):
            for name in names:
                if not name.endswith(EXTS):
                    continue
                files += 1
                path = os.path.join(dirpath, name)
                with open(path, encoding="utf-8", errors="replace") as f:
                    for n, line in enumerate(f, 1):
                        m = INCLUDE.match(line)
                        if not m:
                            continue
                        target = m.group(1)
                        if target == folder or target not in ALLOWED:
                            continue  # own folder, or not a code folder (e.g. "generated/...")
                        rel = os.path.relpath(path, root)
                        if target not in allowed:
                            out.append(f"{rel}:{n}: {folder}/ may not include {target}/ ({line.strip()})")
                        elif target in ONLY_FROM and not rel.startswith(ONLY_FROM[target] + os.sep):
                            out.append(f"{rel}:{n}: only {ONLY_FROM[target]}/ may include {target}/ ({line.strip()})")
    return out, files


def self_test():
    """A tree with one include against the direction (profiles -> tuner) and one allowed one must
    give exactly that one finding."""
    import tempfile
    with tempfile.TemporaryDirectory() as tmp:
        for folder, text in (("profiles", '#include "core/error.hpp"\n#include "tuner/tune.hpp"\n'),
                             ("accept", '#include "sweep/sweep.hpp"\n'), ("bench/sim", '#include "sim/run.hpp"\n'),
                             ("bench", '#include "sim/run.hpp"\n'), ("ingest", '#include "sweep/sweep.hpp"\n')):
            os.makedirs(os.path.join(tmp, folder), exist_ok=True)
            with open(os.path.join(tmp, folder, "x.cpp"), "w") as f:
                f.write(text)
        bad, _ = violations(tmp)
    want = ["profiles/x.cpp:2: profiles/ may not include tuner/", "bench/x.cpp:1: only bench/sim/ may include sim/",
            "ingest/x.cpp:1: ingest/ may not include sweep/"]
    ok = sorted(b.split(" (")[0] for b in bad) == sorted(want)
    print("ok: self-test" if ok else f"FAIL: self-test found {bad}")
    return 0 if ok else 1


def main():
    if sys.argv[1:] == ["--self-test"]:
        return self_test()
    root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", ".."))
    bad, files = violations(root)
    for line in bad:
        print(line)
    if bad:
        print(f"FAIL: {len(bad)} include(s) against the dependency direction in {files} files")
        return 1
    print(f"ok: {files} files of {len(ALLOWED)} folders include only in the allowed direction")
    return 0


if __name__ == "__main__":
    sys.exit(main())
