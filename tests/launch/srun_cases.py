#!/usr/bin/env python3
"""railkit's srun path for real, through the private one-node Slurm of the ctest fixture `slurm`
(tests/lib/slurm.py; RAILKIT_TEST_SLURM names its state directory). A case skips when that Slurm
is not up (Slurm or munge not installed). Standard library only.

    srun_cases.py --railkit build/bin/railkit [--bench build/bin/railkit-bench] --case NAME
    srun_cases.py --list

Exit 0 pass, 1 fail, 77 skipped.
"""
import json
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "tests", "lib"))
from casekit import Cases, check, railkit_main  # noqa: E402
import slurm  # noqa: E402

CASES = Cases()
case = CASES.add

BENCH = ["--coll", "all_reduce", "-b", "8", "-e", "64", "-f", "2", "-n", "5", "-w", "2"]


def jobs(env):
    """JobId -> JobName of the jobs the controller remembers (finished ones stay MinJobAge, 300 s)."""
    p = subprocess.run(["scontrol", "show", "jobs", "-o"], env=env, capture_output=True, text=True, timeout=30)
    check(p.returncode == 0, "scontrol show jobs: %s" % p.stderr.strip())
    out = {}
    for line in p.stdout.splitlines():
        m = re.search(r"JobId=(\d+) JobName=(\S+)", line)
        if m:
            out[m.group(1)] = m.group(2)
    return out


def new_jobs(env, before):
    return {k: v for k, v in jobs(env).items() if k not in before}


class Ctx(slurm.CaseCtx):
    """slurm.CaseCtx, and railkit run with its --bench."""

    def run(self, env, *args, timeout=120):
        argv = [self.railkit, *args]
        if args[0] in ("sweep", "tune", "accept"):
            argv[2:2] = ["--bench", self.bench]
        p = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL)
        return p.returncode, p.stdout, p.stderr


@case
def slurm_runs(ctx):
    """The private Slurm runs a two-task job on its node."""
    env = ctx.slurm_env()
    p = subprocess.run(["srun", "--ntasks=2", "hostname"], env=env, capture_output=True, text=True, timeout=60,
                       stdin=subprocess.DEVNULL)
    check(p.returncode == 0, "srun --ntasks=2 hostname: exit %d: %s" % (p.returncode, p.stderr.strip()))
    lines = p.stdout.split()
    check(len(lines) == 2, "srun --ntasks=2 hostname printed %r, expected two lines" % p.stdout)


def check_world(doc_path, nranks, what):
    """A results document written by one MPI world of `nranks` ranks (with no MPI plugin, srun
    would start singletons that each think they are rank 0 of 1)."""
    check(os.path.exists(doc_path), "%s: no results document %s" % (what, doc_path))
    with open(doc_path) as f:
        doc = json.load(f)
    check(doc["run"]["nranks"] == nranks, "%s: nranks %s, expected %d (srun without an MPI plugin?)"
          % (what, doc["run"]["nranks"], nranks))
    check(doc["results"], "%s: no results" % what)
    return doc


@case
def sweep(ctx):
    """railkit sweep --launcher srun --np 2: every configuration runs as a Slurm job of one
    two-rank MPI world (--mpi=pmix passed although the cluster's MpiDefault is none)."""
    env = ctx.slurm_env()
    out = ctx.path("sweep")
    before = jobs(env)
    rc, so, se = ctx.run(env, "sweep", "--launcher", "srun", "--np", "2", "--axis", "RAILKIT_TEST_AXIS=1,2",
                         "--rounds", "1", "--out", out, "--", "--backend", "mpi", *BENCH)
    check(rc == 0, "rc %d\n%s" % (rc, se))
    with open(os.path.join(out, "sweep.json")) as f:
        doc = json.load(f)
    check(len(doc["launches"]) == 2, "%d launches, expected 2" % len(doc["launches"]))
    for r in doc["launches"]:
        check(r["status"] == "ok", "launch %s: %s" % (r["name"], r.get("error")))
        check(r["command"][:4] == ["srun", "--ntasks=2", "--mpi=pmix", "--cpu-bind=cores"], "command %s" % r["command"])
        world = check_world(os.path.join(out, r["results"]), 2, r["name"])
        # --backend mpi: railkit binds each rank to a core, so two ranks never share one (the
        # ~4000 us per 8-byte all_reduce of unbound busy-polling ranks), and the document says so.
        cpus = [x.get("cpus") for x in world["observed"]["ranks"]]
        check(len(set(cpus)) == 2 and all(cpus), "%s: ranks not bound to separate cores: cpus %s" % (r["name"], cpus))
        shared = [w for w in world["observed"].get("warnings", []) if "cores" in w or "CPU" in w]
        check(not shared, "%s: a CPU-sharing warning although bound: %s" % (r["name"], shared))
    new = new_jobs(env, before)
    names = sorted(n for n in new.values())
    check(names.count("railkit-bench") == 2 and names.count("railkit-preflight") == 1,
          "Slurm jobs of the sweep: %s (expected the preflight and 2 railkit-bench)" % names)


