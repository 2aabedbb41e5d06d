#!/usr/bin/env python3
"""railkit-sim end to end: the example writes a simulated railkit.sim/1 document and its CSV
series (and plots when matplotlib is there); scenario errors print one line naming the key and
exit 6; a PFC deadlock stops the run, writes the documents with the finding, prints one line
naming the ports and exits 12; the spine count and the spine link rate are separate keys.
Usage: sim_cli.py RAILKIT_SIM EXAMPLES_DIR"""
import json
import os
import subprocess
import sys
import tempfile

SIM, EXAMPLES = sys.argv[1], sys.argv[2]
PLOT = os.path.join(EXAMPLES, "..", "plot_sim.py")
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def run(args):
    return subprocess.run([SIM] + args, capture_output=True, text=True, timeout=120)


with tempfile.TemporaryDirectory() as tmp:
    out = os.path.join(tmp, "out")
    r = run([os.path.join(EXAMPLES, "incast-16to1.yaml"), "--out", out, "--set", "duration=2ms"])
    check(r.returncode == 0, f"the example runs (rc {r.returncode}: {r.stderr.strip()})")
    if r.returncode == 0:
        doc = json.load(open(os.path.join(out, "sim.json")))
        check(doc["schema"] == "railkit.sim/1", "schema railkit.sim/1")
        check(doc["simulated"] is True, "the document says it is simulated")
        check(len(doc["flows"]) == 16, "16 flows")
        check(doc["run"]["events"] > 0 and doc["run"]["packet_hops"] > 0, "events and packet-hops counted")
        check(doc["scenario"]["name"] == "incast-16to1", "the scenario is echoed")
        check(doc["parameters"]["nic"]["dcqcn"]["roce_rp.rpg_time_reset"] == 300, "resolved DCQCN attributes")
        check(len(doc["series"]["t_us"]) > 10, "time series")
        check("deadlock" in doc and doc["deadlock"] is None, "no deadlock")
        for name in ("flows.csv", "ports.csv"):
            with open(os.path.join(out, name)) as f:
                head = f.readline()
            check(head.startswith("t_us,"), f"{name} has a header")
        try:
            import matplotlib  # noqa: F401
            png = os.path.join(tmp, "p.png")
            p = subprocess.run([sys.executable, PLOT, os.path.join(out, "sim.json"), "--out", png], capture_output=True, text=True)
            check(p.returncode == 0 and os.path.getsize(png) > 1000, f"plot_sim.py draws ({p.stderr.strip()})")
        except ImportError:
            print("skip: matplotlib is not installed, plot not drawn")

    # PFC deadlock: XOFF at 32 KiB and XON 64 KiB below it, so no pause is ever lifted.
    dl = os.path.join(tmp, "deadlock")
    r = run([os.path.join(EXAMPLES, "incast-16to1.yaml"), "--out", dl, "-q",
             "--set", "switch.pfc.xoff_bytes=32KiB", "--set", "switch.pfc.xon_offset_bytes=64KiB"])
    lines = [l for l in r.stderr.splitlines() if l.strip()]
    check(r.returncode == 12, f"a deadlock: exit 12 (got {r.returncode}: {r.stderr.strip()})")
    check(len(lines) == 1 and lines[0].startswith("railkit-sim: deadlock at ") and "h0:0->sw0 prio 3" in lines[0]
          and "never clear" in lines[0], f"a deadlock: one line naming the ports (got {r.stderr!r})")
    check(r.stdout == "", f"-q: nothing on stdout (got {r.stdout!r})")
    if r.returncode == 12:
        doc = json.load(open(os.path.join(dl, "sim.json")))
        d = doc["deadlock"]
        check(d["kind"] == "pause_never_clears" and "h15:0->sw0 prio 3" in d["ports"] and len(d["ports"]) == 16,
              f"the finding names the 16 paused senders: {d}")
        check(d["at_us"] == doc["run"]["duration_us"] < 20000 and d["since_us"] < d["at_us"],
              f"the run stopped where it was found: {d['at_us']} {doc['run']['duration_us']}")
        check(os.path.exists(os.path.join(dl, "flows.csv")) and os.path.exists(os.path.join(dl, "ports.csv")), "the CSVs too")
    # Congestion is not a deadlock: 16:1 with PFC alone pauses 2000 times in 20 ms.
    r = run([os.path.join(EXAMPLES, "incast-16to1.yaml"), "--out", os.path.join(tmp, "nocc"), "-q", "--set", "nic.cc=none"])
    check(r.returncode == 0 and r.stderr == "", f"16:1 without congestion control: exit 0 (got {r.returncode}: {r.stderr.strip()})")
    if r.returncode == 0:
        doc = json.load(open(os.path.join(tmp, "nocc", "sim.json")))
        check(doc["deadlock"] is None and doc["totals"]["pause_sent"] > 1000 and doc["run"]["duration_us"] == 20000,
              f"16:1 without congestion control: paused {doc['totals']['pause_sent']} times, no deadlock")

    # Spines: the count and the speed of one spine link are separate keys.
    victim = os.path.join(EXAMPLES, "leaf-spine-victim.yaml")
    for spines, over in ((4, 1.0), (2, 2.0)):
        out = os.path.join(tmp, f"spines{spines}")
        r = run([victim, "--out", out, "-q", "--set", "duration=100us", "--set", f"topology.spines={spines}"])
        check(r.returncode == 0, f"{spines} spines: rc {r.returncode}: {r.stderr.strip()}")
        if r.returncode == 0:
            doc = json.load(open(os.path.join(out, "sim.json")))
            t = doc["parameters"]["topology"]
            uplinks = {p["rate_Gbps"] for p in doc["ports"] if "spine" in p["node"] + p["peer"]}
            check(t["spines"] == spines and t["fabric_rate_Gbps"] == 425 and uplinks == {425.0},
                  f"{spines} spines: each spine link stays 425 Gb/s ({t}, {uplinks})")
            check(abs(t["oversubscription"] - over) < 1e-9, f"{spines} spines: oversubscription {t['oversubscription']}, want {over}")
    r = run([victim, "--out", os.path.join(tmp, "x"), "--set", "topology.oversubscription=2"])
    lines = [l for l in r.stderr.splitlines() if l.strip()]
    check(r.returncode == 6 and len(lines) == 1 and "topology.spines, topology.oversubscription: 4 spines x 425 Gb/s" in lines[0]
          and "is 1:1, not 2:1" in lines[0], f"spines and oversubscription that disagree: one line, exit 6 (got {r.returncode}: {r.stderr!r})")

    bad = os.path.join(tmp, "bad.yaml")
    cases = [
        ("unknown key", "duration: 1ms\ntopology: {kind: single_switch, hosts: 3, link_rate: 100Gbps, link_sped: 1}\n"
                        "flows: [{src: h0, dst: h1}]\n", "topology.link_sped"),
        ("rate without a unit", "duration: 1ms\ntopology: {kind: single_switch, hosts: 3, link_rate: 100}\n"
                                "flows: [{src: h0, dst: h1}]\n", "topology.link_rate"),
        ("impossible topology", "duration: 1ms\ntopology: {kind: leaf_spine, leaves: 2, hosts_per_leaf: 2, spines: 0, "
                                "link_rate: 100Gbps}\nflows: [{src: h0, dst: h1}]\n", "topology.spines"),
        ("no such host", "duration: 1ms\ntopology: {kind: single_switch, hosts: 3, link_rate: 100Gbps}\n"
                         "flows: [{src: h0, dst: h7}]\n", "flows[0].dst"),
    ]
    for what, text, key in cases:
        with open(bad, "w") as f:
            f.write(text)
        r = run([bad, "--out", os.path.join(tmp, "x")])
        lines = [l for l in r.stderr.splitlines() if l.strip()]
        check(r.returncode == 6, f"{what}: exit 6 (got {r.returncode})")
        check(len(lines) == 1 and key in lines[0], f"{what}: one line naming {key} (got {r.stderr!r})")
    r = run([os.path.join(tmp, "missing.yaml")])
    check(r.returncode == 6, f"a missing scenario file: exit 6 (got {r.returncode})")
    r = run([os.path.join(EXAMPLES, "incast-16to1.yaml"), "--set", "noequals"])
    check(r.returncode == 6, f"a bad --set: exit 6 (got {r.returncode})")
    r = run([])
    check(r.returncode == 6, f"no scenario: exit 6 (got {r.returncode})")

if failures:
    print(f"{len(failures)} failure(s)")
    sys.exit(1)
print("ok")
