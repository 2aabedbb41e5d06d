#!/usr/bin/env python3
"""Integration tests of `railkit sweep` and `railkit report` on railkit-bench's simulated backend
(`--backend sim`), run for real: one railkit-bench process simulates every rank of
sim/examples/cluster-4x8-2to1.yaml at flow fidelity, small sizes, seconds (ctest label `sim`).
Standard library only.

    sweep_sim_cases.py --railkit build/bin/railkit [--bench build/bin/railkit-bench] --case NAME
    sweep_sim_cases.py --list

Exit 0 pass, 1 fail, 77 skipped (railkit-bench built without the sim backend).
"""
import csv
import io
import json
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
CLUSTER = os.path.join(ROOT, "sim", "examples", "cluster-4x8-2to1.yaml")
sys.path.insert(0, os.path.join(ROOT, "tests", "lib"))
from casekit import Cases, SimCtx, Skip, check, fnv1a64, railkit_main  # noqa: E402

CASES = Cases()
case = CASES.add

# The command with flow fidelity and small sizes: all-to-all (PXN matters on 2:1 spines)
# and all-reduce (rail-aligned rings: PXN changes little).
SIM = ["--backend", "sim", "--sim-cluster", CLUSTER, "--fidelity", "flow", "--coll", "alltoall,all_reduce",
       "-b", "1M", "-e", "16M", "-f", "4", "-n", "2", "-w", "1"]


class Ctx(SimCtx):
    def run(self, *args, timeout=240, env=None):
        argv = [self.railkit, *args]
        if args and args[0] == "sweep":
            argv[2:2] = ["--bench", self.bench]
        p = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL, env=env)
        return p.returncode, p.stdout, p.stderr


def load(path):
    with open(path) as f:
        return json.load(f)


def csv_rows(text):
    return list(csv.DictReader(io.StringIO(text)))


def one_line(stderr):
    lines = [line for line in stderr.splitlines() if line.strip()]
    check(len(lines) == 1, f"expected one stderr line, got {len(lines)}:\n{stderr}")
    return lines[0]


@case
def pxn_preset_shows_the_pxn_difference(ctx):
    """The issue's `railkit sweep --preset pxn -- --backend sim --sim-cluster cluster-4x8-2to1.yaml`:
    one local process per launch, the preset's NCCL_PXN_DISABLE / NCCL_P2P_PXN_LEVEL reach the
    simulated NCCL through the environment, rounds are replicas with other seeds, and the report and
    plot show all-to-all gaining from PXN on 2:1 spines (all-reduce not), every value marked simulated."""
    ctx.need_sim()
    out, svg = ctx.path("pxn"), ctx.path("pxn.svg")
    rc, so, se = ctx.run("sweep", "--preset", "pxn", "--seed", "5", "--out", out, "--plot", svg, "--", *SIM)
    check(rc == 0, f"railkit sweep rc {rc}\n{se}")
    check(so.startswith("SIMULATED: every value below comes from railkit-bench --backend sim"), so[:300])
    check("# alltoall float none, out-of-place: SIMULATED busbw (GB/s)" in so, so)
    sw = load(os.path.join(out, "sweep.json"))
    check(sw["launcher"]["kind"] == "local" and sw["launcher"]["np"] == 0, f"launcher {sw['launcher']}")
    check(sw["backend"]["expected"] == "sim" and sw["backend"]["seen"] == ["sim"], f"backend {sw['backend']}")
    with open(CLUSTER, "rb") as f:
        want_hash = fnv1a64(f.read())
    sim = sw["sim"]
    check(sim["simulated"] is True and sim["cluster"] == CLUSTER and sim["cluster_hash"] == want_hash
          and sim["fidelity"] == "flow", f"sweep.json sim {sim}")
    check(sim["round_seeds"] == [1, 1001, 2001], f"round seeds {sim['round_seeds']} (the cluster's seed 1, then replicas)")
    check(len(sw["launches"]) == 12, f"{len(sw['launches'])} launches, want 4 configurations x 3 rounds")
    for launch in sw["launches"]:
        cmd = launch["command"]
        check(cmd[0] == ctx.bench, f"launched without the bench first (a launcher?): {cmd[:3]}")
        seed = sim["round_seeds"][launch["round"] - 1]
        check(cmd[cmd.index("--label") - 2:cmd.index("--label")] == ["--sim-set", f"seed={seed}"],
              f"round {launch['round']} command {cmd}")
        check(launch["args"] == [], f"the seed is not a configuration argument: {launch['args']}")
        doc = load(os.path.join(out, launch["results"]))
        check(doc["simulated"] is True and doc["run"]["backend"] == "sim", f"{launch['results']}: not simulated")
        env = doc["run"]["env"]
        for k, v in launch["env"].items():
            check(env.get(k) == v, f"{launch['name']}: {k}={v} did not reach railkit-bench (run.env {env})")
    rc, text, se = ctx.run("report", out, "--format", "csv")
    check(rc == 0, se)
    rows = csv_rows(text)
    check(rows and all(r["simulated"] == "1" for r in rows), "csv: a row not marked simulated")

    def ratio(op, config, size):
        for r in rows:
            if r["op"] == op and r["config"] == config and r["bytes"] == str(size) and r["placement"] == "out":
                return float(r["ratio_to_baseline"])
        raise AssertionError(f"no csv row {op} {config} {size}")
    for size in (4 << 20, 16 << 20):
        a2a = ratio("alltoall", "pxn-level2", size)
        check(a2a > 1.3, f"alltoall {size} B with PXN / without: {a2a}; PXN should avoid the 2:1 spines")
        ar = ratio("all_reduce", "pxn-level2", size)
        check(abs(ar - 1) < 0.05, f"all_reduce {size} B with PXN / without: {ar}; rail-aligned rings should change little")
    check(os.path.getsize(svg) > 0, "no plot")
    with open(svg) as f:
        check("SIMULATED" in f.read(), "the plot does not say SIMULATED")
    rc, md, se = ctx.run("report", out, "--format", "markdown")
    check(rc == 0 and md.startswith("**SIMULATED: every value below"), md[:200] + se)


