#!/usr/bin/env python3
"""Integration tests of `railkit accept`, run for real: railkit-bench on 8 local ranks under
mpirun, split into 4 emulated nodes of 2 ranks (`<hostname>:0` .. `<hostname>:3`). ctest label `mpi`.
Standard library only.

    accept_cases.py --railkit build/bin/railkit [--bench build/bin/railkit-bench] [--fixtures DIR] --case NAME
    accept_cases.py --list

`--fixtures` is the generated sysfs fixture directory of the topology tests (dgx-h100 lints clean,
dgx-acs has an error finding). Exit 0 pass, 1 fail, 77 skipped.
"""
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import xml.etree.ElementTree as ET

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "tests", "lib"))
from casekit import Cases, Failure, Skip, check, railkit_main  # noqa: E402

CASES = Cases()
case = CASES.add

HOST = socket.gethostname()
NODES = [f"{HOST}:{i}" for i in range(4)]
# The done-when commands use accept's defaults for emulated nodes (4K and 16K, 10 iterations);
# the slowed rank sleeps 3 ms before each timed operation.
SLOW = "--inject-delay-us 5:3000"


class Ctx:
    def __init__(self, railkit, bench, fixtures, tmp):
        self.railkit = railkit
        self.bench = bench
        self.fixtures = fixtures
        self.tmp = tmp

    def path(self, *parts):
        return os.path.join(self.tmp, *parts)

    def accept(self, out, *args, bench_args=None, timeout=240):
        argv = [self.railkit, "accept", "--launcher", "mpirun", "--np", "8", "--ranks-per-node", "2",
                "--out", out, *args]
        if self.bench:
            argv += ["--bench", self.bench]
        if bench_args is not None:
            argv += ["--bench-args", bench_args]
        p = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL)
        return p.returncode, p.stdout, p.stderr

    def suite(self, name, doc):
        p = self.path(name)
        with open(p, "w") as f:
            json.dump({"schema": "railkit.accept-suite/1", **doc}, f)
        return p


def load(path):
    with open(path) as f:
        return json.load(f)


def failed_nodes(doc):
    return sorted(n["name"] for n in doc["nodes"] if n["verdict"] == "fail")


def junit_failures(path):
    """classname -> names of failed testcases."""
    out = {}
    for tc in ET.parse(path).getroot().iter("testcase"):
        if tc.find("failure") is not None:
            out.setdefault(tc.get("classname"), []).append(tc.get("name"))
    return out


def good_hosts(out):
    with open(os.path.join(out, "good-hosts")) as f:
        return [l.strip() for l in f if l.strip()]


@case
def clean_run_passes(ctx):
    out, junit = ctx.path("clean"), ctx.path("clean.xml")
    rc, so, se = ctx.accept(out, "--junit", junit)
    check(rc == 0, f"rc {rc}\n{so}\n{se}")
    doc = load(os.path.join(out, "accept.json"))
    check(doc["schema"] == "railkit.accept/1" and doc["verdict"] == "pass", f"verdict {doc['verdict']}")
    check([n["name"] for n in doc["nodes"]] == NODES, f"nodes {[n['name'] for n in doc['nodes']]}")
    check(failed_nodes(doc) == [], f"failed {failed_nodes(doc)}")
    checks = {c["check"] for c in doc["nodes"][0]["checks"]}
    for want in ("topo.lint", "topo.homogeneity", "node.all_reduce", "node.all_gather", "pair.all_reduce"):
        check(want in checks, f"no {want} check in {sorted(checks)}")
    # This machine's RDMA NICs, if any, are measured (rdma.loopback.<nic>); without NICs or perftest
    # one rdma.loopback check is skipped with the reason (tests/fabric/rdma_cases.py tests the stage).
    rdma = [c for c in doc["nodes"][0]["checks"] if c["check"].startswith("rdma.loopback")]
    check(rdma and all(c["check"] != "rdma.loopback" or (c["verdict"] == "skipped" and (
        c["evidence"] == "no RDMA device" or "perftest" in c["evidence"])) for c in rdma), f"rdma checks {rdma}")
    check(len(doc["pairs"]) == 6 and sorted({p["round"] for p in doc["pairs"]}) == [0, 1, 2],
          f"pairs {doc['pairs']}")
    check(junit_failures(junit) == {}, f"junit failures {junit_failures(junit)}")
    check(good_hosts(out) == NODES, f"good-hosts {good_hosts(out)}")
    prom = open(os.path.join(out, "accept.prom")).read()
    check(f'railkit_accept_check_pass{{node="{NODES[0]}",check="node.all_reduce"}} 1' in prom, prom[:400])
    check("# TYPE railkit_accept_busbw_gbps gauge" in prom, "no busbw gauge")
    check("3 rounds" in se, f"no pair estimate in stderr:\n{se}")
    head = so.splitlines()[0].split("|") if so else []
    check([c.strip() for c in head] == ["node", "check", "measured", "expected", "verdict", "rule"],
          f"table header {head}")
    check(any(l.startswith(NODES[2]) and "node.all_reduce" in l and "pass" in l for l in so.splitlines()),
          f"no row of {NODES[2]} node.all_reduce in the table:\n{so}")


