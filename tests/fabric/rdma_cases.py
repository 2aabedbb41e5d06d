#!/usr/bin/env python3
"""Tests of `railkit rdma-loopback` and of accept's rdma stage, run for real with a fake
ib_write_bw (tests/fabric/fake_ib_write_bw.py: a TCP server and client per NIC, 1 s each, 120 Gb/s
on mlx5_3, 195 on mlx5_1, 390 elsewhere) and a fake numactl on the generated sysfs fixtures
(dgx-h100: 12 ACTIVE RoCE ports, 8 of them GPU rails; pcie-2socket: 2 NICs at 100 Gb/s).
The accept cases start `railkit rdma-loopback` through mpirun (ctest label `mpi`). Standard library only.

    rdma_cases.py --railkit build/bin/railkit [--bench build/bin/railkit-bench] --fixtures DIR --case NAME
    rdma_cases.py --list

Exit 0 pass, 1 fail, 77 skipped.
"""
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import xml.etree.ElementTree as ET

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "tests", "lib"))
from casekit import Cases, Skip, check, railkit_main  # noqa: E402
from netns import Netns, NetnsError, unavailable  # noqa: E402

CASES = Cases()
case = CASES.add

FAKE = os.path.join(HERE, "fake_ib_write_bw.py")
NUMACTL = os.path.join(HERE, "fake_numactl.sh")
HOST = socket.gethostname()
NODES = [f"{HOST}:{i}" for i in range(4)]


class Ctx:
    def __init__(self, railkit, bench, fixtures, tmp):
        self.railkit, self.bench, self.fixtures, self.tmp = railkit, bench, fixtures, tmp

    def path(self, *parts):
        return os.path.join(self.tmp, *parts)

    def fixture(self, name):
        p = os.path.join(self.fixtures or "", name)
        if not self.fixtures or not os.path.isdir(p):
            raise Skip("no generated sysfs fixtures (pass --fixtures; built by the topology_fixtures target)")
        return p

    def loopback(self, *args, env=None, timeout=120):
        p = subprocess.run([self.railkit, "rdma-loopback", *args], capture_output=True, text=True, timeout=timeout,
                           env=env, stdin=subprocess.DEVNULL)
        return p.returncode, p.stdout, p.stderr

    def accept(self, out, suite, env=None, timeout=240):
        argv = [self.railkit, "accept", "--launcher", "mpirun", "--np", "8", "--ranks-per-node", "2",
                "--out", out, "--suite", suite, "--junit", out + ".xml"]
        if self.bench:
            argv += ["--bench", self.bench]
        e = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
                 OMPI_MCA_rmaps_base_oversubscribe="1", **(env or {}))
        p = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, env=e, stdin=subprocess.DEVNULL)
        return p.returncode, p.stdout, p.stderr

    def suite(self, name, doc):
        p = self.path(name)
        with open(p, "w") as f:
            json.dump({"schema": "railkit.accept-suite/1", **doc}, f)
        return p


def load(path):
    with open(path) as f:
        return json.load(f)


def by_name(doc):
    return {n["name"]: n for n in doc["nics"]}


