#!/usr/bin/env python3
"""railkit-bench --backend sim, run for real: one process simulates every rank of a cluster file
on the fabric simulator (no mpirun). Each case is one ctest test (labels unit, sim):
`sim_cases.py --bin DIR --case NAME`; `--list` prints the case names. Flow fidelity or small
sizes keep each case to seconds.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", "..", ".."))
SCHEMA = os.path.join(ROOT, "results", "railkit.results.schema.json")
CLUSTER_1TO1 = os.path.join(ROOT, "sim", "examples", "cluster-4x8-1to1.yaml")
SMALL = os.path.join(ROOT, "tests", "bench", "fixtures", "sim-cluster-2x4.yaml")

sys.path.insert(0, os.path.join(ROOT, "tests", "lib"))
from casekit import Cases, Failure, Skip, check, listing  # noqa: E402

CASES = Cases()
case = CASES.add


def clean_env(extra=None):
    """The environment without NCCL_* (they would change what is simulated) or a launcher's rank."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("NCCL_", "OMPI_", "PMIX_", "PMI_", "SLURM_"))}
    env.update(extra or {})
    return env


class Ctx:
    def __init__(self, bindir, tmp):
        self.bench = os.path.join(bindir, "railkit-bench")
        self.railkit = os.path.join(bindir, "railkit")
        self.tmp = tmp

    def run(self, args, env=None, timeout=60):
        """Runs railkit-bench alone; returns (rc, stdout, stderr)."""
        p = subprocess.run([self.bench] + [str(a) for a in args], capture_output=True, text=True, timeout=timeout,
                           env=clean_env(env))
        return p.returncode, p.stdout, p.stderr

    def sim(self, args, cluster=CLUSTER_1TO1, env=None):
        """A successful simulated run with -J; returns (document, stdout, stderr)."""
        out = self.path("r%d.json" % len(os.listdir(self.tmp)))
        rc, so, se = self.run(["--backend", "sim", "--sim-cluster", cluster] + list(args) + ["-J", out], env=env)
        check(rc == 0, "rc %d for %s: %s" % (rc, args, se[-800:]))
        with open(out) as f:
            return json.load(f), so, se

    def path(self, name):
        return os.path.join(self.tmp, name)


def validate_schema(doc):
    try:
        import jsonschema
    except ImportError:
        raise Failure("python3 module jsonschema is missing (Debian: python3-jsonschema; scripts/setup.sh installs it)")
    with open(SCHEMA) as f:
        jsonschema.validate(doc, json.load(f))


def railkit_lines(stderr):
    return [l for l in stderr.splitlines() if l.startswith("railkit-bench")]


def expect_error(ctx, args, needle, code=6, env=None):
    rc, so, se = ctx.run(args, env=env)
    check(rc == code, "rc %d (want %d) for %s: %s" % (rc, code, args, se[-500:]))
    lines = railkit_lines(se)
    check(len(lines) == 1, "want one railkit-bench line, got %r" % lines)
    check(lines[0].startswith("railkit-bench: error: "), lines[0])
    check(needle in lines[0], "%r not in %r" % (needle, lines[0]))


def table_rows(stdout):
    return [l.split() for l in stdout.splitlines() if l.strip() and not l.startswith("#")]


