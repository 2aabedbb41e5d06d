#!/usr/bin/env python3
"""`railkit monitor node` for real on a fixture node (node_fixture.py) whose counters a thread advances
at known rates: the exported rates within 5%, a pause storm and a link flap raised, --listen answering
/metrics and stopping on SIGTERM, and the one-line refusals (bad --root, busy port) with exit code 6.
Standard library only.

    node_cli.py --railkit build/bin/railkit [--fake-nvml libmonitor_fake_nvml.so] [--case NAME]...
    node_cli.py --list

Exit 0 pass, 1 fail, 77 when every case was skipped.
"""
import argparse
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "lib"))
sys.path.insert(0, HERE)
from casekit import SKIP, Cases, Skip, check, listing  # noqa: E402
import node_fixture  # noqa: E402

CASES = Cases()
case = CASES.add
SERIES = re.compile(r'^([a-z_]+)\{(.*)\} (\S+)$')


class Ctx:
    def __init__(self, railkit, tmp, fake_nvml=None):
        self.railkit, self.tmp, self.fake_nvml = railkit, tmp, fake_nvml

    def path(self, *parts):
        return os.path.join(self.tmp, *parts)

    def node(self, name):
        return node_fixture.build(self.path(name))

    def run(self, *args, timeout=30):
        p = subprocess.run([self.railkit, "monitor", "node", *args], capture_output=True, text=True,
                           timeout=timeout, stdin=subprocess.DEVNULL)
        return p.returncode, p.stdout, p.stderr


def parse_prom(text):
    """{(metric, frozenset(labels)): value} of an exposition."""
    out = {}
    for line in text.splitlines():
        m = SERIES.match(line)
        if m:
            labels = frozenset(re.findall(r'([a-z_]+)="([^"]*)"', m.group(2)))
            out[(m.group(1), labels)] = float(m.group(3))
    return out


def value(series, metric, **labels):
    key = (metric, frozenset(labels.items()))
    check(key in series, "no series %s%s" % (metric, labels))
    return series[key]


def within(got, want, what, tol=0.05):
    check(abs(got - want) <= tol * want, "%s: %.6g, expected %.6g within %d%%" % (what, got, want, tol * 100))


def sample(ctx, node, advancer_args, count=2, interval="1.0"):
    """Runs the monitor on `node` while counters advance; the last textfile, parsed. The rates are
    those of the last interval: 1 s keeps the writer's lag (a few ms on a loaded machine) and the
    whole-count steps well under 1% at the rates used."""
    prom = ctx.path("railkit-node-%d.prom" % time.monotonic_ns())
    with node_fixture.Advancer(node, **advancer_args):
        rc, so, se = ctx.run("--root", node.root, "--interval-s", interval, "--count", str(count), "--textfile", prom)
    check(rc == 0, "rc %d: %s" % (rc, se))
    check(("sample %d (interval" % count) in so, "no table of sample %d: %r" % (count, so))
    with open(prom) as f:
        return parse_prom(f.read())


@case
def rates_within_5pct(ctx):
    n = ctx.node("rates")
    s = sample(ctx, n, {"sysfs": {n.hw("mlx5_0", "np_cnp_sent"): 2000, n.hw("mlx5_1", "out_of_sequence"): 1000,
                                  n.counter("mlx5_2", "port_xmit_data"): 250e6,
                                  n.counter("mlx5_2", "port_rcv_data"): 125e6},
                        "ethtool": {("ens1np0", "rx_prio3_pause"): 500, ("ens1np0", "tx_prio3_pause_duration"): 20000}})
    rdma = "railkit_node_rdma_rate_per_second"
    within(value(s, rdma, device="mlx5_0", port="1", counter="np_cnp_sent"), 2000, "np_cnp_sent/s")
    within(value(s, rdma, device="mlx5_1", port="1", counter="out_of_sequence"), 1000, "out_of_sequence/s")
    within(value(s, "railkit_node_port_bytes_per_second", device="mlx5_2", port="1", direction="tx"), 1e9, "tx bytes/s")
    within(value(s, "railkit_node_port_bytes_per_second", device="mlx5_2", port="1", direction="rx"), 5e8, "rx bytes/s")
    within(value(s, "railkit_node_pause_duration_ratio", netdev="ens1np0", priority="3", direction="tx"), 0.02,
           "pause ratio")
    check(value(s, rdma, device="mlx5_3", port="1", counter="np_cnp_sent") == 0, "an idle counter has a rate")
    frames = value(s, "railkit_node_pause_frames_total", netdev="ens1np0", priority="3", direction="rx")
    check(frames > 0, "pause frames did not count")
    check(value(s, "railkit_node_signal", signal="retransmit_surge", subject="mlx5_1/1") == 1, "no retransmit surge")
    for sig, subject in (("cnp_surge", "mlx5_0/1"), ("retransmit_surge", "mlx5_0/1"), ("pause_storm", "ens1np0"),
                         ("link_flap", "ens1np0"), ("rail_rate_outlier", "mlx5_0/1")):
        check(value(s, "railkit_node_signal", signal=sig, subject=subject) == 0, "%s raised on %s" % (sig, subject))
    check(value(s, "railkit_node_signal", signal="pcie_downtrained", subject="0000:00:0a.0") == 1, "mlx5_3 not downtrained")
    check(value(s, "railkit_node_signal", signal="pcie_downtrained", subject="0000:00:06.0") == 0, "idle GPU flagged")