@case
def loopback_all_nics_at_once(ctx):
    root = ctx.fixture("dgx-h100")
    out = ctx.path("dgx.json")
    t0 = time.monotonic()
    rc, so, se = ctx.loopback("--root", root, "--out", out, "--ib-write-bw", FAKE, "--numactl", NUMACTL,
                              "--duration-s", "2", "--size", "1M")
    elapsed = time.monotonic() - t0
    check(rc == 0, f"rc {rc}\n{so}\n{se}")
    doc = load(out)
    check(doc["schema"] == "railkit.rdma-loopback/1" and doc["host"] == "dgx-h100-01", f"doc {doc}")
    nics = by_name(doc)
    check(len(nics) == 12 and all(n["status"] == "ok" for n in nics.values()),
          f"nics {[(n['name'], n['status'], n['error']) for n in doc['nics']]}")
    # Every client holds its connection 1 s: 12 NICs one after the other would take at least 12 s.
    check(elapsed < 10, f"took {elapsed:.1f} s: the NICs did not run at once")
    slow = nics["mlx5_3"]
    check(slow["measured_Gbps"] == 120.0 and slow["line_rate_Gbps"] == 400.0 and abs(slow["ratio"] - 0.3) < 1e-9,
          f"mlx5_3 {slow}")
    check(nics["mlx5_1"]["measured_Gbps"] == 195.0 and nics["mlx5_1"]["line_rate_Gbps"] == 200.0, f"{nics['mlx5_1']}")
    n0 = nics["mlx5_0"]
    check(n0["numa"] == 0 and n0["gpu"] == 0 and n0["gid_index"] == 3 and n0["port"] == 1, f"mlx5_0 {n0}")
    cmd = n0["command"].split()
    check(cmd[:3] == [NUMACTL, "--cpunodebind=0", "--membind=0"] and cmd[3] == FAKE, f"mlx5_0 command {cmd}")
    for want in (["-d", "mlx5_0"], ["-x", "3"], ["-D", "2"], ["-s", "1048576"], ["-i", "1"]):
        check(any(cmd[k:k + 2] == want for k in range(len(cmd))), f"no {want} in {cmd}")
    check("--use_cuda=0" in cmd and "--report_gbits" in cmd and "-F" in cmd and cmd[-1] == "127.0.0.1", f"{cmd}")
    check("--use_cuda=1" in slow["command"].split(), f"mlx5_3 is GPU1's rail: {slow['command']}")
    check("--cpunodebind=1" in nics["mlx5_6"]["command"].split(), f"mlx5_6 {nics['mlx5_6']['command']}")
    check(not any(a.startswith("--use_cuda") for a in nics["mlx5_1"]["command"].split()) and nics["mlx5_1"]["gpu"] is None,
          f"mlx5_1 serves no GPU: {nics['mlx5_1']}")
    ports = {n["command"].split()[n["command"].split().index("-p") + 1] for n in doc["nics"]}
    check(len(ports) == 12, f"TCP ports {ports}")
    check("mlx5_3" in so and "0.30" in so, f"table:\n{so}")


@case
def loopback_no_cuda_and_env(ctx):
    root = ctx.fixture("pcie-2socket")
    env = dict(os.environ, RAILKIT_IB_WRITE_BW=FAKE)
    rc, so, se = ctx.loopback("--root", root, "--no-cuda", "--duration-s", "1", "--numactl", NUMACTL, env=env)
    check(rc == 0, f"rc {rc}\n{so}\n{se}")
    doc = json.loads(so)  # no --out: the document on stdout
    check([n["status"] for n in doc["nics"]] == ["ok", "ok"] and doc["cuda"] is False, f"{doc['nics']}")
    check(all("--use_cuda" not in n["command"] and n["gpu"] is None for n in doc["nics"]), f"{doc['nics']}")
    check(doc["ib_write_bw"] == FAKE, f"ib_write_bw {doc['ib_write_bw']}")


@case
def loopback_unavailable_and_usage(ctx):
    root = ctx.fixture("pcie-2socket")
    env = {k: v for k, v in os.environ.items() if k != "RAILKIT_IB_WRITE_BW"}
    env["PATH"] = ctx.path("empty-bin")
    os.makedirs(env["PATH"])
    out = ctx.path("none.json")
    rc, so, se = ctx.loopback("--root", root, "--out", out, env=env)
    check(rc == 5 and "install perftest" in se and len(se.strip().splitlines()) == 1, f"rc {rc}\n{se}")
    doc = load(out)
    check(doc["status"] == "unavailable" and "perftest" in doc["reason"], f"{doc}")
    bare = ctx.path("bare")
    os.makedirs(os.path.join(bare, "sys"))
    rc, so, se = ctx.loopback("--root", bare, "--ib-write-bw", FAKE)
    check(rc == 5 and "no RDMA device" in se, f"rc {rc}\n{se}")
    for args in (["--duration-s", "0"], ["--numactl", ctx.path("nope")], ["--size", "lots"]):
        rc, so, se = ctx.loopback("--root", root, "--ib-write-bw", FAKE, *args)
        check(rc == 6, f"{args}: rc {rc}\n{se}")