@case
def flow_run_document_and_table(ctx):
    doc, so, se = ctx.sim(["--fidelity", "flow", "--coll", "all_reduce,all_gather,alltoall", "-b", "1M", "-e", "64M",
                           "-f", "8", "-n", "4", "-w", "1"])
    validate_schema(doc)
    check(doc["simulated"] is True, "simulated: true")
    run = doc["run"]
    check(run["backend"] == "sim" and run["timing"] == "simulated", "backend %s timing %s" % (run["backend"], run["timing"]))
    check("simulated" in run["backend_version"], run["backend_version"])
    check(run["nranks"] == 32 and run["nnodes"] == 4, "32 ranks on 4 simulated nodes: %s %s" % (run["nranks"], run["nnodes"]))
    check(run["hosts"] == ["n0", "n1", "n2", "n3"], "hosts %s" % run["hosts"])
    check(run["options"]["check"] == 0, "checks off: %s" % run["options"]["check"])
    sim = run["sim"]
    c = sim["cluster"]
    check(c["name"] == "cluster-4x8-1to1" and c["file"] == CLUSTER_1TO1, "cluster %s %s" % (c["name"], c["file"]))
    check((c["nodes"], c["gpus_per_node"], c["gpus"], c["spines"]) == (4, 8, 32, 4), "shape %s" % c)
    check(c["link_rate_Gbps"] == 400 and c["oversubscription"] == 1 and c["nvlink_rate_Gbps"] > 0, "rates %s" % c)
    check(sim["fidelity"] == "flow" and sim["seed"] == 1 and sim["seed_per_iteration"] is False, "fidelity/seed")
    check(sim["sets"] == [] and sim["nccl"]["honoured"] == {} and sim["nccl"]["inert"] == [], "nccl %s" % sim["nccl"])
    check(doc["observed"]["backend"]["bootstrap"] == "none (one process)", "bootstrap")
    check(len(doc["observed"]["ranks"]) == 32 and doc["observed"]["ranks"][9]["host"] == "n1", "ranks")
    n = 32
    factors = {"all_reduce": 2.0 * (n - 1) / n, "all_gather": (n - 1) / n, "alltoall": (n - 1) / n}
    for r in doc["results"]:
        check(r["wrong"] is None, "wrong must be null (not checked), not %r" % r["wrong"])
        check(r["busbw_GBps"] == r["algbw_GBps"] * factors[r["op"]], "busbw = algbw x factor for %s %s" % (r["op"], r["bytes"]))
        check(abs(r["algbw_GBps"] - r["bytes"] / r["time_us"]["avg"] / 1e3) <= 1e-9 * r["algbw_GBps"], "algbw")
        t = r["time_us"]
        check(abs(t["min"] - t["max"]) <= 1e-9 * t["max"], "flow is deterministic: %s" % t)
        o = r["observed"]
        check(o["simulated"] is True and o["fidelity"] == "flow" and o["simulations"] == 1, "observed %s" % o)
        for k in ("algo", "proto", "channels", "protocol_factor", "latency_us", "wall_s", "counters"):
            check(k in o, "observed.%s missing" % k)
        for k in ("net_bytes", "spine_bytes", "nvlink_bytes", "ecn_marked", "pause_tx", "drops",
                  "retransmitted_packets", "cnps", "packet_hops", "events"):
            check(k in o["counters"], "counters.%s missing" % k)
    check({r["op"] for r in doc["results"] if r["in_place"]} == {"all_reduce", "all_gather"},
          "alltoall runs out-of-place only, as on NCCL")
    # The table: labelled simulated, #wrong N/A, never OK.
    check("# SIMULATED: cluster cluster-4x8-1to1 (%s): 4 nodes x 8 GPUs" % CLUSTER_1TO1 in so, so[:600])
    check("fidelity flow, seed 1" in so and "every figure below is simulated" in so, "banner")
    check("# -c: the sim backend moves no data: nothing checked" in so, "the -c line")
    check("# Out of bounds values : N/A (simulated: no data moved, nothing checked)" in so, "footer")
    check("OK" not in so.split("# Out of bounds values")[1], "footer says OK")
    rows = table_rows(so)
    check(len(rows) == 3 * 3, "rows %d" % len(rows))
    for row in rows:
        check(row[8] == "N/A", "#wrong column %r" % row)
    by = {(r["op"], r["bytes"], r["in_place"]): r for r in doc["results"]}
    ar = [row for row in rows if row[3] == "sum"]
    for row in ar:
        r = by[("all_reduce", int(row[0]), False)]
        check(abs(float(row[5]) - r["time_us"]["avg"]) <= 0.006 + 1e-3 * r["time_us"]["avg"], "time column")
    # The cost model's choice: the least predicted of the allowed candidates, on a line under each
    # all_reduce and all_gather row (none under alltoall: no choice for grouped send/recv).
    choice = [l for l in so.splitlines() if l.startswith("#   sim: ")]
    check(len(choice) == 6, "a choice line under each all_reduce and all_gather row: %r" % choice)
    for r in doc["results"]:
        o, ks = r["observed"], r["observed"]["candidates"]
        if r["op"] == "alltoall":
            check(ks == [], "alltoall: no candidates, %r" % ks)
            continue
        check(ks and all(k["allowed"] for k in ks), "every candidate allowed without NCCL_ALGO/NCCL_PROTO: %r" % ks)
        check(all(abs(k["predicted_us"] - k["latency_us"] - k["bandwidth_us"]) <= 1e-9 * k["predicted_us"] for k in ks),
              "predicted = latency + bandwidth term")
        best = min(ks, key=lambda k: k["predicted_us"])
        check((best["algo"], best["proto"]) == (o["algo"], o["proto"]), "%s %s: chose %s/%s, least predicted %s" %
              (r["op"], r["bytes"], o["algo"], o["proto"], best))
        check("#   sim: %s/%s chosen by the cost model, predicted %.1f us" % (o["algo"], o["proto"], best["predicted_us"]) in so,
              "no table line for %s %s" % (r["op"], r["bytes"]))
    check(not [l for l in railkit_lines(se)], "no warning without NCCL variables: %r" % se)


