#!/usr/bin/env python3
"""A batch script from `railkit job --format sbatch` submitted to a real Slurm: the private one-node
Slurm of the ctest fixture `slurm` (tests/lib/slurm.py; RAILKIT_TEST_SLURM names its state
directory). One node, two tasks, no GPUs (`--gpus-per-node 0`: the script requests none and runs
the mpi backend), submitted with `sbatch --wait` (bounded; the job, named uniquely, is cancelled by name on timeout); the
job's results document is checked. A case skips when that Slurm is not up. Standard library only.

    job_slurm_cases.py --railkit build/bin/railkit [--bench build/bin/railkit-bench] --case NAME
    job_slurm_cases.py --list

Exit 0 pass, 1 fail, 77 skipped.
"""
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "tests", "lib"))
from casekit import Cases, check, railkit_main  # noqa: E402
import slurm  # noqa: E402

CASES = Cases()
case = CASES.add

WAIT_S = 120  # the whole job: a few 8..64-byte all_reduces on two local ranks take seconds




def submit_and_wait(script, name, cwd, env):
    """sbatch --wait --parsable SCRIPT; returns (job id, exit code, stderr). The job, named `name`
    (unique to this run), is cancelled (scancel --name) when it has not ended within WAIT_S."""
    p = subprocess.Popen(["sbatch", "--wait", "--parsable", script], cwd=cwd, env=env, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True)
    try:
        out, err = p.communicate(timeout=WAIT_S)
    except subprocess.TimeoutExpired:
        subprocess.run(["scancel", "--name", name], env=env, capture_output=True, timeout=30)
        p.kill()
        p.communicate()
        raise
    return out.strip().split(";")[0], p.returncode, err


@case
def sbatch_runs_the_bench_on_two_tasks(ctx):
    env = ctx.slurm_env()
    script = ctx.path("bench.sbatch")
    name = "railkit-job-test-%d" % os.getpid()
    p = subprocess.run([ctx.railkit, "job", "--format", "sbatch", "--nodes", "1", "--gpus-per-node", "0",
                        "--tasks-per-node", "2", "--name", name, "--bench", ctx.bench, "--railkit", ctx.railkit,
                        "--out", script, "--", "--coll", "all_reduce", "-b", "8", "-e", "64", "-f", "2", "-n", "5",
                        "-w", "1"], capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    check(p.returncode == 0, "railkit job: exit %d: %s" % (p.returncode, p.stderr.strip()))
    with open(script) as f:
        text = f.read()
    check("gpu" not in text.split("set -euo pipefail")[0], "the script asks for GPUs:\n" + text)

    job_id, rc, err = submit_and_wait(script, name, ctx.tmp, env)
    log = ctx.path("%s-%s.out" % (name, job_id))
    log_text = open(log).read() if os.path.exists(log) else "(no %s)" % log
    check(rc == 0, "sbatch --wait: exit %d: %s\njob log:\n%s" % (rc, err.strip(), log_text[-3000:]))
    results = ctx.path("results", "%s-%s" % (name, job_id))
    check("railkit job: results in results/%s-%s" % (name, job_id) in log_text, "job log:\n" + log_text[-3000:])
    doc_path = os.path.join(results, "bench.json")
    check(os.path.isfile(doc_path), "no results document %s; job log:\n%s" % (doc_path, log_text[-3000:]))
    with open(doc_path) as f:
        doc = json.load(f)
    run = doc["run"]
    check(doc.get("schema") == "railkit.results/1", "schema %r" % doc.get("schema"))
    check(run["backend"] == "mpi", "backend %r, expected mpi" % run["backend"])
    check(run["nranks"] == 2, "nranks %r, expected 2 (--ntasks-per-node=2)" % run["nranks"])
    check(run["label"] == "%s-%s" % (name, job_id), "label %r" % run["label"])
    sizes = sorted({r["bytes"] for r in doc["results"]})
    check(sizes == [8, 16, 32, 64], "sizes %r" % sizes)
    check(all(r["op"] == "all_reduce" and r["wrong"] == 0 for r in doc["results"]), "results %r" % doc["results"])


if __name__ == "__main__":
    sys.exit(railkit_main(CASES, __doc__, slurm.CaseCtx, "railkit-job-slurm-"))
