#!/usr/bin/env python3
"""Integration tests of `railkit tune`, run for real: railkit-bench on 4 local ranks under mpirun
(ctest label `mpi`), DCQCN knobs applied to a fixture tree, the profile's fingerprint from the
measured node or a fixture tree. Standard library only (jsonschema when installed).

    tune_cases.py --railkit build/bin/railkit [--bench build/bin/railkit-bench] --case NAME
    tune_cases.py --list

railkit passes --allow-run-as-root (as root) and --oversubscribe (single host) to mpirun itself.
Exit 0 pass, 1 fail, 77 skipped.
"""
import json
import os
import signal
import stat
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
GEN_DCQCN = os.path.join(ROOT, "tests", "fixtures", "dcqcn", "gen_dcqcn.py")
GEN_SYSFS = os.path.join(ROOT, "tests", "fixtures", "sysfs", "gen_sysfs.py")
PROFILE_SCHEMA = os.path.join(ROOT, "profiles", "railkit.profile.schema.json")
sys.path.insert(0, os.path.join(ROOT, "tests", "lib"))
from casekit import Cases, Failure, check, railkit_main, shared_run_made, shared_run_path  # noqa: E402

CASES = Cases()
case = CASES.add

# The command, with fewer iterations per trial to keep CI short.
DONE_WHEN = ["--space", "ompi-coll", "--strategy", "coordinate", "--budget", "10", "--launcher", "mpirun", "--np", "4"]
BENCH = ["--backend", "mpi", "--coll", "all_reduce", "-b", "4K", "-e", "4M", "-f", "16"]
QUICK = BENCH + ["-n", "5", "-w", "2"]


class Ctx:
    def __init__(self, railkit, bench, tmp):
        self.railkit = railkit
        self.bench = bench or os.path.join(os.path.dirname(railkit), "railkit-bench")
        self.tmp = tmp

    def path(self, *parts):
        return os.path.join(self.tmp, *parts)

    def argv(self, *args, bench=None):
        a = [self.railkit, *args]
        if len(args) > 0 and args[0] == "tune" and "--resume" not in args and "--list-spaces" not in args:
            a[2:2] = ["--bench", bench or self.bench]
        return a

    def run(self, *args, timeout=300, bench=None):
        p = subprocess.run(self.argv(*args, bench=bench), capture_output=True, text=True, timeout=timeout,
                           stdin=subprocess.DEVNULL)
        return p.returncode, p.stdout, p.stderr


def journal(path):
    with open(os.path.join(path, "journal.jsonl")) as f:
        return [json.loads(line) for line in f if line.strip()]


def trials(path):
    return [j for j in journal(path) if j["type"] == "trial"]


def check_no_repeats(lines, what):
    ids = [t["trial"] for t in lines]
    check(ids == list(range(1, len(ids) + 1)), f"{what}: trial ids {ids} are not 1..{len(ids)}")
    keys = [(json.dumps(t["config"], sort_keys=True), t["fidelity"]) for t in lines]
    check(len(set(keys)) == len(keys), f"{what}: a configuration was measured twice: {keys}")


def check_profile(path):
    with open(os.path.join(path, "profile.json")) as f:
        prof = json.load(f)
    check(prof["schema"] == "railkit.profile/1", "profile schema")
    try:
        import jsonschema
    except ImportError:
        return prof
    with open(PROFILE_SCHEMA) as f:
        jsonschema.validate(prof, json.load(f))
    return prof


def topo_doc(ctx, *root):
    """`railkit topo --format json` of this machine (or of `--root DIR`)."""
    rc, so, se = ctx.run("topo", *(["--root", root[0]] if root else []), "--format", "json")
    check(rc == 0, f"railkit topo rc {rc}\n{se}")
    return json.loads(so)


