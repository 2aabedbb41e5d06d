#!/usr/bin/env python3
"""Integration tests of railkit-bench on the MPI backend, run for real under mpirun.

Each case is one ctest test (label `mpi`): `bench_cases.py --bin DIR --case NAME`.
`--list` prints the case names (CMake registers them from it).
"""
import argparse
import json
import os
import re
import shutil
import stat
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", "..", ".."))
SCHEMA = os.path.join(ROOT, "results", "railkit.results.schema.json")
GOLDEN_KEYS = os.path.join(HERE, "..", "golden", "results_keys.txt")

FACTORS = {
    "all_reduce": lambda n: 2.0 * (n - 1) / n,
    "all_gather": lambda n: (n - 1) / n,
    "reduce_scatter": lambda n: (n - 1) / n,
    "alltoall": lambda n: (n - 1) / n,
    "broadcast": lambda n: 1.0,
    "reduce": lambda n: 1.0,
    "sendrecv": lambda n: 1.0,
}

sys.path.insert(0, os.path.join(ROOT, "tests", "lib"))
from casekit import Cases, Failure, Skip, check, listing  # noqa: E402

CASES = Cases()
case = CASES.add


def has_gpu():
    return os.path.exists("/dev/nvidia0")


def mpi_env():
    env = dict(os.environ)
    env.update({
        "OMPI_ALLOW_RUN_AS_ROOT": "1",
        "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
        "OMPI_MCA_rmaps_base_oversubscribe": "1",
    })
    return env


class Ctx:
    def __init__(self, bindir, tmp):
        self.bench = os.path.join(bindir, "railkit-bench")
        self.tmp = tmp

    def run(self, args, np=None, timeout=120, mpirun_args=()):
        """Runs railkit-bench (under mpirun when np is given, with mpirun_args before the program);
        returns (rc, stdout, stderr, seconds)."""
        cmd = ([] if np is None else ["mpirun", "-np", str(np)] + list(mpirun_args)) + [self.bench] + [str(a) for a in args]
        t0 = time.monotonic()
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=mpi_env())
        return p.returncode, p.stdout, p.stderr, time.monotonic() - t0

    def run_mpmd(self, per_rank_args, timeout=60):
        """Runs one railkit-bench per element of per_rank_args, each with its own flags (mpirun's MPMD form)."""
        cmd = ["mpirun"]
        for i, args in enumerate(per_rank_args):
            cmd += ([":"] if i else []) + ["-np", "1", self.bench] + [str(a) for a in args]
        t0 = time.monotonic()
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=mpi_env())
        return p.returncode, p.stdout, p.stderr, time.monotonic() - t0

    def path(self, name):
        return os.path.join(self.tmp, name)


def load(path):
    with open(path) as f:
        return json.load(f)


def validate_schema(doc):
    try:
        import jsonschema
    except ImportError:
        raise Failure("python3 module jsonschema is missing (Debian: python3-jsonschema; scripts/setup.sh installs it)")
    with open(SCHEMA) as f:
        schema = json.load(f)
    jsonschema.validate(doc, schema)


def check_results(doc, nranks, expect_ops=None, expect_wrong_zero=True):
    check(doc["schema"] == "railkit.results/1", "schema")
    check(doc["run"]["nranks"] == nranks, "nranks %s" % doc["run"]["nranks"])
    check(doc["run"]["backend"] == "mpi", "backend")
    check(doc["results"], "no results")
    for r in doc["results"]:
        f = FACTORS[r["op"]](nranks)
        check(abs(r["busbw_GBps"] - r["algbw_GBps"] * f) <= 1e-9 * max(1.0, r["busbw_GBps"]),
              "busbw != algbw x factor for %s %s" % (r["op"], r["bytes"]))
        check(abs(r["algbw_GBps"] - r["bytes"] / r["time_us"]["avg"] / 1e3) <= 1e-9 * max(1.0, r["algbw_GBps"]),
              "algbw != bytes/time for %s" % r["op"])
        if expect_wrong_zero:
            check(r["wrong"] == 0, "wrong=%s for %s %s in_place=%s" % (r["wrong"], r["op"], r["bytes"], r["in_place"]))
        t = r["time_us"]
        check(t["min"] <= t["p50"] <= t["max"] and t["p99"] <= t["max"], "time_us order %s" % t)
        check(r["ranks"]["time_us_min"] <= r["ranks"]["time_us_max"], "rank spread")
        check(0 <= r["ranks"]["slowest_rank"] < nranks, "slowest rank")
    if expect_ops is not None:
        got = sorted({r["op"] for r in doc["results"]})
        check(got == sorted(expect_ops), "ops %s != %s" % (got, sorted(expect_ops)))
    n = len(doc["results"])
    mean = sum(r["busbw_GBps"] for r in doc["results"]) / n
    check(abs(doc["summary"]["avg_busbw_GBps"] - mean) < 1e-9 * max(1, mean), "summary avg busbw")
    validate_schema(doc)


def railkit_lines(stderr):
    return [l for l in stderr.splitlines() if l.startswith("railkit-bench")]


def expect_usage(ctx, args, needle, np=None, code=6):
    rc, out, err, _ = ctx.run(args, np=np)
    check(rc == code, "rc %d (want %d) for %s: %s" % (rc, code, args, err[-500:]))
    lines = railkit_lines(err)
    check(len(lines) == 1, "want one railkit-bench line, got %r" % lines)
    check(needle in lines[0], "%r not in %r" % (needle, lines[0]))


# --- collectives, datatypes, reductions, placements --------------------------------------

MATRIX = [("float", "sum"), ("double", "prod"), ("int8", "max"), ("uint8", "sum"), ("int32", "min"),
          ("uint32", "prod"), ("int64", "sum"), ("uint64", "max")]


def run_matrix(ctx, np, dtype, op):
    out = ctx.path("m.json")
    rc, so, se, _ = ctx.run(["--coll", "all", "-b", "8", "-e", "96K", "-f", "8", "-d", dtype, "-o", op, "-c", "2",
                             "-n", "3", "-w", "1", "-r", str(np - 1), "-J", out], np=np)
    check(rc == 0, "rc %d: %s" % (rc, se[-800:]))
    doc = load(out)
    check_results(doc, np, expect_ops=list(FACTORS))
    placements = {(r["op"], r["in_place"]) for r in doc["results"]}
    check(len(placements) == 14, "every collective in both placements: %s" % sorted(placements))
    check("# Out of bounds values : 0 OK" in so, "footer")


for _np in (2, 4):
    for _dt, _op in MATRIX:
        def _f(ctx, np=_np, dt=_dt, op=_op):
            run_matrix(ctx, np, dt, op)
        _f.__name__ = "np%d_%s_%s" % (_np, _dt, _op)
        CASES[_f.__name__] = _f