@case
def slow_rank_fails_its_node(ctx):
    out, junit = ctx.path("slow"), ctx.path("slow.xml")
    rc, so, se = ctx.accept(out, "--junit", junit, bench_args=SLOW)
    check(rc == 10, f"rc {rc}\n{so}\n{se}")
    doc = load(os.path.join(out, "accept.json"))
    check(failed_nodes(doc) == [NODES[2]], f"failed nodes {failed_nodes(doc)}, want [{NODES[2]}]\n{so}")
    check(list(junit_failures(junit)) == [NODES[2]], f"junit failures {junit_failures(junit)}")
    slow = [n for n in doc["nodes"] if n["name"] == NODES[2]][0]
    failed = {c["check"]: c for c in slow["checks"] if c["verdict"] == "fail"}
    check("node.all_reduce" in failed and failed["node.all_reduce"]["rule"] == "peers", f"failed checks {failed}")
    check("pair.all_reduce" in failed and "guilty" in failed["pair.all_reduce"]["evidence"], f"failed checks {failed}")
    guilty = [g["node"] for g in doc["isolation"].get("guilty_nodes", [])]
    check(guilty == [NODES[2]], f"isolation {doc['isolation']}")
    check(good_hosts(out) == [NODES[0], NODES[1], NODES[3]], f"good-hosts {good_hosts(out)}")


@case
def broken_fixture_fails_lint(ctx):
    if not ctx.fixtures or not os.path.isdir(os.path.join(ctx.fixtures, "dgx-acs")):
        raise Skip("no generated sysfs fixtures (pass --fixtures; built by the topology_fixtures target)")
    good, bad = os.path.join(ctx.fixtures, "dgx-h100"), os.path.join(ctx.fixtures, "dgx-acs")
    suite = ctx.suite("lint.json", {"skip": ["node", "rail", "pair", "all", "isolate"],
                                    "topo_roots": {n: (bad if i == 1 else good) for i, n in enumerate(NODES)}})
    out, junit = ctx.path("lint"), ctx.path("lint.xml")
    rc, so, se = ctx.accept(out, "--suite", suite, "--junit", junit)
    check(rc == 10, f"rc {rc}\n{so}\n{se}")
    doc = load(os.path.join(out, "accept.json"))
    check(failed_nodes(doc) == [NODES[1]], f"failed {failed_nodes(doc)}")
    lint = [c for c in doc["nodes"][1]["checks"] if c["check"] == "topo.lint"][0]
    check(lint["verdict"] == "fail" and "pcie.acs_enabled" in lint["evidence"], f"lint check {lint}")
    # ACS is a setting, not part of the topology fingerprint: the broken node is still homogeneous.
    homog = [c for c in doc["nodes"][1]["checks"] if c["check"] == "topo.homogeneity"][0]
    check(homog["verdict"] == "pass", f"homogeneity {homog}")
    check(sorted(junit_failures(junit)) == [NODES[1]], f"junit {junit_failures(junit)}")
    stages = {s["stage"]: s["status"] for s in doc["stages"]}
    check(stages["pair"] == "skipped" and stages["topo"] == "ran", f"stages {stages}")
    check(good_hosts(out) == [NODES[0], NODES[2], NODES[3]], f"good-hosts {good_hosts(out)}")


@case
def bisection_names_the_slow_node(ctx):
    # No pair evidence (pair stage skipped) and a whole-set threshold nobody meets: bisection runs
    # both halves at once (--split nodes:...), then goes into the slow half until one node is left.
    suite = ctx.suite("bisect.json", {"skip": ["topo", "rdma", "node", "rail", "pair"],
                                      "thresholds": [{"stage": "all", "coll": "all_reduce", "bytes": "16K",
                                                      "busbw_GBps": 1000}]})
    out = ctx.path("bisect")
    rc, so, se = ctx.accept(out, "--suite", suite, bench_args=SLOW)
    check(rc == 10, f"rc {rc}\n{so}\n{se}")
    doc = load(os.path.join(out, "accept.json"))
    iso = doc["isolation"]
    check(iso["method"] == "bisection" and [g["node"] for g in iso["guilty_nodes"]] == [NODES[2]], f"isolation {iso}")
    check(len(iso["steps"]) == 2, f"steps {iso['steps']}")
    check(failed_nodes(doc) == [NODES[2]], f"failed {failed_nodes(doc)}")
    whole = [c for e in doc["cluster"] if e["name"] == "all" for c in e["checks"]]
    check(any(c["rule"] == "suite" and c["verdict"] == "fail" for c in whole), f"whole set {whole}")