def check_fingerprint_from_nodes(ctx, out, prof):
    """The profile's fingerprint is the measured node's, probed with `railkit topo` through the
    launcher, and the journal says so (one topology line, before the done line)."""
    here = topo_doc(ctx)
    cl = prof["cluster"]
    check(cl["fingerprint"] == here["fingerprint"]["hash"],
          f"profile fingerprint {cl['fingerprint']!r}, this node's {here['fingerprint']['hash']!r}")
    ex = cl["extra"]
    check(ex.get("fingerprint_source") == "nodes" and "fingerprint_error" not in ex, f"cluster.extra {ex}")
    check([n["host"] for n in ex["fingerprint_nodes"]] == cl["hosts"], f"probed {ex['fingerprint_nodes']}, measured {cl['hosts']}")
    lines = journal(out)
    topo = [j for j in lines if j["type"] == "topology"]
    check(len(topo) == 1 and topo[0]["source"] == "nodes", f"topology lines {topo}")
    check([t["type"] for t in lines].index("topology") < [t["type"] for t in lines].index("done"), "topology after done")
    for n in topo[0]["nodes"]:
        with open(os.path.join(out, n["document"])) as f:
            check(json.load(f)["fingerprint"]["hash"] == cl["fingerprint"], f"document {n['document']}")
    return topo[0]


def wait_for_trials(path, n, proc, limit_s=120):
    t0 = time.time()
    while time.time() - t0 < limit_s:
        if proc.poll() is not None:
            raise Failure(f"railkit tune ended (rc {proc.returncode}) before {n} trials")
        try:
            if len(trials(path)) >= n:
                return
        except (FileNotFoundError, json.JSONDecodeError):
            pass
        time.sleep(0.2)
    raise Failure(f"fewer than {n} trials after {limit_s} s")


@case
def done_when(ctx):
    """The issue's command ends with a validated profile, an Open MPI rules file Open MPI accepts.
    The session is kept for the cases that read it (html_cases.py's tune: a ctest fixture)."""
    out, rules = shared_run_path("tune-session", ctx.tmp), ctx.path("rules.conf")
    rc, so, se = ctx.run("tune", *DONE_WHEN, "--out", out, "--emit", "ompi-rules", rules, "--", *BENCH)
    check(rc == 0, f"rc {rc}\n{se}")
    ts = trials(out)
    check(1 <= len(ts) <= 10, f"{len(ts)} trials for --budget 10")
    check_no_repeats(ts, "done_when")
    check(ts[0]["label"] == "defaults", "the first trial is not the baseline")
    prof = check_profile(out)
    ev = prof["evidence"]
    check(ev["validated"] is True and ev["pairs"] >= 5, f"not validated: {ev.get('pairs')} pairs")
    check(prof["cluster"]["ranks"] == 4 and prof["cluster"]["backend"] == "mpi", f"cluster {prof['cluster']}")
    check({d["coll"] for d in prof["decisions"]} == {"all_reduce"} and len(prof["decisions"]) == 3,
          f"decisions {prof['decisions']}")
    for row in ev["rows"]:
        check(len(row["baseline_busbw_GBps"]) == len(row["tuned_busbw_GBps"]) >= 5, f"evidence row {row}")
        check(row["ratio_lo"] <= row["ratio"] <= row["ratio_hi"], f"interval {row}")
    for d in prof["decisions"]:
        if d["significant"]:
            check(d["ratio_lo"] > 1, f"a significant decision with ratio_lo <= 1: {d}")
    check(len(prof["expectations"]) == 3, f"expectations {prof['expectations']}")
    check_fingerprint_from_nodes(ctx, out, prof)
    check("# profile:" in so and "validated" in so, f"no verdict on stdout:\n{so}")
    check("[1/10] defaults:" in se and "best" in se, f"no progress lines:\n{se}")
    vals = [j for j in journal(out) if j["type"] == "validation"]
    check(len(vals) >= 10 and all(v["status"] == "ok" for v in vals), "validation runs missing or failed")
    check(journal(out)[-1]["type"] == "done", "no done line")
    # Open MPI reads the rules file: a run with it passes its data checks.
    text = open(rules).read()
    check(text.count("# collective id (allreduce)") == 1, f"rules file:\n{text}")
    rc, so, se = ctx.run("sweep", "--bench", ctx.bench, "--launcher", "mpirun", "--np", "4", "--out", ctx.path("rules-run"),
                         "--axis", "OMPI_MCA_coll_tuned_use_dynamic_rules=1",
                         "--axis", f"OMPI_MCA_coll_tuned_dynamic_rules_filename={rules}", "--", *QUICK)
    check(rc == 0, f"a run with the emitted rules file failed: rc {rc}\n{se}")
    # ... and really applies it: the same file with an algorithm id that does not exist makes
    # Open MPI's all-reduce fail (a file it could not parse would be ignored silently).
    bad = ctx.path("bad-rules.conf")
    with open(bad, "w") as f:
        for line in text.splitlines(True):
            fields = line.split("#")[0].split()
            if len(fields) == 4 and fields[0] == "0":  # a collective's first rule: msg_size alg faninout segsize
                line = " ".join(["0", "99"] + fields[2:]) + " #" + line.split("#", 1)[1]
            f.write(line)
    rc, so, se = ctx.run("sweep", "--bench", ctx.bench, "--launcher", "mpirun", "--np", "4", "--out", ctx.path("bad-run"),
                         "--axis", "OMPI_MCA_coll_tuned_use_dynamic_rules=1",
                         "--axis", f"OMPI_MCA_coll_tuned_dynamic_rules_filename={bad}", "--", *QUICK)
    check(rc == 10 and "MPI_ERR_ARG" in se, f"Open MPI did not apply the rules file (algorithm 99 ran): rc {rc}\n{se}")
    shared_run_made(out)