@case
def done_when_command(ctx):
    out = ctx.path("r.json")
    rc, so, se, _ = ctx.run(["--backend", "mpi", "--coll", "all_reduce,all_gather,reduce_scatter,alltoall", "-b", "8",
                             "-e", "16M", "-f", "4", "-c", "1", "-J", out], np=4, timeout=300)
    check(rc == 0, "rc %d: %s" % (rc, se[-800:]))
    doc = load(out)
    check_results(doc, 4, expect_ops=["all_reduce", "all_gather", "reduce_scatter", "alltoall"])
    # 8 x 4^k up to 16M: the largest size is 8M, as in nccl-tests
    check(max(r["bytes"] for r in doc["results"]) == 8 << 20, "largest size 8M")


@case
def table_matches_document(ctx):
    out = ctx.path("t.json")
    rc, so, se, _ = ctx.run(["--coll", "all_reduce,broadcast", "-b", "1K", "-e", "64K", "-f", "4", "-J", out], np=2)
    check(rc == 0, se)
    doc = load(out)
    rows = [l.split() for l in so.splitlines() if l and not l.startswith("#")]
    check(len(rows) == 2 * 4, "rows %d" % len(rows))
    by_key = {(r["op"], r["bytes"], r["in_place"]): r for r in doc["results"]}
    ops = ["all_reduce"] * 4 + ["broadcast"] * 4
    for op, row in zip(ops, rows):
        size = int(row[0])
        out_r, in_r = by_key[(op, size, False)], by_key[(op, size, True)]
        check(int(row[1]) == out_r["count"], "count column")
        check(row[2] == "float" and row[3] == out_r["redop"] and int(row[4]) == out_r["root"], "type/redop/root")
        check(abs(float(row[5]) - out_r["time_us"]["avg"]) <= 0.006 + 1e-3 * out_r["time_us"]["avg"], "time column")
        check(abs(float(row[9]) - in_r["time_us"]["avg"]) <= 0.006 + 1e-3 * in_r["time_us"]["avg"], "in-place time")
    check("# Avg bus bandwidth    : " in so, "avg line")


@case
def root_and_average_modes(ctx):
    for a, name in ((0, "rank0"), (1, "avg"), (2, "min"), (3, "max")):
        out = ctx.path("a%d.json" % a)
        rc, so, se, _ = ctx.run(["--coll", "broadcast,reduce", "-b", "4K", "-e", "4K", "-r", "2", "-a", a, "-J", out], np=4)
        check(rc == 0, se)
        doc = load(out)
        check(doc["run"]["average"] == name, "average recorded")
        for r in doc["results"]:
            check(r["root"] == 2, "root")
            lo, hi = r["ranks"]["time_us_min"], r["ranks"]["time_us_max"]
            check(lo - 1e-9 <= r["time_us"]["avg"] <= hi + 1e-9, "reduced time within rank spread")
            if a == 2:
                check(abs(r["time_us"]["avg"] - lo) < 1e-9, "-a 2 is the minimum")
            if a == 3:
                check(abs(r["time_us"]["avg"] - hi) < 1e-9, "-a 3 is the maximum")


@case
def cycles_stepbytes_and_placement(ctx):
    out = ctx.path("c.json")
    rc, so, se, _ = ctx.run(["--coll", "sendrecv", "-b", "1K", "-e", "4K", "-i", "1K", "-N", "2", "--placement", "in",
                             "--label", "drill one", "-J", out], np=2)
    check(rc == 0, se)
    doc = load(out)
    check(len(doc["results"]) == 8, "4 sizes x 2 cycles, in-place only: %d" % len(doc["results"]))
    check({r["cycle"] for r in doc["results"]} == {0, 1}, "cycles")
    check(all(r["in_place"] for r in doc["results"]), "in-place only")
    check([r["bytes"] for r in doc["results"]][:4] == [1024, 2048, 3072, 4096], "step bytes")
    check(doc["run"]["label"] == "drill one", "label")
    check(so.count("# Collective: sendrecv") == 2, "a section per cycle")


@case
def check_off_gives_null_wrong(ctx):
    out = ctx.path("n.json")
    rc, so, se, _ = ctx.run(["-b", "64", "-e", "64", "-c", "0", "-J", out], np=2)
    check(rc == 0, se)
    doc = load(out)
    check(all(r["wrong"] is None for r in doc["results"]), "wrong null")
    check("N/A" in so, "N/A column")
    validate_schema(doc)


@case
def rounding_is_announced(ctx):
    out = ctx.path("round.json")
    rc, so, se, _ = ctx.run(["--coll", "all_gather", "-b", "100", "-e", "100", "-J", out], np=3)
    check(rc == 0, se)
    # nccl-tests' rule: per-rank blocks of whole 16 B: 100 B of floats on 3 ranks -> 8 per rank -> 96 B
    check("# note: all_gather: 1 size rounded down to a multiple of 48 B (3 ranks x 16 B, as nccl-tests)" in so, so)
    doc = load(out)
    check(doc["results"][0]["bytes"] == 96 and doc["results"][0]["count"] == 8, "96 B, 8 per rank")


@case
def env_and_command_recorded(ctx):
    out = ctx.path("e.json")
    env_before = dict(os.environ)
    os.environ["NCCL_TESTS_IGNORED"] = "1"
    os.environ["OMPI_MCA_coll_tuned_use_dynamic_rules"] = "1"
    os.environ["RAILKIT_TRACE"] = "x y"
    try:
        rc, so, se, _ = ctx.run(["-b", "8", "-e", "8", "-J", out], np=2)
    finally:
        os.environ.clear()
        os.environ.update(env_before)
    check(rc == 0, se)
    doc = load(out)
    env = doc["run"]["env"]
    check(env.get("OMPI_MCA_coll_tuned_use_dynamic_rules") == "1", "OMPI_MCA_ recorded")
    check(env.get("RAILKIT_TRACE") == "x y", "RAILKIT_ recorded")
    check("PATH" not in env and "HOME" not in env, "only variables that shape the run")
    check("railkit-bench -b 8 -e 8 -J" in doc["run"]["command"], doc["run"]["command"])
    ranks = doc["observed"]["ranks"]
    check(len(ranks) == 2 and all(r["peak_rss_bytes"] > 0 for r in ranks), "per-rank peak RSS")


