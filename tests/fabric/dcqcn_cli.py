#!/usr/bin/env python3
"""`railkit dcqcn show|apply|restore` for real on fixture trees: exit codes, one-line errors,
files written, rollback of a write failing half way, restore.

    dcqcn_cli.py --railkit PATH
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures", "dcqcn"))
import gen_dcqcn  # noqa: E402

ETH0 = "sys/devices/pci0000:00/0000:17:00.0/net/eth0/ecn"
CC = "sys/kernel/debug/mlx5/0000:31:00.0/cc_params"
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL: " + what)


class Case:
    def __init__(self, railkit):
        self.railkit = railkit
        self.root = tempfile.mkdtemp(prefix="railkit-dcqcn-cli-")
        gen_dcqcn.generate(self.root)

    def run(self, *args, rc=0, what="", parse_error=False):
        """Runs railkit dcqcn; a failure must be one "railkit: error:" line (CLI11's own parse
        errors, exit 6 too, add a --help hint, as for every subcommand)."""
        p = subprocess.run([self.railkit, "dcqcn", *args], capture_output=True, text=True, timeout=60)
        label = "%s: railkit dcqcn %s" % (what, " ".join(args))
        check(p.returncode == rc, "%s: exit %d, expected %d; stderr: %s" % (label, p.returncode, rc, p.stderr.strip()))
        if rc != 0 and not parse_error:
            lines = p.stderr.strip().splitlines()
            check(len(lines) == 1 and lines[0].startswith("railkit: error: "),
                  "%s: expected one error line, got %r" % (label, p.stderr))
        return p

    def read(self, rel):
        with open(os.path.join(self.root, rel)) as f:
            return f.read().strip()

    def snapshot(self):
        out = {}
        for d, _, files in os.walk(os.path.join(self.root, "sys")):
            for f in files:
                p = os.path.join(d, f)
                with open(p) as fh:
                    out[os.path.relpath(p, self.root)] = fh.read()
        return out

    def close(self):
        shutil.rmtree(self.root)


def state_of(c, netdev):
    return os.path.join(c.root, "run/railkit/dcqcn", netdev + ".json")


def tamper(path, change):
    with open(path) as f:
        st = json.load(f)
    change(st)
    with open(path, "w") as f:
        json.dump(st, f)


def state_flags_case(c):
    """apply and restore take the same --state/--netdev combinations and refuse the same mismatches."""
    r = c.root
    orig = c.snapshot()
    sf = os.path.join(r, "eth0-state.json")
    for verb, extra in (("apply", ["--set", "roce_rp.rpg_gd=9"]), ("restore", [])):
        c.run(verb, "--root", r, "--state", sf, *extra, rc=6, what="%s --state without --netdev" % verb)
        c.run(verb, "--root", r, "--state", sf, "--netdev", "eth0", "--netdev", "eth2", *extra, rc=6,
              what="%s --state with two --netdev" % verb)
        c.run(verb, "--root", r, "--netdev", "eth0", "--netdev", "eth0", *extra, rc=6,
              what="%s --netdev twice" % verb)
        c.run(verb, "--root", r, "--netdev", "../../etc/x", *extra, rc=6, what="%s --netdev not a name" % verb)
    check(c.snapshot() == orig, "refused flags wrote nothing")
    c.run("apply", "--root", r, "--netdev", "eth0", "--state", sf, "--set", "roce_rp.rpg_gd=9", what="apply --state")
    # another netdev's state file: apply and restore refuse it alike
    for verb, extra in (("apply", ["--set", "roce_rp.rpg_gd=9"]), ("restore", [])):
        p = c.run(verb, "--root", r, "--netdev", "eth2", "--state", sf, *extra, rc=6,
                  what="%s with eth0's --state for eth2" % verb)
        check("holds the originals of eth0" in p.stderr, "%s names the owner: %s" % (verb, p.stderr))
    check(c.read(CC + "/rp_gd") == "11", "eth2 untouched")
    p = c.run("restore", "--root", r, "--netdev", "eth0", "--state", sf, what="restore --netdev --state as applied")
    check("eth0: restored 1 value(s)" in p.stdout, p.stdout)
    check(c.snapshot() == orig and not os.path.exists(sf), "restored eth0 from --state and removed it")


def tampered_state_case(c):
    """restore writes nothing from a state file with an entry outside the DCQCN table, its range or its file."""
    r = c.root
    c.run("apply", "--root", r, "--netdev", "eth0", "--set", "roce_rp.rpg_time_reset=100", "--set",
          "roce_rp.rpg_ai_rate=20", what="apply before tampering")
    os.makedirs(os.path.join(r, "etc"))
    with open(os.path.join(r, "etc/passwd"), "w") as f:
        f.write("root:x:0:0::/root:/bin/sh\n")
    mtu = "sys/devices/pci0000:00/0000:17:00.0/net/eth0/mtu"
    sf = state_of(c, "eth0")

    def bad(st):
        st["entries"][0]["path"] = "etc/passwd"
        st["entries"][1]["old"] = "999999999"
        st["entries"].append({"name": "roce_rp.rpg_threshold", "path": mtu, "old": "1"})
    tamper(sf, bad)
    before = c.snapshot()
    p = c.run("restore", "--root", r, rc=6, what="tampered state")
    for needle in (sf + ": entries[0] (roce_rp.rpg_ai_rate): path 'etc/passwd' is not the roce_rp.rpg_ai_rate file",
                   "entries[1] (roce_rp.rpg_time_reset): value '999999999': above the maximum",
                   "entries[2] (roce_rp.rpg_threshold): path '%s' is not" % mtu):
        check(needle in p.stderr, "names %r: %s" % (needle, p.stderr))
    check(c.snapshot() == before and c.read("etc/passwd").startswith("root:x") and c.read(mtu) == "9000",
          "nothing written from a tampered state")
    check(os.path.exists(sf), "tampered state kept")

    # a symlink inside the root leading out of it is not followed
    outside = tempfile.mkdtemp(prefix="railkit-dcqcn-outside-")
    try:
        with open(os.path.join(outside, "rpg_ai_rate"), "w") as f:
            f.write("77\n")
        attr = os.path.join(r, ETH0, "roce_rp/rpg_ai_rate")
        os.remove(attr)
        os.symlink(os.path.join(outside, "rpg_ai_rate"), attr)
        tamper(sf, lambda st: st["entries"].pop())
        tamper(sf, lambda st: st["entries"][0].update(path=os.path.join(ETH0, "roce_rp/rpg_ai_rate")))
        tamper(sf, lambda st: st["entries"][1].update(old="300"))
        p = c.run("restore", "--root", r, "--netdev", "eth0", rc=6, what="symlink out of the root")
        check("leaves the root" in p.stderr, p.stderr)
        with open(os.path.join(outside, "rpg_ai_rate")) as f:
            check(f.read() == "77\n", "the file outside the root is untouched")
        check(c.read(ETH0 + "/roce_rp/rpg_time_reset") == "100", "nothing written from it")
    finally:
        shutil.rmtree(outside)


def every_netdev_case(c):
    """restore without --netdev tries every state file, reports each failure, keeps their state files."""
    r = c.root
    orig = c.snapshot()
    c.run("apply", "--root", r, "--set", "roce_rp.rpg_time_reset=100", "--set", "roce_rp.rpg_ai_rate=20",
          what="apply to every netdev")
    tamper(state_of(c, "eth0"), lambda st: st["entries"][1].update(old="999999999"))  # refused: exit 6
    eth1_ai = "sys/devices/pci0000:00/0000:17:00.1/net/eth1/ecn/roce_rp/params/rpg_ai_rate"
    os.remove(os.path.join(r, eth1_ai))
    os.mkdir(os.path.join(r, eth1_ai))  # cannot be written: exit 9
    p = c.run("restore", "--root", r, rc=9, what="two of three fail")
    check("eth0: NOT restored" in p.stdout and "eth1: NOT restored" in p.stdout and "eth2: restored 2" in p.stdout,
          "each netdev reported:\n" + p.stdout)
    check("2 of 3 netdevs not restored" in p.stderr and "eth0: nothing restored" in p.stderr
          and "eth1: cannot restore roce_rp.rpg_ai_rate=5" in p.stderr, p.stderr)
    check(os.path.exists(state_of(c, "eth0")) and os.path.exists(state_of(c, "eth1")), "failed states kept")
    check(not os.path.exists(state_of(c, "eth2")), "eth2's state removed")
    now = c.snapshot()
    check(all(now[k] == v for k, v in orig.items() if "0000:31:00.0" in k), "eth2 restored after the failures")
    check(c.read(ETH0 + "/roce_rp/rpg_time_reset") == "100", "eth0 refused as a whole")
    check(c.read("sys/devices/pci0000:00/0000:17:00.1/net/eth1/ecn/roce_rp/params/rpg_time_reset") == "300",
          "eth1's other value restored")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--railkit", required=True)
    a = ap.parse_args()
    c = Case(a.railkit)
    try:
        r = c.root
        orig = c.snapshot()

        # show: every netdev with a layout, table and JSON
        p = c.run("show", "--root", r, what="show table")
        check("eth0  mlnx-sysfs" in p.stdout and "eth2  debugfs" in p.stdout and "eth3" not in p.stdout,
              "show lists eth0, eth1, eth2 only:\n" + p.stdout)
        p = c.run("show", "--root", r, "--format", "json", what="show json")
        doc = json.loads(p.stdout)
        check([n["netdev"] for n in doc["netdevs"]] == ["eth0", "eth1", "eth2"], "json netdevs")
        check(doc["netdevs"][2]["attributes"]["roce_rp.rpg_time_reset"] == 200, "debugfs value")
        check(doc["netdevs"][1]["attributes"]["roce_np.cnp_802p_prio"] is None, "absent is null")
        c.run("show", "--root", r, "--netdev", "eth9", rc=6, what="unknown netdev")
        c.run("show", "--root", r, "--netdev", "eth3", rc=5, what="netdev without DCQCN")
        c.run("show", "--root", r, "--format", "xml", rc=6, what="bad format", parse_error=True)

        # validation: nothing written, no state
        p = c.run("apply", "--root", r, "--set", "roce_np.cnp_dscp=26", "--set", "roce_rp.rpg_gd=16", rc=6,
                  what="out of range")
        check("roce_rp.rpg_gd=16: above the maximum 15" in p.stderr, "names the value: " + p.stderr)
        c.run("apply", "--root", r, "--set", "roce_rp.bogus=1", rc=6, what="unknown attribute")
        c.run("apply", "--root", r, "--set", "roce_rp.rpg_gd", rc=6, what="no =")
        c.run("apply", "--root", r, rc=6, what="nothing to apply")
        c.run("apply", "--root", r, "--netdev", "eth2", "--enable-priority", "3", rc=6, what="no enable upstream")
        c.run("apply", "--root", r, "--netdev", "eth0", "--enable-priority", "8", rc=6, what="priority range",
              parse_error=True)
        c.run("apply", "--root", r, "--netdev", "eth1", "--set", "roce_np.cnp_802p_prio=3", rc=6, what="absent file")
        c.run("apply", "--root", r, "--state", os.path.join(r, "s.json"), "--set", "roce_rp.rpg_gd=9", rc=6,
              what="--state with several netdevs")
        c.run("apply", "--root", r, "--netdev", "eth0", "--set", "roce_rp.rpg_gd=9", "--dry-run", what="dry run")
        check(c.snapshot() == orig, "refused or dry applies wrote nothing")
        check(not os.path.exists(os.path.join(r, "run")), "refused applies left no state")

        # apply to every netdev, twice; the originals stay those from before the first
        c.run("apply", "--root", r, "--set", "roce_rp.rpg_time_reset=100", what="apply all")
        check(c.read(ETH0 + "/roce_rp/rpg_time_reset") == "100" and c.read(CC + "/rp_time_reset") == "100",
              "apply wrote eth0 and eth2")
        c.run("apply", "--root", r, "--netdev", "eth0", "--set", "roce_rp.rpg_time_reset=60",
              "--set", "roce_np.cnp_dscp=26", "--enable-priority", "3", what="apply again")
        state = json.load(open(os.path.join(r, "run/railkit/dcqcn/eth0.json")))
        olds = {e["name"]: e["old"] for e in state["entries"]}
        check(olds == {"roce_rp.rpg_time_reset": "300", "roce_np.cnp_dscp": "48", "roce_rp.enable.3": "0",
                       "roce_np.enable.3": "0"}, "state holds the first originals: %r" % olds)

        # a write failing half way: what this call wrote is written back, state kept, exit 9
        before = c.snapshot()
        p = c.run("apply", "--root", r, "--netdev", "eth2", "--set", "roce_np.cnp_dscp=20", "--set",
                  "roce_rp.rpg_ai_rate=9", "--set", "roce_rp.rpg_gd=8", "--inject-write-failure", "roce_rp.rpg_gd",
                  rc=9, what="failure half way")
        check("cannot write roce_rp.rpg_gd=8" in p.stderr and "wrote back the 2 value(s)" in p.stderr, p.stderr)
        check(c.snapshot() == before, "everything written before the failure was written back")
        check(os.path.exists(os.path.join(r, "run/railkit/dcqcn/eth2.json")), "state kept after a failure")

        # restore everything, then nothing to restore
        p = c.run("restore", "--root", r, what="restore")
        check("eth0: restored 4" in p.stdout and "eth2: restored" in p.stdout, p.stdout)
        check(c.snapshot() == orig, "restore brought back every original")
        check(not os.listdir(os.path.join(r, "run/railkit/dcqcn")), "state files removed")
        p = c.run("restore", "--root", r, what="nothing to restore")
        check("nothing to restore" in p.stdout, p.stdout)
        p = c.run("restore", "--root", r, "--netdev", "eth0", "--state", os.path.join(r, "none.json"),
                  what="missing --state")
        check("nothing to restore" in p.stdout, p.stdout)
        bad = os.path.join(r, "bad.json")
        with open(bad, "w") as f:
            f.write("{")
        c.run("restore", "--root", r, "--netdev", "eth0", "--state", bad, rc=6, what="garbled state")
    finally:
        c.close()
    for case in (state_flags_case, tampered_state_case, every_netdev_case):
        c = Case(a.railkit)
        try:
            case(c)
        finally:
            c.close()
    if failures:
        print("%d check(s) failed" % len(failures))
        return 1
    print("all dcqcn CLI checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