@case
def packet_iterations_vary_by_seed(ctx):
    doc, so, se = ctx.sim(["--coll", "alltoall", "-b", "256K", "-e", "256K", "-n", "4", "-w", "3",
                           "--sim-set", "seed=11"], cluster=SMALL)
    validate_schema(doc)
    check(doc["run"]["sim"]["fidelity"] == "packet" and doc["run"]["sim"]["seed"] == 11, "packet is the default")
    check(doc["run"]["sim"]["sets"] == ["seed=11"], "sets recorded")
    (r,) = doc["results"]
    o = r["observed"]
    check(o["seeds"] == [11, 12, 13, 14], "iteration i uses seed + i, warm-ups unsimulated: %s" % o["seeds"])
    check(o["simulations"] == 4 and o["fidelity"] == "packet", "simulations %s" % o["simulations"])
    t = r["time_us"]
    check(t["min"] <= t["p50"] <= t["max"] and t["min"] > 0, "times %s" % t)
    check(r["busbw_GBps"] == r["algbw_GBps"] * 7 / 8, "busbw")
    check("seed 11 (iteration i simulated with seed + i)" in so, "banner names the seeds")


@case
def observe_gives_simulated_nccl_log_summary(ctx):
    doc, _, _ = ctx.sim(["--fidelity", "flow", "-b", "8M", "-e", "8M", "-n", "2"])
    nccl = doc["observed"].get("nccl")
    check(isinstance(nccl, dict), "observed.nccl: %r" % nccl)
    check(nccl["files"] == ["simulated"], "files %s" % nccl["files"])
    for k in ("pxn", "pxn_relays", "nics_used", "channels", "patterns", "net"):
        check(k in nccl, "observed.nccl.%s missing" % k)
    doc, _, _ = ctx.sim(["--fidelity", "flow", "-b", "8M", "-e", "8M", "-n", "2", "--no-observe"])
    check("nccl" not in doc["observed"], "--no-observe: no observed.nccl")


@case
def nccl_environment_honoured_and_inert(ctx):
    env = {"NCCL_ALGO": "Ring", "NCCL_PXN_DISABLE": "1", "NCCL_IB_HCA": "mlx5_0", "NCCL_SOCKET_IFNAME": "eth0"}
    doc, so, se = ctx.sim(["--fidelity", "flow", "-b", "4M", "-e", "4M", "-n", "2"], env=env)
    nccl = doc["run"]["sim"]["nccl"]
    check(nccl["honoured"].get("NCCL_ALGO") == "Ring" and nccl["honoured"].get("NCCL_PXN_DISABLE") == "1",
          "honoured %s" % nccl["honoured"])
    check("NCCL_IB_HCA" in nccl["inert"] and "NCCL_SOCKET_IFNAME" in nccl["inert"], "inert %s" % nccl["inert"])
    check(doc["run"]["env"].get("NCCL_IB_HCA") == "mlx5_0", "env recorded")
    warnings = [l for l in railkit_lines(se) if l.startswith("railkit-bench: warning: ")]
    check(len(warnings) == 1 and "NCCL_IB_HCA" in warnings[0] and "NCCL_SOCKET_IFNAME" in warnings[0],
          "one warning line naming the inert variables: %r" % se)
    check(all(r["observed"]["algo"] == "Ring" for r in doc["results"]), "NCCL_ALGO=Ring honoured")
    expect_error(ctx, ["--backend", "sim", "--sim-cluster", CLUSTER_1TO1, "-b", "1M", "-e", "1M"], "NCCL_ALGO",
                 env={"NCCL_ALGO": "NVLS"})