@case
def json_keys_match_golden(ctx):
    out = ctx.path("k.json")
    rc, so, se, _ = ctx.run(["-b", "8", "-e", "8", "-J", out], np=2)
    check(rc == 0, se)
    doc = load(out)
    keys = set()

    def walk(v, prefix):
        if isinstance(v, dict):
            for k, x in v.items():
                if prefix in ("run.env", "observed"):
                    continue
                keys.add(prefix + "." + k if prefix else k)
                walk(x, prefix + "." + k if prefix else k)
        elif isinstance(v, list) and v and prefix in ("results",):
            walk(v[0], prefix + "[]")

    walk(doc, "")
    with open(GOLDEN_KEYS) as f:
        want = {l.strip() for l in f if l.strip() and not l.startswith("#")}
    check(keys == want, "keys differ: extra %s missing %s" % (sorted(keys - want), sorted(want - keys)))


@case
def kill_9_leaves_a_valid_partial_document(ctx):
    import signal
    out = ctx.path("killed.json")
    tag = "killtest-%d" % os.getpid()
    cmd = ["mpirun", "-np", "2", ctx.bench, "--coll", "all_reduce", "-b", "1K", "-e", "1G", "-f", "2", "-n", "5",
           "--inject-delay-us", "0:20000", "--label", tag, "-J", out]
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=mpi_env(), start_new_session=True)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                if len(load(out)["results"]) >= 4:
                    break
            except (OSError, ValueError):
                pass
            time.sleep(0.2)
        else:
            raise Failure("no checkpoint with 4 results within 60 s")
    finally:
        os.killpg(p.pid, signal.SIGKILL)
        subprocess.run(["pkill", "-9", "-f", tag])
        p.wait()
    doc = load(out)
    check(doc["summary"]["complete"] is False, "a killed run is marked incomplete")
    check(len(doc["results"]) >= 4 and all(r["wrong"] == 0 for r in doc["results"]), "results kept")
    validate_schema(doc)


# --- split ------------------------------------------------------------------------------

@case
def split_rail_reports_two_rails(ctx):
    out = ctx.path("rail.json")
    rc, so, se, _ = ctx.run(["--split", "rail", "--ranks-per-node", "2", "--coll", "all_reduce,all_gather", "-b", "1K",
                             "-e", "64K", "-f", "8", "-J", out], np=4)
    check(rc == 0, se)
    doc = load(out)
    split = doc["run"]["split"]
    check(split["mode"] == "rail" and split["ranks_per_node"] == 2, "split recorded %s" % split)
    check([(g["name"], g["ranks"]) for g in split["groups"]] == [("rail0", [0, 2]), ("rail1", [1, 3])],
          "rails %s" % split["groups"])
    groups = {r["group"] for r in doc["results"]}
    check(groups == {"rail0", "rail1"}, "groups %s" % groups)
    for r in doc["results"]:
        members = [0, 2] if r["group"] == "rail0" else [1, 3]
        check(r["ranks"]["slowest_rank"] in members, "slowest rank of %s is a member" % r["group"])
    # each rail is a 2-rank communicator: busbw factor of 2 ranks
    for r in doc["results"]:
        f = FACTORS[r["op"]](2)
        check(abs(r["busbw_GBps"] - r["algbw_GBps"] * f) <= 1e-9 * max(1.0, r["busbw_GBps"]), "2-rank factor")
        check(r["wrong"] == 0, "wrong")
    check("# Slowest group        : rail" in so, "slowest rail reported")
    check(so.count(" rail0\n") == 6 and so.count(" rail1\n") == 6, "a row per rail and size")
    validate_schema(doc)


PROM_SAMPLE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{((?:[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\n]|\\[\\"n])*",?)*)\})? '
                         r'(\S+)$')