@case
def profile_expectations_judge_the_whole_set(ctx):
    # The example profile with its expectations replaced: one that any run meets passes with rule
    # "profile"; one nobody meets fails the whole set and bisection (no pair evidence) runs.
    prof = load(os.path.join(ROOT, "profiles", "examples", "ompi-coll-4ranks.json"))
    suite = ctx.suite("whole.json", {"skip": ["topo", "rdma", "node", "rail", "pair"]})
    for name, busbw, want_rc in (("easy", 1e-6, 0), ("hard", 1e6, 10)):
        prof["expectations"] = [{"coll": "all_reduce", "bytes": 16384, "busbw_GBps": busbw, "tolerance": 0.1}]
        path = ctx.path(name + ".profile.json")
        with open(path, "w") as f:
            json.dump(prof, f)
        out = ctx.path(name)
        rc, so, se = ctx.accept(out, "--suite", suite, "--profile", path)
        check(rc == want_rc, f"{name}: rc {rc}\n{so}\n{se}")
        doc = load(os.path.join(out, "accept.json"))
        whole = {c["check"]: c for e in doc["cluster"] if e["name"] == "all" for c in e["checks"]}
        c = whole.get("all.all_reduce@16 KiB")
        check(c and c["rule"] == "profile" and c["verdict"] == ("pass" if want_rc == 0 else "fail"), f"{name}: {whole}")
        check(doc["isolation"].get("method") == ("none" if want_rc == 0 else "bisection"), f"{name}: {doc['isolation']}")


@case
def usage_errors(ctx):
    for args, bench_args, what in (([], "--split rail", "--split"),
                                   ([], "--ranks-per-node 3", "--ranks-per-node"),
                                   (["--suite", ctx.suite("bad.json", {"skip": ["nope"]})], None, "unknown stage"),
                                   (["--suite", "/nonexistent.json"], None, "--suite")):
        rc, so, se = ctx.accept(ctx.path("usage"), *args, bench_args=bench_args, timeout=60)
        check(rc == 6 and what in se and len(se.strip().splitlines()) == 1, f"{args} {bench_args}: rc {rc}\n{se}")


class Netns:
    """4 network namespaces joined by veth pairs through a bridge in a fifth one (the host's own
    network is never touched); the link between namespaces 1 and 2 is slowed with tc (netem on
    the traffic between their addresses only: an htb rate). Everything is removed on exit."""

    def __init__(self, tag):
        self.tag = tag
        self.nodes = [f"rka{tag}n{i}" for i in range(4)]
        self.bridge = f"rka{tag}br"
        self.subnet = f"10.231.{tag % 250}"
        self.made = []

    def ip_of(self, i):
        return f"{self.subnet}.{i + 1}"

    @staticmethod
    def sh(*argv):
        p = subprocess.run(list(argv), capture_output=True, text=True, timeout=30)
        if p.returncode != 0:
            raise RuntimeError(f"{' '.join(argv)}: {p.stderr.strip()}")

    def up(self, rate):
        for ns in [self.bridge, *self.nodes]:
            self.sh("ip", "netns", "add", ns)
            self.made.append(ns)
        self.sh("ip", "-n", self.bridge, "link", "add", "br0", "type", "bridge")
        self.sh("ip", "-n", self.bridge, "link", "set", "br0", "up")
        for i, ns in enumerate(self.nodes):
            self.sh("ip", "-n", self.bridge, "link", "add", f"v{i}", "type", "veth", "peer", "name", "eth0", "netns", ns)
            self.sh("ip", "-n", self.bridge, "link", "set", f"v{i}", "master", "br0", "up")
            self.sh("ip", "-n", ns, "addr", "add", f"{self.ip_of(i)}/24", "dev", "eth0")
            self.sh("ip", "-n", ns, "link", "set", "eth0", "up")
            self.sh("ip", "-n", ns, "link", "set", "lo", "up")
        # The slow link: 1 <-> 2 only (both directions): an htb class at `rate` for the traffic to
        # the other one's address (u32 filter), everything else unshaped. (htb rather than netem:
        # kernels without sch_netem/sch_prio have it.)
        for a, b in ((1, 2), (2, 1)):
            ns = self.nodes[a]
            tc = ("tc", "-n", ns)
            # default 0: unclassified traffic bypasses htb, unshaped
            self.sh(*tc, "qdisc", "add", "dev", "eth0", "root", "handle", "1:", "htb", "default", "0")
            self.sh(*tc, "class", "add", "dev", "eth0", "parent", "1:", "classid", "1:20", "htb", "rate", rate)
            self.sh(*tc, "filter", "add", "dev", "eth0", "parent", "1:", "protocol", "ip", "prio", "1", "u32", "match",
                    "ip", "dst", f"{self.ip_of(b)}/32", "flowid", "1:20")

    def down(self):
        for ns in reversed(self.made):
            subprocess.run(["ip", "netns", "del", ns], capture_output=True, timeout=30)
        self.made = []


