#!/usr/bin/env python3
"""Integration tests of `railkit tune` on railkit-bench's simulated backend (`--backend sim`), run
for real: one railkit-bench process simulates every rank of sim/examples/cluster-4x8-2to1.yaml
(ctest label `sim`). DCQCN and switch ECN settings reach the simulated fabric as --sim-set
arguments (no `railkit dcqcn` on any node), infeasible switch settings are journaled and not run,
the profile carries its simulation and is never validated, a session resumes. Standard library
only (jsonschema when installed).

    tune_sim_cases.py --railkit build/bin/railkit [--bench build/bin/railkit-bench] --case NAME
    tune_sim_cases.py --list

Exit 0 pass, 1 fail, 77 skipped (railkit-bench built without the sim backend).
"""
import json
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
CLUSTER = os.path.join(ROOT, "sim", "examples", "cluster-4x8-2to1.yaml")
PROFILE_SCHEMA = os.path.join(ROOT, "profiles", "railkit.profile.schema.json")
sys.path.insert(0, os.path.join(ROOT, "tests", "lib"))
from casekit import Cases, SimCtx, check, fnv1a64, railkit_main  # noqa: E402

CASES = Cases()
case = CASES.add

FLOW = ["--backend", "sim", "--sim-cluster", CLUSTER, "--fidelity", "flow", "--coll", "alltoall",
        "-b", "1M", "-e", "4M", "-f", "4", "-n", "2", "-w", "1"]
# DCQCN attributes and switch settings act at packet level only (the flow level models no
# congestion control): their sessions run there.
PACKET = ["--backend", "sim", "--sim-cluster", CLUSTER, "--fidelity", "packet", "--coll", "alltoall",
          "-b", "1M", "-e", "1M", "-n", "1", "-w", "0"]
# Kmin, Kmax and Pmax around the DCQCN paper's and HPCC's; Kmin 400000 with Kmax 200000 cannot run.
ECN_SPACE = """schema: railkit.space/1
name: ecn-small
knobs:
  - {name: switch.ecn.kmin_bytes, values: [5000, 400000]}
  - {name: switch.ecn.kmax_bytes, values: [200000, 1600000]}
  - {name: switch.ecn.pmax, values: [0.01, 0.2]}
"""


class Ctx(SimCtx):
    def run(self, *args, timeout=280, env=None):
        argv = [self.railkit, *args]
        if args and args[0] == "tune" and "--resume" not in args:
            argv[2:2] = ["--bench", self.bench]
        p = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL,
                           env=dict(os.environ, **(env or {})))
        return p.returncode, p.stdout, p.stderr

    def space(self):
        p = self.path("ecn.yaml")
        with open(p, "w") as f:
            f.write(ECN_SPACE)
        return p


def load(path):
    with open(path) as f:
        return json.load(f)


def journal(d):
    with open(os.path.join(d, "journal.jsonl")) as f:
        return [json.loads(line) for line in f if line.strip()]


def sim_sets(command):
    """The --sim-set values of a results document's run.command, in order."""
    words = command.split()
    return [words[i + 1] for i, w in enumerate(words) if w == "--sim-set" and i + 1 < len(words)]


def one_line(stderr):
    lines = [line for line in stderr.splitlines() if line.strip()]
    check(len(lines) == 1, f"expected one stderr line, got {len(lines)}:\n{stderr}")
    return lines[0]


def check_profile_schema(prof):
    try:
        import jsonschema
    except ImportError:
        return
    jsonschema.validate(prof, load(PROFILE_SCHEMA))


