#!/usr/bin/env python3
"""`railkit monitor judge` for real on generated directories of the profiler plugin's windows
(`railkit.monitor.window/1`, monitor/README.md section 1): the guilty host in verdict.json,
verdict.prom, bad-hosts and the drain/cordon scripts with exit 10; a clean set exit 0; nothing
judged exit 11; no window exit 6; a simulated verdict said on every output and acting on nothing.
Standard library only.

    judge_cli.py --railkit build/bin/railkit --case NAME
    judge_cli.py --list
"""
import json
import os
import random
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "lib"))
from casekit import Cases, check, railkit_main  # noqa: E402

CASES = Cases()
case = CASES.add

T0 = 1764780000.0
WINDOW_S = 10.0
JOB = "4242"
COMM = "0xabcdef0123456789"


def gen_windows(d, nranks=8, per_host=4, windows=3, colls=16, late=None, source="nccl", nic_rate=None,
                stuck=(), stuck_age_s=0.0, samples=True, nics=True):
    """Writes one .jsonl per rank into d, as the plugin does: rank `r` of `late` {rank: us} arrives
    that much later to every collective and so waits least; nic_rate {(host index, nic): GB/s}."""
    late = late or {}
    nic_rate = nic_rate or {}
    os.makedirs(d, exist_ok=True)
    for r in range(nranks):
        rng = random.Random(r)
        host = "node%d" % (r // per_host + 1)
        seq = 100
        lines = []
        for w in range(windows):
            ws = T0 + w * WINDOW_S
            smp = []
            for k in range(colls):
                base = w * WINDOW_S * 1e6 + 1000.0 + k * 50000.0
                last = max(base + late.get(q, 0.0) for q in range(nranks))
                arrive = base + late.get(r, 0.0) + rng.uniform(-20, 20)
                smp.append({"op": "AllReduce", "seq": seq, "bytes": 1048576,
                            "start_unix_ns": int(T0 * 1e9) + int(arrive * 1e3),
                            "time_us": last + 1000.0 - arrive + rng.uniform(-20, 20)})
                seq += 1
            nic = (r % per_host) % 2
            rate = nic_rate.get((r // per_host, nic), 20.0)
            in_flight = w == windows - 1 and r in stuck
            lines.append({
                "schema": "railkit.monitor.window/1", "source": source, "job": JOB, "host": host, "pid": 100 + r,
                "rank": r, "nranks": nranks, "nnodes": (nranks + per_host - 1) // per_host, "comm": COMM,
                "comm_name": "", "abi": "v5", "gpu": str(r % per_host), "local_rank": r % per_host,
                "window": {"index": w, "start_unix_s": ws, "end_unix_s": ws + WINDOW_S},
                "colls": [{"op": "AllReduce", "bytes": 1048576, "algo": "RING", "proto": "SIMPLE", "channels": 16,
                           "timing": "kernel", "count": colls,
                           "time_us": {"p50": 1000.0, "min": 990.0, "max": 1200.0, "sum": 1000.0 * colls},
                           "busbw_GBps": {"p50": 15.2, "min": 4.5}}],
                "p2p": [], "samples": smp if samples else [], "proxy": [],
                "nics": [{"device": nic, "name": "mlx5_%d" % nic, "bytes": 4e9, "busy_us": 4e9 / rate / 1e3,
                          "wrs": 1000}] if nics else [],
                "inflight": {"count": 1 if in_flight else 0, "oldest_seq": seq if in_flight else 0,
                             "oldest_op": "AllReduce" if in_flight else "",
                             "oldest_age_s": stuck_age_s if in_flight else 0.0},
                "last_completion_unix_s": ws + WINDOW_S - 0.1,
                "dropped": {"events": 0, "samples": 0}, "callbacks": 25000})
        with open(os.path.join(d, "railkit-nccl-%s-%d.jsonl" % (host, 100 + r)), "w") as f:
            for j in lines:
                f.write(json.dumps(j) + "\n")
    return T0 + windows * WINDOW_S


class Ctx:
    def __init__(self, railkit, bench, tmp):
        self.railkit = railkit
        self.tmp = tmp

    def path(self, *parts):
        return os.path.join(self.tmp, *parts)

    def judge(self, *args, now=T0 + 3 * WINDOW_S, env=None):
        argv = [self.railkit, "monitor", "judge", *args]
        if now is not None:
            argv += ["--now-unix-s", "%.3f" % now]
        p = subprocess.run(argv, capture_output=True, text=True, timeout=60, env=env, stdin=subprocess.DEVNULL)
        return p

    def read(self, *parts):
        with open(self.path(*parts)) as f:
            return f.read()


PROM_LINE = re.compile(r'^([a-z_]+)(\{(?:[a-z_]+="(?:[^"\\\n]|\\.)*",?)*\})? (-?[0-9.e+]+)$')


def parse_prom(text):
    """{(name, labels text): value}; every line is HELP, TYPE or a sample (else a failure)."""
    out = {}
    for line in text.splitlines():
        if line.startswith("# HELP ") or line.startswith("# TYPE "):
            continue
        m = PROM_LINE.match(line)
        check(m is not None, "verdict.prom: not a sample line: %r" % line)
        out[(m.group(1), m.group(2) or "")] = float(m.group(3))
    return out


def verdict_checks(ctx, out="out"):
    doc = json.loads(ctx.read(out, "verdict.json"))
    check(doc["schema"] == "railkit.monitor.verdict/1", "schema: %s" % doc["schema"])
    return doc, doc["checks"]


@case
def straggler_named_exit_10(ctx):
    gen_windows(ctx.path("w"), late={5: 3000.0})
    p = ctx.judge("--dir", ctx.path("w"), "--out", ctx.path("out"))
    check(p.returncode == 10, "exit %d, not 10: %s" % (p.returncode, p.stderr))
    check(re.search(r"^node2 +\| late-start +\| rank 5 late in 48/48 .*\| fail +\| peers' median start", p.stdout, re.M),
          "no late-start row for node2 in:\n" + p.stdout)
    doc, checks = verdict_checks(ctx)
    check(doc["verdict"] == "fail" and doc["simulated"] is False, "verdict %s simulated %s" % (doc["verdict"], doc["simulated"]))
    late = [c for c in checks if c["check"] == "late-start" and c["verdict"] == "fail"]
    check(len(late) == 1 and late[0]["rank"] == 5 and late[0]["host"] == "node2" and late[0]["gpu"] == "1",
          "late-start failures: %s" % late)
    check("rule_text" in late[0] and "evidence" in late[0] and late[0]["evidence"]["late"] == 48, "evidence: %s" % late[0])
    prom = parse_prom(ctx.read("out", "verdict.prom"))
    check(prom.get(("railkit_monitor_straggler", '{job="4242",rank="5",host="node2"}')) == 1, "straggler series: %s" % prom)
    check(prom.get(("railkit_monitor_straggler", '{job="4242",rank="4",host="node2"}')) == 0, "rank 4 series: %s" % prom)
    check(prom.get(("railkit_monitor_hang", '{job="4242",comm="%s"}' % COMM)) == 0, "hang series: %s" % prom)
    bad = ctx.read("out", "bad-hosts")
    check(bad == "node2\tlate-start,waits-least\n", "bad-hosts: %r" % bad)
    drain = ctx.read("out", "drain-slurm.sh")
    check("scontrol update NodeName=node2 State=DRAIN Reason='railkit: late-start,waits-least'\n" in drain and "node1" not in drain.split("set -euo")[1],
          "drain-slurm.sh:\n" + drain)
    cordon = ctx.read("out", "cordon-k8s.sh")
    check("kubectl cordon node2\n" in cordon, "cordon-k8s.sh:\n" + cordon)
    check(os.access(ctx.path("out", "drain-slurm.sh"), os.X_OK), "drain-slurm.sh is not executable")
    p = subprocess.run(["bash", "-n", ctx.path("out", "drain-slurm.sh")], capture_output=True, text=True)
    check(p.returncode == 0, "bash -n drain-slurm.sh: %s" % p.stderr)


@case
def slow_nic_and_hang_named(ctx):
    gen_windows(ctx.path("w"), nic_rate={(1, 1): 4.0}, stuck=range(7), stuck_age_s=90.0)
    p = ctx.judge("--dir", ctx.path("w"), "--out", ctx.path("out"))
    check(p.returncode == 10, "exit %d, not 10: %s" % (p.returncode, p.stderr))
    _, checks = verdict_checks(ctx)
    lag = [c for c in checks if c["check"] == "nic-lag" and c["verdict"] == "fail"]
    check([(c["host"], c["nic"]) for c in lag] == [("node2", "mlx5_1")], "nic-lag: %s" % lag)
    hang = [c for c in checks if c["check"] == "hang" and c["verdict"] == "fail"]
    check(len(hang) == 2 and hang[0]["evidence"]["ranks_not_completed"] == list(range(7)), "hang: %s" % hang)
    check(hang[1]["rank"] == 7, "hang suspect: %s" % hang[1])
    bad = ctx.read("out", "bad-hosts")
    check(bad == "node2\thang,nic-lag.mlx5_1\n", "bad-hosts: %r" % bad)
    prom = parse_prom(ctx.read("out", "verdict.prom"))
    check(prom.get(("railkit_monitor_nic_lag", '{job="4242",host="node2",nic="mlx5_1"}')) == 1, "nic series: %s" % prom)
    check(prom.get(("railkit_monitor_hang", '{job="4242",comm="%s"}' % COMM)) == 1, "hang series: %s" % prom)


@case
def clean_set_exit_0(ctx):
    gen_windows(ctx.path("w"), late={5: 100.0})
    p = ctx.judge("--dir", ctx.path("w"), "--out", ctx.path("out"))
    check(p.returncode == 0, "exit %d, not 0: %s\n%s" % (p.returncode, p.stderr, p.stdout))
    doc, checks = verdict_checks(ctx)
    check(doc["verdict"] == "pass", "verdict %s" % doc["verdict"])
    check(sorted({c["check"] for c in checks if c["verdict"] == "pass"}) == ["hang", "late-start", "nic-lag", "waits-least"],
          "passed checks: %s" % checks)
    check(ctx.read("out", "bad-hosts") == "", "bad-hosts not empty")
    check("scontrol" not in ctx.read("out", "drain-slurm.sh").split("set -euo")[1], "drain script acts")
    check("verdict: PASS" in p.stdout, "stdout:\n" + p.stdout)
    # A second run replaces the outputs (a judge on a timer).
    gen_windows(ctx.path("w"), late={5: 3000.0})
    p = ctx.judge("--dir", ctx.path("w"), "--out", ctx.path("out"))
    check(p.returncode == 10 and ctx.read("out", "bad-hosts").startswith("node2\t"), "second run: exit %d" % p.returncode)


@case
def empty_dir_exit_6(ctx):
    os.makedirs(ctx.path("empty"))
    p = ctx.judge("--dir", ctx.path("empty"), "--out", ctx.path("out"))
    check(p.returncode == 6, "exit %d, not 6" % p.returncode)
    lines = p.stderr.strip().splitlines()
    check(len(lines) == 1 and "--dir" in lines[0] and "no railkit.monitor.window/1 window" in lines[0], "stderr: %s" % p.stderr)
    check(not os.path.exists(ctx.path("out", "verdict.json")), "verdict.json written")
    p = ctx.judge("--dir", ctx.path("absent"))
    check(p.returncode == 6 and "not a directory" in p.stderr, "absent dir: exit %d %s" % (p.returncode, p.stderr))
    p = ctx.judge("--dir", ctx.path("empty"), "--late-fraction", "2")
    check(p.returncode == 6, "--late-fraction 2: exit %d" % p.returncode)


@case
def torn_and_other_schema_noted(ctx):
    gen_windows(ctx.path("w"))
    f = ctx.path("w", "railkit-nccl-node1-100.jsonl")
    with open(f, "a") as out:
        out.write('{"schema":"railkit.monitor.window/1","source":"nccl","job":"42')
    other = ctx.path("w", "other.jsonl")
    with open(other, "w") as out:
        out.write('{"schema":"railkit.results/1"}\n')
    p = ctx.judge("--dir", ctx.path("w"), "--out", ctx.path("out"))
    check(p.returncode == 0, "exit %d: %s" % (p.returncode, p.stderr))
    check("%s:4: torn last line" % f in p.stderr, "stderr: %s" % p.stderr)
    check("%s:1: schema \"railkit.results/1\"" % other in p.stderr, "stderr: %s" % p.stderr)
    doc, _ = verdict_checks(ctx)
    check(len(doc["inputs"]["problems"]) == 2 and doc["inputs"]["windows"] == 24, "inputs: %s" % doc["inputs"])


@case
def simulated_said_everywhere_and_acts_on_nothing(ctx):
    gen_windows(ctx.path("w"), late={5: 3000.0}, source="simulated")
    p = ctx.judge("--dir", ctx.path("w"), "--out", ctx.path("out"))
    check(p.returncode == 10, "exit %d" % p.returncode)
    check(p.stdout.startswith("SIMULATED verdict") and "note: simulated:" in p.stdout, "stdout:\n" + p.stdout)
    doc, _ = verdict_checks(ctx)
    check(doc["simulated"] is True and doc["source"] == "simulated", "verdict.json source %s" % doc["source"])
    prom = parse_prom(ctx.read("out", "verdict.prom"))
    check(all('simulated="true"' in labels for (_, labels) in prom), "a series without simulated: %s" % prom)
    check(ctx.read("out", "bad-hosts").startswith("# SIMULATED"), "bad-hosts: %r" % ctx.read("out", "bad-hosts"))
    fake = ctx.path("bin")
    os.makedirs(fake)
    for tool in ("scontrol", "kubectl"):
        with open(os.path.join(fake, tool), "w") as t:
            t.write("#!/bin/sh\necho \"$0 $*\" >> %s\n" % ctx.path("called"))
        os.chmod(os.path.join(fake, tool), 0o755)
    env = dict(os.environ, PATH=fake + ":" + os.environ.get("PATH", "/usr/bin:/bin"))
    for script in ("drain-slurm.sh", "cordon-k8s.sh"):
        text = ctx.read("out", script)
        check("NodeName=node2" in text or "cordon node2" in text, "%s names nothing:\n%s" % (script, text))
        r = subprocess.run(["bash", ctx.path("out", script)], env=env, capture_output=True, text=True)
        check(r.returncode == 0, "%s: exit %d %s" % (script, r.returncode, r.stderr))
    check(not os.path.exists(ctx.path("called")), "a simulated verdict's script ran: " +
          (open(ctx.path("called")).read() if os.path.exists(ctx.path("called")) else ""))


@case
def nothing_judged_exit_11(ctx):
    end = gen_windows(ctx.path("w"), nranks=2, samples=False, nics=False)
    p = ctx.judge("--dir", ctx.path("w"), now=end + 600)
    check(p.returncode == 11, "exit %d, not 11: %s" % (p.returncode, p.stderr))
    check("nothing judged" in p.stderr and "skipped" in p.stdout, "stderr: %s stdout: %s" % (p.stderr, p.stdout))
    p = ctx.judge("--dir", ctx.path("w"), "--report-only", now=end + 600)
    check(p.returncode == 0, "--report-only: exit %d" % p.returncode)


if __name__ == "__main__":
    sys.exit(railkit_main(CASES, __doc__, Ctx, "railkit-judge-cli-"))