@case
def netns_pair_names_the_slow_link(ctx):
    if os.geteuid() != 0:
        raise Skip("network namespaces need root")
    for tool in ("ip", "tc", "mpirun"):
        if not shutil.which(tool):
            raise Skip(f"no {tool} here")
    net = Netns(os.getpid() % 100000)
    old_term = signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))  # ctest's timeout still cleans up
    try:
        try:
            net.up(rate="20mbit")
        except (RuntimeError, subprocess.TimeoutExpired) as e:
            raise Skip(f"cannot make the namespaces here: {e}")
        hostfile = ctx.path("hosts")
        with open(hostfile, "w") as f:
            f.write("".join(f"{net.ip_of(i)} slots=1\n" for i in range(4)))
        # mpirun's rsh agent: run the daemon's command line in the namespace of the host it names.
        agent = ctx.path("netns-agent.sh")
        with open(agent, "w") as f:
            f.write("#!/bin/sh\nwhile [ \"${1#-}\" != \"$1\" ]; do shift; done\nhost=$1; shift\ncase $host in\n")
            for i, ns in enumerate(net.nodes):
                os.makedirs(ctx.path(f"tmp{i}"))
                f.write(f"  {net.ip_of(i)}) ns={ns}; tmp={ctx.path(f'tmp{i}')} ;;\n")
            # Each "node" its own TMPDIR: Open MPI's session directories are per host, and these share /tmp.
            f.write("  *) echo \"unknown host $host\" >&2; exit 1 ;;\nesac\n"
                    "exec ip netns exec $ns env TMPDIR=$tmp /bin/sh -c \"$*\"\n")
        os.chmod(agent, 0o755)
        env = dict(os.environ, OMPI_MCA_plm_rsh_agent=agent, OMPI_MCA_pml="ob1", OMPI_MCA_btl="tcp,self",
                   OMPI_MCA_mpi_yield_when_idle="1", TMPDIR=ctx.path("tmp0"),
                   # Several Open MPI daemons on one machine: no shared hwloc topology segment
                   # (orted crashes writing it concurrently), no shared-memory PMIx store.
                   OMPI_MCA_rtc="^hwloc", PMIX_MCA_gds="hash",
                   OMPI_MCA_btl_tcp_if_include=f"{net.subnet}.0/24", OMPI_MCA_oob_tcp_if_include=f"{net.subnet}.0/24")
        # 4 ranks share this machine's CPUs: clean pairs spread about 2x, the shaped link is ~70x
        # slower; half the pairs' median separates them without false suspects.
        suite = ctx.suite("netns.json", {"skip": ["topo", "rdma", "node", "rail", "all"], "peer_fraction": 0.5})
        out = ctx.path("netns")
        argv = ["ip", "netns", "exec", net.nodes[0], ctx.railkit, "accept", "--launcher", "mpirun", "--hostfile",
                hostfile, "--ppn", "1", "--suite", suite, "--out", out, "--timeout-s", "60",
                "--bench-args", "-b 4K -e 16K -f 4 -n 10 -w 3"]
        if ctx.bench:
            argv += ["--bench", ctx.bench]
        p = subprocess.run(argv, capture_output=True, text=True, timeout=200, env=env, stdin=subprocess.DEVNULL)
        check(p.returncode == 10, f"rc {p.returncode}\n{p.stdout}\n{p.stderr[-3000:]}")
        doc = load(os.path.join(out, "accept.json"))
        links = doc["isolation"].get("guilty_links", [])
        slow = sorted([net.ip_of(1), net.ip_of(2)])
        check([sorted(l) for l in links] == [slow], f"guilty links {links}, want {slow}; pairs {doc['pairs']}")
        check(doc["isolation"].get("guilty_nodes") == [], f"guilty nodes {doc['isolation']}")
        check(failed_nodes(doc) == slow, f"failed nodes {failed_nodes(doc)}")
    finally:
        net.down()
        signal.signal(signal.SIGTERM, old_term)


if __name__ == "__main__":
    sys.exit(railkit_main(CASES, __doc__, lambda railkit, bench, tmp, fixtures: Ctx(railkit, bench, fixtures, tmp),
                          "railkit-accept-",
                          extra=(("--fixtures", "generated sysfs fixtures (tests/topology/fixtures in the build tree)"),)))