def check_simulated_profile(ctx, out, cluster, fidelity, pairs):
    """The profile of a simulated session: its simulation recorded, never validated, no expectations,
    and profile consumers still read it."""
    prof = load(os.path.join(out, "profile.json"))
    check_profile_schema(prof)
    ev = prof["evidence"]
    check(ev["validated"] is False and ev["validated_at"] == "", f"a simulated profile says validated: {ev['validated']}")
    check(prof["cluster"]["backend"] == "sim", f"cluster.backend {prof['cluster']['backend']}")
    s = ev["extra"]["simulated"]
    with open(cluster, "rb") as f:
        want_hash = fnv1a64(f.read())
    check(s["backend"] == "sim" and s["simulated"] is True and s["cluster"] == cluster and s["cluster_hash"] == want_hash,
          f"evidence.extra.simulated {s}")
    check(s["fidelity"] == fidelity and s["seed"] == 1, f"fidelity/seed {s}")
    check(s["validation_seeds"] == [1 + 1000 * r for r in range(1, pairs + 1)], f"validation seeds {s['validation_seeds']}")
    check(prof["expectations"] == [], "simulated busbw became expectations for a real fabric")
    check(not [j for j in journal(out) if j["type"] == "done"][0]["validated"], "done line says validated")
    rc, so, se = ctx.run("profile", "show", os.path.join(out, "profile.json"))
    check(rc == 0 and "SIMULATED: every figure of this profile" in so, f"profile show rc {rc}\n{so}{se}")
    rc, so, se = ctx.run("profile", "env", os.path.join(out, "profile.json"))
    check(rc == 0, f"profile env rc {rc}\n{se}")
    return prof


@case
def dcqcn_goes_to_the_simulated_nics(ctx):
    """--space dcqcn on the simulator: no `railkit dcqcn` on any node (no --dcqcn-root needed), each
    trial's attributes as --sim-set nic.dcqcn.<attr>=<v>, validation rounds on held-out seeds,
    the profile simulated and never validated."""
    ctx.need_sim()
    out = ctx.path("dcqcn")
    rc, so, se = ctx.run("tune", "--space", "dcqcn", "--strategy", "random", "--budget", "4", "--pairs", "2",
                         "--out", out, "--", *PACKET)
    check(rc == 0, f"rc {rc}\n{se}")
    check("# SIMULATED: every figure below comes from railkit-bench --backend sim" in so and "NOT validated" in so, so)
    check(not os.path.exists(os.path.join(out, "dcqcn.log")), "railkit dcqcn ran on a node")
    lines = journal(out)
    session = lines[0]
    check(session["launcher"]["kind"] == "local", f"launcher {session['launcher']}")
    check(session["dcqcn"] is None and session["sim"]["cluster"] == CLUSTER, f"session {session['dcqcn']} {session['sim']}")
    trials = [j for j in lines if j["type"] == "trial"]
    check(len(trials) == 4 and any(t["dcqcn"] for t in trials), f"trials {[t['dcqcn'] for t in trials]}")
    for t in trials:
        check(t["status"] == "ok", f"trial {t['trial']}: {t['status']} {t.get('error')}")
        cmd = load(os.path.join(out, t["results"]))["run"]["command"]
        want = sorted(f"nic.dcqcn.{k}={v}" for k, v in t["dcqcn"].items())
        check(sorted(sim_sets(cmd)) == want, f"trial {t['trial']}: --sim-set {sim_sets(cmd)}, want {want}")
    runs = [j for j in lines if j["type"] == "validation"]
    check(len(runs) == 4, f"{len(runs)} validation runs")
    for r in runs:
        cmd = load(os.path.join(out, r["results"]))["run"]["command"]
        seed = 1 + 1000 * r["round"]
        check(r["sim_seed"] == seed and f"seed={seed}" in sim_sets(cmd), f"round {r['round']}: {r.get('sim_seed')} {cmd}")
        check(" -c 1" not in cmd, f"data checks asked of the simulator: {cmd}")
    check_simulated_profile(ctx, out, CLUSTER, "packet", 2)
    spread = load(os.path.join(out, "profile.json"))["evidence"]["extra"]["simulated"]["seed_spread"]
    check(spread and all(len(b["seeds"]) == 2 and b["verdict"] for b in spread), f"seed_spread {spread}")


@case
def dcqcn_refused_at_flow_level(ctx):
    """The flow level models no congestion control: a DCQCN session there is refused (exit 6) after
    its first trial, naming the fidelity, unless --allow-inert."""
    ctx.need_sim()
    out = ctx.path("dcqcn-flow")
    rc, so, se = ctx.run("tune", "--space", "dcqcn", "--strategy", "random", "--budget", "2", "--pairs", "2",
                         "--out", out, "--", *FLOW)
    check(rc == 6, f"rc {rc}\n{se}")
    check("cannot reach the sim (flow fidelity: no congestion control, ECN or PFC modelled" in se, se)