@case
def kill_and_resume(ctx):
    """kill -9 in the middle, a torn journal line, then --resume: nothing repeated, nothing lost."""
    out = ctx.path("tune")
    p = subprocess.Popen(ctx.argv("tune", *DONE_WHEN, "--out", out, "--pairs", "2", "--", *QUICK),
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        wait_for_trials(out, 3, p)
    finally:
        os.killpg(p.pid, signal.SIGKILL)
        p.wait()
    before = trials(out)
    with open(os.path.join(out, "journal.jsonl"), "a") as f:
        f.write('{"type": "trial", "trial": 99, "conf')  # a write cut short by the kill
    rc, so, se = ctx.run("tune", "--resume", out)
    check(rc == 0, f"resume rc {rc}\n{se}")
    check(f"{len(before)} trials already in" in se, f"resume did not replay {len(before)} trials:\n{se}")
    after = trials(out)
    check(after[:len(before)] == before, "resume changed the trials recorded before the kill")
    check(len(after) > len(before) or len(before) >= 7, "resume ran no further trial")
    check_no_repeats(after, "after resume")
    check(check_profile(out)["evidence"]["validated"] is True, "not validated after resume")
    rc, so, se = ctx.run("tune", "--resume", out)  # a finished session: nothing more runs
    check(rc == 0 and trials(out) == after, f"second resume rc {rc} or new trials\n{se}")


@case
def interrupt_and_resume(ctx):
    """Ctrl-C (SIGINT to the process group) ends with 130 and the hint; --resume finishes."""
    out = ctx.path("tune")
    p = subprocess.Popen(ctx.argv("tune", *DONE_WHEN, "--out", out, "--pairs", "2", "--", *QUICK),
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    wait_for_trials(out, 2, p)
    os.killpg(p.pid, signal.SIGINT)
    so, se = p.communicate(timeout=60)
    check(p.returncode == 130, f"rc {p.returncode}\n{se}")
    check("railkit tune --resume" in se, f"no resume hint:\n{se}")
    n = len(trials(out))
    rc, so, se = ctx.run("tune", "--resume", out)
    check(rc == 0, f"resume rc {rc}\n{se}")
    check_no_repeats(trials(out), "after interrupt")
    check(len(trials(out)) >= n, "trials lost")


@case
def failing_and_hanging_trials(ctx):
    """A trial that fails and one that hangs are recorded and penalized; the session goes on."""
    wrapper = ctx.path("bench.sh")
    with open(wrapper, "w") as f:
        f.write("#!/bin/sh\n"
                "case \"$OMPI_MCA_coll_tuned_allreduce_algorithm\" in\n"
                "  3) echo 'bench: error: failing on purpose' >&2; exit 3;;\n"
                "  2) sleep 60;;\n"
                "esac\n"
                f"exec {ctx.bench} \"$@\"\n")
    os.chmod(wrapper, os.stat(wrapper).st_mode | stat.S_IXUSR)
    out = ctx.path("tune")
    rc, so, se = ctx.run("tune", "--space", "ompi-coll", "--strategy", "grid", "--budget", "5", "--launcher", "mpirun",
                         "--np", "4", "--timeout-s", "8", "--kill-grace-s", "1", "--pairs", "2", "--out", out, "--",
                         *QUICK, bench=wrapper)
    check(rc == 0, f"rc {rc}\n{se}")
    by_alg = {t["config"].get("OMPI_MCA_coll_tuned_allreduce_algorithm"): t for t in trials(out)}
    check(by_alg["3"]["status"] == "failed" and by_alg["3"]["objective"] is None
          and "failing on purpose" in by_alg["3"].get("error", ""), f"failed trial: {by_alg.get('3')}")
    check(by_alg["2"]["status"] == "timeout" and by_alg["2"]["objective"] is None, f"hanging trial: {by_alg.get('2')}")
    check(by_alg["1"]["status"] == "ok", "a good trial after a bad one did not run")
    prof = check_profile(out)
    check(all(d["config"] not in ("allreduce_algorithm=2", "allreduce_algorithm=3") for d in prof["decisions"]),
          "a failed configuration was chosen")


@case
def strategies_small_budget(ctx):
    """random and halving run end to end; random with the same seed proposes the same configurations."""
    seqs = []
    for name in ("r1", "r2"):
        out = ctx.path(name)
        rc, so, se = ctx.run("tune", "--space", "ompi-coll", "--strategy", "random", "--budget", "4", "--seed", "7",
                             "--launcher", "mpirun", "--np", "4", "--no-validate", "--quiet", "--out", out, "--", *QUICK)
        check(rc == 0, f"random rc {rc}\n{se}")
        check(se.strip() == "", f"--quiet printed progress:\n{se}")
        seqs.append([t["config"] for t in trials(out)])
        check(check_profile(out)["evidence"]["validated"] is False, "--no-validate gave validated: true")
    check(seqs[0] == seqs[1] and len(seqs[0]) == 4, f"same seed, other configurations: {seqs}")
    out = ctx.path("h")
    rc, so, se = ctx.run("tune", "--space", "ompi-coll", "--strategy", "halving", "--budget", "6", "--launcher", "mpirun",
                         "--np", "4", "--pairs", "2", "--out", out, "--", *QUICK)
    check(rc == 0, f"halving rc {rc}\n{se}")
    ts = trials(out)
    check(max(t["fidelity"] for t in ts) > 1, "halving gave no survivor more iterations")
    check(all(t["iters"] == 5 * t["fidelity"] for t in ts), "iterations do not follow the fidelity")


@case
def dcqcn_space_on_fixture(ctx):
    """DCQCN knobs: set on the (fixture) node before each trial, every original restored at the end,
    and on resume of a session that left values applied."""
    root = ctx.path("node")
    subprocess.run([sys.executable, GEN_DCQCN, root], check=True)

    def snapshot():
        vals = {}
        for d, _, files in os.walk(os.path.join(root, "sys")):
            for fn in files:
                p = os.path.join(d, fn)
                with open(p) as f:
                    vals[os.path.relpath(p, root)] = f.read()
        return vals

    original = snapshot()
    space = ctx.path("space.json")
    with open(space, "w") as f:
        json.dump({"schema": "railkit.space/1", "name": "dcqcn-small", "knobs": [
            {"name": "roce_rp.rpg_time_reset", "values": [None, "20", "100"]},
            {"name": "roce_np.min_time_between_cnps", "values": [None, "0"]}]}, f)
    out = ctx.path("tune")
    seen = ctx.path("seen.txt")
    wrapper = ctx.path("bench.sh")  # records the node's value while each trial runs
    with open(wrapper, "w") as f:
        f.write(f"#!/bin/sh\n[ \"$OMPI_COMM_WORLD_RANK\" = 0 ] && cat {root}/sys/class/net/eth0/ecn/roce_rp/rpg_time_reset >> {seen}\n"
                f"exec {ctx.bench} \"$@\"\n")
    os.chmod(wrapper, 0o755)
    rc, so, se = ctx.run("tune", "--space", space, "--strategy", "grid", "--launcher", "mpirun", "--np", "2", "--dcqcn-root", root,
                         "--netdev", "eth0", "--netdev", "eth2", "--pairs", "2", "--allow-inert", "--out", out, "--", *QUICK,
                         bench=wrapper)
    check(rc == 0, f"rc {rc}\n{se}")
    # One node, mpi backend: DCQCN attributes act on traffic between nodes, so none of this can be validated.
    ev = check_profile(out)["evidence"]
    check(ev["validated"] is False and ev["extra"]["inert"]["backend"] == "mpi", f"evidence {ev}")
    ts = trials(out)
    check(len(ts) == 6, f"{len(ts)} trials, grid has 6")
    want = [t["dcqcn"].get("roce_rp.rpg_time_reset", "300") for t in ts]
    got = [line.strip() for line in open(seen)][:len(ts)]
    check(got == want, f"values on the node during the trials {got}, expected {want}")
    check(snapshot() == original, "DCQCN values not restored after the session")
    # A session killed with values applied: --resume restores them before anything else.
    rc, so, se = ctx.run("dcqcn", "apply", "--root", root, "--netdev", "eth0", "--set", "roce_rp.rpg_time_reset=20")
    check(rc == 0, f"apply rc {rc}\n{se}")
    check(snapshot() != original, "apply changed nothing")
    lines = journal(out)
    with open(os.path.join(out, "journal.jsonl"), "w") as f:  # as if it had stopped after trial 3
        for j in lines[:4]:
            f.write(json.dumps(j) + "\n")
    rc, so, se = ctx.run("tune", "--resume", out)  # the journal's bench is a wrapper: not run unless named again
    check(rc == 6 and "--bench" in se and wrapper in se, f"resume without --bench: rc {rc}\n{se}")
    rc, so, se = ctx.run("tune", "--resume", out, "--bench", wrapper)
    check(rc == 0, f"resume rc {rc}\n{se}")
    check(snapshot() == original, "DCQCN values not restored after the resumed session")
    rc, so, se = ctx.run("tune", "--space", "dcqcn", "--out", ctx.path("x"), "--", *QUICK)
    check(rc == 6 and "--dcqcn-root" in se, f"a DCQCN space without --dcqcn-root: rc {rc}\n{se}")


@case
def bad_inputs(ctx):
    """Bad spaces, budgets, weights and resume directories: one line, exit 6, nothing run."""
    def bad(args, needle, bench_args=QUICK):
        rc, so, se = ctx.run("tune", *args, "--", *bench_args) if bench_args is not None else ctx.run("tune", *args)
        lines = [ln for ln in se.strip().splitlines() if ln]
        check(rc == 6, f"{args}: rc {rc}\n{se}")
        check(needle in se and len(lines) == 1, f"{args}: expected one line naming {needle!r}:\n{se}")

    out = ctx.path("o")
    bad(["--space", "nope", "--out", out], "ompi-coll")
    sp = ctx.path("bad-space.json")
    with open(sp, "w") as f:
        json.dump({"schema": "railkit.space/1", "knobs": [{"name": "NCCL_IB_TC", "values": ["106", "300"]}]}, f)
    bad(["--space", sp, "--out", out], "bad-space.json")
    with open(sp, "w") as f:
        json.dump({"schema": "railkit.space/1", "knobs": [{"name": "LD_PRELOAD", "values": ["x"]}]}, f)
    bad(["--space", sp, "--out", out], "LD_PRELOAD")
    bad(["--space", "ompi-coll", "--strategy", "coordinate", "--budget", "0", "--out", out], "--budget")
    bad(["--space", "ompi-coll", "--out", out], "sendrecv", bench_args=QUICK[:2] + ["--coll", "sendrecv"] + QUICK[4:])
    w = ctx.path("w.json")
    with open(w, "w") as f:
        json.dump({"schema": "railkit.weights/1", "messages": [{"coll": "all_gather", "bytes": 4096, "count": 1}]}, f)
    bad(["--space", "ompi-coll", "--budget", "2", "--weights", w, "--out", out], "all_gather")
    bad(["--space", "ompi-coll", "--budget", "2", "--topo-root", ctx.path("no-tree"), "--out", out], "--topo-root")
    check(not os.path.exists(os.path.join(out, "journal.jsonl")), "a refused session left a journal")
    bad(["--resume", ctx.path("missing")], "no such directory", bench_args=None)
    os.makedirs(ctx.path("empty"))
    bad(["--resume", ctx.path("empty")], "journal.jsonl", bench_args=None)
    with open(ctx.path("empty", "journal.jsonl"), "w") as f:
        f.write("not json\n{}\n")
    bad(["--resume", ctx.path("empty")], "journal.jsonl", bench_args=None)
    # An existing session is never overwritten.
    rc, so, se = ctx.run("tune", "--space", "ompi-coll", "--budget", "1", "--strategy", "grid", "--launcher", "mpirun",
                         "--np", "4", "--no-validate", "--out", out, "--", *QUICK)
    check(rc == 0, f"rc {rc}\n{se}")
    bad(["--space", "ompi-coll", "--budget", "1", "--strategy", "grid", "--out", out], "--resume")


SENDRECV = ["--backend", "mpi", "--coll", "sendrecv", "-b", "4K", "-e", "64K", "-f", "4", "-n", "5", "-w", "2"]


@case
def local_launcher_fingerprint(ctx):
    """--launcher local (one process, no mpirun): the probe runs here, the profile records its
    fingerprint with its source, and --resume reuses the journaled facts instead of probing again."""
    space = ctx.path("space.json")
    with open(space, "w") as f:  # a knob of every collective (sendrecv has busbw with one rank)
        json.dump({"schema": "railkit.space/1", "name": "algo", "knobs": [{"name": "NCCL_ALGO", "values": [None, "Ring"]}]}, f)
    out = ctx.path("tune")
    rc, so, se = ctx.run("tune", "--space", space, "--strategy", "grid", "--launcher", "local", "--pairs", "2",
                         "--out", out, "--", *SENDRECV)
    check(rc == 6 and "NCCL_ALGO" in se and "mpi" in se and "--allow-inert" in se, f"NCCL_ALGO on mpi: rc {rc}\n{se}")
    check(not os.path.exists(os.path.join(out, "journal.jsonl")), "a refused session left a journal")
    rc, so, se = ctx.run("tune", "--space", space, "--strategy", "grid", "--launcher", "local", "--pairs", "2",
                         "--allow-inert", "--out", out, "--", *SENDRECV)
    check(rc == 0, f"rc {rc}\n{se}")
    prof = check_profile(out)
    inert = prof["evidence"]["extra"].get("inert", {})
    check(prof["evidence"]["validated"] is False and inert.get("knobs") == ["NCCL_ALGO"], f"evidence {prof['evidence']}")
    check(prof["cluster"]["ranks"] == 1 and len(prof["cluster"]["hosts"]) == 1, f"cluster {prof['cluster']}")
    topo = check_fingerprint_from_nodes(ctx, out, prof)
    session = journal(out)[0]
    check(session["topo"]["root"] is None and os.path.basename(session["topo"]["railkit"]) == "railkit",
          f"session's fingerprint source {session.get('topo')}")
    # Resume a session that stopped before its profile: the journaled facts are reused as they are.
    lines = [j for j in journal(out) if j["type"] != "done"]
    with open(os.path.join(out, "journal.jsonl"), "w") as f:
        for j in lines:
            f.write(json.dumps(j) + "\n")
    os.remove(os.path.join(out, "profile.json"))
    rc, so, se = ctx.run("tune", "--resume", out)
    check(rc == 0, f"resume rc {rc}\n{se}")
    check([j for j in journal(out) if j["type"] == "topology"] == [topo], "resume probed again")
    check(check_profile(out)["cluster"]["fingerprint"] == prof["cluster"]["fingerprint"], "resume changed the fingerprint")


@case
def resume_bench_and_budget(ctx):
    """--resume says which bench it runs and runs only the railkit-bench next to railkit unless
    --bench names the journal's again; --budget with --resume extends the session (journaled);
    a huge --budget and a journal objective of the wrong type are one-line errors (exit 6)."""
    def one_line(rc, se, needle, what):
        lines = [ln for ln in se.strip().splitlines() if ln]
        check(rc == 6 and len(lines) == 1 and needle in se, f"{what}: rc {rc}, expected one line naming {needle!r}:\n{se}")

    base = ["--space", "ompi-coll", "--strategy", "grid", "--launcher", "mpirun", "--np", "2", "--no-validate"]
    rc, so, se = ctx.run("tune", *base, "--budget", "1000000000000", "--out", ctx.path("huge"), "--", *QUICK)
    one_line(rc, se, "--budget 1000000000000", "a budget past int")
    check("-727379968" not in se, se)

    out = ctx.path("tune")
    rc, so, se = ctx.run("tune", *base, "--budget", "1", "--out", out, "--", *QUICK)
    check(rc == 0 and len(trials(out)) == 1, f"rc {rc}, {len(trials(out))} trials\n{se}")
    rc, so, se = ctx.run("tune", "--resume", out, "--budget", "2")
    check(rc == 0, f"resume --budget 2: rc {rc}\n{se}")
    check(f"with bench {ctx.bench}" in se or f"with bench {os.path.abspath(ctx.bench)}" in se, f"bench not named:\n{se}")
    check(len(trials(out)) == 2, f"--budget 2 on resume: {len(trials(out))} trials, expected 2")
    check([j["budget"] for j in journal(out) if j["type"] == "budget"] == [2], f"budget not journaled: {journal(out)}")
    rc, so, se = ctx.run("tune", "--resume", out)  # the journaled budget stands: nothing more runs
    check(rc == 0 and len(trials(out)) == 2, f"second resume: rc {rc}, {len(trials(out))} trials\n{se}")

    # A journal whose bench is not the railkit-bench next to railkit (edited, or another program).
    lines = journal(out)
    evil = ctx.path("evil.sh")
    marker = ctx.path("evil-ran")
    with open(evil, "w") as f:
        f.write("#!/bin/sh\ntouch %s\nexit 1\n" % marker)
    os.chmod(evil, 0o755)
    edited = [dict(lines[0], bench=evil)] + [j for j in lines[1:] if j["type"] != "done"]
    with open(os.path.join(out, "journal.jsonl"), "w") as f:
        for j in edited:
            f.write(json.dumps(j) + "\n")
    rc, so, se = ctx.run("tune", "--resume", out, "--budget", "3")
    one_line(rc, se, evil, "a journal naming another bench")
    check("--bench" in se and not os.path.exists(marker), f"the other bench ran or no hint:\n{se}")
    rc, so, se = ctx.run("tune", "--resume", out, "--bench", ctx.bench, "--budget", "3")
    one_line(rc, se, evil, "--bench that is not the journal's")
    check(not os.path.exists(marker), "the journal's bench ran")

    # A trial objective of the wrong type: exit 6 naming the journal and its line.
    edited = [lines[0]] + [dict(j, objective="12.5") if j["type"] == "trial" else j for j in lines[1:]]
    with open(os.path.join(out, "journal.jsonl"), "w") as f:
        for j in edited:
            f.write(json.dumps(j) + "\n")
    rc, so, se = ctx.run("tune", "--resume", out)
    one_line(rc, se, os.path.join(out, "journal.jsonl") + ":2", "a string objective")
    check("objective" in se, se)


@case
def topo_root_fixture(ctx):
    """--topo-root with the DGX fixture tree: the profile carries that tree's fingerprint (not this
    node's), says where it came from, and a resumed session keeps it."""
    subprocess.run([sys.executable, GEN_SYSFS, "--out", ctx.path("fx"), "dgx-h100"], check=True, stdout=subprocess.DEVNULL)
    root = ctx.path("fx", "dgx-h100")
    fx = topo_doc(ctx, root)
    check(fx["fingerprint"]["hash"] != topo_doc(ctx)["fingerprint"]["hash"], "the fixture fingerprints like this node")
    out = ctx.path("tune")
    rc, so, se = ctx.run("tune", "--space", "ompi-coll", "--strategy", "grid", "--budget", "2", "--launcher", "mpirun",
                         "--np", "4", "--no-validate", "--topo-root", root, "--out", out, "--", *QUICK)
    check(rc == 0, f"rc {rc}\n{se}")
    prof = check_profile(out)
    cl = prof["cluster"]
    check(cl["fingerprint"] == fx["fingerprint"]["hash"], f"profile fingerprint {cl['fingerprint']!r}, fixture's {fx['fingerprint']['hash']!r}")
    check(cl.get("fingerprint_facts") == {k: str(v) for k, v in fx["fingerprint"]["facts"].items()},
          f"profile fingerprint_facts {cl.get('fingerprint_facts')}")
    check(cl["nic_models"] == sorted({n["model"] for n in fx["nics"]}), f"nic_models {cl['nic_models']}")
    check(cl["extra"].get("fingerprint_source") == "topo-root" and cl["extra"].get("topo_root") == root, f"cluster.extra {cl['extra']}")
    check(cl["ranks"] == 4 and cl["backend"] == "mpi", f"cluster {cl}")
    check(journal(out)[0]["topo"]["root"] == root, f"session line {journal(out)[0].get('topo')}")
    topo = [j for j in journal(out) if j["type"] == "topology"]
    check(len(topo) == 1 and topo[0]["source"] == "topo-root" and topo[0]["nodes"][0]["fingerprint"] == cl["fingerprint"],
          f"topology lines {topo}")
    rc, so, se = ctx.run("tune", "--resume", out)
    check(rc == 0, f"resume rc {rc}\n{se}")
    check(check_profile(out)["cluster"]["fingerprint"] == fx["fingerprint"]["hash"], "resume changed the fingerprint")
    check(len([j for j in journal(out) if j["type"] == "topology"]) == 1, "resume probed again")
    rc, so, se = ctx.run("tune", "--resume", out, "--topo-root", root)
    check(rc == 6 and "--topo-root" in se, f"--resume with --topo-root: rc {rc}\n{se}")


if __name__ == "__main__":
    sys.exit(railkit_main(CASES, __doc__, Ctx, "railkit-tune-"))