@case
def pair_usage_and_unavailable(ctx):
    root = ctx.fixture("pcie-2socket")

    def pair(*args, env=None):
        p = subprocess.run([ctx.railkit, "rdma-pair", *args], capture_output=True, text=True, timeout=60, env=env,
                           stdin=subprocess.DEVNULL)
        return p.returncode, p.stdout, p.stderr

    base = ["--root", root, "--ib-write-bw", FAKE, "--nic", "mlx5_0"]
    for args, want in ((["--role", "client", *base], "--peer"), (["--role", "server", "--peer", "10.0.0.1", *base], "--peer"),
                       (["--role", "server", "--root", root, "--ib-write-bw", FAKE, "--nic", "mlx5_9"], "mlx5_9"),
                       (["--role", "sideways", *base], "--role"), (["--role", "server", "--root", root], "--nic"),
                       (["--role", "server", "--wait-s", "0", *base], "--wait-s"),
                       # issue 32: a peer starting with '-' would reach ib_write_bw as an option
                       (["--role", "client", "--peer=-h", *base], "--peer -h: starts with '-'"),
                       (["--role", "client", "--peer", "10.0.0.1\n-x", *base], "--peer 10.0.0.1\\x0a-x")):
        rc, so, se = pair(*args)
        check(rc == 6 and want in se and len(se.strip().splitlines()) == 1, f"{args}: rc {rc}\n{se}")
    env = {k: v for k, v in os.environ.items() if k != "RAILKIT_IB_WRITE_BW"}
    env["PATH"] = ctx.path("empty-bin")
    os.makedirs(env["PATH"], exist_ok=True)
    rc, so, se = pair("--role", "server", "--root", root, "--nic", "mlx5_0", env=env)
    check(rc == 5 and "install perftest" in se, f"rc {rc}\n{se}")
    check(json.loads(so)["status"] == "unavailable" and json.loads(so)["role"] == "server", so)


@case
def accept_fails_the_slow_nic(ctx):
    dgx, pcie = ctx.fixture("dgx-h100"), ctx.fixture("pcie-2socket")
    # Node 1 is the DGX-like fixture (mlx5_3 at 120 of 400 Gb/s), the others two-NIC servers.
    suite = ctx.suite("rdma.json", {"skip": ["node", "rail", "pair", "all", "isolate"], "rdma_duration_s": 1,
                                    "topo_roots": {n: (dgx if i == 1 else pcie) for i, n in enumerate(NODES)}})
    out = ctx.path("acc")
    rc, so, se = ctx.accept(out, suite, env={"RAILKIT_IB_WRITE_BW": FAKE})
    check(rc == 10, f"rc {rc}\n{so}\n{se}")
    doc = load(os.path.join(out, "accept.json"))
    checks = {n["name"]: {c["check"]: c for c in n["checks"]} for n in doc["nodes"]}
    bad = checks[NODES[1]]["rdma.loopback.mlx5_3"]
    check(bad["verdict"] == "fail" and bad["rule"] == "line rate" and bad["measured"] == "120.00 Gb/s", f"{bad}")
    check("mlx5_3" in bad["evidence"] and "120.00 of 400 Gb/s" in bad["evidence"] and "GPU1 memory" in bad["evidence"],
          f"evidence {bad['evidence']}")
    check(bad["expected"].startswith(">= 360.0 Gb/s"), f"expected {bad['expected']}")
    rdma = [(n, c) for n, cs in checks.items() for c in cs.values() if c["check"].startswith("rdma.loopback")]
    check(len(rdma) == 12 + 3 * 2, f"rdma checks {[(n, c['check']) for n, c in rdma]}")
    check([(n, c["check"]) for n, c in rdma if c["verdict"] != "pass"] == [(NODES[1], "rdma.loopback.mlx5_3")],
          f"{[(n, c['check'], c['verdict']) for n, c in rdma]}")
    stages = {s["stage"]: s for s in doc["stages"]}
    check(stages["rdma"]["status"] == "ran" and stages["rdma"]["launches"] == 4, f"{stages['rdma']}")
    check(doc["rules"]["rdma_fraction"] == 0.9, f"rules {doc['rules']}")
    cmds = [c["argv"] for c in doc["commands"] if c["stage"] == "rdma"]
    check(len(cmds) == 4 and all("rdma-loopback" in a and FAKE in a for a in cmds), f"commands {cmds}")
    failures = [(tc.get("classname"), tc.get("name")) for tc in ET.parse(out + ".xml").getroot().iter("testcase")
                if tc.find("failure") is not None]
    check((NODES[1], "rdma.loopback.mlx5_3") in failures, f"junit failures {failures}")
    check(any(NODES[1] in l and "rdma.loopback.mlx5_3" in l and "fail" in l for l in so.splitlines()), so)
    # Emulated nodes: bad-hosts lists the node, marked emulated; the scripts name no node and do nothing.
    with open(os.path.join(out, "bad-hosts")) as f:
        lines = [l.rstrip("\n") for l in f if not l.startswith("#")]
    # node 1 is the DGX-like fixture among two-NIC ones: it differs from the majority too
    check(lines == [f"{NODES[1]}\ttopo.homogeneity,rdma.loopback.mlx5_3\temulated"], f"bad-hosts {lines}")
    bin_dir = ctx.path("bin")
    os.makedirs(bin_dir)
    for name in ("drain-slurm.sh", "cordon-k8s.sh"):
        path = os.path.join(out, name)
        with open(path) as f:
            text = f.read()
        check(HOST + ":" not in text and "emulated" in text and "set -euo pipefail" in text, f"{name}:\n{text}")
        check(os.access(path, os.X_OK) and subprocess.run(["bash", "-n", path]).returncode == 0, f"bash -n {name}")
        rc, said = run_script(path, bin_dir)
        check(rc == 0 and said == "", f"{name} did something: rc {rc}: {said}")