@case
def nccl_net_goes_through_the_environment(ctx):
    """--space nccl-net on the simulator: the trial's NCCL variables reach the simulated NCCL through
    railkit-bench's environment (no --sim-set), the profile is never validated."""
    ctx.need_sim()
    out = ctx.path("net")
    rc, so, se = ctx.run("tune", "--space", "nccl-net", "--strategy", "random", "--budget", "4", "--pairs", "2",
                         "--out", out, "--", *FLOW)
    check(rc == 0, f"rc {rc}\n{se}")
    trials = [j for j in journal(out) if j["type"] == "trial"]
    check(any(t["env"] for t in trials), "no trial set a variable")
    for t in trials:
        doc = load(os.path.join(out, t["results"]))
        for k, v in t["env"].items():
            check(doc["run"]["env"].get(k) == v, f"trial {t['trial']}: {k}={v} not in run.env {doc['run']['env']}")
        check(sim_sets(doc["run"]["command"]) == [], f"trial {t['trial']}: {doc['run']['command']}")
    check_simulated_profile(ctx, out, CLUSTER, "flow", 2)


@case
def switch_ecn_infeasible_trials_and_advice(ctx):
    """switch ECN on the packet-level simulator with all-to-all over 2:1 spines (PXN off): Kmin >=
    Kmax is journaled as failed and infeasible and not run; the others pass Kmin, Kmax and Pmax
    together as --sim-set; the winner lands in settings.switch_ecn (advice), never validated."""
    ctx.need_sim()
    out = ctx.path("ecn")
    bench = ["--backend", "sim", "--sim-cluster", CLUSTER, "--coll", "alltoall", "-b", "4M", "-e", "4M", "-n", "2", "-w", "0"]
    rc, so, se = ctx.run("tune", "--space", ctx.space(), "--strategy", "grid", "--pairs", "4", "--out", out, "--", *bench,
                         env={"NCCL_PXN_DISABLE": "1"})
    check(rc == 0, f"rc {rc}\n{se}")
    check("8 trials (2 failed, 2 of them infeasible, not run)" in so, so)
    trials = [j for j in journal(out) if j["type"] == "trial"]
    bad = [t for t in trials if t.get("infeasible")]
    check(len(bad) == 2, f"infeasible trials {[(t['config'], t['status']) for t in trials]}")
    for t in bad:
        check(t["status"] == "failed" and t["results"] == "" and t["objective"] is None, f"infeasible trial {t}")
        check(t["switch"]["switch.ecn.kmin_bytes"] == "400000" and t["switch"]["switch.ecn.kmax_bytes"] == "200000", t)
        check("is not below switch.ecn.kmax_bytes=200000; not run" in t["error"], t["error"])
        check(not os.path.exists(os.path.join(out, "trials", "t%04d.json" % t["trial"])), f"trial {t['trial']} ran")
    for t in trials:
        if t.get("infeasible"):
            continue
        cmd = load(os.path.join(out, t["results"]))["run"]["command"]
        check(sorted(sim_sets(cmd)) == sorted(f"{k}={v}" for k, v in t["switch"].items()), f"trial {t['trial']}: {cmd}")
    prof = check_simulated_profile(ctx, out, CLUSTER, "packet", 4)  # no --fidelity: as the documents say
    single = prof["evidence"]["extra"]["single_env"]
    check(single["taken"], f"Kmin 5 kB at 400 Gb/s should lose to the wider thresholds on the simulator: {single}")
    best = [t for t in trials if t["label"] == single["candidate"]][0]
    check(prof["settings"]["switch_ecn"] == best["switch"], f"settings.switch_ecn {prof['settings'].get('switch_ecn')}")
    check(not any(k.startswith("switch") for k in prof["settings"]["env"]), prof["settings"]["env"])
    check("settings.switch_ecn (advice" in so, so)
    rc, text, se = ctx.run("profile", "export", "--format", "slurm", os.path.join(out, "profile.json"))
    check("switch.ecn" not in text, f"a job export carries switch settings:\n{text}")