PROM_LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\\n]|\\[\\"n])*)"')


@case
def prom_textfile_matches_document(ctx):
    out, prom = ctx.path("p.json"), ctx.path("p.prom")
    rc, so, se, _ = ctx.run(["--split", "rail", "--ranks-per-node", "1", "-b", "1K", "-e", "1M", "-f", "32",
                             "--label", 'prom "x" 1 \\y', "-J", out, "--prom", prom], np=2)
    check(rc == 0, se)
    doc = load(out)
    check(os.path.isfile(prom), "no --prom file")
    with open(prom) as f:
        lines = f.read().splitlines()
    busbw = {}
    names = set()
    for line in lines:
        if line.startswith("# HELP ") or line.startswith("# TYPE "):
            continue
        m = PROM_SAMPLE.match(line)
        check(m, "not a sample line: %r" % line)
        name, labels, value = m.group(1), dict(PROM_LABEL.findall(m.group(2) or "")), float(m.group(3))
        names.add(name)
        for v in labels.values():
            check(" " not in v, "white space in a label value: %r" % line)
        if name == "railkit_bench_busbw_gbps":
            check(labels["op"] == "all_reduce" and labels["backend"] == "mpi" and labels["group"] == "rail0",
                  "labels %s" % labels)
            check(labels["label"] == 'prom_\\"x\\"_1\\\\y', "label %r" % labels["label"])
            busbw[(int(labels["bytes"]), labels["placement"])] = value
    check(names == {"railkit_bench_busbw_gbps", "railkit_bench_time_us", "railkit_bench_last_run_timestamp_seconds"},
          "metrics %s" % names)
    want = {(r["bytes"], "in_place" if r["in_place"] else "out_of_place"): r["busbw_GBps"] for r in doc["results"]}
    check(len(want) == 6 and busbw == want, "busbw %s != document %s" % (busbw, want))
    ts = [float(l.split()[1]) for l in lines if l.startswith("railkit_bench_last_run_timestamp_seconds ")]
    check(len(ts) == 1 and abs(ts[0] - time.time()) < 600, "timestamp %s" % ts)
    # The same refusals as -J, before running; and not the -J file itself.
    expect_usage(ctx, ["-b", "8", "-e", "8", "--prom", "/dev/full"], "is a character device")
    expect_usage(ctx, ["-b", "8", "-e", "8", "-J", out, "--prom", out], "is the file -J/--output_file writes", np=2)


@case
def prom_textfile_with_bytes_that_are_not_utf8_passes_promtool(ctx):
    """Issue 32: a --label that is not UTF-8 reached the textfile raw and promtool (so node_exporter)
    refused the whole file; it is U+FFFD there, as in the JSON document."""
    promtool = shutil.which("promtool")
    if not promtool:
        raise Skip("promtool is not installed")
    out, prom = ctx.path("u.json"), ctx.path("u.prom")
    rc, so, se, _ = ctx.run(["-b", "8", "-e", "8", "--label", "lab\udcffel \udcc3", "-J", out, "--prom", prom], np=1)
    check(rc == 0, se)
    with open(prom, "rb") as f:
        raw = f.read()
    check(b'label="lab\xef\xbf\xbdel_\xef\xbf\xbd"' in raw, "label not replaced: %r" % raw[:400])
    check(load(out)["run"]["label"] == "lab\ufffdel \ufffd", "document label %r" % load(out)["run"]["label"])
    p = subprocess.run([promtool, "check", "metrics"], input=raw, capture_output=True, timeout=30)
    said = (p.stdout + p.stderr).decode(errors="replace")
    check("parsing error" not in said and "error" not in said.lower(), "promtool check metrics: %s" % said)


@case
def split_node_and_mod(ctx):
    out = ctx.path("node.json")
    rc, so, se, _ = ctx.run(["--split", "node", "-b", "1K", "-e", "1K", "-J", out], np=4)
    check(rc == 0, se)
    doc = load(out)
    check([g["ranks"] for g in doc["run"]["split"]["groups"]] == [[0, 1, 2, 3]], "one node here")
    rc, so, se, _ = ctx.run(["--split", "mod:2", "--coll", "broadcast", "-r", "1", "-b", "1K", "-e", "1K", "-J", out],
                            np=4)
    check(rc == 0, se)
    doc = load(out)
    check([g["ranks"] for g in doc["run"]["split"]["groups"]] == [[0, 2], [1, 3]], "mod:2 groups")
    check(all(r["wrong"] == 0 for r in doc["results"]), "broadcast from group rank 1 checks out")


@case
def split_explicit_nodes_leave_the_others_idle(ctx):
    # 6 ranks as 3 nodes of 2: nodes 1 and 2 measure together, node 0 (rank 0, the reporter) sits
    # out; a check pass keeps every rank in step, and only the listed group gets records.
    out = ctx.path("nodes.json")
    rc, so, se, _ = ctx.run(["--split", "nodes:1+2", "--ranks-per-node", "2", "--coll", "all_reduce,all_gather",
                             "-b", "1K", "-e", "16K", "-f", "4", "-J", out], np=6)
    check(rc == 0, se)
    doc = load(out)
    check([g["ranks"] for g in doc["run"]["split"]["groups"]] == [[2, 3, 4, 5]], "nodes:1+2 group")
    check(doc["run"]["split"]["mode"] == "nodes:1+2", doc["run"]["split"]["mode"])
    check(len(doc["results"]) == 12 and all(r["group"] == "nodes1+2" for r in doc["results"]), "records of the group only")
    check(all(r["wrong"] == 0 and r["busbw_GBps"] > 0 for r in doc["results"]), "checked and measured")
    expect_usage(ctx, ["--split", "nodes:0+3", "--ranks-per-node", "2", "-b", "8", "-e", "8"], "node 3 does not exist",
                 np=4)


@case
def split_bad_input(ctx):
    expect_usage(ctx, ["--split", "rails"], "--split 'rails'")
    expect_usage(ctx, ["--split", "mod:0"], "--split 'mod:0'")
    expect_usage(ctx, ["--split", "rail", "--ranks-per-node", "2", "-b", "8", "-e", "8"], "groups differ in size", np=3)
    expect_usage(ctx, ["--split", "mod:2", "--coll", "broadcast", "-r", "3", "-b", "8", "-e", "8"],
                 "-r/--root '3': the groups of --split mod:2 have only 2 ranks", np=4)


# --- watchdog ---------------------------------------------------------------------------

def stall(ctx, rank):
    out = ctx.path("stall%d.json" % rank)
    rc, so, se, secs = ctx.run(["--coll", "all_reduce", "-b", "8", "-e", "1K", "-f", "4", "-T", "3", "--inject-stall",
                                rank, "-J", out], np=4, timeout=60)
    check(rc == 4, "rc %d, want 4 (timeout): %s" % (rc, se[-800:]))
    check(secs < 3 + 8, "took %.1f s, want < T + 8 s" % secs)
    lines = [l for l in se.splitlines() if l.startswith("railkit-bench: error: timeout")]
    check(len(lines) == 1, "one timeout line: %r" % se[-800:])
    check("all_reduce 8 B iteration 0" in lines[0], lines[0])
    check("ranks that had not arrived: %d (" % rank in lines[0], lines[0])
    doc = load(out)
    check(doc["error"]["code"] == "timeout" and doc["error"]["exit_code"] == 4, "error record")
    check(doc["error"]["detail"]["not_arrived"] == [rank], "not_arrived %s" % doc["error"]["detail"]["not_arrived"])
    states = {r["rank"]: r["state"] for r in doc["error"]["detail"]["ranks"]}
    check(states[rank] == "stalled", "stalled rank state %s" % states)
    check(doc["summary"]["complete"] is False, "incomplete")
    validate_schema(doc)


@case
def watchdog_stall_rank2(ctx):
    stall(ctx, 2)


@case
def watchdog_stall_rank0(ctx):
    stall(ctx, 0)


@case
def watchdog_keeps_finished_results(ctx):
    # The stall hits the first timed collective of the run; an earlier completed collective stays in
    # the document: run all_gather first (measured) with a stall only reachable later is not possible
    # with --inject-stall (it fires at the first timed op), so check instead that a run whose watchdog
    # never fires keeps working with -T set (MPI_THREAD_MULTIPLE path).
    out = ctx.path("wd_ok.json")
    rc, so, se, _ = ctx.run(["--coll", "all_reduce,alltoall", "-b", "8", "-e", "64K", "-f", "8", "-T", "20", "-J", out],
                            np=4)
    check(rc == 0, se)
    check_results(load(out), 4)


@case
def inject_delay_slows_every_timed_op(ctx):
    out = ctx.path("d.json")
    rc, so, se, _ = ctx.run(["-b", "8", "-e", "1K", "-f", "8", "-n", "5", "--inject-delay-us", "1:3000", "-J", out], np=2)
    check(rc == 0, se)
    check("# fire drill: rank 1 sleeps 3000 us before each timed collective" in so, "announced")
    for r in load(out)["results"]:
        check(r["time_us"]["avg"] >= 3000, "time %.1f us < injected delay" % r["time_us"]["avg"])


@case
def sync_times_each_operation_alone(ctx):
    # --sync: a barrier before each timed iteration, only the operation timed (as IMB-MPI1, OSU).
    out, prom = ctx.path("s.json"), ctx.path("s.prom")
    rc, so, se, _ = ctx.run(["--sync", "--coll", "all_reduce,all_gather", "-b", "64", "-e", "256K", "-f", "8", "-n", "20",
                             "-w", "2", "-J", out, "--prom", prom], np=4)
    check(rc == 0, "rc %d: %s" % (rc, se[-800:]))
    doc = load(out)
    check_results(doc, 4, expect_ops=["all_reduce", "all_gather"])
    check(doc["run"]["timing_method"] == "barrier_separated", "timing_method %r" % doc["run"]["timing_method"])
    check(doc["run"]["timing"] == "host_clock", "timing %r" % doc["run"]["timing"])
    check("\n# Timing: barrier-separated (--sync):" in so, "no barrier-separated timing line:\n" + so[:1500])
    check(len(doc["results"]) == 2 * 5 * 2, "2 ops x 5 sizes x 2 placements: %d" % len(doc["results"]))
    for r in doc["results"]:
        t = r["time_us"]
        check(t["min"] > 0 and r["ranks"]["time_us_min"] > 0, "times not positive: %s" % t)
        # -a 1: time = the mean over ranks of each rank's mean iteration = the mean of the series
        check(t["min"] - 1e-6 <= t["avg"] <= t["max"] + 1e-6, "avg %.3f outside the iterations' [%.3f, %.3f]" %
              (t["avg"], t["min"], t["max"]))
    with open(prom) as f:
        samples = [l for l in f.read().splitlines() if l.startswith("railkit_bench_time_us{")]
    check(len(samples) == 20 and all('timing_method="barrier_separated"' in l for l in samples), "prom %s" % samples[:2])
    # A delayed rank sleeps after the barrier, outside its own clock: the others wait for it inside the operation.
    out = ctx.path("sd.json")
    rc, so, se, _ = ctx.run(["--sync", "-b", "1K", "-e", "1K", "-n", "5", "-w", "1", "-c", "0", "--placement", "out",
                             "--inject-delay-us", "1:20000", "-a", "3", "-J", out], np=2)
    check(rc == 0, se)
    r = load(out)["results"][0]
    # (20 ms: well above what a busy machine's scheduling adds)
    check(r["ranks"]["slowest_rank"] == 0 and r["ranks"]["time_us_max"] >= 10000,
          "rank 0 should wait for the delayed rank 1: %s" % r["ranks"])
    # Its clock would hold the whole 20 ms sleep; the operation alone may take ms on a loaded machine.
    check(r["ranks"]["time_us_min"] < 20000, "rank 1's clock includes its sleep: %s" % r["ranks"])
    # Without --sync: back to back, said in the document and the table.
    out = ctx.path("b.json")
    rc, so, se, _ = ctx.run(["-b", "1K", "-e", "1K", "-n", "5", "-J", out], np=2)
    check(rc == 0, se)
    check(load(out)["run"]["timing_method"] == "back_to_back", "default timing_method")
    check("\n# Timing: back-to-back:" in so, "no back-to-back timing line")
    # With the other flags that shape the loop: concurrent groups, several cycles, -a 0, -c 2.
    out = ctx.path("sg.json")
    rc, so, se, _ = ctx.run(["--sync", "--split", "mod:2", "-b", "1K", "-e", "4K", "-f", "4", "-n", "3", "-N", "2",
                             "-a", "0", "-c", "2", "-J", out], np=4)
    check(rc == 0, se)
    doc = load(out)
    check(len(doc["results"]) == 2 * 2 * 2 * 2 and all(r["wrong"] == 0 for r in doc["results"]), "split results")
    check(doc["run"]["timing_method"] == "barrier_separated", "split timing_method")
    # A node left out of --split nodes: joins the barriers between the timed iterations too.
    out = ctx.path("si.json")
    rc, so, se, _ = ctx.run(["--sync", "--split", "nodes:1+2", "--ranks-per-node", "1", "-b", "1K", "-e", "4K", "-f", "4",
                             "-n", "4", "-J", out], np=3, timeout=60)
    check(rc == 0, se)
    doc = load(out)
    check(len(doc["results"]) == 4 and all(r["group"] == "nodes1+2" and r["wrong"] == 0 for r in doc["results"]),
          "records of the group only")


@case
def sync_bad_combinations(ctx):
    expect_usage(ctx, ["--sync", "-G", "2", "-b", "8", "-e", "8"],
                 "--sync with -G/--cudagraph '2': a CUDA graph replays its -n launches back to back")
    expect_usage(ctx, ["--sync", "-G", "2", "-b", "8", "-e", "8"], "--sync with -G/--cudagraph '2'", np=2)
    cluster = os.path.join(ROOT, "tests", "bench", "fixtures", "sim-cluster-2x4.yaml")
    expect_usage(ctx, ["--backend", "sim", "--sim-cluster", cluster, "--sync"], "--sync with --backend sim:")


# --- bad input --------------------------------------------------------------------------

@case
def bad_sizes(ctx):
    expect_usage(ctx, ["-b", "64M", "-e", "1M"], "-b/--minbytes '67108864' is larger than -e/--maxbytes '1048576'")
    expect_usage(ctx, ["-b", "0"], "-b/--minbytes '0'")
    expect_usage(ctx, ["-e", "-4K"], "-e/--maxbytes '-4K'")
    expect_usage(ctx, ["-b", "1K", "-e", "8K", "-f", "1", "-i", "0"], "never grows")
    expect_usage(ctx, ["-b", "1K", "-e", "2K", "-f", "1", "-i", "0"], "never grows", np=2)


@case
def bad_names(ctx):
    expect_usage(ctx, ["--coll", "all_reduce,allgather"], "--coll 'allgather'")
    expect_usage(ctx, ["-d", "float8"], "-d/--datatype 'float8'")
    expect_usage(ctx, ["-o", "xor"], "-o/--op 'xor'")
    expect_usage(ctx, ["-d", "half"], "-d/--datatype 'half' is only available on the nccl backend")
    expect_usage(ctx, ["-o", "avg"], "-o/--op 'avg' is only available on the nccl backend")
    expect_usage(ctx, ["--coll", "nope"], "--coll 'nope'", np=2)
    if not has_gpu():
        expect_usage(ctx, ["-G", "2", "-b", "8", "-e", "8"], "-G/--cudagraph '2': CUDA graphs need the nccl backend")
    expect_usage(ctx, ["--backend", "mpi", "-g", "2"], "-g/--ngpus '2': only one GPU per process on the mpi backend")
    expect_usage(ctx, ["--backend", "mpi", "-g", "2"], "-g/--ngpus '2': only one GPU per process", np=2)
    if not has_gpu():
        # auto picks mpi without a GPU, and mpi drives one rank per process
        expect_usage(ctx, ["-g", "2", "-b", "8", "-e", "8"], "-g/--ngpus '2': only one GPU per process on the mpi backend")
    expect_usage(ctx, ["-g", "0"], "-g/--ngpus '0'")


@case
def bad_root_and_ranks(ctx):
    expect_usage(ctx, ["--coll", "broadcast", "-r", "5", "-b", "8", "-e", "8"], "-r/--root '5': only 2 ranks", np=2)
    expect_usage(ctx, ["-b", "8", "-e", "8", "--inject-delay-us", "9:10"], "--inject-delay-us '9:10': only 2 ranks", np=2)


@case
def memory_checked_before_allocating(ctx):
    expect_usage(ctx, ["-b", "200G", "-e", "200G"], "-e/--maxbytes '214748364800': 1 rank on")
    expect_usage(ctx, ["-d", "int8", "-b", "3G", "-e", "3G"], "elements exceed MPI's int count")
    expect_usage(ctx, ["-b", "100G", "-e", "100G"], "need", np=2)


@case
def output_path_checked_before_running(ctx):
    expect_usage(ctx, ["-b", "8", "-e", "8", "-J", "/nonexistent-dir/x/r.json"], "-J/--output_file '/nonexistent-dir/x/r.json'")
    expect_usage(ctx, ["-b", "8", "-e", "8", "-J", ctx.tmp], "is a directory", np=2)
    # Renaming over a device replaced it with a regular file (as root, /dev/null too).
    expect_usage(ctx, ["-b", "8", "-e", "8", "-J", "/dev/full"], "is a character device")
    check(stat.S_ISCHR(os.stat("/dev/full").st_mode), "/dev/full is no longer a device")
    fifo = os.path.join(ctx.tmp, "fifo")
    os.mkfifo(fifo)
    expect_usage(ctx, ["-b", "8", "-e", "8", "-J", fifo], "is a FIFO")


@case
def nccl_backend_unavailable(ctx):
    if has_gpu():
        raise Skip("a GPU is present: the nccl backend is usable here")
    rc, so, se, _ = ctx.run(["--backend", "nccl", "-b", "8", "-e", "8"])
    check(rc == 5, "rc %d" % rc)
    check(len(railkit_lines(se)) == 1 and "--backend nccl" in railkit_lines(se)[0], se)
    # -g N is the nccl backend's: without a GPU the reason comes first, whatever else -g meets
    for args in (["-g", "2"], ["-g", "2", "--split", "rail"], ["-g", "4", "-G", "2", "-b", "8", "-e", "8"]):
        rc, so, se, _ = ctx.run(["--backend", "nccl"] + args)
        check(rc == 5, "rc %d for %s" % (rc, args))
        lines = railkit_lines(se)
        check(len(lines) == 1 and "--backend nccl: no usable GPU" in lines[0], "%s: %r" % (args, lines))
    rc, so, se, _ = ctx.run(["--backend", "nccl", "-g", "2"], np=2)
    check(rc == 5 and len(railkit_lines(se)) == 1, "rc %d under mpirun: %s" % (rc, se[-500:]))
    # auto falls back to mpi without a GPU
    out = ctx.path("auto.json")
    rc, so, se, _ = ctx.run(["-b", "8", "-e", "8", "-J", out])
    check(rc == 0 and load(out)["run"]["backend"] == "mpi", "auto picks mpi without a GPU")


@case
def gpu_nccl_all_collectives(ctx):
    if not has_gpu():
        raise Skip("no GPU here")
    for dt in ("float", "half", "bfloat16", "int8"):
        out = ctx.path("gpu-%s.json" % dt)
        rc, so, se, _ = ctx.run(["--backend", "nccl", "--coll", "all", "-b", "8", "-e", "1M", "-f", "16", "-d", dt,
                                 "-J", out], np=1)
        check(rc == 0, "rc %d: %s" % (rc, se[-800:]))
        doc = load(out)
        check(doc["run"]["backend"] == "nccl", "backend")
        check(all(r["wrong"] == 0 for r in doc["results"]), "wrong values on the GPU (%s)" % dt)


@case
def gpu_nccl_cuda_graph(ctx):
    if not has_gpu():
        raise Skip("no GPU here")
    out = ctx.path("gpu-graph.json")
    rc, so, se, _ = ctx.run(["--backend", "nccl", "--coll", "all_reduce,all_gather", "-b", "1K", "-e", "1M", "-f", "32",
                             "-G", "3", "-J", out], np=1)
    check(rc == 0, "rc %d: %s" % (rc, se[-800:]))
    check(all(r["wrong"] == 0 for r in load(out)["results"]), "graph mode keeps data checks right")


def gpu_count():
    try:
        out = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        return 0
    return sum(1 for l in out.splitlines() if l.startswith("GPU "))


@case
def gpu_nccl_multi_gpu_process(ctx):
    if not has_gpu():
        raise Skip("no GPU here")
    if gpu_count() < 2:
        raise Skip("-g 2 needs 2 GPUs, %d here" % gpu_count())
    out = ctx.path("gpu-g2.json")
    rc, so, se, _ = ctx.run(["--backend", "nccl", "-g", "2", "--coll", "all", "-b", "8", "-e", "1M", "-f", "16",
                             "-J", out])
    check(rc == 0, "rc %d: %s" % (rc, se[-800:]))
    doc = load(out)
    check(doc["run"]["nranks"] == 2, "nranks %s" % doc["run"]["nranks"])
    check(all(r["wrong"] == 0 for r in doc["results"]), "wrong values with -g 2")
    devices = [r["device"] for r in doc["observed"]["ranks"]]
    check(len(devices) == 2 and len(set(devices)) == 2, "one distinct GPU per rank: %s" % devices)
    validate_schema(doc)
    out = ctx.path("gpu-g2-graph.json")
    rc, so, se, _ = ctx.run(["--backend", "nccl", "-g", "2", "--coll", "all_reduce,all_gather", "-b", "1K", "-e", "1M",
                             "-f", "32", "-G", "3", "-J", out])
    check(rc == 0, "graph rc %d: %s" % (rc, se[-800:]))
    check(all(r["wrong"] == 0 for r in load(out)["results"]), "graph mode with -g 2 keeps data checks right")


@case
def gpu_nccl_watchdog(ctx):
    if not has_gpu():
        raise Skip("no GPU here")
    out = ctx.path("gpu-stall.json")
    rc, so, se, secs = ctx.run(["--backend", "nccl", "-b", "1M", "-e", "1M", "-T", "3", "--inject-stall", "0", "-J", out],
                               np=1, timeout=60)
    check(rc == 4 and secs < 12, "rc %d after %.1f s" % (rc, secs))


@case
def one_ranks_problem_ends_every_rank(ctx):
    """A problem only one rank can see before anything collective (its GPUs, or a backend that
    resolves differently) must not leave the others blocked: every rank agrees first, rank 0
    prints the failing rank's message naming it, and every rank exits with its code. Flags that
    differ per rank (mpirun's MPMD form) make one rank fail here, where no GPU is."""
    if has_gpu():
        raise Skip("a GPU is present: --backend nccl would not fail on rank 1")
    base = ["-b", "8", "-e", "8", "-T", "20"]
    # rank 1 asks for nccl (no GPU here: unavailable), rank 0 resolves to mpi
    rc, so, se, secs = ctx.run_mpmd([["--backend", "mpi"] + base, ["--backend", "nccl"] + base])
    check(rc == 5, "rc %d (want 5): %s" % (rc, se[-600:]))
    lines = railkit_lines(se)
    check(len(lines) == 1 and "--backend nccl: no usable GPU" in lines[0] and "[rank 1]" in lines[0],
          "want rank 1's reason once, naming it: %r" % lines)
    check(secs < 30, "took %.1f s: the other rank waited" % secs)
    # rank 1 asks for 2 GPUs per process on the mpi backend (usage), rank 0 is fine
    rc, so, se, secs = ctx.run_mpmd([["--backend", "mpi"] + base, ["--backend", "mpi", "-g", "2"] + base])
    check(rc == 6, "rc %d (want 6): %s" % (rc, se[-600:]))
    lines = railkit_lines(se)
    check(len(lines) == 1 and "-g/--ngpus '2'" in lines[0] and "[rank 1]" in lines[0], "%r" % lines)
    # both fail: the first one is printed, and the others are counted
    rc, so, se, secs = ctx.run_mpmd([["--backend", "mpi", "-g", "3"] + base, ["--backend", "mpi", "-g", "2"] + base])
    lines = railkit_lines(se)
    check(rc == 6 and len(lines) == 1 and "-g/--ngpus '3'" in lines[0] and "[rank 0 and 1 other]" in lines[0],
          "rc %d %r" % (rc, lines))


@case
def label_with_control_characters_is_refused(ctx):
    """A newline in --label broke the table's header (issue 14): refused with one line that shows
    it escaped, before anything runs."""
    expect_usage(ctx, ["--label", "a\nb", "-b", "8", "-e", "8"], "--label 'a\\x0ab': control characters")
    expect_usage(ctx, ["--label", "\x1b]0;title\x07"], "--label '\\x1b]0;title\\x07'", np=2)


@case
def error_on_one_rank_after_agreement_ends_the_job(ctx):
    """An error that escapes on one rank after the ranks stopped agreeing (issue 14: rank 0 failing
    to write the document) once left rank 0 in MPI_Finalize and rank 1 in a barrier forever (no
    -T). The -J directory vanishes during the run, so only rank 0 fails, at its final write: the
    error line comes first and every rank is aborted with a non-zero code."""
    d = ctx.path("gone")
    os.mkdir(d)
    cmd = ["mpirun", "-np", "2", ctx.bench, "-b", "8", "-e", "64", "-f", "2", "-n", "4", "-w", "1",
           "--inject-delay-us", "1:200000", "-J", os.path.join(d, "r.json")]
    t0 = time.monotonic()
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=mpi_env())
    seen = ""
    for line in p.stdout:  # the table is out: the document's directory goes now
        seen += line
        if line.startswith("# Collective:"):
            break
    shutil.rmtree(d)
    try:
        so, se = p.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        p.kill()
        so, se = p.communicate()
        raise Failure("still running after 60 s: a rank waits for the one that failed: %s" % se[-600:])
    check(seen.startswith("# railkit-bench"), "no table: %r %s" % (seen[:300], se[-600:]))
    check(p.returncode == 9, "rc %d (want 9, the failed write's): %s" % (p.returncode, se[-600:]))
    lines = railkit_lines(se)
    check(len(lines) == 1 and lines[0].startswith("railkit-bench: error: cannot write ") and "r.json" in lines[0],
          "want rank 0's one error line: %r" % se[-800:])
    # (mpirun forwards the line and prints MPI_ABORT's notice on two channels: their order varies)
    check(time.monotonic() - t0 < 60, "slow")