@case
def accept_skips_without_perftest(ctx):
    pcie = ctx.fixture("pcie-2socket")
    suite = ctx.suite("noperf.json", {"skip": ["node", "rail", "pair", "all", "isolate"], "rdma_fraction": 0.5,
                                      "ib_write_bw": ctx.path("no-such-ib_write_bw"),
                                      "topo_roots": {n: pcie for n in NODES}})
    out = ctx.path("noperf")
    rc, so, se = ctx.accept(out, suite)
    check(rc == 0, f"rc {rc}\n{so}\n{se}")
    doc = load(os.path.join(out, "accept.json"))
    for n in doc["nodes"]:
        rd = [c for c in n["checks"] if c["check"].startswith("rdma.loopback")]
        check(len(rd) == 1 and rd[0]["check"] == "rdma.loopback" and rd[0]["verdict"] == "skipped" and
              "install perftest" in rd[0]["evidence"], f"{n['name']}: {rd}")
    stage = [s for s in doc["stages"] if s["stage"] == "rdma"][0]
    check(stage["status"] == "skipped" and "perftest" in stage["reason"], f"{stage}")
    check(doc["rules"]["rdma_fraction"] == 0.5, f"rules {doc['rules']}")


def run_script(path, bin_dir):
    """Runs a drain/cordon script with stand-ins for scontrol and kubectl that print their
    arguments (one call per line, arguments separated by |); returns (rc, output)."""
    for tool in ("scontrol", "kubectl"):
        stub = os.path.join(bin_dir, tool)
        with open(stub, "w") as f:
            f.write(f"#!/bin/sh\nprintf '%s|' {tool} \"$@\"\nprintf '\\n'\n")
        os.chmod(stub, 0o755)
    p = subprocess.run(["bash", path], capture_output=True, text=True, timeout=30,
                       env=dict(os.environ, PATH=bin_dir + ":/usr/bin:/bin"))
    return p.returncode, p.stdout + p.stderr