@case
def sweep_mpi_plugin_given(ctx):
    """--launcher-args --mpi=... replaces railkit's --mpi=pmix (pmix_v4: the same plugin, by its own name)."""
    env = ctx.slurm_env()
    out = ctx.path("sweep")
    rc, so, se = ctx.run(env, "sweep", "--launcher", "srun", "--np", "2", "--launcher-args", "--mpi=pmix_v4",
                         "--axis", "RAILKIT_TEST_AXIS=1", "--rounds", "1", "--out", out, "--", *BENCH)
    check(rc == 0, "rc %d\n%s" % (rc, se))
    with open(os.path.join(out, "sweep.json")) as f:
        r = json.load(f)["launches"][0]
    check(r["status"] == "ok", "launch: %s" % r.get("error"))
    mpi = [a for a in r["command"] if a.startswith("--mpi")]
    check(mpi == ["--mpi=pmix_v4"], "MPI plugin arguments %s, expected only --mpi=pmix_v4" % mpi)
    check_world(os.path.join(out, r["results"]), 2, r["name"])


@case
def tune(ctx):
    """railkit tune --launcher srun: two trials and two A/B validation pairs, every one a Slurm job;
    the profile is written."""
    env = ctx.slurm_env()
    out = ctx.path("tune")
    before = jobs(env)
    rc, so, se = ctx.run(env, "tune", "--space", "ompi-coll", "--strategy", "grid", "--budget", "2", "--pairs", "2",
                         "--launcher", "srun", "--np", "2", "--out", out, "--", "--backend", "mpi", *BENCH)
    check(rc == 0, "rc %d\n%s" % (rc, se))
    with open(os.path.join(out, "journal.jsonl")) as f:
        lines = [json.loads(line) for line in f if line.strip()]
    check(lines[0]["launcher"]["kind"] == "srun", "journal launcher %s" % lines[0]["launcher"])
    trials = [t for t in lines if t.get("type") == "trial"]
    check(len(trials) == 2 and all(t["status"] == "ok" for t in trials),
          "trials: %s" % [(t.get("label"), t.get("status"), t.get("error")) for t in trials])
    for t in trials:
        check_world(os.path.join(out, t["results"]), 2, "trial " + t["label"])
    check(os.path.exists(os.path.join(out, "profile.json")), "no profile.json\n" + se)
    names = list(new_jobs(env, before).values())
    check(names.count("railkit-bench") >= 2 + 2 * 2 and names.count("railkit-preflight") == 1,
          "Slurm jobs of the session: %s (expected the preflight and 2 trials + 2 pairs of railkit-bench)"
          % sorted(names))
    # --resume checks the journal's launcher too: with no controller, one line, the journal untouched
    with open(os.path.join(out, "journal.jsonl")) as f:
        journal = f.read()
    rc, so, se = ctx.run(dead_controller_env(ctx, env), "tune", "--resume", out, "--budget", "3")
    check(rc == 5 and len(se.strip().splitlines()) == 1 and "no Slurm controller answers" in se,
          "resume without a controller: rc %d\n%s" % (rc, se))
    with open(os.path.join(out, "journal.jsonl")) as f:
        check(f.read() == journal, "resume without a controller changed the journal")