@case
def version_and_help(ctx):
    rc, so, se, _ = ctx.run(["--version"])
    check(rc == 0 and so.startswith("railkit-bench ") and "backends: mpi (" in so, so)
    rc, so, se, _ = ctx.run(["--help"])
    check(rc == 0 and "--inject-delay-us" in so and "-J,--output_file" in so and "--prom" in so, so[:300])


@case
def singleton_without_mpirun(ctx):
    out = ctx.path("single.json")
    rc, so, se, _ = ctx.run(["--coll", "all", "-b", "8", "-e", "4K", "-f", "8", "-J", out])
    check(rc == 0, se)
    check_results(load(out), 1)


@case
def bytes_not_utf8_are_stored_replaced(ctx):
    """A --label and an NCCL_* variable that are not UTF-8 (issue 14) once ended the run in
    'internal error [json.exception.type_error.316]' with no document; the run goes on and the
    document holds U+FFFD for each bad byte."""
    out = ctx.path("bytes.json")
    env = mpi_env()
    env["NCCL_FOO"] = os.fsdecode(b"\xff")
    cmd = [ctx.bench, "-b", "8", "-e", "8", "--label", os.fsdecode(b"\xff\xfe"), "-J", out]
    p = subprocess.run(cmd, capture_output=True, timeout=120, env=env)
    se = p.stderr.decode("utf-8", "replace")
    check(p.returncode == 0, "rc %d: %s" % (p.returncode, se[-600:]))
    check("internal error" not in se, se[-600:])
    with open(out, "rb") as f:
        raw = f.read()
    doc = json.loads(raw.decode("utf-8"))  # strict: every byte of the file is UTF-8
    check(doc["run"]["label"] == "\ufffd\ufffd", "label %r" % doc["run"]["label"])
    check(doc["run"]["env"].get("NCCL_FOO") == "\ufffd", "env %r" % doc["run"]["env"].get("NCCL_FOO"))
    check_results(doc, 1)