@case
def sim_refuses_launchers_and_ranks(ctx):
    """With --backend sim one process simulates every rank: --launcher mpirun or srun, or --np 4,
    is a usage error (one line, exit 6) and nothing is written."""
    ctx.need_sim()
    for flags, want in ((["--launcher", "mpirun"], "--launcher mpirun: --backend sim runs one railkit-bench process"),
                        (["--launcher", "srun"], "--launcher srun: --backend sim"),
                        (["--np", "4"], "--np 4: --backend sim runs one railkit-bench process")):
        out = ctx.path("refused-" + flags[-1])
        rc, so, se = ctx.run("sweep", "--preset", "pxn", *flags, "--out", out, "--", *SIM)
        check(rc == 6, f"{flags}: rc {rc}\n{se}")
        line = one_line(se)
        check(want in line, f"{flags}: {line}")
        check(not os.path.exists(os.path.join(out, "sweep.json")), f"{flags}: sweep.json written")
    packet = ["--backend", "sim", "--sim-cluster", CLUSTER, "--coll", "alltoall", "-b", "256K", "-e", "256K", "-n", "1",
              "-w", "0"]  # no --fidelity: railkit-bench's default
    rc, so, se = ctx.run("sweep", "--preset", "pxn", "--launcher", "local", "--rounds", "1", "--out", ctx.path("local"),
                         "--", *packet)
    check(rc == 0, f"--launcher local given explicitly: rc {rc}\n{se}")
    sim = load(os.path.join(ctx.path("local"), "sweep.json"))["sim"]
    check(sim["fidelity"] == "packet", f"fidelity not given: as railkit-bench's documents say, got {sim['fidelity']}")


@case
def report_refuses_simulated_against_measured(ctx):
    """A simulated document against a measured one: refused (one line, exit 6) unless
    --allow-sim-vs-measured, which shows them side by side marked and names no winner."""
    ctx.need_sim()
    p = subprocess.run([ctx.bench, "--version"], capture_output=True, text=True, timeout=60)
    if "mpi (" not in p.stdout or "no mpi" in p.stdout:
        raise Skip("railkit-bench was built without the mpi backend")
    sim_doc, mpi_doc = ctx.path("sim.json"), ctx.path("mpi.json")
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    small = ["--coll", "all_reduce", "-b", "1M", "-e", "1M", "-n", "2", "-w", "1"]
    for argv in ([ctx.bench, "--backend", "sim", "--sim-cluster", CLUSTER, "--fidelity", "flow", *small, "-J", sim_doc],
                 [ctx.bench, "--backend", "mpi", *small, "-J", mpi_doc]):
        q = subprocess.run(argv, capture_output=True, text=True, timeout=120, env=env, stdin=subprocess.DEVNULL)
        check(q.returncode == 0, f"{argv}: rc {q.returncode}\n{q.stderr}")
    rc, so, se = ctx.run("report", mpi_doc, sim_doc)
    check(rc == 6, f"rc {rc}\n{so}{se}")
    line = one_line(se)
    check("cannot compare simulated results ([2] sim: run.backend sim) with measured ones ([1]" in line, line)
    rc, so, se = ctx.run("report", mpi_doc, sim_doc, "--allow-sim-vs-measured")
    check(rc == 0, f"rc {rc}\n{se}")
    check(so.startswith("SIMULATED AND MEASURED side by side (--allow-sim-vs-measured): [2] simulated"), so[:300])
    check("; SIMULATED" in so and "no interval" in so, so)
    rc, so, se = ctx.run("report", sim_doc, "--format", "csv")
    check(rc == 0 and all(r["simulated"] == "1" for r in csv_rows(so)), so + se)


@case
def resume_refuses_another_cluster(ctx):
    """--resume of a simulated sweep whose cluster file changed is refused (exit 6): its rounds would
    not compare with new ones. Unchanged, it resumes and runs nothing again."""
    ctx.need_sim()
    cluster = ctx.path("c.yaml")
    shutil.copy(CLUSTER, cluster)
    args = [a if a != CLUSTER else cluster for a in SIM]
    out = ctx.path("s")
    rc, so, se = ctx.run("sweep", "--preset", "pxn", "--rounds", "1", "--out", out, "--", *args)
    check(rc == 0, se)
    rc, so, se = ctx.run("sweep", "--preset", "pxn", "--rounds", "1", "--out", out, "--resume", "--", *args)
    check(rc == 0 and se.count("skipped (--resume)") == 4, f"rc {rc}\n{se}")
    with open(cluster, "a") as f:
        f.write("# edited\n")
    rc, so, se = ctx.run("sweep", "--preset", "pxn", "--rounds", "1", "--out", out, "--resume", "--", *args)
    check(rc == 6, f"rc {rc}\n{se}")
    check("which now hashes to" in one_line(se), se)


if __name__ == "__main__":
    sys.exit(railkit_main(CASES, __doc__, Ctx, "railkit-sweep-sim-"))
