#!/usr/bin/env python3
"""A capture reads like the node it came from: runs scripts/capture-node.sh on SRC (a fixture
tree, or / for this machine), unpacks it, probes both with `railkit topo --format json` and
requires identical documents (apart from `root`). Exit 77 (skip) when SRC has no PCI devices.

usage: capture_roundtrip.py RAILKIT CAPTURE_SCRIPT SRC
"""
import json
import os
import subprocess
import sys
import tarfile
import tempfile


def structural(doc):
    """On a live node link speeds (idle GPUs) and port states can change between two probes:
    compare what cannot, the devices, their placement, paths and rails."""
    return {
        "gpus": [{k: g[k] for k in ("name", "bdf", "numa", "model", "nic")} for g in doc["gpus"]],
        "nics": [{k: n[k] for k in ("name", "bdf", "numa", "model", "netdevs", "rail")} for n in doc["nics"]],
        "paths": doc["paths"], "rails": doc["rails"], "numa_nodes": doc["numa_nodes"],
        "bridges": [b["bdf"] for b in doc["bridges"]], "host": doc["host"],
    }


def probe(railkit, root):
    out = subprocess.run([railkit, "topo", "--root", root, "--format", "json"], capture_output=True, text=True,
                         check=True).stdout
    doc = json.loads(out)
    doc.pop("root")
    # Live-only sources (libibverbs, NVML) are not part of a capture: compare the sysfs view.
    doc.pop("nvlink_source", None)
    for nic in doc["nics"]:
        for port in nic["ports"]:
            port.pop("verbs", None)
    doc["findings"] = [f for f in doc["findings"] if not f["check"].startswith(("verbs.", "nvlink."))]
    for p in doc["paths"]:
        if p["from"].startswith("GPU") and p["to"].startswith("GPU"):
            p.pop("type")
    return doc


def main():
    railkit, script, src = sys.argv[1:4]
    if not os.path.isdir(os.path.join(src, "sys/bus/pci/devices")):
        print("no sys/bus/pci/devices under %s: skipped" % src)
        return 77
    env = dict(os.environ)
    if os.path.realpath(src) != "/":
        env["RAILKIT_CAPTURE_SRC"] = src
    with tempfile.TemporaryDirectory() as tmp:
        archive = os.path.join(tmp, "node.tar.gz")
        subprocess.run([script, archive], check=True, env=env)
        unpacked = os.path.join(tmp, "node")
        os.makedirs(unpacked)
        with tarfile.open(archive) as t:
            t.extractall(unpacked)
        live, captured = probe(railkit, src), probe(railkit, unpacked)
        if os.path.realpath(src) == "/":
            live, captured = structural(live), structural(captured)
    if live != captured:
        for key in sorted(set(live) | set(captured)):
            if live.get(key) != captured.get(key):
                print("differs: %s\n  source:  %s\n  capture: %s" % (key, json.dumps(live.get(key))[:400],
                                                                    json.dumps(captured.get(key))[:400]))
        return 1
    print("capture of %s probes identically (%d GPUs, %d NICs)" % (src, len(live["gpus"]), len(live["nics"])))
    return 0


if __name__ == "__main__":
    sys.exit(main())