# --- what the transport really was (issue 17): observed.ranks[].cpus / .transport ----------

CPU_LIST = re.compile(r"^[0-9]+(-[0-9]+)?(,[0-9]+(-[0-9]+)?)*$")


def cpu_ids(text):
    out = set()
    for part in text.split(","):
        lo, _, hi = part.partition("-")
        out.update(range(int(lo), int(hi or lo) + 1))
    return out


def header_lines(stdout):
    """The table header: the lines before the first collective's section."""
    return stdout.split("# Collective:")[0].splitlines()


def transport_run(ctx, name, np=2, mpirun_args=()):
    out = ctx.path(name)
    rc, so, se, _ = ctx.run(["--coll", "all_reduce", "-b", "8", "-e", "8", "-n", "5", "-w", "1", "-J", out], np=np,
                            mpirun_args=mpirun_args)
    check(rc == 0, "rc %d: %s" % (rc, se[-800:]))
    doc = load(out)
    validate_schema(doc)
    ranks = doc["observed"]["ranks"]
    check(len(ranks) == np, "ranks %d" % len(ranks))
    for r in ranks:
        check("transport" in r and "cpus" in r, "rank %d has no transport or cpus: %s" % (r["rank"], r))
    if ranks[0]["transport"]["source"].startswith("unknown"):
        raise Skip("this railkit-bench cannot read Open MPI's selection: %s" % ranks[0]["transport"]["source"])
    return doc, so


