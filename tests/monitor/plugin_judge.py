#!/usr/bin/env python3
"""The two halves of in-job monitoring together, for real: libnccl-profiler-railkit.so driven as
NCCL 2.28 drives it (monitor_plugin_drive: 8 ranks as threads, one rank starting every collective
late, one slow NIC, a communicator that stops) writes its windows, and `railkit monitor judge` reads
them and must name the late rank, the slow NIC and the hung communicator, with the evidence, in
verdict.json, verdict.prom and bad-hosts. A run without a fault must flag nothing. Standard library only.

    plugin_judge.py --railkit build/bin/railkit --drive build/bin/monitor_plugin_drive \
        --so build/lib/libnccl-profiler-railkit.so --case NAME
    plugin_judge.py --list
"""
import json
import os
import socket
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "lib"))
from casekit import Cases, check, railkit_main  # noqa: E402

CASES = Cases()
case = CASES.add


class Ctx:
    def __init__(self, railkit, bench, tmp, drive=None, so=None):
        self.railkit, self.tmp, self.drive_bin, self.so = railkit, tmp, drive, so

    def path(self, *parts):
        return os.path.join(self.tmp, *parts)

    def drive(self, out, *args):
        """Runs the driver into `out`; returns its stderr (the plugin's WARN lines)."""
        argv = [self.drive_bin, "--so", self.so, "--out", out, "--window-s", "0.1", *args]
        p = subprocess.run(argv, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
        check(p.returncode == 0, "%s: exit %d\n%s%s" % (" ".join(argv), p.returncode, p.stdout, p.stderr))
        files = [f for f in os.listdir(out) if f.endswith(".jsonl")]
        check(len(files) == 1, "one window log per process, found %s" % files)
        return p.stderr

    def judge(self, *args):
        argv = [self.railkit, "monitor", "judge", *args]
        return subprocess.run(argv, capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)


def checks_by_name(doc):
    """[(check, subject text, verdict)] of verdict.json, whatever the subject's keys."""
    out = []
    for c in doc["checks"]:
        subject = json.dumps({k: v for k, v in c.items() if k in ("rank", "host", "nic", "comm", "gpu")},
                             sort_keys=True)
        out.append((c["check"], subject, c["verdict"], c))
    return out


@case
def late_rank_slow_nic_and_hang_named_from_plugin_windows(ctx):
    out = ctx.path("windows")
    os.makedirs(out)
    # 1 ms per work request: a VM oversleeps each by 100-300 us, unevenly across threads (at 100 us
    # healthy NICs differed by 1.6x); the slow NIC moves a third of the bytes in the same time.
    ctx.drive(out, "--delay-rank", "5", "--delay-us", "3000", "--slow-nic", "2", "--wr-us", "1000", "--iters", "16",
              "--tail-s", "1.2")
    p = ctx.judge("--dir", out, "--out", ctx.path("verdict"), "--hang-min-s", "0.5")
    check(p.returncode == 10, "judge exit %d, not 10 (something flagged)\n%s%s" % (p.returncode, p.stdout, p.stderr))
    doc = json.load(open(ctx.path("verdict", "verdict.json")))
    check(doc["schema"] == "railkit.monitor.verdict/1", "schema %s" % doc["schema"])
    failed = [(name, subj, c) for name, subj, verdict, c in checks_by_name(doc) if verdict == "fail"]
    names = [(name, subj) for name, subj, _ in failed]
    check(any(n == "late-start" and '"rank": 5' in s for n, s in names), "late-start of rank 5 not failed: %s" % names)
    check(not any(n == "late-start" and '"rank": 5' not in s for n, s in names),
          "another rank named late: %s" % names)
    check(any(n == "nic-lag" and '"nic": "dev2"' in s for n, s in names), "nic-lag of dev2 not failed: %s" % names)
    check(not any(n == "nic-lag" and '"nic": "dev2"' not in s for n, s in names), "another NIC named: %s" % names)
    check(sum(1 for n, _ in names if n == "hang") == 1, "one hung communicator expected: %s" % names)
    host = socket.gethostname()
    bad = open(ctx.path("verdict", "bad-hosts")).read()
    check(bad.startswith(host + "\t") and "late-start" in bad, "bad-hosts: %r" % bad)
    prom = open(ctx.path("verdict", "verdict.prom")).read()
    check('railkit_monitor_straggler{' in prom and 'rank="5"' in prom, "verdict.prom: %s" % prom)


@case
def no_fault_flags_nothing(ctx):
    out = ctx.path("windows")
    os.makedirs(out)
    ctx.drive(out, "--no-hang", "--wr-us", "1000", "--iters", "16")
    p = ctx.judge("--dir", out, "--out", ctx.path("verdict"), "--hang-min-s", "0.5")
    doc = json.load(open(ctx.path("verdict", "verdict.json")))
    failed = [(n, s) for n, s, verdict, _ in checks_by_name(doc) if verdict == "fail"]
    check(p.returncode == 0 and not failed, "judge exit %d, failed %s\n%s%s" % (p.returncode, failed, p.stdout, p.stderr))
    judged = [n for n, _, verdict, _ in checks_by_name(doc) if verdict == "pass"]
    check("late-start" in judged and "nic-lag" in judged, "late-start and nic-lag must be judged: %s" % judged)


if __name__ == "__main__":
    sys.exit(railkit_main(CASES, __doc__, Ctx, "railkit-plugin-judge-",
                          extra=(("--drive", "monitor_plugin_drive"), ("--so", "libnccl-profiler-railkit.so"))))