@case
def option_and_cluster_errors(ctx):
    sim = ["--backend", "sim", "--sim-cluster", CLUSTER_1TO1]
    expect_error(ctx, ["--sim-cluster", CLUSTER_1TO1], "--sim-cluster '%s': only with --backend sim" % CLUSTER_1TO1)
    expect_error(ctx, ["--fidelity", "flow"], "--fidelity 'flow': only with --backend sim")
    expect_error(ctx, ["--sim-set", "seed=2"], "--sim-set 'seed=2': only with --backend sim")
    expect_error(ctx, ["--backend", "sim"], "--backend sim: needs --sim-cluster")
    expect_error(ctx, sim + ["--fidelity", "exact"], "--fidelity 'exact'")
    expect_error(ctx, sim + ["-G", "1"], "-G/--cudagraph '1'")
    expect_error(ctx, sim + ["-g", "2"], "-g/--ngpus '2'")
    expect_error(ctx, sim + ["--split", "rail"], "--split 'rail'")
    expect_error(ctx, sim + ["-r", "32", "--coll", "broadcast"], "-r/--root '32': the simulated cluster has only 32 GPUs")
    expect_error(ctx, ["--backend", "sim", "--sim-cluster", ctx.path("missing.yaml")], "missing.yaml")
    bad = ctx.path("bad.yaml")
    with open(bad, "w") as f:
        f.write("name: bad\ntopology: {nodes: 2, gpus_per_node: 4, spines: 2, link_rate: 100}\n")
    expect_error(ctx, ["--backend", "sim", "--sim-cluster", bad], "link_rate")
    expect_error(ctx, sim + ["--sim-set", "topology.no_such_key=1"], "no_such_key")
    # One process simulates every rank: started by a launcher as several, it refuses.
    expect_error(ctx, sim + ["-b", "1M", "-e", "1M"], "without mpirun", env={"OMPI_COMM_WORLD_SIZE": "4"})


@case
def sim_cluster_fifo_is_refused(ctx):
    """Issue 32: --sim-cluster naming a FIFO waited in open() for a writer forever; now one line,
    exit 6, at once (ctx.run's timeout fails a regression rather than hanging)."""
    fifo = ctx.path("cluster.yaml")
    os.mkfifo(fifo)
    expect_error(ctx, ["--backend", "sim", "--sim-cluster", fifo, "-b", "1M", "-e", "1M"],
                 "--sim-cluster '%s': is a FIFO, not a regular file" % fifo)
    # railkit sweep reads the cluster file of its bench arguments before anything runs.
    p = subprocess.run([ctx.railkit, "sweep", "--launcher", "local", "--np", "1", "--out", ctx.path("sweep"),
                        "--bench", ctx.bench, "--axis", "NCCL_ALGO=Ring,Tree", "--", "--backend", "sim",
                        "--sim-cluster", fifo, "-b", "1M", "-e", "1M"],
                       capture_output=True, text=True, timeout=30, env=clean_env())
    lines = p.stderr.strip().splitlines()
    check(p.returncode == 6 and len(lines) == 1 and ("--sim-cluster '%s': is a FIFO" % fifo) in lines[0],
          "railkit sweep rc %d: %s" % (p.returncode, p.stderr[-500:]))