@case
def transport_default_uses_shared_memory(ctx):
    doc, so = transport_run(ctx, "tr.json")
    summary = doc["observed"]["transport"]
    check(summary is not None, "ranks disagree: %s" % doc["observed"].get("transport_note"))
    check(summary["launcher"] == "mpirun", "launcher %s" % summary["launcher"])
    check(summary["pmi"].startswith("pmix "), "pmi %s" % summary["pmi"])
    check(summary["inter_node"] is None, "one node: no inter-node peers, got %s" % summary["inter_node"])
    for r in doc["observed"]["ranks"]:
        t = r["transport"]
        check(t["pml"] == summary["pml"] and t["pml"] != "unknown", "pml %s" % t["pml"])
        if t["pml"] == "ob1":  # Debian's Open MPI 4.1 on one node: ob1 over vader, self to itself
            check(t["intra_node"] == "vader", "rank %d intra_node %s" % (r["rank"], t["intra_node"]))
            check(t["btl_peers"].get("self") == str(r["rank"]), "self BTL %s" % t["btl_peers"])
        check(t["seen_remote"] == "", "Open MPI holds ranks of this node for remote: %s" % t["seen_remote"])
        check(CPU_LIST.match(r["cpus"]), "cpus %r" % r["cpus"])
        check(max(cpu_ids(r["cpus"])) < (os.cpu_count() or 1), "cpus %s beyond this machine" % r["cpus"])
    shm = [w for w in doc["observed"].get("warnings", []) if "not shared memory" in w]
    check(not shm, "warned: %s" % shm)
    check(not any("not shared memory" in l for l in so.splitlines()), "table warns of shared memory")


