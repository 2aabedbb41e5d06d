#!/usr/bin/env python3
"""railkit-sim refuses, before building anything, what it cannot build or run in reasonable time and
memory (issue 32): more hosts than sim/scenario.hpp's kMaxHosts (1048576 hosts took no answer, 65536
took 38 s and 810 MB before the buffer check), flows beyond kMaxFlows (200k flows: 120 s, 1.6 GB and
no output), switch buffers too small for their headroom; each one line naming the key, exit 6, in
well under a second. A large scenario that is allowed says on stderr that it builds, and when done.
Usage: sim_limits_cli.py RAILKIT_SIM"""
import json
import os
import subprocess
import sys
import tempfile
import time

SIM = sys.argv[1]
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def scenario(tmp, name, topology, flows, **extra):
    path = os.path.join(tmp, name + ".json")
    doc = {"name": name, "duration": "10us", "topology": dict(topology, link_rate="100Gbps"), "flows": flows}
    doc.update(extra)
    with open(path, "w") as f:
        json.dump(doc, f)
    return path


def refused(path, says, args=()):
    t0 = time.monotonic()
    try:
        r = subprocess.run([SIM, path, "-q", "--out", path + ".out", *args], capture_output=True, text=True, timeout=5)
    except subprocess.TimeoutExpired:
        check(False, f"{os.path.basename(path)}: no answer within 5 s")
        return
    took = time.monotonic() - t0
    lines = [l for l in r.stderr.splitlines() if l.strip()]
    check(r.returncode == 6, f"{os.path.basename(path)}: exit {r.returncode}, expected 6 ({r.stderr.strip()})")
    check(len(lines) == 1 and says in lines[0], f"{os.path.basename(path)}: stderr {lines}, expected one line saying {says!r}")
    check(took < 3, f"{os.path.basename(path)}: refused after {took:.1f} s")
    check(not os.path.exists(os.path.join(path + ".out", "sim.json")), f"{os.path.basename(path)}: wrote a document")


with tempfile.TemporaryDirectory() as tmp:
    refused(scenario(tmp, "million", {"kind": "single_switch", "hosts": 1048576}, [{"src": 0, "dst": 1}]),
            "topology.hosts: 1048576 hosts (on one switch): more than railkit-sim builds (at most 16384)")
    refused(scenario(tmp, "wide", {"kind": "single_switch", "hosts": 65536}, [{"src": "all", "dst": 0}]),
            "topology.hosts: 65536 hosts")
    refused(scenario(tmp, "rails", {"kind": "rail_optimized", "nodes": 1048576, "gpus_per_node": 1024, "spines": 4},
                     [{"src": 0, "dst": 1}]),
            "topology.nodes: 1073741824 hosts (nodes x gpus_per_node)")
    refused(scenario(tmp, "leaves", {"kind": "leaf_spine", "leaves": 65536, "hosts_per_leaf": 65536, "spines": 1},
                     [{"src": 0, "dst": 1}]),
            "topology.hosts_per_leaf: 4294967296 hosts")
    # 16384 hosts are allowed, but not on one switch with the default 16 MiB buffer: refused before building.
    refused(scenario(tmp, "buffer", {"kind": "single_switch", "hosts": 16384}, [{"src": 0, "dst": 1}]),
            "switch.buffer_bytes: 16777216 bytes cannot hold the PFC headroom")
    # 200 hosts all-to-all: 39800 flows.
    refused(scenario(tmp, "alltoall", {"kind": "leaf_spine", "leaves": 10, "hosts_per_leaf": 20, "spines": 2},
                     [{"src": "all", "dst": "all"}]),
            "flows[0]: 39800 flows (200 src x 200 dst): more than railkit-sim runs (at most 16384 in all)")
    refused(scenario(tmp, "many", {"kind": "single_switch", "hosts": 200}, [{"src": i % 100, "dst": 100 + i % 100}
                                                                             for i in range(16385)]),
            "flows[16384]: 1 flows (1 src x 1 dst, after 16384 before it): more than railkit-sim runs")
    refused(scenario(tmp, "repeat", {"kind": "single_switch", "hosts": 200}, [{"src": ["all"] * 100000, "dst": 0}]),
            "flows[0].src: names more than 16384 hosts")
    refused(scenario(tmp, "set", {"kind": "single_switch", "hosts": 4}, [{"src": 0, "dst": 1}]),
            "topology.hosts: 1048576 hosts", ["--set", "topology.hosts=1048576"])

    # Allowed and large: progress on stderr (the build, then the run), and a document.
    path = scenario(tmp, "big", {"kind": "leaf_spine", "leaves": 32, "hosts_per_leaf": 32, "spines": 4},
                    [{"src": "h0-h1023", "dst": "h0"}], switch={"buffer_bytes": "64MiB"})
    r = subprocess.run([SIM, path, "-q", "--out", os.path.join(tmp, "big")], capture_output=True, text=True, timeout=60)
    check(r.returncode == 0, f"1024 hosts: exit {r.returncode} ({r.stderr.strip()})")
    check("railkit-sim: building the fabric (1024 hosts, 1023 flows)... built in" in r.stderr and
          "railkit-sim: simulated in" in r.stderr, f"1024 hosts: no progress on stderr: {r.stderr!r}")
    check(os.path.exists(os.path.join(tmp, "big", "sim.json")), "1024 hosts: no document")

if failures:
    print(f"{len(failures)} failure(s)")
    sys.exit(1)
print("ok")