@case
def address_space_limit_is_a_usage_error(ctx):
    """Issue 32: the sim backend reserves (never touches) each rank's buffers; under an address-space
    limit (ulimit -v) that cannot hold them, it exited 1 (internal). Now one line naming -e and the
    limit, exit 6 (buffers that do not fit), and the document records the error."""
    out = ctx.path("as.json")
    cmd = "ulimit -v %d && exec \"$0\" \"$@\"" % (4 * 1024 * 1024)  # 4 GiB; 8 ranks x 2 x 1 GiB asked
    p = subprocess.run(["bash", "-c", cmd, ctx.bench, "--backend", "sim", "--sim-cluster", SMALL, "--fidelity", "flow",
                        "-b", "1G", "-e", "1G", "-n", "1", "-w", "0", "-J", out],
                       capture_output=True, text=True, timeout=60, env=clean_env())
    lines = railkit_lines(p.stderr)
    check(p.returncode == 6, "rc %d (want 6): %s" % (p.returncode, p.stderr[-800:]))
    check(len(lines) == 1 and lines[0].startswith("railkit-bench: error: -e/--maxbytes: the sim backend cannot reserve")
          and "ulimit -v" in lines[0], "stderr %r" % lines)
    # The same sizes without the limit run (nothing is ever backed by memory).
    doc, _, _ = ctx.sim(["--fidelity", "flow", "-b", "1G", "-e", "1G", "-n", "1", "-w", "0"], cluster=SMALL)
    check(len(doc["results"]) > 0, "no results without the limit")


@case
def prom_textfile_is_labelled_simulated(ctx):
    prom = ctx.path("sim.prom")
    doc, _, _ = ctx.sim(["--fidelity", "flow", "-b", "1M", "-e", "1M", "-n", "2", "--prom", prom])
    with open(prom) as f:
        text = f.read()
    samples = [l for l in text.splitlines() if l.startswith(("railkit_bench_busbw_gbps{", "railkit_bench_time_us{"))]
    check(len(samples) == 2 * len(doc["results"]), "samples %d" % len(samples))
    check(all('backend="sim"' in l and 'simulated="true"' in l for l in samples), text)


@case
def version_and_help_name_the_sim_backend(ctx):
    rc, so, _ = ctx.run(["--version"])
    check(rc == 0 and "sim (ns-3 " in so and "simulated)" in so, so)
    rc, so, _ = ctx.run(["--help"])
    check(rc == 0 and "--sim-cluster" in so and "--fidelity" in so and "--sim-set" in so, so[-1500:])


@case
def readers_parse_simulated_documents(ctx):
    """railkit report (sweep's compare) reads simulated documents like measured ones."""
    if not os.path.exists(ctx.railkit):
        raise Skip("%s is not built" % ctx.railkit)
    a, _, _ = ctx.sim(["--fidelity", "flow", "-b", "1M", "-e", "16M", "-f", "4", "-n", "2", "--label", "one-to-one"])
    b, _, _ = ctx.sim(["--fidelity", "flow", "-b", "1M", "-e", "16M", "-f", "4", "-n", "2", "--label", "two-to-one",
                       "--sim-set", "topology.fabric_rate=200Gbps"])
    check(b["run"]["sim"]["cluster"]["oversubscription"] == 2, "override applied: 4 spines at 200 Gb/s are 2:1")
    check(b["run"]["sim"]["cluster"]["fabric_rate_Gbps"] == 200, "the spine link rate reported")
    files = sorted(os.path.join(ctx.tmp, f) for f in os.listdir(ctx.tmp) if f.endswith(".json"))
    p = subprocess.run([ctx.railkit, "report"] + files, capture_output=True, text=True, timeout=60, env=clean_env())
    check(p.returncode == 0, "railkit report rc %d: %s" % (p.returncode, p.stderr[-800:]))
    check("one-to-one" in p.stdout and "two-to-one" in p.stdout, p.stdout[-1500:])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin")
    ap.add_argument("--case")
    ap.add_argument("--list", action="store_true")
    a = ap.parse_args()
    if a.list:
        return listing(CASES)
    with tempfile.TemporaryDirectory(prefix="railkit-sim-it-") as tmp:
        return CASES.run(a.case, Ctx(a.bin, tmp), also_failures=(subprocess.TimeoutExpired,))


if __name__ == "__main__":
    sys.exit(main())