@case
def pause_storm(ctx):
    n = ctx.node("storm")
    s = sample(ctx, n, {"ethtool": {("ens3np0", "rx_prio3_pause_duration"): 300000}})
    within(value(s, "railkit_node_pause_duration_ratio", netdev="ens3np0", priority="3", direction="rx"), 0.3,
           "pause ratio")
    check(value(s, "railkit_node_signal", signal="pause_storm", subject="ens3np0") == 1, "no pause storm on ens3np0")
    check(value(s, "railkit_node_signal", signal="pause_storm", subject="ens1np0") == 0, "pause storm on ens1np0")


@case
def link_flap(ctx):
    n = ctx.node("flap")
    # A single carrier change between the first and the second sample.
    with open(n.carrier("ens2np0")) as f:
        check(f.read().strip() == "2", "fixture carrier_changes")
    prom = ctx.path("flap.prom")
    p = subprocess.Popen([ctx.railkit, "monitor", "node", "--root", n.root, "--interval-s", "0.5", "--count", "2",
                          "--textfile", prom], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    first = p.stdout.readline()  # the table of sample 1 starts with "sample 1": taken before the change
    check(first.startswith("sample 1"), "unexpected first line %r" % first)
    node_fixture.write_atomic(n.carrier("ens2np0"), "3\n")
    so, se = p.communicate(timeout=30)
    check(p.returncode == 0, "rc %d: %s" % (p.returncode, se))
    with open(prom) as f:
        s = parse_prom(f.read())
    check(value(s, "railkit_node_signal", signal="link_flap", subject="ens2np0") == 1, "no link_flap on ens2np0")
    check(value(s, "railkit_node_signal", signal="link_flap", subject="ens1np0") == 0, "link_flap on ens1np0")
    check(value(s, "railkit_node_carrier_changes_total", netdev="ens2np0") == 3, "carrier_changes not exported")
    check("RAISED link_flap" in so, "table does not show the flap: %r" % so)


# promtool's lint objects to "counter" in this contract name (monitor/README.md); nothing else may fail.
PROMTOOL_KNOWN = "railkit_node_rdma_counter_total metric name should not include type 'counter'"


@case
def promtool_lint(ctx):
    """The textfile parses and lints clean with Prometheus' own promtool (with the stand-in NVML's GPU
    series too), but for the one contract name."""
    promtool = shutil.which("promtool")
    if not promtool:
        raise Skip("promtool is not installed")
    n = ctx.node("lint")
    prom = ctx.path("lint.prom")
    args = ["--root", n.root, "--interval-s", "0.1", "--count", "2", "--textfile", prom]
    if ctx.fake_nvml:
        args += ["--nvml", ctx.fake_nvml]
    rc, so, se = ctx.run(*args)
    check(rc == 0, "rc %d: %s" % (rc, se))
    with open(prom) as f:
        text = f.read()
    check(not ctx.fake_nvml or "railkit_node_gpu_xid_errors_total" in text, "no GPU series with the fake NVML")
    p = subprocess.run([promtool, "check", "metrics"], input=text, capture_output=True, text=True, timeout=30)
    problems = [line for line in (p.stdout + p.stderr).splitlines() if line.strip() and line.strip() != PROMTOOL_KNOWN]
    check(not problems, "promtool check metrics: %s" % problems)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@case
def listen_and_sigterm(ctx):
    n = ctx.node("listen")
    port = free_port()
    p = subprocess.Popen([ctx.railkit, "monitor", "node", "--root", n.root, "--interval-s", "0.2",
                          "--listen", "127.0.0.1:%d" % port], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        body, ctype, deadline = None, None, time.monotonic() + 10
        while time.monotonic() < deadline and body is None:
            try:
                with urllib.request.urlopen("http://127.0.0.1:%d/metrics" % port, timeout=2) as r:
                    body, ctype = r.read().decode(), r.headers.get("Content-Type")
            except (urllib.error.URLError, ConnectionError):
                time.sleep(0.05)
        check(body is not None, "no answer on port %d" % port)
        check(ctype.startswith("text/plain; version=0.0.4"), "Content-Type %r" % ctype)
        s = parse_prom(body)
        check(value(s, "railkit_node_rdma_counter_total", device="mlx5_0", port="1", counter="np_cnp_sent") == 0,
              "counter missing from /metrics")
        check("# TYPE railkit_node_signal gauge" in body, "no TYPE line")
        time.sleep(0.5)  # a few samples later: rates served too
        with urllib.request.urlopen("http://127.0.0.1:%d/metrics" % port, timeout=2) as r:
            check("railkit_node_rdma_rate_per_second" in r.read().decode(), "no rates after several samples")
    finally:
        p.send_signal(signal.SIGTERM)
        so, se = p.communicate(timeout=10)
    check(p.returncode == 0, "SIGTERM: rc %d, expected a clean stop: %s" % (p.returncode, se))
    check(("serving http://127.0.0.1:%d/metrics" % port) in so, "no serving line: %r" % so)


@case
def sigint_stops_the_loop(ctx):
    """--count 0 with only a textfile: SIGINT ends it cleanly, the textfile whole."""
    n = ctx.node("sigint")
    prom = ctx.path("sigint.prom")
    p = subprocess.Popen([ctx.railkit, "monitor", "node", "--root", n.root, "--interval-s", "0.1", "--textfile", prom],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    first = p.stdout.readline()
    check(first.startswith("sample 1"), "unexpected first line %r" % first)
    time.sleep(0.5)  # samples 2..6 are due meanwhile
    p.send_signal(signal.SIGINT)
    so, se = p.communicate(timeout=10)
    check(p.returncode == 0, "SIGINT: rc %d, expected a clean stop: %s" % (p.returncode, se))
    check("sample 3" in so, "fewer samples than expected before SIGINT: %r" % so)
    with open(prom) as f:
        text = f.read()
    check(text.endswith("\n") and "railkit_node_sample_timestamp_seconds " in text, "textfile not whole: %r" % text[-200:])


@case
def bad_root(ctx):
    rc, so, se = ctx.run("--root", ctx.path("no-such-root"), "--count", "1")
    check(rc == 6, "rc %d, expected 6" % rc)
    lines = se.strip().splitlines()
    check(len(lines) == 1 and "--root" in lines[0], "expected one line naming --root: %r" % se)


@case
def busy_port(ctx):
    n = ctx.node("busy")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen(1)
        port = s.getsockname()[1]
        rc, so, se = ctx.run("--root", n.root, "--count", "1", "--listen", "127.0.0.1:%d" % port)
    check(rc == 6, "rc %d, expected 6" % rc)
    lines = se.strip().splitlines()
    check(len(lines) == 1 and "--listen" in lines[0] and "in use" in lines[0], "expected one line: %r" % se)
    rc, so, se = ctx.run("--root", n.root, "--count", "1", "--listen", "9100")
    check(rc == 6 and "HOST:PORT" in se, "malformed --listen: rc %d %r" % (rc, se))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--railkit")
    ap.add_argument("--fake-nvml", help="the stand-in NVML (tests/monitor/fake_nvml_node.c) for the GPU series")
    ap.add_argument("--case", action="append")
    ap.add_argument("--list", action="store_true")
    a = ap.parse_args()
    if a.list:
        return listing(CASES)
    if not a.railkit:
        ap.error("--railkit is required")
    rcs = []
    with tempfile.TemporaryDirectory(prefix="railkit-monitor-node-") as tmp:
        ctx = Ctx(os.path.abspath(a.railkit), tmp, a.fake_nvml)
        for name in a.case or list(CASES):
            rcs.append(CASES.run(name, ctx, also_failures=(subprocess.TimeoutExpired, KeyError, ValueError)))
    if any(rc == 1 for rc in rcs):
        return 1
    return SKIP if all(rc == SKIP for rc in rcs) else 0


if __name__ == "__main__":
    sys.exit(main())