@case
def netns_rdma_pair_names_the_slow_link_and_node(ctx):
    """accept's rdma-pair stage over real links: 4 namespaces as 4 nodes (each the pcie-2socket
    fixture: 2 NICs at 100 Gb/s, GPU rails), the link 1 <-> 2 and everything of node 3 shaped to
    10 Mbit/s; the fake ib_write_bw moves real bytes between the namespaces."""
    pcie = ctx.fixture("pcie-2socket")
    why = unavailable()
    if why or not shutil.which("mpirun"):
        raise Skip(why or "no mpirun here")
    net = Netns(os.getpid() % 100000, prefix="p")
    old_term = signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))  # ctest's timeout still cleans up
    try:
        try:
            net.up()
            net.shape_link(1, 2, "10mbit")
            net.shape_node(3, "10mbit")
        except (NetnsError, subprocess.TimeoutExpired) as e:
            raise Skip(f"cannot make the namespaces here: {e}")
        ips = [net.ip_of(i) for i in range(4)]
        hostfile = ctx.path("hosts")
        with open(hostfile, "w") as f:
            f.write("".join(f"{ip} slots=1\n" for ip in ips))
        agent = ctx.path("netns-agent.sh")
        net.write_agent(agent, lambda i: ctx.path(f"tmp{i}"))
        env = net.mpi_env(agent, ctx.path("tmp0"))
        env.pop("RAILKIT_IB_WRITE_BW", None)
        suite = ctx.suite("pair.json", {"skip": ["rdma", "node", "rail", "pair", "all", "isolate"],
                                        "rdma_duration_s": 1, "ib_write_bw": FAKE,
                                        "topo_roots": {ip: pcie for ip in ips},
                                        "rdma_addresses": {ips[0]: ips[0]}})
        out = ctx.path("pair")
        argv = ["ip", "netns", "exec", net.nodes[0], ctx.railkit, "accept", "--launcher", "mpirun", "--hostfile",
                hostfile, "--ppn", "1", "--suite", suite, "--out", out, "--timeout-s", "60"]
        if ctx.bench:
            argv += ["--bench", ctx.bench]
        p = subprocess.run(argv, capture_output=True, text=True, timeout=150, env=env, stdin=subprocess.DEVNULL)
        check(p.returncode == 10, f"rc {p.returncode}\n{p.stdout}\n{p.stderr[-3000:]}")
        doc = load(os.path.join(out, "accept.json"))
        stage = [s for s in doc["stages"] if s["stage"] == "rdma-pair"][0]
        check(stage["status"] == "ran" and stage["launches"] == 12, f"stage {stage}")
        pairs = doc["rdma_pairs"]
        check(len(pairs) == 12 and {p["rail"] for p in pairs} == {"GPU0", "GPU2"}, f"pairs {pairs}")
        slow = {tuple(sorted(p["nodes"])) for p in pairs if p["verdict"] != "pass"}
        want_slow = {tuple(sorted((ips[1], ips[2])))} | {tuple(sorted((ips[i], ips[3]))) for i in range(3)}
        check(slow == want_slow, f"slow pairs {slow}, want {want_slow}; {pairs}")
        check(all(p["measured_Gbps"] >= 90 for p in pairs if p["verdict"] == "pass"), f"{pairs}")
        iso = doc["rdma_isolation"]
        links = sorted(l["link"] for l in iso["guilty_links"])
        check(links == [f"{ips[1]}:mlx5_0 <-> {ips[2]}:mlx5_0", f"{ips[1]}:mlx5_1 <-> {ips[2]}:mlx5_1"],
              f"guilty links {links}")
        check(sorted((g["node"], g["nic"]) for g in iso["guilty_nodes"]) == [(ips[3], "mlx5_0"), (ips[3], "mlx5_1")],
              f"guilty nodes {iso['guilty_nodes']}")
        checks = {n["name"]: {c["check"]: c for c in n["checks"]} for n in doc["nodes"]}
        for ip in ips:
            for nic in ("mlx5_0", "mlx5_1"):
                c = checks[ip][f"rdma.pair.{nic}"]
                check(c["verdict"] == ("pass" if ip == ips[0] else "fail") and c["rule"].startswith("line rate"),
                      f"{ip} {nic}: {c}")
        check(f"guilty link {ips[1]}:mlx5_0 <-> {ips[2]}:mlx5_0" in checks[ips[1]]["rdma.pair.mlx5_0"]["evidence"],
              f"{checks[ips[1]]['rdma.pair.mlx5_0']}")
        check("all 3 partners" in checks[ips[3]]["rdma.pair.mlx5_0"]["evidence"], f"{checks[ips[3]]}")
        cmds = [c["argv"] for c in doc["commands"] if c["stage"] == "rdma-pair"]
        clients = [a for a in cmds if "client" in a]
        check(len(clients) == 6 and all(a[a.index("--peer") + 1] in ips for a in clients), f"{clients}")
        check(all(a[a.index("--host") + 1] in ips for a in cmds), f"every side on its node: {cmds}")
        # The lists to act on name the failed nodes (real names here) and nothing else.
        with open(os.path.join(out, "bad-hosts")) as f:
            bad = dict(l.rstrip("\n").split("\t", 1) for l in f if l.strip())
        check(sorted(bad) == sorted(ips[1:]) and bad[ips[3]] == "rdma.pair.mlx5_0,rdma.pair.mlx5_1", f"bad-hosts {bad}")
        with open(os.path.join(out, "good-hosts")) as f:
            check(f.read() == ips[0] + "\n", "good-hosts")
        bin_dir = ctx.path("bin")
        os.makedirs(bin_dir)
        for name, want in (("drain-slurm.sh", [f"scontrol|update|NodeName={ip}|State=DRAIN|Reason=railkit: "
                                                f"{bad[ip]}|" for ip in ips[1:]]),
                           ("cordon-k8s.sh", [l for ip in ips[1:] for l in (
                               f"kubectl|cordon|{ip}|",
                               f"kubectl|taint|nodes|{ip}|railkit.io/accept=failed:NoSchedule|--overwrite|")])):
            path = os.path.join(out, name)
            check(os.access(path, os.X_OK), f"{name} is not executable")
            check(subprocess.run(["bash", "-n", path]).returncode == 0, f"bash -n {name}")
            rc, text = run_script(path, bin_dir)
            check(rc == 0 and text.splitlines() == want, f"{name}: rc {rc}\n{text}")
    finally:
        net.down()
        signal.signal(signal.SIGTERM, old_term)


if __name__ == "__main__":
    sys.exit(railkit_main(CASES, __doc__, lambda railkit, bench, tmp, fixtures: Ctx(railkit, bench, fixtures, tmp),
                          "railkit-rdma-",
                          extra=(("--fixtures", "generated sysfs fixtures (tests/topology/fixtures in the build tree)"),)))