@case
def accept(ctx):
    """railkit accept --launcher srun --np 4 --ranks-per-node 2: two emulated nodes, every stage
    through srun, a verdict and its documents."""
    env = ctx.slurm_env()
    out = ctx.path("accept")
    junit = ctx.path("accept.xml")
    rc, so, se = ctx.run(env, "accept", "--launcher", "srun", "--np", "4", "--ranks-per-node", "2", "--out", out,
                         "--junit", junit, timeout=150)
    check(rc in (0, 10), "rc %d (expected a verdict: 0 pass or 10 fail)\n%s\n%s" % (rc, so, se))
    with open(os.path.join(out, "accept.json")) as f:
        doc = json.load(f)
    check(doc["verdict"] in ("pass", "fail") and (doc["verdict"] == "pass") == (rc == 0),
          "verdict %s with rc %d" % (doc["verdict"], rc))
    names = [n["name"] for n in doc["nodes"]]
    check(len(names) == 2 and names[0].endswith(":0") and names[1].endswith(":1"), "nodes %s" % names)
    benches = [c for c in doc["commands"] if "railkit-bench" in " ".join(c["argv"])]
    check(benches, "no bench launch in accept.json's commands")
    for c in doc["commands"]:
        check(c["argv"][0] == "srun" and "--mpi=pmix" in c["argv"], "stage %s ran %s" % (c["stage"], c["argv"][:4]))
    node = os.path.join(out, "bench", "node.json")
    check_world(node, 4, "the node stage")
    for name in ("accept.prom", "good-hosts"):
        check(os.path.exists(os.path.join(out, name)), "no %s" % name)
    check(os.path.exists(junit), "no JUnit file")


def failing(ctx, env, argv_tail, expect, what):
    """Runs sweep, tune and accept (those of `argv_tail`'s keys) with `env`; each must exit 5 with
    one line naming `expect`, create no output directory and start no job but the trial job."""
    slurm_env = slurm.client_env()
    before = jobs(slurm_env) if slurm_env else None
    for cmd, args in argv_tail.items():
        out = ctx.path(what + "-" + cmd)
        rc, so, se = ctx.run(env, cmd, "--launcher", "srun", *args, "--out", out, *(
            ["--", *BENCH] if cmd != "accept" else []))
        lines = se.strip().splitlines()
        check(rc == 5, "%s: rc %d, expected 5\n%s" % (cmd, rc, se))
        check(len(lines) == 1 and expect in lines[0], "%s: expected one line with %r, got:\n%s" % (cmd, expect, se))
        check(not os.path.exists(out), "%s: the output directory %s was created" % (cmd, out))
    if before is not None:
        names = list(new_jobs(slurm_env, before).values())
        check(all(n == "railkit-preflight" for n in names), "jobs started: %s" % names)


def dead_controller_env(ctx, env):
    """`env` with SLURM_CONF naming a copy of the private Slurm's conf whose controller port nobody
    listens on."""
    conf = ctx.path("dead.conf")
    with open(env["SLURM_CONF"]) as f:
        text = f.read()
    with open(conf, "w") as f:
        f.write(re.sub(r"(?m)^SlurmctldPort=\d+$", "SlurmctldPort=%d" % slurm.free_port(), text))
    return dict(env, SLURM_CONF=conf)


COMMANDS = {
    "sweep": ["--np", "2", "--axis", "RAILKIT_TEST_AXIS=1"],
    "tune": ["--np", "2", "--space", "ompi-coll", "--budget", "2"],
    "accept": ["--np", "4", "--ranks-per-node", "2"],
}


@case
def srun_missing(ctx):
    """No srun on the PATH: exit 5, one line, nothing started."""
    env = dict(ctx.slurm_env(), PATH=ctx.path("empty-bin"))
    os.makedirs(env["PATH"])
    failing(ctx, env, COMMANDS, "--launcher srun: srun is not on the PATH", "missing")


@case
def no_controller(ctx):
    """SLURM_CONF names a controller port nobody listens on: exit 5, one line naming SLURM_CONF."""
    env = dead_controller_env(ctx, ctx.slurm_env())
    failing(ctx, env, COMMANDS, "--launcher srun: no Slurm controller answers (SLURM_CONF=%s)" % env["SLURM_CONF"],
            "dead")


@case
def job_cannot_start(ctx):
    """A partition that does not exist (--launcher-args; SLURM_PARTITION for accept, which has no
    --launcher-args): exit 5, one line with srun's reason, no job but the trial."""
    env = ctx.slurm_env()
    bad = {cmd: args + ["--launcher-args", "--partition nosuch"] for cmd, args in COMMANDS.items() if cmd != "accept"}
    failing(ctx, env, bad, "--launcher srun: a job with the run's launcher options cannot start", "nosuch")
    failing(ctx, dict(env, SLURM_PARTITION="nosuch"), {"accept": COMMANDS["accept"]},
            "Invalid partition name specified", "nosuch-env")


if __name__ == "__main__":
    sys.exit(railkit_main(CASES, __doc__, Ctx, "railkit-srun-"))
