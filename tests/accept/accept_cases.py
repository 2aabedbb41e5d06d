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
import time
import xml.etree.ElementTree as ET

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "tests", "lib"))
from casekit import Cases, Failure, Skip, check, railkit_main, shared_run_made, shared_run_path  # noqa: E402
from netns import Netns, NetnsError, unavailable  # noqa: E402

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

    def accept(self, out, *args, bench_args=None, timeout=240, np=8, rpn=2):
        argv = [self.railkit, "accept", "--launcher", "mpirun", "--np", str(np),
                *(["--ranks-per-node", str(rpn)] if rpn else []), "--out", out, *args]
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
    # The run is kept for the cases that read it (html_cases.py's accept: a ctest fixture).
    out, junit = shared_run_path("accept-slow-rank", ctx.tmp), ctx.path("slow.xml")
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
    shared_run_made(out)


@case
def broken_fixture_fails_lint(ctx):
    if not ctx.fixtures or not os.path.isdir(os.path.join(ctx.fixtures, "dgx-acs")):
        raise Skip("no generated sysfs fixtures (pass --fixtures; built by the topology_fixtures target)")
    good, bad = os.path.join(ctx.fixtures, "dgx-h100"), os.path.join(ctx.fixtures, "dgx-acs")
    # rdma skipped: the fixtures' NICs are not this machine's, so a real ib_write_bw (perftest
    # installed) fails on them; the loopback stage has its own cases with a fake (fabric.rdma.*).
    suite = ctx.suite("lint.json", {"skip": ["rdma", "node", "rail", "pair", "all", "isolate"],
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
        prof["cluster"].update(nodes=4, ranks=8, ranks_per_node=2)  # this run's scale: applied
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


@case
def hostfile_or_suite_fifo_is_refused(ctx):
    """Issue 32: --hostfile (or --suite) naming a FIFO waited in open() for a writer forever; now one
    line, exit 6, before anything runs (the timeout fails a regression rather than hanging)."""
    fifo = ctx.path("hosts")
    os.mkfifo(fifo)
    for args, flag in ((["--hostfile", fifo, "--ppn", "1"], "--hostfile"),
                       (["--np", "4", "--ranks-per-node", "2", "--suite", fifo], "--suite")):
        p = subprocess.run([ctx.railkit, "accept", "--launcher", "mpirun", "--out", ctx.path("out"), *args],
                           capture_output=True, text=True, timeout=30, stdin=subprocess.DEVNULL)
        lines = p.stderr.strip().splitlines()
        check(p.returncode == 6 and len(lines) == 1 and f"{flag} '{fifo}': is a FIFO, not a regular file" in lines[0],
              f"{args}: rc {p.returncode}\n{p.stderr}")
        check(not os.path.exists(ctx.path("out")), "accept made --out")


def whole_set(doc):
    return {c["check"]: c for e in doc["cluster"] if e["name"] == "all" for c in e["checks"]}


def junit_cases(path):
    """(classname, name) -> the testcase element."""
    return {(tc.get("classname"), tc.get("name")): tc for tc in ET.parse(path).getroot().iter("testcase")}


def prom_samples(out):
    """The sample lines of accept.prom: (metric, {label: value}, value)."""
    samples = []
    for line in open(os.path.join(out, "accept.prom")):
        line = line.rstrip("\n")
        if not line or line.startswith("#"):
            continue
        check(line.count(" ") == 1, f"a sample line with white space in its labels: {line!r}")
        series, value = line.split(" ")
        metric, _, rest = series.partition("{")
        labels = dict(kv.split("=", 1) for kv in rest.rstrip("}").split(",")) if rest else {}
        samples.append((metric, {k: v.strip('"') for k, v in labels.items()}, float(value)))
    return samples


# Only the whole set runs, with no profile and no threshold: it is measured and judged by no rule.
WHOLE_SET_ONLY = {"skip": ["topo", "rdma", "node", "rail", "pair"]}


@case
def rule_less_whole_set_is_reported_never_passed(ctx):
    suite = ctx.suite("rule-less.json", WHOLE_SET_ONLY)
    out, junit = ctx.path("ruleless"), ctx.path("ruleless.xml")
    rc, so, se = ctx.accept(out, "--suite", suite, "--junit", junit)
    check(rc == 11, f"rc {rc} (want 11: nothing judged)\n{so}\n{se}")
    doc = load(os.path.join(out, "accept.json"))
    whole = whole_set(doc)
    check(sorted(whole) == ["all.all_gather@16 KiB", "all.all_reduce@16 KiB"], f"whole set {whole}")
    check(all(c["verdict"] == "reported" and c["rule"] == "none" for c in whole.values()), f"whole set {whole}")
    check(doc["verdict"] == "reported" and doc["verdict_reason"].startswith("nothing judged: "),
          f"verdict {doc['verdict']}: {doc['verdict_reason']}")
    check(doc["counts"]["pass"] == 0 and doc["counts"]["reported"] == 2, f"counts {doc['counts']}")
    text = open(os.path.join(out, "accept.json")).read()
    check("whole set passed" not in text and "whole set passed" not in so, f"says the whole set passed:\n{so}")
    check("measured, but no rule judged it" in doc["isolation"]["reason"], f"isolation {doc['isolation']}")
    rows = [l for l in so.splitlines() if l.startswith("all ")]
    check(len(rows) == 2 and all("| reported |" in r and "| pass " not in r for r in rows), f"table rows {rows}")
    check("verdict: REPORTED (nothing judged: " in so, f"no verdict line:\n{so}")
    check(good_hosts(out) == [], f"good-hosts {good_hosts(out)}")
    check(junit_failures(junit) == {}, f"junit failures {junit_failures(junit)}")
    tcs = junit_cases(junit)
    check(all(tcs[("all", name)].find("skipped") is not None for name in whole), "reported checks are not <skipped/>")
    check("railkit accept: nothing judged: " in se and "exit 11" in se, f"no reason on stderr:\n{se}")
    # --report-only: the same measurements are accepted as a report (exit 0), still not a pass.
    rc, so, se = ctx.accept(ctx.path("ruleless-report"), "--suite", suite, "--report-only")
    check(rc == 0, f"--report-only: rc {rc}\n{so}\n{se}")
    doc = load(os.path.join(ctx.path("ruleless-report"), "accept.json"))
    check(doc["verdict"] == "reported", f"--report-only: verdict {doc['verdict']}")


@case
def two_nodes_pair_stage_cannot_isolate(ctx):
    # 2 emulated nodes of 2 ranks; the whole set judged by thresholds any run meets (only the
    # pair stage is under test here, not timings).
    suite = ctx.suite("two.json", {"skip": ["topo", "rdma", "node", "rail"],
                                   "thresholds": [{"stage": "all", "coll": c, "bytes": "16K", "busbw_GBps": 1e-9}
                                                  for c in ("all_reduce", "all_gather")]})
    out, junit = ctx.path("two"), ctx.path("two.xml")
    t0 = time.time()
    rc, so, se = ctx.accept(out, "--suite", suite, "--junit", junit, np=4, rpn=2)
    check(rc == 0, f"rc {rc}\n{so}\n{se}")
    doc = load(os.path.join(out, "accept.json"))
    two = [f"{HOST}:0", f"{HOST}:1"]
    check([n["name"] for n in doc["nodes"]] == two, f"nodes {doc['nodes']}")
    labels = [c["argv"][c["argv"].index("--label") + 1] for c in doc["commands"] if "--label" in c["argv"]]
    check(not any(l.startswith("pair") for l in labels), f"the only pair was measured: {labels}")
    check(doc["pairs"] == [], f"pairs {doc['pairs']}")
    stage = [s for s in doc["stages"] if s["stage"] == "pair"][0]
    check(stage["status"] == "skipped" and "needs at least 3 nodes to isolate" in stage["reason"], f"stage {stage}")
    for n in doc["nodes"]:
        pc = [c for c in n["checks"] if c["check"] == "pair.all_reduce"]
        check(len(pc) == 1 and pc[0]["verdict"] == "skipped" and "at least 3 nodes" in pc[0]["evidence"],
              f"{n['name']}: pair checks {pc}")
        # Nothing of the node's own was judged (the whole set is a cluster check): skipped, not pass.
        check(n["verdict"] == "skipped", f"{n['name']}: {n['verdict']}")
    check("at least 3 nodes" in so, f"the table does not say so:\n{so}")
    check(any(l.startswith(two[0]) and "pair.all_reduce" in l and "| skipped |" in l for l in so.splitlines()),
          f"no skipped pair row:\n{so}")
    tcs = junit_cases(junit)
    for n in two:
        sk = tcs[(n, "pair.all_reduce")].find("skipped")
        check(sk is not None and "at least 3 nodes" in sk.get("message"), f"junit {n}: {ET.tostring(tcs[(n, 'pair.all_reduce')])}")
    # Prometheus: skipped stays skipped (never pass), labels without white space, the run's time.
    samples = prom_samples(out)
    for n in two:
        check(not any(m == "railkit_accept_check_pass" and l.get("node") == n and l["check"] == "pair.all_reduce"
                      for m, l, _ in samples), f"{n}: a skipped check exported as pass")
        check(("railkit_accept_check_verdict", {"node": n, "check": "pair.all_reduce", "verdict": "skipped"}, 1.0)
              in samples, f"{n}: no skipped verdict in accept.prom")
    check(("railkit_accept_check_pass", {"check": "all.all_reduce@16KiB"}, 1.0) in samples,
          f"whole set in accept.prom: {[s for s in samples if 'all.' in s[1].get('check', '')]}")
    ts = [v for m, _, v in samples if m == "railkit_accept_last_run_timestamp_seconds"]
    check(len(ts) == 1 and t0 - 1 <= ts[0] <= time.time() + 1, f"timestamp {ts}, run between {t0} and {time.time()}")


@case
def np_without_ranks_per_node_judges_nothing(ctx):
    # `--np 4` alone: one emulated node of 4 ranks, no peer, no profile, no threshold.
    suite = ctx.suite("np.json", {"skip": ["topo", "rdma"]})
    out = ctx.path("np4")
    rc, so, se = ctx.accept(out, "--suite", suite, np=4, rpn=0)
    check(rc == 11, f"rc {rc} (want 11: nothing judged)\n{so}\n{se}")
    check(f"{HOST}:0: REPORTED" in so and f"{HOST}:0: PASS" not in so, f"node line:\n{so}")
    check("without --ranks-per-node" in se and "nothing judged: " in se, f"stderr:\n{se}")
    doc = load(os.path.join(out, "accept.json"))
    check(doc["verdict"] == "reported" and doc["nodes"][0]["verdict"] == "reported", f"verdicts {doc['verdict']}")
    check(good_hosts(out) == [], f"good-hosts {good_hosts(out)}")
    rc, so, se = ctx.accept(out, "--suite", suite, "--report-only", "--force", np=4, rpn=0)
    check(rc == 0, f"--report-only: rc {rc}\n{so}\n{se}")


@case
def out_refuses_a_non_empty_directory(ctx):
    out = ctx.path("used")
    os.makedirs(os.path.join(out, "bench"))
    with open(os.path.join(out, "accept.json"), "w") as f:
        f.write('{"earlier": true}')
    with open(os.path.join(out, "bench", "stale.json"), "w") as f:
        f.write("{}")
    os.makedirs(os.path.join(out, "rdma-pair"))
    for name in ("bad-hosts", "drain-slurm.sh", "cordon-k8s.sh", "rdma-pair/stale.json", "mine.txt"):
        with open(os.path.join(out, name), "w") as f:
            f.write("earlier run: gpu-node-09\n")
    suite = ctx.suite("out.json", WHOLE_SET_ONLY)
    rc, so, se = ctx.accept(out, "--suite", suite, timeout=60)
    check(rc == 6 and "--force" in se and len(se.strip().splitlines()) == 1, f"rc {rc}\n{se}")
    check(open(os.path.join(out, "accept.json")).read() == '{"earlier": true}', "accept.json was overwritten")
    rc, so, se = ctx.accept(out, "--suite", suite, "--force", "--report-only")
    check(rc == 0, f"--force: rc {rc}\n{so}\n{se}")
    check(load(os.path.join(out, "accept.json")).get("schema") == "railkit.accept/1", "accept.json not replaced")
    check(not os.path.exists(os.path.join(out, "bench", "stale.json")), "an earlier run's document outlived --force")
    check(not os.path.exists(os.path.join(out, "rdma-pair")), "an earlier run's rdma-pair/ outlived --force")
    for name in ("bad-hosts", "drain-slurm.sh", "cordon-k8s.sh"):
        with open(os.path.join(out, name)) as f:
            check("gpu-node-09" not in f.read(), f"an earlier run's {name} outlived --force")
    check(open(os.path.join(out, "mine.txt")).read().startswith("earlier run"), "--force removed a file not accept's")


@case
def profile_expectations_at_their_own_sizes(ctx):
    # Expectations at 64 KiB and 256 KiB, outside the bench sizes (4K..16K), that any run meets.
    prof = load(os.path.join(ROOT, "profiles", "examples", "ompi-coll-4ranks.json"))
    prof["cluster"].update(nodes=4, ranks=8, ranks_per_node=2)
    # Settings the job would run with: every launch gets them, as the expectations were measured with them.
    prof["settings"]["env"] = {"OMPI_MCA_coll_tuned_use_dynamic_rules": "1", "OMPI_MCA_coll_tuned_allreduce_algorithm": "4"}
    prof["expectations"] = [{"coll": "all_reduce", "bytes": 65536, "busbw_GBps": 1e-6, "tolerance": 0.1},
                            {"coll": "all_gather", "bytes": 262144, "busbw_GBps": 1e-6, "tolerance": 0.1}]
    path = ctx.path("sizes.profile.json")
    with open(path, "w") as f:
        json.dump(prof, f)
    out = ctx.path("sizes")
    rc, so, se = ctx.accept(out, "--suite", ctx.suite("sizes.json", WHOLE_SET_ONLY), "--profile", path)
    check(rc == 0, f"rc {rc}\n{so}\n{se}")
    doc = load(os.path.join(out, "accept.json"))
    whole = whole_set(doc)
    for name in ("all.all_reduce@64 KiB", "all.all_gather@256 KiB"):
        c = whole.get(name)
        check(c and c["rule"] == "profile" and c["verdict"] == "pass" and c["busbw_GBps"] and c["busbw_GBps"] > 0,
              f"{name}: {c}\n{so}")
    labels = [c["argv"][c["argv"].index("--label") + 1] for c in doc["commands"] if "--label" in c["argv"]]
    check(labels == ["all", "all-65536", "all-262144"], f"launches {labels}")
    for c in doc["commands"]:
        check("OMPI_MCA_coll_tuned_allreduce_algorithm=4" in c["argv"], f"a launch without the profile's settings: {c['argv']}")
    for f in os.listdir(os.path.join(out, "bench")):
        if f.endswith(".json"):
            env = load(os.path.join(out, "bench", f))["run"]["env"]
            check(env.get("OMPI_MCA_coll_tuned_allreduce_algorithm") == "4", f"{f}: run.env {env}")
    # A profile of NCCL settings on the mpi backend is refused before anything runs, unless --allow-inert.
    prof["settings"]["env"] = {"NCCL_ALGO": "Ring"}
    with open(path, "w") as f:
        json.dump(prof, f)
    out = ctx.path("inert")
    rc, so, se = ctx.accept(out, "--suite", ctx.suite("inert.json", WHOLE_SET_ONLY), "--profile", path)
    check(rc == 6 and "NCCL_ALGO" in se and "mpi backend" in se and len(se.strip().splitlines()) == 1, f"rc {rc}\n{se}")
    check(not os.path.exists(os.path.join(out, "accept.json")), "a refused run wrote a report")
    rc, so, se = ctx.accept(out, "--suite", ctx.suite("inert2.json", WHOLE_SET_ONLY), "--profile", path, "--allow-inert")
    check(rc == 0 and "cannot reach the mpi backend" in so, f"rc {rc}\n{so}\n{se}")
    check(doc["rules"]["profile"]["expectations_applied"] is True, f"rules {doc['rules']['profile']}")


@case
def profile_of_another_scale_is_named(ctx):
    # The example profile was made on 1 node of 4 ranks; this run is 4 emulated nodes of 2. Its
    # expectation (one no run meets) is measured and reported, not applied.
    prof = load(os.path.join(ROOT, "profiles", "examples", "ompi-coll-4ranks.json"))
    prof["expectations"] = [{"coll": "all_reduce", "bytes": 16384, "busbw_GBps": 1e6, "tolerance": 0.1}]
    path = ctx.path("scale.profile.json")
    with open(path, "w") as f:
        json.dump(prof, f)
    out = ctx.path("scale")
    rc, so, se = ctx.accept(out, "--suite", ctx.suite("scale.json", WHOLE_SET_ONLY), "--profile", path)
    check(rc == 11, f"rc {rc} (want 11: the expectation is not applied, nothing else judges)\n{so}\n{se}")
    want = "measured on 1 node x 4 ranks per node (4 ranks); this run is 4 nodes x 2 ranks per node (8 ranks)"
    check(any(l.startswith("note: ") and want in l and "not applied" in l for l in so.splitlines()), f"table:\n{so}")
    doc = load(os.path.join(out, "accept.json"))
    p = doc["rules"]["profile"]
    check(p["same_scale"] is False and p["expectations_applied"] is False and want in p["why"], f"rules {p}")
    check(p["scale"] == {"nodes": 1, "ranks": 4, "ranks_per_node": 4}, f"scale {p['scale']}")
    check(any(want in n for n in doc["notes"]), f"notes {doc['notes']}")
    c = whole_set(doc).get("all.all_reduce@16 KiB")
    check(c and c["verdict"] == "reported" and c["rule"] == "profile (other scale)" and want in c["evidence"],
          f"check {c}")


@case
def netns_pair_names_the_slow_link(ctx):
    why = unavailable()
    if why or not shutil.which("mpirun"):
        raise Skip(why or "no mpirun here")
    net = Netns(os.getpid() % 100000)
    old_term = signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))  # ctest's timeout still cleans up
    try:
        try:
            net.up()
            net.shape_link(1, 2, "20mbit")
        except (NetnsError, subprocess.TimeoutExpired) as e:
            raise Skip(f"cannot make the namespaces here: {e}")
        hostfile = ctx.path("hosts")
        with open(hostfile, "w") as f:
            f.write("".join(f"{net.ip_of(i)} slots=1\n" for i in range(4)))
        agent = ctx.path("netns-agent.sh")
        net.write_agent(agent, lambda i: ctx.path(f"tmp{i}"))
        env = net.mpi_env(agent, ctx.path("tmp0"))
        # 4 ranks share this machine's CPUs: clean pairs spread about 2x, the shaped link is ~70x
        # slower; half the pairs' median separates them without false suspects.
        suite = ctx.suite("netns.json", {"skip": ["topo", "rdma", "rdma-pair", "node", "rail", "all"],
                                         "peer_fraction": 0.5})
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