@case
def switch_ecn_refused_on_a_real_backend(ctx):
    """The switch cannot be reached from a host: switch-ecn on a real backend is one line, exit 6,
    with or without --allow-inert, and nothing is written."""
    for extra, bench in (([], ["--backend", "mpi"]), (["--allow-inert"], ["--backend", "mpi"]), ([], ["--backend", "nccl"])):
        out = ctx.path("refused")
        rc, so, se = ctx.run("tune", "--space", "switch-ecn", *extra, "--out", out, "--", *bench, "--coll", "all_reduce")
        check(rc == 6, f"{extra} {bench}: rc {rc}\n{se}")
        line = one_line(se)
        check("space switch-ecn: switch.ecn.kmin_bytes (and switch.ecn.kmax_bytes, switch.ecn.pmax) are each a setting "
              "of the fabric's switches: no host reaches a switch" in line, line)
        check(not os.path.exists(os.path.join(out, "journal.jsonl")), "journal written")


@case
def sim_refusals(ctx):
    """--backend sim runs one local process: --launcher mpirun, --np 4 and --dcqcn-root are usage
    errors, one line each, exit 6."""
    ctx.need_sim()
    for flags, want in ((["--launcher", "mpirun"], "--launcher mpirun: --backend sim runs one railkit-bench process"),
                        (["--np", "4"], "--np 4: --backend sim runs one railkit-bench process"),
                        (["--dcqcn-root", "/"], "--dcqcn-root /: with --backend sim the DCQCN knobs go to the simulated NICs")):
        out = ctx.path("refused")
        rc, so, se = ctx.run("tune", "--space", "dcqcn", *flags, "--out", out, "--", *FLOW)
        check(rc == 6, f"{flags}: rc {rc}\n{se}")
        check(want in one_line(se), f"{flags}: {se}")
        check(not os.path.exists(os.path.join(out, "journal.jsonl")), f"{flags}: journal written")


@case
def resume_replays_a_simulated_session(ctx):
    """A simulated session resumes from its journal (its --sim-cluster made absolute, so from any
    directory): the replayed trials, the infeasible one included, are not run again and the new
    ones carry their --sim-set; a cluster file that changed since is refused."""
    ctx.need_sim()
    cluster = ctx.path("c.yaml")
    shutil.copy(CLUSTER, cluster)
    out = ctx.path("resume")
    space = ctx.space()
    bench = ["--backend", "sim", "--sim-cluster", "c.yaml", "--fidelity", "packet", "--coll", "alltoall",
             "-b", "1M", "-e", "1M", "-n", "1", "-w", "0"]
    p = subprocess.run([ctx.railkit, "tune", "--bench", ctx.bench, "--space", space, "--strategy", "grid", "--budget", "5",
                        "--no-validate", "--out", out, "--", *bench], capture_output=True, text=True, timeout=200,
                       cwd=ctx.tmp, stdin=subprocess.DEVNULL)
    check(p.returncode == 0, p.stderr)
    session = journal(out)[0]
    check(cluster in session["bench_args"], f"--sim-cluster not made absolute: {session['bench_args']}")
    rc, so, se = ctx.run("tune", "--resume", out, "--budget", "8")  # from another directory
    check(rc == 0, f"rc {rc}\n{se}")
    trials = [j for j in journal(out) if j["type"] == "trial"]
    check([t["trial"] for t in trials] == list(range(1, 9)), f"trial ids {[t['trial'] for t in trials]}")
    keys = [json.dumps(t["config"], sort_keys=True) for t in trials]
    check(len(set(keys)) == 8, "a configuration was run twice")
    check(sum(1 for t in trials if t.get("infeasible")) == 2, "infeasible trials")
    for t in trials[5:]:
        if not t.get("infeasible"):
            cmd = load(os.path.join(out, t["results"]))["run"]["command"]
            check(len(sim_sets(cmd)) == 3, f"trial {t['trial']}: {cmd}")
    prof = load(os.path.join(out, "profile.json"))
    check(prof["evidence"]["validated"] is False and "simulated" in prof["evidence"]["extra"], "resumed profile")
    with open(cluster, "a") as f:
        f.write("# edited\n")
    rc, so, se = ctx.run("tune", "--resume", out, "--budget", "8")
    check(rc == 6, f"rc {rc}\n{se}")
    check("which now hashes to" in se.splitlines()[-1], se)


if __name__ == "__main__":
    sys.exit(railkit_main(CASES, __doc__, Ctx, "railkit-tune-sim-"))