@case
def transport_tcp_within_the_node_is_warned(ctx):
    doc, so = transport_run(ctx, "tcp.json", mpirun_args=["-x", "OMPI_MCA_btl=self,tcp"])
    host = doc["observed"]["ranks"][0]["host"]
    check(doc["observed"]["transport"] is not None, doc["observed"].get("transport_note"))
    check(doc["observed"]["transport"]["intra_node"] == "tcp", "summary %s" % doc["observed"]["transport"])
    for r in doc["observed"]["ranks"]:
        check(r["transport"]["intra_node"] == "tcp", "rank %d intra_node %s" % (r["rank"], r["transport"]["intra_node"]))
    want = "host %s: ranks 0-1 reach each other over tcp, not shared memory" % host
    check(want in doc["observed"]["warnings"], "%r not in %s" % (want, doc["observed"]["warnings"]))
    check("# warning: " + want in header_lines(so), "no header line %r in:\n%s" % (want, so[:1500]))


@case
def transport_unbound_ranks_share_cores(ctx):
    doc, so = transport_run(ctx, "unbound.json", mpirun_args=["--bind-to", "none"])
    cpus = [r["cpus"] for r in doc["observed"]["ranks"]]
    check(cpus[0] == cpus[1] and cpus[0], "unbound ranks with different CPUs: %s" % cpus)
    lines = [l for l in header_lines(so) if l.startswith("# warning: ") and "ranks 0-1" in l
             and ("share cores" in l or "take turns on one core" in l)]
    check(len(lines) == 1, "want one affinity warning in the header:\n%s" % so[:1500])
    check(any(lines[0][len("# warning: "):] == w for w in doc["observed"]["warnings"]), "warning not in the document")


@case
def srun_transport_records_the_launcher(ctx):
    """Under srun --mpi=pmix (the private Slurm of the ctest fixture `slurm`): launcher srun, the
    PMI with SLURM_MPI_TYPE, shared memory within the node, and an affinity warning exactly when
    the ranks were left unbound (a Slurm with TaskPlugin=task/none cannot bind)."""
    import slurm
    env = slurm.client_env()
    if env is None:
        raise Skip("no private Slurm is up (RAILKIT_TEST_SLURM=%s)" % os.environ.get("RAILKIT_TEST_SLURM", ""))
    out = ctx.path("srun.json")
    cmd = ["srun", "--mpi=pmix", "-n", "2", ctx.bench, "--coll", "all_reduce", "-b", "8", "-e", "8", "-n", "5",
           "-w", "1", "-J", out]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=120, env=env)
    if p.returncode != 0 and "mpi/pmix" in p.stderr and ("not found" in p.stderr or "Couldn't find" in p.stderr):
        raise Skip("this Slurm has no pmix plugin: %s" % p.stderr.strip()[-300:])
    check(p.returncode == 0, "rc %d: %s" % (p.returncode, p.stderr[-800:]))
    doc = load(out)
    validate_schema(doc)
    ranks = doc["observed"]["ranks"]
    check(len(ranks) == 2, "ranks %d" % len(ranks))
    for r in ranks:
        t = r["transport"]
        check(t["launcher"] == "srun", "launcher %s" % t["launcher"])
        check(CPU_LIST.match(r["cpus"]), "cpus %r" % r["cpus"])
        if t["source"].startswith("unknown"):
            continue
        check(t["pmi"].startswith("pmix ") and t["pmi"].endswith("(SLURM_MPI_TYPE=pmix)"), "pmi %s" % t["pmi"])
        if t["pml"] == "ob1":
            check(t["intra_node"] == "vader", "rank %d intra_node %s" % (r["rank"], t["intra_node"]))
    unbound = ranks[0]["cpus"] == ranks[1]["cpus"] and len(cpu_ids(ranks[0]["cpus"])) > 1
    warned = [w for w in doc["observed"].get("warnings", []) if "not bound to separate cores" in w]
    check(bool(warned) == unbound, "cpus %s, affinity warnings %s" % ([r["cpus"] for r in ranks], warned))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin")
    ap.add_argument("--case")
    ap.add_argument("--list", action="store_true")
    a = ap.parse_args()
    if a.list:
        return listing(CASES)
    with tempfile.TemporaryDirectory(prefix="railkit-it-") as tmp:
        return CASES.run(a.case, Ctx(a.bin, tmp))


if __name__ == "__main__":
    sys.exit(main())
